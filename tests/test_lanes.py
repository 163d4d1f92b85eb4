"""Priority lanes: interactive requests go ahead of bulk work on one limiter, in one
process (the token bucket, on virtual time) and across processes (the fleet's bucket in
a real redis-server)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

import asyncclient
from asyncclient import AsyncClient, Lane, RateLimit, TokenBucket, lane
from asyncclient.emulator import Emulator
from asyncclient.lanes import current_lane, set_bulk
from tests.virtual_time import VirtualTime

RATE = RateLimit(per_minute=60, burst=1)  # a token a second, none held back


def test_the_default_lane_is_interactive_and_a_block_marks_another() -> None:
    assert current_lane() is Lane.INTERACTIVE
    with lane("bulk") as chosen:
        assert chosen is Lane.BULK and current_lane() is Lane.BULK
        with lane(Lane.INTERACTIVE):
            assert current_lane() is Lane.INTERACTIVE
        assert current_lane() is Lane.BULK
    assert current_lane() is Lane.INTERACTIVE
    with (
        pytest.raises(ValueError, match="lane: must be one of 'interactive', 'bulk'"),
        lane("urgent"),
    ):
        pass
    assert asyncclient.Lane is Lane and asyncclient.lane is lane


async def test_tasks_started_in_a_bulk_block_inherit_it() -> None:
    with lane(Lane.BULK):
        inner = asyncio.get_running_loop().create_task(_lane_now())
    assert await inner is Lane.BULK
    context = contextvars.copy_context()
    context.run(set_bulk)
    assert context[asyncclient.lanes._LANE] is Lane.BULK
    assert current_lane() is Lane.INTERACTIVE  # set_bulk marked that context only


async def _lane_now() -> Lane:
    return current_lane()


async def test_an_interactive_request_waits_one_token_behind_a_saturating_batch() -> None:
    vt = VirtualTime()
    limiter = TokenBucket(RATE, clock=vt, sleep=vt.sleep)
    taken: list[tuple[str, float]] = []

    async def take(name: str) -> None:
        await limiter.acquire()
        taken.append((name, vt.now))

    with lane(Lane.BULK):  # 30 bulk requests queue for the bucket's tokens
        bulk = [asyncio.ensure_future(take(f"bulk{i}")) for i in range(30)]
    await vt.advance(5.5)  # the batch saturates the limit: one token a second
    assert len(taken) == 6
    click = asyncio.ensure_future(take("click"))  # a handler's creation, unmarked
    await vt.advance(2.0)
    assert click.done()
    when = dict(taken)["click"]
    assert when - 5.5 <= 1.0  # the next token was the click's, not the 24 queued ones'
    names = [name for name, _ in taken]
    assert names.index("click") == 6  # right after the tokens already given
    await vt.run_until_idle()
    await asyncio.gather(*bulk)
    assert len(taken) == 31
    assert taken[-1][1] == pytest.approx(30.0)  # the bucket gave a token every second


async def test_bulk_requests_alone_are_first_come_first_served() -> None:
    vt = VirtualTime()
    limiter = TokenBucket(RATE, clock=vt, sleep=vt.sleep)
    order: list[int] = []

    async def take(i: int) -> None:
        await limiter.acquire()
        order.append(i)

    with lane(Lane.BULK):
        tasks = [asyncio.ensure_future(take(i)) for i in range(10)]
    await vt.run_until_idle()
    await asyncio.gather(*tasks)
    assert order == list(range(10))
    assert vt.now == pytest.approx(9.0)


async def test_a_cancelled_interactive_waiter_lets_bulk_go_on() -> None:
    vt = VirtualTime()
    limiter = TokenBucket(RATE, clock=vt, sleep=vt.sleep)
    await limiter.acquire()  # the bucket is empty
    with lane(Lane.BULK):
        bulk = asyncio.ensure_future(limiter.acquire())
    click = asyncio.ensure_future(limiter.acquire())
    await vt.settle()
    click.cancel()
    await vt.advance(1.0)
    assert bulk.done() and not bulk.cancelled()


async def test_across_processes_a_bulk_caller_leaves_the_next_token_to_an_interactive_one(
    redis: object,
) -> None:
    pytest.importorskip("redis.asyncio")
    from asyncclient.fleet.bucket import RedisTokenBucket

    rate = RateLimit(per_minute=60, burst=2)  # a token a second, Redis's own clock
    handler = RedisTokenBucket(redis, "lanes", rate)  # a web worker's process
    batch = RedisTokenBucket(redis, "lanes", rate)  # a batch's process, the same key
    with lane(Lane.BULK):
        while await batch._reserve(take=True) <= 0:  # the batch takes what is there
            pass
    wait = await handler._reserve(take=True)  # a click: told to wait for the next token
    assert 0 < wait <= 1.0
    await asyncio.sleep(wait)
    with lane(Lane.BULK):  # the token came: the batch leaves it to the click
        assert await batch._reserve(take=True) > 0
    assert await handler._reserve(take=True) == 0  # the click takes it
    with lane(Lane.BULK):  # and the batch goes on with the next one
        later = await batch._reserve(take=True)
    assert 0 < later <= 1.0
    await asyncio.sleep(later + 0.05)
    with lane(Lane.BULK):
        assert await batch._reserve(take=True) == 0


class _Recording(TokenBucket):
    """The bucket, noting the lane of each request that takes a token."""

    def __init__(self, rate: RateLimit) -> None:
        super().__init__(rate)
        self.lanes: list[Lane] = []

    async def acquire(self) -> float:
        self.lanes.append(current_lane())
        return await super().acquire()


@pytest.mark.heavy
@pytest.mark.emulator(processing_seconds=1)
async def test_a_batch_and_the_poller_are_bulk_and_a_single_call_interactive(
    emu: Emulator,
) -> None:
    limiter = _Recording(RateLimit(per_minute=600_000, burst=1000))
    key = emu.add_team(plan="premium", credits=100_000)
    async with AsyncClient(key, base_url=emu.url, limiter=limiter) as client:
        await client.templates.get("tpl_welcome")
        assert limiter.lanes == [Lane.INTERACTIVE]
        rows = [
            {"title": f"Row {i}", "first_name": "A", "product": "B", "logo": ""} for i in range(3)
        ]
        batch = client.templates.generate_many("tpl_welcome", rows, spacing=0)
        task = asyncio.ensure_future(batch)
        while not task.done():
            await asyncio.sleep(0.02)
            emu.advance(5)
        assert [r.status for r in await task] == ["completed"] * 3
        assert len(limiter.lanes) > 4 and set(limiter.lanes[1:]) == {Lane.BULK}
        limiter.lanes.clear()
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=emu.catalog.avatars[0], voice_id=emu.catalog.voices[0]
        )
        assert limiter.lanes == [Lane.INTERACTIVE]  # the creation itself
        waiting = asyncio.ensure_future(job.wait())
        while not waiting.done():
            await asyncio.sleep(0.02)
            emu.advance(5)
        await waiting
        assert limiter.lanes[0] is Lane.INTERACTIVE and Lane.BULK in limiter.lanes[1:]
