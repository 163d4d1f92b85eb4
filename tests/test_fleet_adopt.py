"""A fleet adopts the limit the service announces (``X-RateLimit-Limit``), as a lone client does.

The shared bucket keeps the adopted limit in Redis, so every process of the fleet paces
at it. The rules are the lone client's: a higher limit only without a plan, a lower one
always, and a limit above the SDK's bound read as the bound. Against a real redis-server:
when it is missing these tests skip on a developer's machine and fail in CI (CI=true).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from asyncclient import AsyncClient, Plan, RateLimit
from asyncclient.emulator import Emulator
from asyncclient.fleet.bucket import RedisTokenBucket
from asyncclient.http.caller import Caller
from asyncclient.http.headers import MAX_LIMIT
from asyncclient.http.protocol import Request, Response
from tests.redis_server import require_redis
from tests.virtual_time import FastForward

if not require_redis():  # in CI a missing redis package fails the run
    pytest.importorskip("redis.asyncio")

KEY = "sk-fleet"


class Announcing:
    """A Sender whose every reply announces ``limit`` requests a minute."""

    def __init__(self, limit: str) -> None:
        self.limit = limit
        self.sent = 0

    async def send(self, request: Request) -> Response:
        self.sent += 1
        body = json.dumps({"success": True, "message": "ok", "data": None}).encode()
        return Response(200, {"X-RateLimit-Limit": self.limit}, body)


def process(redis: Any, plan: Plan | None, limit: str) -> tuple[Caller, RedisTokenBucket]:
    """One process of the fleet, its bucket and caller wired as ``AsyncClient(redis=...,
    plan=plan)`` wires them (the end-to-end tests below check that wiring)."""
    clock = FastForward()
    bucket = RedisTokenBucket.for_api_key(redis, KEY, plan, clock=clock)
    caller = Caller(Announcing(limit), limiter=bucket, clock=clock, adopt_limit=plan is None)
    return caller, bucket


async def shared_limit(redis: Any, bucket: Any) -> tuple[float, int] | None:
    """The limit the fleet adopted, as the bucket's hash in Redis holds it."""
    assert isinstance(bucket, RedisTokenBucket)
    minute, burst = await redis.hmget(bucket._key, "per_minute", "burst")
    return None if minute is None else (float(minute), int(burst))


async def get(caller: Caller, times: int = 1) -> None:
    for _ in range(times):
        await caller.call("GET", "/v1/video/v1")


# -- the rules, over scripted replies ---------------------------------------------------------


async def test_without_a_plan_the_announced_limit_becomes_the_fleets(redis: Any) -> None:
    told, bucket = process(redis, None, "1000")
    _, other = process(redis, None, "1000")
    await get(told)
    assert bucket.rate == Plan.PREMIUM.rate_limit  # after the first reply
    await get(told)  # the next call writes it into the shared bucket
    assert await shared_limit(redis, bucket) == (1000.0, 2000)
    await other.tokens()  # a process told nothing yet
    assert other.rate == Plan.PREMIUM.rate_limit


async def test_a_lower_limit_is_adopted_even_with_a_plan_and_shared(redis: Any) -> None:
    told, bucket = process(redis, Plan.PREMIUM, "10")
    _, other = process(redis, Plan.PREMIUM, "10")
    await get(told, 2)
    assert bucket.rate == Plan.FREE.rate_limit
    assert await shared_limit(redis, bucket) == (10.0, 20)
    await other.tokens()
    assert other.rate == Plan.FREE.rate_limit


async def test_a_higher_limit_is_not_adopted_with_a_plan(redis: Any) -> None:
    told, bucket = process(redis, Plan.PRO, "1000")
    await get(told, 2)
    assert bucket.rate == Plan.PRO.rate_limit
    assert await shared_limit(redis, bucket) is None


async def test_a_limit_above_the_bound_is_adopted_as_the_bound(redis: Any) -> None:
    told, bucket = process(redis, None, "20000000")
    await get(told, 2)
    assert bucket.rate.per_minute == MAX_LIMIT
    assert await shared_limit(redis, bucket) == (float(MAX_LIMIT), MAX_LIMIT)


async def test_the_same_limit_again_costs_no_round_trip(redis: Any) -> None:
    told, bucket = process(redis, None, "1000")
    script = bucket._script
    calls: list[str] = []

    async def counted(*, keys: list[str], args: list[object]) -> object:
        calls.append(str(args[5]))  # the adopt flag
        return await script(keys=keys, args=args)

    bucket._script = counted
    await get(told, 5)
    assert len(calls) == 5  # one call per request: the acquire's
    assert calls == ["0", "1", "0", "0", "0"]  # the adoption rode the second


# -- end to end: AsyncClient(redis=...) against the emulator ----------------------------------


@asynccontextmanager
async def fleet_client(
    emu: Emulator, key: str, redis_url: str, plan: RateLimit | None = None
) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(key, base_url=emu.url, plan=plan, redis=redis_url) as client:
        yield client


async def test_a_fleet_without_a_plan_adopts_premium_after_its_first_reply(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    """Issue: a lone fleet process on a Premium key paced the fleet at the Free plan's 10
    requests a minute (12 s per polling round)."""
    key = emu.add_team(plan="premium", credits=10)
    premium = emu.clock.time_scale * 1000  # announced per real minute: 60,000 at scale 60
    async with fleet_client(emu, key, redis_url) as one, fleet_client(emu, key, redis_url) as two:
        assert one.limiter.rate == Plan.FREE.rate_limit
        await one.integrations.list()
        assert one.limiter.rate.per_minute == premium  # after its first reply
        await one.integrations.list()
        assert await shared_limit(redis, one.limiter) == (premium, int(premium))
        other = two.limiter
        assert isinstance(other, RedisTokenBucket)
        await other.tokens()  # before any reply of its own
        assert other.rate.per_minute == premium


async def test_a_fleet_given_a_plan_is_lowered_by_the_service_never_raised(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    scale = emu.clock.time_scale
    premium_key = emu.add_team(plan="premium", credits=10)
    pro = Plan.PRO.rate_limit.scaled(scale)
    async with fleet_client(emu, premium_key, redis_url, pro) as client:
        await client.integrations.list()
        await client.integrations.list()
        assert client.limiter.rate == pro
        assert await shared_limit(redis, client.limiter) is None
    free_key = emu.add_team(plan="free", credits=10)
    premium = Plan.PREMIUM.rate_limit.scaled(scale)
    async with fleet_client(emu, free_key, redis_url, premium) as client:
        await client.integrations.list()
        await client.integrations.list()
        free = 10 * scale  # announced per real minute
        assert client.limiter.rate.per_minute == free
        assert await shared_limit(redis, client.limiter) == (free, int(free))
