"""Submissions first: background reads wait while a paid creation waits for a token.

A client's creations and its poller share one rate limit, first come, first served. On
a small plan a bulk run's submissions queue for tokens, and every token a poll takes
delays the next submission, so the run ends later than the plan allows. The client
keeps one :class:`Gate`: the request path holds it open (:meth:`Gate.foreground`) while
a creation waits for its token, and the poller awaits :meth:`Gate.turn` before each read,
so polling takes only the tokens the submissions leave and catches up after them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Gate"]


class Gate:
    """Counts foreground waiters; background work takes its turn when there are none."""

    __slots__ = ("_clear", "_waiting")

    def __init__(self) -> None:
        self._waiting = 0
        self._clear: asyncio.Event | None = None

    @property
    def waiting(self) -> int:
        """Foreground waiters now."""
        return self._waiting

    @contextmanager
    def foreground(self) -> Iterator[None]:
        """Hold background work back for as long as the block runs."""
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1
            if not self._waiting and self._clear is not None:
                self._clear.set()
                self._clear = None

    async def turn(self) -> None:
        """Return once no foreground work waits (at once when none does)."""
        while self._waiting:
            if self._clear is None:
                self._clear = asyncio.Event()
            await self._clear.wait()
