"""The service clock: wall time scaled by ``time_scale`` plus a manual offset."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone

__all__ = ["ServiceClock", "iso"]


def iso(ts: float) -> str:
    """Format a Unix time (seconds) as an ISO 8601 UTC timestamp with milliseconds."""
    dt = datetime.fromtimestamp(ts, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class ServiceClock:
    """Service time = ``start_wall + (monotonic - start_mono) * time_scale + offset``.

    ``time_scale=60`` makes one service minute pass per real second. ``advance()``
    jumps the service clock forward without sleeping.
    """

    def __init__(
        self,
        time_scale: float = 1.0,
        *,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        self.time_scale = float(time_scale)
        self._wall = wall
        self._mono = monotonic
        self._start_wall = wall()
        self._start_mono = monotonic()
        self.offset = 0.0
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> float:
        """Return the service time as Unix seconds."""
        elapsed = self._mono() - self._start_mono
        return self._start_wall + elapsed * self.time_scale + self.offset

    def wall(self) -> float:
        """Return the real wall-clock Unix time."""
        return self._wall()

    def to_real(self, service_seconds: float) -> float:
        """Convert a service duration into real seconds."""
        return service_seconds / self.time_scale

    def advance(self, seconds: float) -> None:
        """Move the service clock forward by ``seconds`` service seconds."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.offset += seconds
        for listener in list(self._listeners):
            listener()

    def on_advance(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every ``advance()``."""
        self._listeners.append(listener)
