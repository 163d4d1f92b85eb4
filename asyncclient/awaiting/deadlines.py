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

Deadlines are read on the client's :class:`~asyncclient._clock.Clock` (one timer per
loop and clock): on the real clock the timer is the loop's own timer handle; on a
test's virtual time it sleeps on that clock, so a wait's timeout moves with it.
"""

from __future__ import annotations

import asyncio
import heapq
import weakref

from asyncclient._clock import SYSTEM_CLOCK, Cancellable, Clock, Timers, timers_of

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
    __slots__ = ("__weakref__", "_at", "_handle", "_heap", "_idle", "_timers")

    def __init__(self, timers: Timers) -> None:
        self._timers = timers
        self._heap: list[Expiry] = []
        self._handle: Cancellable | None = None
        self._at = 0.0
        self._idle = 0  # entries whose wait ended (dropped lazily)

    def start(self, delay: float) -> Expiry:
        when = self._timers.time() + max(0.0, delay)
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
            if self._idle == len(self._heap):  # no wait left: nothing to wake
                self._heap.clear()
                self._idle = 0
                if self._handle is not None:
                    self._handle.cancel()
                    self._handle = None
            elif self._idle > 64 and self._idle * 2 > len(self._heap):
                self._compact()  # most waits ended: give their entries back now

    def _compact(self) -> None:
        self._heap = [expiry for expiry in self._heap if expiry.active]
        heapq.heapify(self._heap)
        self._idle = 0

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = when
        self._handle = self._timers.call_at(when, self._fire)

    def _fire(self) -> None:
        self._handle = None
        now = self._timers.time()
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


_TIMERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, _Timer]] = (
    weakref.WeakKeyDictionary()
)
"""The shared timers of each loop, by the clock's identity (a timer keeps its clock)."""


def _timer(clock: Clock) -> _Timer:
    loop = asyncio.get_running_loop()
    timers = _TIMERS.get(loop)
    if timers is None:
        timers = _TIMERS[loop] = {}
    timer = timers.get(id(clock))
    if timer is None:
        timer = timers[id(clock)] = _Timer(timers_of(clock))
    return timer


def start(delay: float, clock: Clock = SYSTEM_CLOCK) -> Expiry:
    """A deadline ``delay`` seconds from now on ``clock``, on the loop's shared timer."""
    return _timer(clock).start(delay)


def end(expiry: Expiry, clock: Clock = SYSTEM_CLOCK) -> None:
    """The wait ended (done, failed or cancelled) before or at its deadline."""
    if expiry.active:
        _timer(clock).ended(expiry)
