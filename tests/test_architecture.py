"""The house's rules, read from the code: imports point down, and a few modules own a thing.

The import graph of ``asyncclient/`` is built with ``ast``; every import counts, those
under ``TYPE_CHECKING`` and inside functions too (they are the same dependency).
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

# Who may import the facade, aiohttp, the emulator, and read the real clock directly.
FACES = re.compile(r"asyncclient(\.cli(\..+)?|\.emulator\.pytest_plugin)?$")
AIOHTTP = re.compile(r"asyncclient\.(http\.transport|webhooks|emulator(\..+)?)$")
EMULATOR_USERS = re.compile(r"asyncclient\.(cli(\..+)?|emulator(\..+)?)$")
CORE_TIME = re.compile(r"\b(time\.monotonic|time\.time|asyncio\.sleep|anyio\.sleep)\(")
TIME_OWNERS = re.compile(r"asyncclient\.(_clock|cli(\..+)?|emulator(\..+)?)$")


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


def test_the_import_graph_has_no_cycle() -> None:
    edges = graph()
    assert "asyncclient.client" in edges["asyncclient"]  # the graph is read at all
    assert cycles(edges) == []


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_only_the_faces_import_the_client() -> None:
    users = {m for m, deps in graph().items() if "asyncclient.client" in deps}
    assert users and all(FACES.match(m) for m in users), sorted(users)


def test_only_the_transport_webhooks_and_emulator_import_aiohttp() -> None:
    users = {m for m, deps in graph().items() if any(d.split(".")[0] == "aiohttp" for d in deps)}
    assert "asyncclient.http.transport" in users
    assert all(AIOHTTP.match(m) for m in users), sorted(u for u in users if not AIOHTTP.match(u))


def test_the_core_never_imports_the_emulator() -> None:
    users = {
        m
        for m, deps in graph().items()
        if any(d == "asyncclient.emulator" or d.startswith("asyncclient.emulator.") for d in deps)
    }
    assert all(EMULATOR_USERS.match(m) for m in users), sorted(users)


def test_the_core_paces_only_through_the_injected_clock() -> None:
    readers = []
    for name, path in modules().items():
        code = "\n".join(line.split("#")[0] for line in path.read_text("utf-8").splitlines())
        if not TIME_OWNERS.match(name) and CORE_TIME.search(code):
            readers.append(name)
    assert readers == [], "these read the real clock; take a Clock instead"


# What ``import asyncclient`` (and creating a client) must not load: what a first request
# does not need. Each loads when first used (issue "Speed").
ON_DEMAND = (
    "asyncclient.batch.budget",
    "asyncclient.cli.batch",
    "asyncclient.cli.resources",
    "asyncclient.http.download",
    "asyncclient.batch.journal",
    "asyncclient.resources.prepared",
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
    "aiohttp.web",
    "redis",
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
