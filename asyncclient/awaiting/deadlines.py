"""Deadlines of waiting jobs on one timer per event loop.

Every ``await job`` has a deadline (an hour by default). A cancel scope per waiting job
(``asyncio.timeout``) schedules a timer handle of its own and wraps the wait in a
timeout object: about 450 bytes a job, a fifth of what an awaited job holds at 10,000
jobs. Here the deadlines of all waiting jobs of a loop share one heap and one timer
handle (armed for the earliest); a deadline costs one small entry. When it passes, the
entry is marked expired and the future the job waits on is woken, and the job's
``wait`` raises :class:`~asyncclient.errors.JobTimeoutError`. Entries of waits that
ended early are dropped lazily, and the heap is compacted as soon as they are most of
it (amortised, a constant cost per wait).
"""

from __future__ import annotations

import asyncio
import heapq
import weakref

__all__ = ["Expiry", "end", "start"]


class Expiry:
    """One wait's deadline: ``expired`` once it passed; ``waiter`` is woken then."""

    __slots__ = ("active", "expired", "waiter", "when")

    def __init__(self, when: float) -> None:
        self.when = when
        self.active = True
        self.expired = False
        self.waiter: asyncio.Future[None] | None = None

    def __lt__(self, other: Expiry) -> bool:  # the heap's order: no tuple per entry
        return self.when < other.when

    def cancel(self) -> None:
        """The wait ended before its deadline."""
        self.active = False
        self.waiter = None


class _Timer:
    __slots__ = ("__weakref__", "_at", "_handle", "_heap", "_idle", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[Expiry] = []
        self._handle: asyncio.TimerHandle | None = None
        self._at = 0.0
        self._idle = 0  # entries whose wait ended (dropped lazily)

    def start(self, delay: float) -> Expiry:
        when = self._loop.time() + max(0.0, delay)
        expiry = Expiry(when)
        if self._idle > 64 and self._idle * 2 > len(self._heap):
            self._compact()
        heapq.heappush(self._heap, expiry)
        if self._handle is None or when < self._at:
            self._arm(when)
        return expiry

    def ended(self, expiry: Expiry) -> None:
        if expiry.active:
            expiry.cancel()
            self._idle += 1
            if self._idle > 64 and self._idle * 2 > len(self._heap):
                self._compact()  # most waits ended: give their entries back now

    def _compact(self) -> None:
        self._heap = [expiry for expiry in self._heap if expiry.active]
        heapq.heapify(self._heap)
        self._idle = 0

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = when
        self._handle = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._handle = None
        now = self._loop.time()
        heap = self._heap
        while heap and heap[0].when <= now:
            expiry = heapq.heappop(heap)
            if not expiry.active:
                self._idle -= 1
                continue
            expiry.active = False
            expiry.expired = True
            waiter, expiry.waiter = expiry.waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        if heap:
            self._arm(heap[0].when)


_TIMERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Timer] = (
    weakref.WeakKeyDictionary()
)


def _timer() -> _Timer:
    loop = asyncio.get_running_loop()
    timer = _TIMERS.get(loop)
    if timer is None:
        timer = _TIMERS[loop] = _Timer(loop)
    return timer


def start(delay: float) -> Expiry:
    """A deadline ``delay`` seconds from now on the running loop's shared timer."""
    return _timer().start(delay)


def end(expiry: Expiry) -> None:
    """The wait ended (done, failed or cancelled) before or at its deadline."""
    if expiry.active:
        _timer().ended(expiry)
