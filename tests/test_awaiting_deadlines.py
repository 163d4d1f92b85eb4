"""Waiting jobs' deadlines on one timer per loop, on fake time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from asyncclient.awaiting.deadlines import _Timer, end, start
from tests.virtual_time import VirtualTime


class _Handle:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLoop:
    """What the timer uses of a loop: time() and call_at(), on a clock moved by hand."""

    def __init__(self) -> None:
        self.now = 0.0
        self.handles: list[_Handle] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], None]) -> _Handle:
        handle = _Handle(when, callback)
        self.handles.append(handle)
        return handle

    @property
    def armed(self) -> list[float]:
        return [h.when for h in self.handles if not h.cancelled]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for handle in [h for h in self.handles if not h.cancelled and h.when <= self.now]:
            handle.cancelled = True
            handle.callback()


def timer() -> tuple[_Timer, FakeLoop]:
    loop = FakeLoop()
    return _Timer(loop), loop  # type: ignore[arg-type]


async def test_one_handle_serves_every_deadline_earliest_first() -> None:
    t, loop = timer()
    late, early, middle = t.start(30.0), t.start(10.0), t.start(20.0)
    assert loop.armed == [10.0]  # one handle, for the earliest
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    early.waiter = waiter
    loop.advance(10.0)
    assert early.expired and waiter.done() and not middle.expired and not late.expired
    assert loop.armed == [20.0]
    loop.advance(15.0)
    assert middle.expired and not late.expired and loop.armed == [30.0]


async def test_a_wait_that_ended_never_expires_and_the_heap_is_compacted() -> None:
    t, loop = timer()
    ended = [t.start(100.0 + i) for i in range(200)]
    kept = t.start(500.0)
    for expiry in ended:
        t.ended(expiry)  # once most entries are idle, the heap is compacted there and then
    assert len(t._heap) <= 65 and kept in t._heap
    t.start(600.0)
    loop.advance(600.0)
    assert not any(e.expired for e in ended) and kept.expired


def test_a_later_deadline_keeps_the_earlier_handle(monkeypatch: Any) -> None:
    t, loop = timer()
    t.start(5.0)
    t.start(50.0)
    assert loop.armed == [5.0]
    t.start(1.0)  # an earlier one re-arms
    assert loop.armed == [1.0]


async def test_deadlines_move_with_the_clock_they_are_given() -> None:
    """A client on virtual time times its waits out on that time, not the loop's."""
    time = VirtualTime()
    clock = time.as_clock()
    expiry = start(5.0, clock)
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    expiry.waiter = waiter
    await time.advance(4.9)
    assert not expiry.expired and not waiter.done()
    await time.advance(0.1)
    assert expiry.expired and waiter.done()
    ended = start(1.0, clock)
    end(ended, clock)  # the last wait ended: the timer's sleeper is called off
    await time.advance(2.0)
    assert not ended.expired and time._heap == []
