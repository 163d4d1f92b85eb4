"""The Redis-backed limiter against a real redis-server started on a free loopback port.

When redis-server is missing these tests skip on a developer's machine and fail in CI
(CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from asyncclient import Plan, RateLimit
from asyncclient.emulator import Emulator
from asyncclient.fleet.bucket import RedisTokenBucket

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
