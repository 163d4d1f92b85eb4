"""Spec 8.1: a token bucket per key, headers on every response, 429 with Retry-After."""

from __future__ import annotations

import email.utils
import math

import pytest

from asyncclient.emulator import PLANS, Emulator

from .conftest import Api


@pytest.mark.parametrize("plan", list(PLANS))
async def test_headers_follow_the_plan(api: Api, emu: Emulator, plan: str) -> None:
    key = emu.add_team(plan=plan)
    per_minute, burst = PLANS[plan]
    status, headers, _ = await api.get("/v1/integration/list", key=key)
    assert status == 200
    # Per real minute: the emulator's clock runs time_scale (60) times faster.
    assert headers["X-RateLimit-Limit"] == str(per_minute * 60)
    assert headers["X-RateLimit-Remaining"] == str(burst - 1)
    reset = int(headers["X-RateLimit-Reset"])
    date = email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
    assert date - 1 <= reset <= date + 5


async def test_burst_then_429_then_refill(api: Api, emu: Emulator) -> None:
    key = emu.add_team(plan="free")  # 10 a minute, burst 20
    for i in range(20):
        status, headers, _ = await api.get("/v1/integration/list", key=key)
        assert status == 200
        assert headers["X-RateLimit-Remaining"] == str(19 - i)
    status, headers, body = await api.get("/v1/integration/list", key=key)
    assert (status, body) == (429, {"success": False, "message": "rate limit exceeded"})
    assert headers["X-RateLimit-Remaining"] == "0"
    # one token takes 6 service seconds = 0.1 real second at time_scale 60: rounded up to 1
    assert headers["Retry-After"] == "1"
    assert emu.counters.rate_limited == 1
    emu.advance(6.5)
    status, headers, _ = await api.get("/v1/integration/list", key=key)
    assert status == 200
    assert headers["X-RateLimit-Remaining"] == "0"


async def test_retry_after_is_enough_in_real_seconds(api: Api) -> None:
    async with Emulator(time_scale=1.0) as slow:
        key = slow.add_team(per_minute=6, burst=1)  # one token per 10 real seconds
        api2 = Api(api.session, slow.url, key)
        assert (await api2.get("/v1/integration/list"))[0] == 200
        status, headers, _ = await api2.get("/v1/integration/list")
        assert status == 429
        retry_after = int(headers["Retry-After"])
        assert retry_after == 10
        slow.advance(retry_after - 0.5)
        assert (await api2.get("/v1/integration/list"))[0] == 429
        slow.advance(1.0)
        assert (await api2.get("/v1/integration/list"))[0] == 200


async def test_reset_is_unix_time_relative_to_date(api: Api) -> None:
    async with Emulator(time_scale=1.0) as slow:
        key = slow.add_team(per_minute=60, burst=10)
        _, headers, _ = await Api(api.session, slow.url, key).get("/v1/integration/list")
        date = email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
        # one token used: full again after one real second
        assert math.isclose(int(headers["X-RateLimit-Reset"]), date + 1, abs_tol=1.5)


async def test_buckets_are_per_key_and_401_costs_nothing(api: Api, emu: Emulator) -> None:
    key = emu.add_team(per_minute=2, burst=2)
    for _ in range(5):
        assert (await api.get("/v1/integration/list", key="bad"))[0] == 401
    assert (await api.get("/v1/integration/list", key=key))[0] == 200
    assert (await api.get("/v1/integration/list", key=key))[0] == 200
    status, headers, _ = await api.get("/v1/integration/list", key=key)
    assert status == 429
    assert headers["X-RateLimit-Limit"] == "120"  # 2 a service minute, at time scale 60
    other = emu.add_key(key)
    assert (await api.get("/v1/integration/list", key=other))[0] == 200


async def test_error_responses_carry_headers(api: Api) -> None:
    status, headers, _ = await api.get("/v1/video/nope")
    assert status == 404
    assert "X-RateLimit-Remaining" in headers
    status, headers, _ = await api.post("/v1/project/create/ugc-ads", {})
    assert status == 400
    assert "X-RateLimit-Reset" in headers
