"""The Redis-backed limiter against a real redis-server started on a free loopback port.

When redis-server is missing these tests skip on a developer's machine and fail in CI
(CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncclient import Plan, RateLimit
from asyncclient.emulator import Emulator
from asyncclient.fleet.bucket import RedisTokenBucket
from tests.virtual_time import FastForward

aioredis = pytest.importorskip("redis.asyncio")


async def test_burst_then_a_computed_wait(redis: object) -> None:
    bucket = RedisTokenBucket(redis, "t1", RateLimit(per_minute=60, burst=4))  # capacity 3.95
    assert [await bucket._reserve(take=True) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = await bucket._reserve(take=True)
    assert 0.0 < wait <= 0.05  # 0.95 left: the reserve is 50 ms at one token a second
    bucket.observe(1)  # the service: one left, so 0.95 for the client
    await bucket._reserve(take=False)
    assert await bucket.tokens() < 1.0


async def test_two_buckets_with_one_name_share_tokens(redis: object) -> None:
    rate = RateLimit(per_minute=60, burst=3)  # capacity 2
    a = RedisTokenBucket(redis, "shared", rate)
    b = RedisTokenBucket(redis, "shared", rate)
    other = RedisTokenBucket(redis, "other", rate)
    assert await a._reserve(take=True) == 0.0
    assert await b._reserve(take=True) == 0.0
    assert await a._reserve(take=True) > 0  # b took the second token
    assert await other._reserve(take=True) == 0.0


async def test_observe_and_pause_reach_every_process(redis: object) -> None:
    rate = Plan.PREMIUM.rate_limit
    a = RedisTokenBucket(redis, "sync", rate)
    b = RedisTokenBucket(redis, "sync", rate)
    a.observe(2)  # the service says 2 remain; the client keeps 50 ms of refill in reserve
    assert await a._reserve(take=True) == 0.0
    assert await b._reserve(take=True) > 0  # so only one could be taken, by any process
    a.observe(0, reset_after=12.0)  # Premium refills 1000/min: 12 s means others used it
    await a._reserve(take=False)  # observations travel with the next call of the one told
    # 12 s less the header's one-second granularity, plus the 50 ms reserve.
    expected = 11.0 + 0.05
    assert expected - 0.1 < await b._reserve(take=True) <= expected
    a.pause(30)
    await a._reserve(take=False)
    assert 29.0 < await b._reserve(take=True) <= 30.0


async def test_key_is_hashed_into_the_name(redis: object) -> None:
    bucket = RedisTokenBucket.for_api_key(redis, "sk-secret", Plan.FREE)
    await bucket.acquire()
    keys = [k.decode() for k in await redis.keys("*")]  # type: ignore[attr-defined]
    assert len(keys) == 1 and "sk-secret" not in keys[0]
    assert keys[0].startswith("asyncclient:ratelimit:key-")


@pytest.mark.heavy
async def test_three_processes_share_one_key_without_a_429(redis_url: str) -> None:
    scale = 600.0  # Free: 10 a service minute = 100 a real second, burst 20
    worker = Path(__file__).with_name("redis_worker.py")
    rate = Plan.FREE.rate_limit.scaled(scale)
    async with Emulator(time_scale=scale) as emu:
        key = emu.add_team(plan="free", credits=10)
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                str(worker),
                emu.url,
                key,
                redis_url,
                "25",
                str(rate.per_minute),
                str(rate.burst),
                stdout=asyncio.subprocess.PIPE,
                cwd=str(worker.parent.parent),
            )
            for _ in range(3)
        ]
        outputs = [await p.communicate() for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0]
        assert [out.decode().split()[0] for out, _ in outputs] == ["ok=25"] * 3
        # 75 requests against one Free key: the shared bucket kept them all under the limit.
        assert emu.counters.rate_limited == 0
        assert emu.counters.statuses[200] == 75


async def test_acquires_with_tokens_on_hand_go_at_once(redis: object) -> None:
    """While tokens are on hand no acquire queues behind another's round trip; once
    one must wait, the rest queue behind it."""
    bucket = RedisTokenBucket(redis, "concurrent", RateLimit(per_minute=60_000, burst=100))
    script = bucket._script
    in_flight = most = 0

    async def counted(**kwargs: object) -> object:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            return await script(**kwargs)
        finally:
            in_flight -= 1

    bucket._script = counted
    await asyncio.gather(*(bucket.acquire() for _ in range(20)))
    assert most > 1  # a lock held across each round trip would keep this at 1


async def test_an_unreachable_redis_paces_the_process_alone() -> None:
    """Requests go on, paced by a bucket of the process's own, when Redis is down."""
    down = aioredis.from_url("redis://127.0.0.1:1/0")
    try:
        bucket = RedisTokenBucket(down, "down", RateLimit(per_minute=60_000, burst=10))
        waits = [await asyncio.wait_for(bucket.acquire(), 5) for _ in range(5)]
        assert all(w < 1.0 for w in waits)
        assert bucket._fallback is not None and bucket._fallback_until > 0
    finally:
        await down.aclose()


