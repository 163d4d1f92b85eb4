"""The cost of ``import asyncclient`` against its dependencies' own imports (issue "Speed").

In interleaved repetitions, fresh interpreters run ``import asyncclient`` and
``import aiohttp, attrs, cattrs, anyio`` (what the SDK cannot do without), each
twice: under ``-X importtime`` (the cumulative microseconds of the top-level imports
the statement makes, interpreter start-up left out) and plainly (the wall time of
the whole process, start-up included). Three more contenders, timed with
``perf_counter`` on top of ``import asyncclient``, show what is left for later:
creating a client (what a first request needs; nothing is sent), what a first
creation loads before it sends (``client.projects``, a request model, the rules),
and ``from asyncclient import *`` (every lazily exported name).

Bytecode is cached for every side alike, as an installed package has it: the
interpreters write and read it under a temporary ``PYTHONPYCACHEPREFIX``, warmed
up once, even where ``PYTHONDONTWRITEBYTECODE`` is set (``--env-bytecode`` keeps
the environment's settings instead). Run from the repository root:

    python benchmarks/imports.py [--quick] [--repeat 9] [--env-bytecode]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import Figure, machine, table  # noqa: E402

MARK = "@@asyncclient-benchmark@@"
"""Written to stderr before the measured statement: what -X importtime prints before it
is the interpreter's start-up (and the setup), left out of the sum."""

DEPENDENCIES = "import aiohttp, attrs, cattrs, anyio"
CLIENT = "client = asyncclient.AsyncClient(api_key='k', base_url='http://127.0.0.1:1')"
CREATION = (
    f"{CLIENT}; client.projects; asyncclient.validation.validate("
    "asyncclient.UGCAdsRequest(script='Hi', avatar_id='a', voice_id='v', media=['m']))"
)
"""What a first creation loads before it sends: its resource, request model and rules."""


@dataclass(frozen=True)
class Contender:
    """A statement timed in a fresh interpreter, after an untimed ``setup``."""

    name: str
    statement: str
    setup: str = ""

    def source(self) -> str:
        return "\n".join(
            [
                "import sys, time",
                self.setup,
                f"sys.stderr.write({MARK!r} + '\\n'); sys.stderr.flush()",
                "_n, _t0 = len(sys.modules), time.perf_counter()",
                self.statement,
                "_t1 = time.perf_counter()",
                "print(f'{(_t1 - _t0) * 1e3:.3f} {len(sys.modules) - _n}')",
            ]
        )


CONTENDERS = {
    "deps": Contender("aiohttp+attrs+cattrs+anyio", DEPENDENCIES),
    "sdk": Contender("asyncclient", "import asyncclient"),
    "client": Contender("a client", CLIENT, setup="import asyncclient"),
    "creation": Contender("a creation's modules", CREATION, setup="import asyncclient"),
    "star": Contender("every name", "from asyncclient import *", setup="import asyncclient"),
}
ON_TOP = ("client", "creation", "star")
"""Contenders timed (perf_counter) on top of ``import asyncclient``, made in their setup."""


@dataclass
class Runs:
    """One contender's measurements, one entry per repetition (milliseconds)."""

    imports: list[float] = field(default_factory=list)
    """Sum of the cumulative times of the top-level imports (-X importtime)."""
    statement: list[float] = field(default_factory=list)
    """perf_counter() around the statement, inside the -X importtime process."""
    wall: list[float] = field(default_factory=list)
    """The whole process without -X importtime, start-up included."""
    modules: int = 0
    """Modules the statement imported (last repetition)."""


def top_level_imports(stderr: str) -> float:
    """Milliseconds of the top-level imports after :data:`MARK`.

    ``-X importtime`` reports the import statements; a module loaded through
    ``importlib.import_module`` (as a lazily exported name is) is not, which is why
    what is loaded on top of the import is timed with ``perf_counter`` instead.
    """
    _, _, after = stderr.partition(MARK + "\n")
    total = 0
    for line in after.splitlines():
        # "import time: <self> | <cumulative> | <two spaces per level><name>"
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3:
            continue
        name = parts[2]
        if name.startswith("  ") or not parts[1].strip().isdigit():
            continue  # nested, or the header line
        total += int(parts[1])
    return total / 1e3


