"""The house's rules, read from the code: imports point down, and a few modules own a thing.

The import graph of ``asyncclient/`` is built with ``ast``; every import counts, those
under ``TYPE_CHECKING`` and inside functions too (they are the same dependency). Each
rule has a test of its own checker on a made-up example, so that a checker that finds
nothing cannot pass for a clean house.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "asyncclient"

# Who may import the facade, aiohttp and the emulator.
FACES = re.compile(r"asyncclient(\.cli(\..+)?|\.sync(\..+)?|\.emulator\.pytest_plugin)?$")
AIOHTTP = re.compile(r"asyncclient\.(http\.transport|webhooks|emulator(\..+)?)$")
EMULATOR_USERS = re.compile(r"asyncclient\.(cli(\..+)?|emulator(\..+)?)$")

# Who may read time, sleep or set a timer other than through the injected Clock: the clock
# module, the transport's I/O deadlines (loop time, as http/attempts.py says) and the
# emulator (it plays the service, on a clock of its own).
TIME_OWNERS = re.compile(r"asyncclient\.(_clock|http\.transport|http\.attempts|emulator(\..+)?)$")

# What each wing may import of the package besides itself, as its __init__ says.
BOTTOM = {"_clock", "_states", "errors", "models", "_convert", "_version", "lanes"}
MAY_IMPORT: dict[str, set[str]] = {
    "_clock": set(),
    "lanes": set(),
    "_states": set(),
    "_version": set(),
    "errors": set(),
    "models": set(),
    "_convert": set(),
    "validation": {"models", "errors", "_clock"},
    "ratelimit": {"_clock", "lanes"},
    "retry": {"errors"},
    "http": BOTTOM | {"validation", "ratelimit", "retry"},
    "awaiting": BOTTOM | {"http", "ratelimit"},
    "batch": BOTTOM | {"awaiting", "http", "validation"},
    "resources": BOTTOM | {"http", "awaiting", "batch", "validation"},
    # the fleet implements the batch's journal store (batch.store), never the reverse
    "fleet": BOTTOM | {"awaiting", "http", "ratelimit", "batch"},
    "webhooks": BOTTOM | {"awaiting"},
    "notebook": BOTTOM | {"awaiting", "batch"},
    "client": BOTTOM
    | {"http", "awaiting", "batch", "resources", "fleet", "webhooks", "ratelimit", "retry"},
    "sync": BOTTOM  # the synchronous face: the facade and what its methods take and return
    | {"client", "awaiting", "batch", "resources", "webhooks", "http", "ratelimit", "retry"},
    # the ASGI face: the facade (its types), the receiver it serves, what that answers
    "asgi": BOTTOM | {"client", "webhooks", "awaiting"},
    "cli": {"*"},  # the command line is on top: it may use anything
    "__main__": {"cli"},
    "": BOTTOM  # asyncclient/__init__.py: re-exports, and attaches the notebook wing
    | {
        "client",
        "http",
        "awaiting",
        "batch",
        "resources",
        "ratelimit",
        "retry",
        "notebook",
        "sync",
    },
    "emulator": {"models"},  # the enumerations (spec 2.1); the plugin's fixture builds a client
}
TOP_LEVEL_MODULES = 12


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, known: set[str]) -> Iterator[str]:
    """Every module ``path`` imports (the package's own resolved to module names)."""
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package
                anchor = (package or module_name(path)).split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield f"{base}.{alias.name}"


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: set(imports(path, known)) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def wing_of(module: str) -> str:
    """``asyncclient.batch.rows`` -> ``batch``; ``asyncclient`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cross_wing_imports(edges: dict[str, set[str]]) -> set[tuple[str, str, str]]:
    """(module, the wing it is in, the wing it imports) for every import between wings."""
    found = set()
    for module, deps in edges.items():
        for dep in deps:
            if dep == "asyncclient" or dep.startswith("asyncclient."):
                here, there = wing_of(module), wing_of(dep)
                if there and here != there:
                    found.add((module, here, there))
    return found


def forbidden(edges: dict[str, set[str]]) -> list[str]:
    """The imports between wings that ``MAY_IMPORT`` does not allow."""
    bad = []
    for module, here, there in sorted(cross_wing_imports(edges)):
        allowed = MAY_IMPORT.get(here, set())
        if "*" in allowed or there in allowed:
            continue
        if (module, there) == ("asyncclient.emulator.pytest_plugin", "client"):
            continue  # the plugin's fixture builds a client
        bad.append(f"{module} imports asyncclient.{there}")
    return bad


def test_each_wing_imports_only_what_it_may() -> None:
    edges = graph()
    assert cross_wing_imports(edges)  # the graph is read at all
    assert forbidden(edges) == []


def test_a_forbidden_import_between_wings_is_found() -> None:
    edges = {
        "asyncclient.awaiting.jobs": {"asyncclient.notebook.display", "asyncclient.http.tracing"},
        "asyncclient.batch.runner": {"asyncclient.resources.templates"},
        "asyncclient.resources.templates": {"asyncclient.batch.runner"},
    }
    assert forbidden(edges) == [
        "asyncclient.awaiting.jobs imports asyncclient.notebook",
        "asyncclient.batch.runner imports asyncclient.resources",
    ]


def contributors_note(source: str) -> str:
    """The ``#`` comments at the top of a module, before its first statement after the
    docstring: the notes for contributors (what the wing owns and may import), kept out
    of the docstring that ``help()`` and the API reference show users."""
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    end = body[0].lineno - 1 if body else None
    lines = source.splitlines()[:end]
    return "\n".join(line.strip()[1:].strip() for line in lines if line.strip().startswith("#"))


def silent_wings(sources: dict[str, str]) -> list[str]:
    """The wings whose ``__init__`` says in no top comment what they may import."""
    return sorted(
        name for name, source in sources.items() if "May import" not in contributors_note(source)
    )


def test_every_wing_says_what_it_owns_and_may_import() -> None:
    wings = sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert {w.name for w in wings} >= {"http", "awaiting", "batch", "fleet", "cli", "notebook"}
    assert silent_wings({w.name: (w / "__init__.py").read_text("utf-8") for w in wings}) == []


def test_a_wing_that_says_what_it_may_import_only_in_its_docstring_is_found() -> None:
    sources = {
        "noted": '"""Users\' text."""\n\n# Owns: x.\n# May import: ``models``.\n\nimport os\n',
        "in_the_docstring": '"""Users\' text.\n\nMay import: ``models``.\n"""\n\nimport os\n',
        "below_the_code": '"""Users\' text."""\n\nimport os\n\n# May import: ``models``.\n',
        "silent": '"""Users\' text."""\n',
    }
    assert silent_wings(sources) == ["below_the_code", "in_the_docstring", "silent"]