# -- the fleet's limit: adopted by one process, followed by every other -----------------------


async def shared_limit(redis: Any, bucket: RedisTokenBucket) -> tuple[float, int] | None:
    """The limit the fleet adopted, as the bucket's hash in Redis holds it."""
    minute, burst = await redis.hmget(bucket._key, "per_minute", "burst")
    return None if minute is None else (float(minute), int(burst))


async def drain(bucket: RedisTokenBucket) -> tuple[int, float]:
    """Take tokens until one must be waited for: how many were taken, and that wait."""
    taken = 0
    while (wait := await bucket._reserve(take=True)) <= 0:
        taken += 1
        assert taken < 100, "the bucket holds more than the Free plan's burst"
    return taken, wait


async def test_a_limit_adopted_by_one_process_paces_every_other(redis: Any) -> None:
    """Two processes of a fleet without a plan: the one told Premium writes it into the
    shared bucket, and the other, told nothing yet, paces at it."""
    a = RedisTokenBucket(redis, "fleet")
    b = RedisTokenBucket(redis, "fleet")
    assert a.rate == b.rate == Plan.FREE.rate_limit  # no plan: the Free plan's pace at first
    assert await a._reserve(take=True) == 0.0  # 18.99 of the Free burst left
    assert a.adopt(Plan.PREMIUM.rate_limit)
    assert a.rate == Plan.PREMIUM.rate_limit  # this process at once
    assert await shared_limit(redis, a) is None  # the fleet with its next call
    assert await a._reserve(take=True) == 0.0
    assert await shared_limit(redis, a) == (1000.0, 2000)
    await b._reserve(take=False)
    assert b.rate == Plan.PREMIUM.rate_limit
    taken, wait = await drain(b)
    # The tokens on hand carried over (not the Premium burst), and the next one comes at
    # Premium's pace: (1 + its 50 ms reserve) / (1000/60 a second) = 0.11 s, not 6 s.
    assert 15 <= taken <= 18
    assert 0.0 < wait <= 0.11


async def test_a_lowered_limit_cuts_the_shared_tokens_to_its_burst(redis: Any) -> None:
    a = RedisTokenBucket(redis, "lowered", Plan.PREMIUM)
    b = RedisTokenBucket(redis, "lowered", Plan.PREMIUM)
    assert await a._reserve(take=True) == 0.0  # 1998.2 on hand
    a.adopt(Plan.FREE.rate_limit)  # the service knows best
    await a._reserve(take=False)  # carried with its next call
    taken, _ = await drain(b)
    assert b.rate == Plan.FREE.rate_limit
    assert taken == 19  # the Free burst less its 50 ms reserve: 19.99 tokens
    b.observe(0)  # none left: the next token comes at Free's pace, (1 + 0.008) / (1/6 a second)
    assert await b._reserve(take=True) == pytest.approx(6.05)


async def test_a_process_given_a_plan_follows_a_lower_fleet_limit_never_a_higher(
    redis: Any,
) -> None:
    planned = RedisTokenBucket(redis, "mixed", Plan.PRO)
    follower = RedisTokenBucket(redis, "mixed")
    follower.adopt(Plan.PREMIUM.rate_limit)
    await follower._reserve(take=True)
    await planned._reserve(take=True)
    assert planned.rate == Plan.PRO.rate_limit  # a plan is never raised
    assert await shared_limit(redis, planned) == (1000.0, 2000)
    follower.adopt(Plan.STARTER.rate_limit)
    await follower._reserve(take=True)
    await planned._reserve(take=True)
    assert planned.rate == Plan.STARTER.rate_limit  # lower: followed


async def test_adopting_the_limit_in_use_carries_nothing_to_redis(redis: Any) -> None:
    bucket = RedisTokenBucket(redis, "same", Plan.PRO)
    script = bucket._script
    adopted: list[str] = []

    async def recorded(*, keys: list[str], args: list[object]) -> object:
        adopted.append(str(args[5]))
        return await script(keys=keys, args=args)

    bucket._script = recorded
    for _ in range(3):
        assert bucket.adopt(Plan.PRO.rate_limit)
        await bucket.acquire()
    assert bucket.adopt(RateLimit(per_minute=300.0, burst=500))  # equal to Pro's
    await bucket.acquire()
    assert adopted == ["0"] * 4 and await shared_limit(redis, bucket) is None


async def test_spare_is_the_last_count_refilled_since(redis: Any) -> None:
    clock = FastForward()
    bucket = RedisTokenBucket(redis, "spare", RateLimit(per_minute=60, burst=4), clock=clock)
    assert bucket.spare() is None  # nothing seen yet
    await bucket.acquire()
    assert bucket.spare() == pytest.approx(2.95)  # capacity 3.95, one taken
    clock.time += 0.5
    assert bucket.spare() == pytest.approx(3.45)  # one token a second
    clock.time += 60
    assert bucket.spare() == pytest.approx(3.95)  # never above the capacity
