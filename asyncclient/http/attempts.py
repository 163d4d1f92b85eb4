"""The I/O deadlines of the transport's attempts in flight, on one loop timer.

These are the one place of the core that reads the event loop's time: an attempt's
``total`` and ``read`` timeouts are I/O deadlines, kept on loop time as aiohttp and
``asyncio.timeout`` keep theirs, whatever clock the client paces by (a test's virtual
clock must not make a real socket time out, nor keep one open forever).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

__all__ = ["Attempt", "Deadlines", "seconds_of", "timed_out"]


class Attempt:
    """One attempt in flight: whether it started going out, and when it is out of time.

    ``due`` is when its ``total`` runs out (``inf``: never); ``read`` is the ``read``
    timeout (``0.0``: none), whose deadline ``read_at`` restarts when the request is
    written, when the response's head is in and at each chunk of the body.
    """

    __slots__ = ("cancelling", "due", "expired", "read", "read_at", "sent", "task")

    def __init__(self, task: asyncio.Task[Any] | None, due: float, read: float) -> None:
        self.sent = False
        self.task = task
        self.due = due
        self.read = read
        self.read_at = math.inf  # the read timer runs once the request is written
        self.expired = False
        self.cancelling = 0

    def started_sending(self) -> None:
        self.sent = True
        if self.read:
            self.read_at = self.task.get_loop().time() + self.read if self.task else math.inf

    def received(self, now: float) -> None:
        """Bytes of the response came: the read timer starts again."""
        if self.read:
            self.read_at = now + self.read

    def deadline(self, now: float) -> float:
        """When it runs out of time, or a time not after that (while it is not sent yet)."""
        if self.read and not self.sent:
            return min(self.due, now + self.read)  # the read timer cannot end sooner
        return min(self.due, self.read_at)


class Deadlines:
    """The deadlines of one transport's attempts in flight, watched by one loop timer.

    The timer is set for the nearest deadline an attempt may have when it comes in
    (with the transport's timeouts that is never nearer than the one already set); an
    attempt that ends just leaves. When the timer fires, the attempts out of time are
    cancelled (:meth:`AiohttpTransport.send` makes that a timeout) and the timer is set
    for the nearest deadline of the others: about once a ``read`` or ``total`` while
    requests come and go, whatever their number.
    """

    __slots__ = ("_at", "_attempts", "_handle", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._attempts: dict[Attempt, None] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._at = math.inf

    def add(self, state: Attempt, earliest: float) -> None:
        self._attempts[state] = None
        if earliest < self._at:
            self._arm(earliest)

    def discard(self, state: Attempt) -> None:
        self._attempts.pop(state, None)

    def _arm(self, at: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = at
        self._handle = self._loop.call_at(at, self._fire) if at < math.inf else None

    def _fire(self) -> None:
        self._handle, self._at = None, math.inf
        now = self._loop.time()
        nearest = math.inf
        for state in list(self._attempts):
            at = state.deadline(now)
            if at > now:
                nearest = min(nearest, at)
                continue
            del self._attempts[state]
            if state.task is not None and not state.task.done():
                state.expired = True
                state.task.cancel()
        if nearest < math.inf:
            self._arm(nearest)

    def time(self) -> float:
        return self._loop.time()

    def close(self) -> None:
        self._arm(math.inf)
        self._attempts.clear()


def seconds_of(limit: float | None) -> float:
    """A timeout in seconds; ``0.0`` for none (``None`` or not positive, as aiohttp reads it)."""
    return limit if limit is not None and limit > 0 else 0.0


def timed_out(state: Attempt) -> bool:
    """Whether a cancellation of the attempt is its own timeout (not the caller's cancel)."""
    if not state.expired:
        return False
    uncancel = getattr(state.task, "uncancel", None)  # 3.11+, or a task class that has it
    if uncancel is not None:
        # As asyncio.timeout: take our cancel back; one from elsewhere too is theirs.
        return bool(uncancel() <= state.cancelling)
    return True
