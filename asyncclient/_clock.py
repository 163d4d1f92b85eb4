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
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Protocol

__all__ = [
    "SYSTEM_CLOCK",
    "Cancellable",
    "Clock",
    "SystemClock",
    "Timers",
    "pause",
    "timers_of",
    "within",
]


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

    def timers(self) -> Timers:
        """The running loop's own timers: ``loop.time()`` is ``time.monotonic()``."""
        return asyncio.get_running_loop()


SYSTEM_CLOCK = SystemClock()
"""The clock every part uses unless given another."""


async def pause() -> None:
    """Let the loop's other tasks run (a long loop of work on the event loop's thread
    calls it every so often); no time passes on any clock."""
    await asyncio.sleep(0)


class Cancellable(Protocol):
    """A scheduled callback that can be called off."""

    def cancel(self) -> object:
        """Call it off (nothing happens if it already ran)."""
        ...


class Timers(Protocol):
    """Callbacks at given times of a clock: what the shared wait deadlines run on."""

    def time(self) -> float:
        """The clock's monotonic seconds."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Call ``callback`` once ``time()`` reached ``when``."""
        ...


class _SleepingTimers:
    """Timers on any clock: one task per armed callback, asleep on the clock."""

    __slots__ = ("_clock",)

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def time(self) -> float:
        return self._clock.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        return asyncio.get_running_loop().create_task(self._at(when, callback))

    async def _at(self, when: float, callback: Callable[[], None]) -> None:
        while (left := when - self._clock.monotonic()) > 0:
            await self._clock.sleep(left)
        callback()


def timers_of(clock: Clock) -> Timers:
    """Timers on ``clock``, for the running loop.

    A clock may give its own with a ``timers()`` method: the real clock gives the loop's
    (``loop.time()`` is ``time.monotonic()``: a timer handle each, no task), and so may
    any clock on real time. Any other clock (a test's virtual time) gets tasks that sleep
    on it, so deadlines move with it.
    """
    own: Callable[[], Timers] | None = getattr(clock, "timers", None)
    return own() if own is not None else _SleepingTimers(clock)


async def within(
    clock: Clock, seconds: float | None, work: Callable[[], Awaitable[object]]
) -> bool:
    """Run ``work()`` until it returns or ``seconds`` pass on ``clock`` (None: no bound).

    Returns:
        True if it returned in time; False if it was cancelled when the time ran out.
        Whatever it raises is raised as is; cancelling the caller cancels it too.
    """

    if seconds is None:
        await work()
        return True

    async def run() -> object:
        return await work()

    task = asyncio.ensure_future(run())
    ring = asyncio.ensure_future(clock.sleep(max(0.0, seconds)))
    try:
        await asyncio.wait((task, ring), return_when=asyncio.FIRST_COMPLETED)
    finally:
        ring.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        return False
    task.result()  # its error, if any
    return True
