"""What every benchmark reports: ratios against a real alternative, run side by side.

A :class:`Figure` holds the ratio of one repetition per entry (the SDK's cost over the
alternative's, or the other way round: ``better`` says which way is good), measured in
interleaved repetitions so that both sides meet the same machine noise. The report
prints min/median/max, the goal, and what the baseline is.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Figure:
    """One row of the report.

    Attributes:
        name: What is measured, e.g. "videos.get req/s / raw aiohttp req/s".
        values: One ratio per repetition.
        goal: The goal as text, e.g. ">= 0.90".
        baseline: What the denominator (or numerator) is, in words: what actually ran.
        extra: Further columns (absolute numbers of the last repetition, say).
    """

    name: str
    values: list[float]
    goal: str
    baseline: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    def met(self) -> bool | None:
        """Whether the median meets the goal (None when the goal is not a bound)."""
        op, _, number = self.goal.partition(" ")
        try:
            bound = float(number.rstrip("%")) / (100.0 if number.endswith("%") else 1.0)
        except ValueError:
            return None
        checks = {
            "<": self.median < bound,
            "<=": self.median <= bound,
            ">": self.median > bound,
            ">=": self.median >= bound,
        }
        return checks.get(op)


def machine() -> str:
    """The machine and the Python the figures come from."""
    python = f"Python {sys.version.split()[0]} ({platform.python_implementation()})"
    system = f"{platform.system()} {platform.release()}"
    return f"{platform.machine()}, {os.cpu_count()} CPUs, {system}, {python}"


def fmt(value: float) -> str:
    if value != value:  # NaN
        return "n/a"
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"


def table(figures: Sequence[Figure]) -> str:
    """A Markdown table of ``figures``: min / median / max, goal, met, baseline."""
    lines = [
        "| figure | min | median | max | goal | met | n | baseline |",
        "|---|--:|--:|--:|---|---|--:|---|",
    ]
    for f in figures:
        low = min(f.values) if f.values else float("nan")
        high = max(f.values) if f.values else float("nan")
        met = {True: "yes", False: "no", None: "-"}[f.met()]
        lines.append(
            f"| {f.name} | {fmt(low)} | {fmt(f.median)} | {fmt(high)} | {f.goal} | {met} "
            f"| {len(f.values)} | {f.baseline} |"
        )
    return "\n".join(lines)
