"""Virtual time for tests: a clock and a sleep that only move when the test says so."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from datetime import datetime, timezone


class VirtualTime:
    """``clock()`` returns virtual seconds; ``await sleep(d)`` waits until ``advance`` passes it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._ids = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self.now + max(0.0, delay), next(self._ids), fut))
        await fut

    async def settle(self) -> None:
        """Let every runnable task run until it blocks again."""
        for _ in range(20):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking each sleeper at its own deadline, in order."""
        target = self.now + seconds
        await self.settle()
        while self._heap and self._heap[0][0] <= target:
            deadline, _, fut = heapq.heappop(self._heap)
            self.now = max(self.now, deadline)
            if not fut.done():
                fut.set_result(None)
            await self.settle()
        self.now = target
        await self.settle()

    async def run_until_idle(self, limit: float = 1e6) -> None:
        """Advance to each pending deadline until nobody sleeps (bounded by ``limit``)."""
        await self.settle()
        while self._heap and self._heap[0][0] - self.now <= limit:
            await self.advance(self._heap[0][0] - self.now)

    def monotonic(self) -> float:
        """``clock.monotonic()`` of asyncclient's Clock protocol."""
        return self.now

    def as_clock(self) -> VirtualClock:
        """This virtual time as asyncclient's Clock (for ``clock=``)."""
        return VirtualClock(self)


class VirtualClock:
    """asyncclient's Clock on a :class:`VirtualTime`: sleeps wait for ``advance``;
    wall-clock time stays real (the emulator compares timestamps with it)."""

    def __init__(self, time: VirtualTime) -> None:
        self.time = time

    def monotonic(self) -> float:
        return self.time.now

    async def sleep(self, seconds: float) -> None:
        await self.time.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class FastForward:
    """A clock whose sleeps return at once, moving its time on by what they asked.

    ``sleeps`` records every sleep; ``on_sleep`` (if given) is called with each
    delay, and ``pause`` real seconds pass per sleep (to let other tasks run).
    Wall-clock time stays real: the emulator compares timestamps with it.
    """

    def __init__(
        self,
        start: float = 0.0,
        *,
        pause: float = 0.0,
        on_sleep: Callable[[float], object] | None = None,
    ) -> None:
        self.time = start
        self.sleeps: list[float] = []
        self._pause = pause
        self._on_sleep = on_sleep

    def monotonic(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(self._pause)  # what is ready runs first, at the sleep's start
        self.time += max(0.0, seconds)
        if self._on_sleep is not None:
            self._on_sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(timezone.utc)
