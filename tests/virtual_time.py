"""Virtual time for tests: a clock and a sleep that only move when the test says so."""

from __future__ import annotations

import asyncio
import heapq
import itertools


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
