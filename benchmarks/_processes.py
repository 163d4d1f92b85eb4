"""What the benchmarks that run the emulator in a process of their own share: starting
it, waiting for what it prints, keeping it on a CPU apart, its CPU time, stopping it."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Child", "process_cpu", "serving", "two_cpus"]

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 30.0


def process_cpu(pid: int | None) -> float | None:
    """CPU seconds (user + system) of process ``pid`` so far, where /proc tells."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def two_cpus() -> tuple[set[int], set[int]] | None:
    """One CPU for the client side and another for the emulator, when there are two."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return ({cpus[0]}, {cpus[1]}) if len(cpus) >= 2 else None


@dataclass
class Child:
    """A serving child process: its pid, what it printed, and this process's CPU."""

    pid: int
    printed: dict[str, str]
    cpu: set[int] | None


@asynccontextmanager
async def serving(
    args: list[str],
    wanted: dict[str, str],
    *,
    pin: bool = False,
    stop_by_stdin: bool = False,
) -> AsyncIterator[Child]:
    """Run ``python args...`` from the repository root until each pattern of ``wanted``
    (a name to a regular expression with one group) has been printed; always stop it.

    With ``pin``, this process runs on one CPU and the child on another until the block
    exits (this process's affinity is then put back). With ``stop_by_stdin`` the child
    is stopped by closing its standard input, else by SIGTERM; SIGKILL after 10 s.
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdin=asyncio.subprocess.PIPE if stop_by_stdin else None,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    cpus = two_cpus() if pin else None
    mine = os.sched_getaffinity(0) if cpus else None
    try:
        if cpus:
            os.sched_setaffinity(proc.pid, cpus[1])
            os.sched_setaffinity(0, cpus[0])
        assert proc.stdout is not None
        printed: dict[str, str] = {}
        while len(printed) < len(wanted):
            line = (await asyncio.wait_for(proc.stdout.readline(), STARTUP_SECONDS)).decode()
            if not line:
                raise RuntimeError(f"{args[0]} exited before it was serving")
            for name, pattern in wanted.items():
                if name not in printed and (found := re.search(pattern, line)):
                    printed[name] = found.group(1)
        yield Child(proc.pid, printed, cpus[0] if cpus else None)
    finally:
        if mine is not None:
            os.sched_setaffinity(0, mine)
        if proc.returncode is None:
            if stop_by_stdin:
                assert proc.stdin is not None
                proc.stdin.close()
            else:
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
