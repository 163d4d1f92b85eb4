"""Time, injected: the one clock a client hands down to everything that paces or waits.

The limiter, the retries, the poller, a batch's spacing and its credit budget read
time only through a :class:`Clock`: ``monotonic()`` for intervals, ``sleep()`` to
wait, ``now()`` for the wall-clock timestamps the journal and reconciliation
compare with the service's. Pass your own to ``AsyncClient(clock=...)`` to run a
client on virtual time (the tests do).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """Monotonic seconds, an awaitable sleep, and the wall-clock time (UTC)."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes back."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (cancellable)."""
        ...

    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic``, ``asyncio.sleep``, ``datetime.now(UTC)``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<SystemClock>"

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


SYSTEM_CLOCK = SystemClock()
"""The clock every part uses unless given another."""
