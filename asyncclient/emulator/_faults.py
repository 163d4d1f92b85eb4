"""Injected faults, for reliability tests (issue 3, item 8)."""

from __future__ import annotations

import fnmatch
import random
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["FAULT_KINDS", "Fault", "Faults"]

FAULT_KINDS = ("status", "latency", "drop_before", "drop_after", "malformed")


@dataclass
class Fault:
    """One fault rule.

    ``route`` is a glob over ``"METHOD /path"`` (``"POST /v1/project/create/*"``); a pattern
    without a space matches the path under any method. Selection: ``sequence`` (a list of
    booleans consumed one per matching request), else ``probability`` (seeded), else
    ``times`` (the next N matching requests), else every matching request.
    """

    id: str
    route: str
    kind: str
    status: int = 500
    message: str = "internal server error"
    latency: float = 0.0
    times: int | None = None
    probability: float | None = None
    sequence: list[bool] | None = None
    applied: int = field(default=0)

    def matches(self, method: str, path: str) -> bool:
        """Return whether the rule's route pattern covers this request."""
        if " " in self.route:
            return fnmatch.fnmatchcase(f"{method} {path}", self.route)
        return fnmatch.fnmatchcase(path, self.route)

    def to_json(self) -> dict[str, Any]:
        """Return the rule as JSON."""
        return asdict(self)


class Faults:
    """The active fault rules, checked in the order they were added."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._rules: list[Fault] = []
        self._next = 0

    @property
    def rules(self) -> list[Fault]:
        """The active rules."""
        return list(self._rules)

    def add(
        self,
        route: str = "*",
        kind: str = "status",
        *,
        status: int = 500,
        message: str = "internal server error",
        latency: float = 0.0,
        times: int | None = None,
        probability: float | None = None,
        sequence: list[bool] | None = None,
    ) -> Fault:
        """Add a fault rule; see :class:`Fault` for the selection rules.

        Raises:
            ValueError: an unknown kind or an invalid selection.
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r} (use {', '.join(FAULT_KINDS)})")
        if probability is not None and not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1")
        self._next += 1
        rule = Fault(
            id=f"fault_{self._next}",
            route=route,
            kind=kind,
            status=status,
            message=message,
            latency=latency,
            times=times,
            probability=probability,
            sequence=list(sequence) if sequence is not None else None,
        )
        self._rules.append(rule)
        return rule

    def clear(self) -> None:
        """Remove every rule."""
        self._rules.clear()

    def remove(self, fault_id: str) -> None:
        """Remove one rule by id (no error if it is gone)."""
        self._rules = [r for r in self._rules if r.id != fault_id]

    def _selects(self, rule: Fault) -> bool:
        if rule.sequence is not None:
            hit = bool(rule.sequence.pop(0)) if rule.sequence else False
            if not rule.sequence:
                self.remove(rule.id)
            return hit
        if rule.probability is not None and self._rng.random() >= rule.probability:
            return False
        if rule.times is not None:
            rule.times -= 1
            if rule.times <= 0:
                self.remove(rule.id)
        return True

    def pick(self, method: str, path: str) -> Fault | None:
        """Return the fault to apply to this request, if any (consuming selections)."""
        for rule in list(self._rules):
            if rule.matches(method, path) and self._selects(rule):
                rule.applied += 1
                return rule
        return None
