"""What the benchmarks that run the emulator in a process of its own share."""

from __future__ import annotations

import os

__all__ = ["process_cpu", "two_cpus"]


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