def test_the_top_level_keeps_only_the_public_faces_and_the_shared_core() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, top


def test_the_core_and_the_batch_never_import_the_faces() -> None:
    users = sorted(
        module
        for module, here, there in cross_wing_imports(graph())
        if here in {"awaiting", "batch", "http", "resources", "fleet"}
        and there in {"notebook", "cli"}
    )
    assert users == []


def test_resources_never_import_the_transport() -> None:
    users = sorted(
        module
        for module, deps in graph().items()
        if module.startswith("asyncclient.resources")
        and any(d == "asyncclient.http.transport" or d.split(".")[0] == "aiohttp" for d in deps)
    )
    assert users == []


# -- one clock -------------------------------------------------------------------------------

_TIME_ATTRIBUTES = re.compile(
    r"(^|\.)(time\.(time|time_ns|monotonic|monotonic_ns|perf_counter)"
    r"|datetime\.(now|utcnow|today)|date\.today"
    r"|(asyncio|anyio|trio)\.(sleep|timeout|timeout_at|wait_for|move_on_after|move_on_at"
    r"|fail_after|fail_at|current_time))$"
    r"|loop(\(\))?\.(time|call_at|call_later)$"
)
_TIME_NAMES = {
    "time": {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter"},
    "asyncio": {"sleep", "timeout", "timeout_at", "wait_for"},
    "anyio": {"sleep", "move_on_after", "move_on_at", "fail_after", "fail_at", "current_time"},
}


def time_reads(source: str) -> list[str]:
    """Where ``source`` reads time, sleeps or sets a timer other than through a Clock.

    The code is read as a tree: docstrings and comments do not count.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            text = ast.unparse(node)
            if _TIME_ATTRIBUTES.search(text):
                found.append(f"{node.lineno}: {text}")
        elif isinstance(node, ast.ImportFrom) and node.module in _TIME_NAMES:
            for alias in node.names:
                if alias.name in _TIME_NAMES[node.module]:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_only_the_clock_module_the_transport_and_the_emulator_read_time() -> None:
    readers = {}
    for name, path in modules().items():
        if not TIME_OWNERS.match(name) and (found := time_reads(path.read_text("utf-8"))):
            readers[name] = found
    assert readers == {}, "these read time or sleep by themselves; take the client's Clock"


def test_each_way_of_reading_time_is_found() -> None:
    code = (
        "import asyncio, time\n"
        "from datetime import datetime\n"
        "from anyio import move_on_after\n"
        "async def f(self, loop):\n"
        '    """asyncio.sleep(1) in a docstring is not a read"""\n'
        "    a = self._loop.time()\n"
        "    b = asyncio.get_running_loop().time()\n"
        "    c = time.time() + time.monotonic()\n"
        "    d = datetime.now()\n"
        "    await asyncio.sleep(1)\n"
        "    loop.call_later(1, print)\n"
        "    await asyncio.wait_for(f(), 1)\n"
        "    e = self._clock.monotonic()  # the injected clock: fine\n"
    )
    lines = [hit.split(":")[0] for hit in time_reads(code)]
    assert lines == ["3", "6", "7", "8", "8", "9", "10", "11", "12"]


# -- seams by protocol -----------------------------------------------------------------------

_RATE_LIMIT_MODULES = {"asyncclient.ratelimit", "asyncclient.fleet.bucket"}
_LIMITERS = re.compile(r"(TokenBucket|Limiter)$")
_EXTENDED_BY_PROTOCOL = {"Poller", "JobState", "TokenBucket", "RedisTokenBucket"}


def concrete_type_tests(source: str) -> list[str]:
    """``isinstance(x, SomeBucket)`` and ``type(x) is SomeBucket`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance":
            names = [ast.unparse(e) for e in ast.walk(node.args[1]) if isinstance(e, ast.Name)]
            if any(_LIMITERS.search(name) for name in names):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Call)
            and ast.unparse(node.left.func) == "type"
            and any(_LIMITERS.search(ast.unparse(c)) for c in node.comparators)
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def subclassed(source: str) -> list[str]:
    """Classes of ``source`` that subclass a part extended through a protocol."""
    return [
        f"{node.lineno}: {node.name}({ast.unparse(base)})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if ast.unparse(base).split(".")[-1] in _EXTENDED_BY_PROTOCOL
    ]


def test_no_module_tests_a_limiters_concrete_type_outside_the_rate_limit_modules() -> None:
    found = {}
    for name, path in modules().items():
        if name not in _RATE_LIMIT_MODULES and (hits := concrete_type_tests(path.read_text())):
            found[name] = hits
    assert found == {}


def test_a_poller_a_job_state_or_a_bucket_is_composed_never_subclassed() -> None:
    found = {}
    for name, path in modules().items():
        if hits := subclassed(path.read_text("utf-8")):
            found[name] = hits
    assert found == {}


def test_a_concrete_type_test_and_a_subclass_are_found() -> None:
    code = (
        "class FleetPoller(Poller): pass\n"
        "class Shadow(state.JobState): pass\n"
        "def f(limiter):\n"
        "    if type(limiter) is TokenBucket: pass\n"
        "    return isinstance(limiter, (TokenBucket, int))\n"
    )
    assert [hit.split(":")[0] for hit in concrete_type_tests(code)] == ["4", "5"]
    assert [hit.split(":")[0] for hit in subclassed(code)] == ["1", "2"]


# -- sizes -----------------------------------------------------------------------------------

MODULE_LINES = 450
FUNCTION_LINES = 75


def oversized(path: Path) -> list[str]:
    """A module over ``MODULE_LINES`` lines, and its functions over ``FUNCTION_LINES``."""
    source = path.read_text("utf-8")
    found = []
    if (lines := len(source.splitlines())) > MODULE_LINES:
        found.append(f"{lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > FUNCTION_LINES:
                found.append(f"{node.name}: {size} lines")
    return found


def test_no_module_over_450_lines_and_no_function_over_75() -> None:
    found = {name: hits for name, path in modules().items() if (hits := oversized(path))}
    assert found == {}


def test_an_oversized_module_and_function_are_found(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    big = tmp_path / "big.py"
    big.write_text("def f():\n" + body + "\n" + "pass\n" * 400, encoding="utf-8")
    assert oversized(big) == ["481 lines", "f: 81 lines"]


# What ``import asyncclient`` (and creating a client) must not load: what a first request
# does not need. Each loads when first used (issue "Speed").
ON_DEMAND = (
    "asyncclient.batch.budget",
    "asyncclient.cli.batch",
    "asyncclient.cli.resources",
    "asyncclient.http.download",
    "asyncclient.batch.journal",
    "asyncclient.http.prepared",
    "asyncclient.cli.progress",
    "asyncclient.batch.rows",
    "asyncclient.batch.settle",
    "asyncclient.batch.template_rows",
    "asyncclient.awaiting.notifications",
    "asyncclient.batch.runner",
    "asyncclient.cli.app",
    "asyncclient.emulator",
    "asyncclient.fleet.bucket",
    "asyncclient.resources.integrations",
    "asyncclient.resources.projects",
    "asyncclient.resources.schedule",
    "asyncclient.resources.social",
    "asyncclient.resources.templates",
    "asyncclient.validation._creation",
    "asyncclient.validation._schedule_social",
    "asyncclient.validation._template",
    "asyncclient.webhooks",
    "asyncclient.asgi",
    "aiohttp.web",
    "redis",
    "starlette",
    "fastapi",
    "uvicorn",
)


def loaded_in_a_fresh_interpreter(code: str) -> set[str]:
    """The modules in ``sys.modules`` after ``code`` runs in a new interpreter."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout))


def on_demand_among(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if any(m == d or m.startswith(d + ".") for d in ON_DEMAND))


def test_importing_the_package_loads_only_what_a_first_request_needs() -> None:
    loaded = loaded_in_a_fresh_interpreter("import asyncclient")
    assert {"asyncclient.client", "asyncclient.http.transport", "aiohttp"} <= loaded
    assert on_demand_among(loaded) == []


def test_creating_a_client_loads_nothing_more_than_reading_a_video_needs() -> None:
    loaded = loaded_in_a_fresh_interpreter(
        "import asyncclient\n"
        "client = asyncclient.AsyncClient(api_key='k', base_url='http://127.0.0.1:1')\n"
        "client.videos, client.jobs"
    )
    assert on_demand_among(loaded) == []


def test_what_is_left_for_later_loads_when_first_used() -> None:
    loaded = loaded_in_a_fresh_interpreter(
        "import asyncclient\n"
        "client = asyncclient.AsyncClient(api_key='k', base_url='http://127.0.0.1:1')\n"
        "client.templates, client.schedule, client.social, asyncclient.Batch"
    )
    assert {
        "asyncclient.batch.runner",
        "asyncclient.resources.projects",
        "asyncclient.resources.templates",
        "asyncclient.resources.schedule",
        "asyncclient.resources.integrations",
        "asyncclient.resources.social",
    } <= loaded
    assert not any(m.startswith("asyncclient.emulator") for m in loaded)
