"""Injected faults, for reliability tests (issue 3, item 8; "money-safe under every fault").

Each rule has a ``kind``; every kind applies after authentication and rate limiting:

- ``status``: answers ``status`` (500) with ``{success: false, message}``; nothing is
  processed.
- ``latency``: sleeps ``latency`` real seconds, then processes.
- ``drop_before``: resets the connection before processing: nothing changes (logged as 499).
- ``drop_after``: processes fully (a creation's project exists, its credits are charged),
  then resets the connection: the reply is lost.
- ``malformed``: processes, then answers 200 with truncated JSON.
- ``status_after``: processes fully, then answers ``status`` (500; 502 and 504 are the
  usual ones) with the error envelope: a server error for work that was done.
- ``hold_reply``: processes fully, then holds the reply ``latency`` real seconds: a client
  whose timeout is shorter gives up after sending, yet the project exists.
- ``rate_burst``: answers 429 "rate limit exceeded" without processing, with
  ``Retry-After: retry_after`` (seconds, or a string sent verbatim), ``X-RateLimit-Limit``
  (the key's per-minute rate), ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset`` (the
  Unix second the wait ends). ``times=N`` makes a burst of N.
- ``garbage_headers``: processes normally, but ``X-RateLimit-*`` (and ``Retry-After``) are
  nonsense: ``inf``, ``nan``, negative, empty, words, an HTTP date with a numeric offset;
  the sets of :data:`GARBAGE_HEADERS` take turns.
- ``ok_without_ids``: processes fully (a creation's project exists and is charged), then
  answers ``200 {"success": true, "message": "ok"}``: a success that names no id.
- ``proxy_503``: processes fully, then answers 503 with a proxy's HTML page, as a gateway
  does whose upstream answered too late (``status_after`` with ``status=503`` answers the
  service's JSON envelope instead; both processed the request).
- ``gzip_bomb``: processes fully, then answers 200 with ``Content-Encoding: gzip`` and a
  small body that inflates to ``size`` bytes (1 GiB by default; about a thousandth of
  that on the wire), made as it is sent: the emulator never holds it.

``headers`` (a dict) is set on the reply of any kind last, over the rate-limit headers, e.g.
``rate_burst`` with ``headers={"Retry-After": "Wed, 21 Oct 2026 07:28:00 +0200"}``. Every
applied fault counts in ``emu.counters.faults[kind]`` and names its kind in the request log.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["DEFAULT_BOMB_SIZE", "FAULT_KINDS", "GARBAGE_HEADERS", "Fault", "Faults"]

FAULT_KINDS = (
    "status",
    "latency",
    "drop_before",
    "drop_after",
    "malformed",
    "status_after",
    "hold_reply",
    "rate_burst",
    "garbage_headers",
    "ok_without_ids",
    "proxy_503",
    "gzip_bomb",
)
"""The kinds of fault ``emu.faults.add(route, kind, ...)`` takes."""
DEFAULT_BOMB_SIZE = 1 << 30
"""What a ``gzip_bomb`` inflates to unless told: 1 GiB."""
_HTTP_DATE_WITH_OFFSET = "Wed, 21 Oct 2015 07:28:00 +0200"
GARBAGE_HEADERS: tuple[dict[str, str], ...] = (
    {"X-RateLimit-Limit": "inf", "X-RateLimit-Remaining": "nan", "X-RateLimit-Reset": "-1"},
    {"X-RateLimit-Limit": "-5", "X-RateLimit-Remaining": "-3", "X-RateLimit-Reset": "1e309"},
    {
        "X-RateLimit-Limit": "0",
        "X-RateLimit-Remaining": "lots",
        "X-RateLimit-Reset": _HTTP_DATE_WITH_OFFSET,
        "Retry-After": _HTTP_DATE_WITH_OFFSET,
    },
    {
        "X-RateLimit-Limit": "",
        "X-RateLimit-Remaining": "-inf",
        "X-RateLimit-Reset": "soon",
        "Retry-After": "-7",
    },
)
"""The header sets of ``garbage_headers``, applied in turn."""


@dataclass
class Fault:
    """One fault rule.

    ``route`` is a glob over ``"METHOD /path"`` (``"POST /v1/project/create/*"``); a pattern
    without a space matches the path under any method. Selection: ``sequence`` (a list of
    booleans consumed one per matching request), else ``probability`` (seeded), else
    ``times`` (the next N matching requests), else every matching request.

    ``status`` and ``message`` are used by ``status`` and ``status_after``; ``latency``
    (real seconds) by ``latency`` and ``hold_reply``; ``retry_after`` by ``rate_burst``;
    ``headers`` are set on the reply of any kind, last; ``size`` (inflated bytes) by
    ``gzip_bomb``.
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
    retry_after: float | str = 1
    headers: dict[str, str] | None = None
    size: int = DEFAULT_BOMB_SIZE
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
        retry_after: float | str = 1,
        headers: dict[str, str] | None = None,
        size: int = DEFAULT_BOMB_SIZE,
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
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or latency < 0:
            raise ValueError("latency must be a number of at least 0")
        if isinstance(retry_after, bool) or not isinstance(retry_after, (int, float, str)):
            raise ValueError("retry_after must be a number of seconds or a string")
        if headers is not None and not (
            isinstance(headers, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise ValueError("headers must map names to strings")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError("size must be a whole number of bytes, at least 0")
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
            retry_after=retry_after,
            headers=dict(headers) if headers is not None else None,
            size=size,
        )
        self._rules.append(rule)
        return rule

    def add_schedule(
        self, route: str, schedule: Sequence[str | Mapping[str, Any] | None]
    ) -> list[Fault]:
        """Add rules so that the i-th request matching ``route`` gets ``schedule[i]``.

        An entry is ``None`` (no fault), a kind, or a mapping of :meth:`add`'s keywords
        with ``kind`` (``{"kind": "status_after", "status": 502}``). One ``sequence`` rule
        is added per distinct entry; requests are counted among those that reach these
        rules (rules added earlier, and the rate limiter, come first). Past the end of the
        schedule the rules are gone.

        Raises:
            ValueError: an entry of an unknown kind or with invalid parameters.
        """
        specs: list[dict[str, Any]] = []
        slots: list[int | None] = []
        for entry in schedule:
            if entry is None:
                slots.append(None)
                continue
            spec: dict[str, Any] = {"kind": entry} if isinstance(entry, str) else dict(entry)
            if spec not in specs:
                specs.append(spec)
            slots.append(specs.index(spec))
        sequences: list[list[bool]] = [[] for _ in specs]
        for slot in slots:
            for i, sequence in enumerate(sequences):
                if slot is not None and i > slot:
                    break
                sequence.append(i == slot)
        rules = []
        for spec, sequence in zip(specs, sequences, strict=True):
            while sequence and not sequence[-1]:
                sequence.pop()  # a rule past its last hit is gone, as a spent sequence is
            params: dict[str, Any] = {k: v for k, v in spec.items() if k != "kind"}
            rules.append(self.add(route, str(spec["kind"]), sequence=sequence, **params))
        return rules

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
