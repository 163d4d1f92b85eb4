"""Every benchmark, one report: ``python -m benchmarks [--quick]`` from the repository root.

Each benchmark module that defines ``figures(quick)`` is run in turn; the report lists
every figure with min/median/max over its repetitions, its goal and what it was
divided by, then the machine and Python it ran on. ``--quick`` runs tiny sizes (CI
runs it so that none rots); speed is never pass/fail here.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import Figure, machine, table

MODULES = (
    "callpath",
    "decoding",
    "imports",
    "memory",
    "polling",
    "batch",
    "scale",
    "fleet",
    "bulk",
    "redis_journal",
    "lanes",
)


async def gather(quick: bool, only: list[str] | None) -> list[tuple[str, list[Figure], float]]:
    out = []
    for name in MODULES:
        if only and name not in only:
            continue
        try:
            module = importlib.import_module(f"benchmarks.{name}")
        except ImportError as exc:
            print(f"{name}: not run ({exc})", file=sys.stderr)
            continue
        run = getattr(module, "figures", None)
        if run is None:
            continue
        started = time.perf_counter()
        result = run(quick=quick)
        if inspect.isawaitable(result):
            result = await result
        out.append((name, list(result), time.perf_counter() - started))
        print(f"{name}: done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for CI")
    parser.add_argument("--only", nargs="+", choices=MODULES, help="run these only")
    opts = parser.parse_args()
    results = asyncio.run(gather(opts.quick, opts.only))
    print(f"# Benchmarks{' (quick: tiny sizes, not the figures to quote)' if opts.quick else ''}")
    print()
    for name, figures, seconds in results:
        print(f"## {name} ({seconds:.0f} s)")
        print()
        print(table(figures))
        print()
    print(f"Machine: {machine()}.")


if __name__ == "__main__":
    main()