def environment(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def run_once(contender: Contender, runs: Runs, env: dict[str, str]) -> None:
    source = contender.source()
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", source],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    runs.imports.append(top_level_imports(timed.stderr))
    took, modules = timed.stdout.split()[-2:]
    runs.statement.append(float(took))
    runs.modules = int(modules)
    start = time.perf_counter()
    plain = [sys.executable, "-c", source]
    subprocess.run(plain, cwd=ROOT, env=env, capture_output=True, check=True)
    runs.wall.append((time.perf_counter() - start) * 1e3)


def measure(repeat: int, *, cached: bool = True) -> dict[str, Runs]:
    """``repeat`` interleaved repetitions of every contender, after one warm-up each.

    Args:
        repeat: Repetitions.
        cached: Cache every module's bytecode; False keeps the environment's settings
            (with ``PYTHONDONTWRITEBYTECODE`` set, a checkout's modules are compiled on
            every run while installed packages read the bytecode pip wrote).
    """
    runs = {key: Runs() for key in CONTENDERS}
    with tempfile.TemporaryDirectory(prefix="asyncclient-pycache-") as cache:
        env = environment(cache) if cached else dict(os.environ)
        for contender in CONTENDERS.values():  # writes the bytecode of every module
            run_once(contender, Runs(), env)
        for _ in range(repeat):
            for key, contender in CONTENDERS.items():
                run_once(contender, runs[key], env)
    return runs


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ms"


def _ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    return [n / d for n, d in zip(numerators, denominators, strict=True)]


def _sums(a: list[float], b: list[float]) -> list[float]:
    return [x + y for x, y in zip(a, b, strict=True)]


def figures_of(runs: dict[str, Runs]) -> list[Figure]:
    deps, sdk = runs["deps"], runs["sdk"]
    base = f"`python -c {DEPENDENCIES!r}`"
    out = [
        Figure(
            name="import asyncclient / import aiohttp+attrs+cattrs+anyio (-X importtime)",
            values=_ratios(sdk.imports, deps.imports),
            goal="<= 1.15",
            baseline=(
                f"{base}, top-level imports under -X importtime "
                f"(medians: {_ms(sdk.imports)} / {_ms(deps.imports)})"
            ),
        ),
        Figure(
            name="import asyncclient / import aiohttp+attrs+cattrs+anyio (process wall time)",
            values=_ratios(sdk.wall, deps.wall),
            goal="<= 1.15",
            baseline=(
                f"{base}, whole process with interpreter start-up "
                f"(medians: {_ms(sdk.wall)} / {_ms(deps.wall)})"
            ),
        ),
    ]
    for key in ON_TOP:
        more = runs[key]
        out.append(
            Figure(
                name=f"import asyncclient + {CONTENDERS[key].name} / aiohttp+attrs+cattrs+anyio",
                values=_ratios(_sums(sdk.imports, more.statement), deps.imports),
                goal="-",
                baseline=(
                    f"{base}; on top of the import (perf_counter): {_ms(more.statement)}, "
                    f"{more.modules} modules"
                ),
            )
        )
    return out


def figures(quick: bool = False) -> list[Figure]:
    """The report's figures: 9 interleaved repetitions (``quick``: 3)."""
    return figures_of(measure(3 if quick else 9))


def absolute(runs: dict[str, Runs]) -> str:
    """Medians of every contender, in milliseconds (modules: of the last repetition)."""
    lines = [
        "| contender | statement | imports ms (-X importtime) | statement ms | modules "
        "| wall ms (process) |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for key, contender in CONTENDERS.items():
        r = runs[key]
        setup = f"`{contender.setup}`; " if contender.setup else ""
        lines.append(
            f"| {contender.name} | {setup}`{contender.statement}` "
            f"| {statistics.median(r.imports):.1f} | {statistics.median(r.statement):.1f} "
            f"| {r.modules} | {statistics.median(r.wall):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--repeat", type=int, help="interleaved repetitions (default 9)")
    parser.add_argument(
        "--env-bytecode",
        action="store_true",
        help="keep the environment's bytecode settings instead of caching every module's",
    )
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 9)
    runs = measure(repeat, cached=not args.env_bytecode)
    bytecode = "environment's bytecode settings" if args.env_bytecode else "bytecode cached"
    print(
        f"import time: {repeat} interleaved repetitions, fresh interpreters, {bytecode}; "
        f"{machine()}"
    )
    print()
    print(table(figures_of(runs)))
    print()
    print(absolute(runs))


if __name__ == "__main__":
    main()
