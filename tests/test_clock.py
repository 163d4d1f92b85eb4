"""The one clock: timers and bounded waits on the clock a client is given, on virtual time."""

from __future__ import annotations

import asyncio

import pytest

from asyncclient._clock import SYSTEM_CLOCK, timers_of, within
from tests.virtual_time import VirtualTime


async def test_the_real_clocks_timers_are_the_loops_own() -> None:
    assert timers_of(SYSTEM_CLOCK) is asyncio.get_running_loop()


async def test_timers_on_another_clock_move_with_it() -> None:
    time = VirtualTime()
    timers = timers_of(time.as_clock())
    fired: list[float] = []
    timers.call_at(5.0, lambda: fired.append(time.now))
    called_off = timers.call_at(3.0, lambda: fired.append(-1.0))
    called_off.cancel()
    await time.advance(4.0)
    assert fired == [] and timers.time() == 4.0
    await time.advance(1.0)
    assert fired == [5.0]


async def test_within_returns_true_when_the_work_ends_in_time() -> None:
    time = VirtualTime()

    async def work() -> None:
        await time.sleep(2.0)

    result = asyncio.ensure_future(within(time.as_clock(), 3.0, work))
    await time.advance(2.0)
    assert await result is True


async def test_within_cancels_the_work_when_the_clock_runs_out() -> None:
    time = VirtualTime()
    cancelled = asyncio.Event()

    async def work() -> None:
        try:
            await time.sleep(10.0)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    result = asyncio.ensure_future(within(time.as_clock(), 3.0, work))
    await time.advance(3.0)
    assert await result is False and cancelled.is_set()


async def test_within_raises_what_the_work_raises() -> None:
    time = VirtualTime()

    async def work() -> None:
        raise LookupError("no such video")

    with pytest.raises(LookupError, match="no such video"):
        await within(time.as_clock(), 3.0, work)
