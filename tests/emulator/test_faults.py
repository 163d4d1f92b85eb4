"""Injected faults: status, latency, drops before and after processing, malformed JSON,
errors and held replies after processing, 429 bursts, garbage rate-limit headers."""

from __future__ import annotations

import asyncio
import json
import time
import zlib

import aiohttp
import pytest

from asyncclient.emulator import FAULT_KINDS, GARBAGE_HEADERS, Emulator

from .conftest import Api

UGC = {"script": "Hi", "avatarId": "avatar_001", "voiceId": "voice_001", "media": ["media_vid_001"]}
CREATE = "/v1/project/create/ugc-ads"


async def test_status_fault_exact_times(api: Api, emu: Emulator) -> None:
    emu.faults.add("POST /v1/project/create/*", "status", status=503, message="busy", times=2)
    for _ in range(2):
        status, headers, body = await api.post(CREATE, UGC)
        assert (status, body) == (503, {"success": False, "message": "busy"})
        assert "X-RateLimit-Limit" in headers
    assert emu.store.projects == {}
    status, _, _ = await api.post(CREATE, UGC)
    assert status == 200
    assert emu.faults.rules == []


async def test_route_pattern_and_method(api: Api, emu: Emulator) -> None:
    emu.faults.add("GET /v1/video/*", "status", status=500)
    assert (await api.post(CREATE, UGC))[0] == 200
    assert (await api.get("/v1/video/list"))[0] == 500
    emu.faults.clear()
    assert (await api.get("/v1/video/list"))[0] == 200


async def test_sequence(api: Api, emu: Emulator) -> None:
    emu.faults.add(
        "/v1/integration/list", "status", status=502, sequence=[False, True, False, True]
    )
    statuses = [(await api.get("/v1/integration/list"))[0] for _ in range(6)]
    assert statuses == [200, 502, 200, 502, 200, 200]


async def test_probability_is_seeded(api: Api) -> None:
    async def run() -> list[int]:
        async with Emulator(seed=5) as emu:
            key = emu.add_team(plan="premium")
            emu.faults.add("*", "status", status=500, probability=0.5)
            a = Api(api.session, emu.url, key)
            return [(await a.get("/v1/integration/list"))[0] for _ in range(20)]

    first, second = await run(), await run()
    assert first == second
    assert 500 in first
    assert 200 in first


async def test_latency(api: Api, emu: Emulator) -> None:
    emu.faults.add("GET /v1/integration/list", "latency", latency=0.3, times=1)
    start = time.monotonic()
    status, _, _ = await api.get("/v1/integration/list")
    assert status == 200
    assert time.monotonic() - start >= 0.3


async def test_drop_before_processing(api: Api, emu: Emulator, key: str) -> None:
    emu.faults.add(f"POST {CREATE}", "drop_before", times=1)
    credits = emu.credits(key)
    with pytest.raises(aiohttp.ClientConnectionError):
        await api.post(CREATE, UGC)
    assert emu.store.projects == {}
    assert emu.credits(key) == credits
    assert emu.requests[-1].fault == "drop_before"


async def test_drop_after_processing(api: Api, emu: Emulator, key: str) -> None:
    emu.faults.add(f"POST {CREATE}", "drop_after", times=1)
    with pytest.raises(aiohttp.ClientConnectionError):
        await api.post(CREATE, UGC)
    assert len(emu.store.projects) == 1  # the project exists; the client saw a reset
    _, _, listed = await api.get("/v1/video/list")
    assert listed["data"]["total"] == 1


async def test_malformed_json(api: Api, emu: Emulator) -> None:
    emu.faults.add(f"POST {CREATE}", "malformed", times=1)
    async with api.session.post(
        api.base + CREATE, json=UGC, headers={"x-api-key": api.key or ""}
    ) as r:
        assert r.status == 200
        raw = await r.read()
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    assert len(emu.store.projects) == 1


def test_bad_fault_rules() -> None:
    emu = Emulator()
    with pytest.raises(ValueError, match="unknown fault kind"):
        emu.faults.add("*", "explode")
    with pytest.raises(ValueError, match="probability"):
        emu.faults.add("*", "status", probability=2.0)


async def test_control_api_faults(api: Api, emu: Emulator) -> None:
    async with api.session.post(
        emu.url + "/_emulator/faults",
        json={"route": "GET /v1/integration/list", "kind": "status", "status": 418, "times": 1},
    ) as resp:
        assert resp.status == 201
        assert (await resp.json())["kind"] == "status"
    assert (await api.get("/v1/integration/list"))[0] == 418
    async with api.session.post(emu.url + "/_emulator/faults", json={"kind": "nope"}) as resp:
        assert resp.status == 400
    emu.faults.add("*", "status")
    async with api.session.delete(emu.url + "/_emulator/faults") as resp:
        assert resp.status == 200
    assert emu.faults.rules == []


# -- faults of "money-safe under every fault": each processes (or not) as documented ------


async def test_counters_count_faults_by_kind(api: Api, emu: Emulator) -> None:
    emu.faults.add(f"POST {CREATE}", "status", status=503, times=2)
    emu.faults.add("GET /v1/integration/list", "latency", latency=0.0, times=1)
    for _ in range(2):
        await api.post(CREATE, UGC)
    await api.get("/v1/integration/list")
    await api.get("/v1/integration/list")
    assert emu.counters.faults == {"status": 2, "latency": 1}
    assert emu.counters.to_json()["faults"] == {"status": 2, "latency": 1}


@pytest.mark.parametrize("status", [500, 502, 504])
async def test_status_after_processing(api: Api, emu: Emulator, key: str, status: int) -> None:
    emu.faults.add(f"POST {CREATE}", "status_after", status=status, message="oops", times=1)
    credits = emu.credits(key)
    got, headers, body = await api.post(CREATE, UGC)
    assert (got, body) == (status, {"success": False, "message": "oops"})
    assert "X-RateLimit-Limit" in headers
    (project,) = emu.store.projects.values()  # processed and charged all the same
    assert emu.credits(key) < credits
    record = emu.requests[-1]
    assert (record.status, record.fault, record.project) == (status, "status_after", project.id)
    assert emu.counters.faults["status_after"] == 1


async def test_hold_reply_after_processing(api: Api, emu: Emulator, key: str) -> None:
    emu.faults.add(f"POST {CREATE}", "hold_reply", latency=0.5, times=1)
    credits = emu.credits(key)
    timeout = aiohttp.ClientTimeout(total=0.1)
    start = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):  # the builtin one only from Python 3.11
        await api.post(CREATE, UGC, timeout=timeout)
    assert time.monotonic() - start < 0.4  # the client gave up after sending ...
    (project,) = emu.store.projects.values()  # ... yet the project exists and is charged
    assert emu.credits(key) < credits
    await asyncio.sleep(0.6)  # the held reply goes out to nobody; the log records it
    record = emu.requests[-1]
    assert (record.fault, record.project, record.name) == ("hold_reply", project.id, None)
    assert record.status in (200, 499)
    # a patient client gets the reply
    emu.faults.add(f"POST {CREATE}", "hold_reply", latency=0.2, times=1)
    start = time.monotonic()
    status, _, body = await api.post(CREATE, UGC)
    assert status == 200
    assert time.monotonic() - start >= 0.2
    assert body["data"]["projectId"] in emu.store.projects
    assert emu.counters.faults["hold_reply"] == 2


async def test_creation_records_name_and_project(api: Api, emu: Emulator) -> None:
    emu.faults.add(f"POST {CREATE}", "drop_after", times=1)
    with pytest.raises(aiohttp.ClientConnectionError):
        await api.post(CREATE, {**UGC, "name": "Ad for Ann"})
    (project,) = emu.store.projects.values()
    record = emu.requests[-1]
    assert (record.name, record.project, record.fault) == ("Ad for Ann", project.id, "drop_after")
    assert record.to_json()["project"] == project.id
    status, _, _ = await api.post(CREATE, {**UGC, "name": "Ad for Bo", "avatarId": "nope"})
    assert status == 400
    assert (emu.requests[-1].name, emu.requests[-1].project) == ("Ad for Bo", None)


async def test_rate_burst(api: Api, emu: Emulator, key: str) -> None:
    emu.faults.add("*", "rate_burst", retry_after=3, times=3)
    credits = emu.credits(key)
    # Per real minute, as every other reply announces it (time scale 60).
    team_rate = round(emu.store.keys[key].bucket.per_minute * emu.clock.time_scale)
    for _ in range(3):
        before = emu.now()  # Reset is on the service's clock, as Date is
        status, headers, body = await api.post(CREATE, UGC)
        assert (status, body) == (429, {"success": False, "message": "rate limit exceeded"})
        assert headers["Retry-After"] == "3"
        assert headers["X-RateLimit-Limit"] == str(team_rate)
        assert headers["X-RateLimit-Remaining"] == "0"
        assert int(before) + 3 <= int(headers["X-RateLimit-Reset"]) <= emu.now() + 4
    assert emu.store.projects == {}  # nothing processed, nothing charged
    assert emu.credits(key) == credits
    assert [r.fault for r in emu.requests] == ["rate_burst"] * 3
    assert emu.counters.faults["rate_burst"] == 3
    assert emu.counters.rate_limited == 0  # the bucket did not refuse them
    status, headers, _ = await api.post(CREATE, UGC)  # the burst is over
    assert status == 200
    assert "Retry-After" not in headers


async def test_rate_burst_probability_and_verbatim_retry_after(api: Api, emu: Emulator) -> None:
    date = "Wed, 21 Oct 2026 07:28:00 +0200"
    emu.faults.add("GET /v1/integration/list", "rate_burst", probability=0.5, retry_after=date)
    answers = [await api.get("/v1/integration/list") for _ in range(20)]
    limited = [headers for status, headers, _ in answers if status == 429]
    assert 0 < len(limited) < 20
    assert all(h["Retry-After"] == date for h in limited)


async def test_garbage_rate_limit_headers(api: Api, emu: Emulator) -> None:
    emu.faults.add(f"POST {CREATE}", "garbage_headers", times=len(GARBAGE_HEADERS))
    seen = []
    for expected in GARBAGE_HEADERS:
        status, headers, body = await api.post(CREATE, UGC)
        assert status == 200  # processed as usual
        assert body["data"]["projectId"] in emu.store.projects
        assert {name: headers.get(name) for name in expected} == expected
        seen.append(headers["X-RateLimit-Limit"])
    assert seen == ["inf", "-5", "0", ""]
    assert GARBAGE_HEADERS[2]["Retry-After"] == "Wed, 21 Oct 2015 07:28:00 +0200"
    assert emu.counters.faults["garbage_headers"] == len(GARBAGE_HEADERS)
    assert len(emu.store.projects) == len(GARBAGE_HEADERS)


async def test_headers_override_any_kind(api: Api, emu: Emulator) -> None:
    emu.faults.add(
        "GET /v1/integration/list",
        "rate_burst",
        times=1,
        headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 +0200", "X-RateLimit-Limit": "inf"},
    )
    status, headers, _ = await api.get("/v1/integration/list")
    assert status == 429
    assert headers["Retry-After"] == "Wed, 21 Oct 2015 07:28:00 +0200"
    assert headers["X-RateLimit-Limit"] == "inf"
    assert headers["X-RateLimit-Remaining"] == "0"


async def test_control_api_new_kinds(api: Api, emu: Emulator) -> None:
    base = emu.url + "/_emulator"
    async with api.session.post(
        base + "/faults",
        json={
            "route": "GET /v1/integration/list",
            "kind": "rate_burst",
            "retryAfter": 2,
            "times": 1,
            "headers": {"X-RateLimit-Remaining": "nan"},
        },
    ) as resp:
        assert resp.status == 201
        rule = await resp.json()
        assert (rule["retry_after"], rule["headers"]) == (2, {"X-RateLimit-Remaining": "nan"})
    status, headers, _ = await api.get("/v1/integration/list")
    assert (status, headers["Retry-After"], headers["X-RateLimit-Remaining"]) == (429, "2", "nan")
    async with api.session.get(base + "/counters") as resp:
        assert (await resp.json())["faults"] == {"rate_burst": 1}
    async with api.session.post(
        base + "/faults", json={"kind": "rate_burst", "headers": {"a": 1}}
    ) as resp:
        assert resp.status == 400


def test_bad_new_fault_parameters() -> None:
    emu = Emulator()
    with pytest.raises(ValueError, match="latency"):
        emu.faults.add("*", "hold_reply", latency=-1)
    with pytest.raises(ValueError, match="retry_after"):
        emu.faults.add("*", "rate_burst", retry_after=None)  # type: ignore[arg-type]
    assert set(FAULT_KINDS) >= {"status_after", "hold_reply", "rate_burst", "garbage_headers"}


async def test_schedule_gives_each_request_its_fault(api: Api, emu: Emulator) -> None:
    schedule: list[str | dict[str, object] | None] = [
        None,
        "rate_burst",
        {"kind": "status_after", "status": 502},
        None,
        "rate_burst",
        {"kind": "status_after", "status": 504},
        "garbage_headers",
    ]
    emu.faults.add_schedule("GET /v1/integration/list", schedule)
    statuses = [(await api.get("/v1/integration/list"))[0] for _ in range(9)]
    assert statuses == [200, 429, 502, 200, 429, 504, 200, 200, 200]
    assert [r.fault for r in emu.requests] == [
        None, "rate_burst", "status_after", None, "rate_burst", "status_after",
        "garbage_headers", None, None,
    ]  # fmt: skip
    assert emu.faults.rules == []


# -- faults of "money-safe, proven": a success without ids, a proxy's 503, a gzip bomb ----


async def test_ok_without_ids_processes_and_charges(api: Api, emu: Emulator, key: str) -> None:
    emu.faults.add(f"POST {CREATE}", "ok_without_ids", times=1)
    credits = emu.credits(key)
    status, headers, body = await api.post(CREATE, UGC)
    assert (status, body) == (200, {"success": True, "message": "ok"})
    assert "X-RateLimit-Limit" in headers
    (project,) = emu.store.projects.values()  # made and charged; the reply names nothing
    assert emu.credits(key) < credits
    record = emu.requests[-1]
    assert (record.status, record.fault, record.project) == (200, "ok_without_ids", project.id)


@pytest.mark.parametrize("rule", [{"kind": "proxy_503"}, {"kind": "status_after", "status": 503}])
async def test_a_503_after_processing(
    api: Api, emu: Emulator, key: str, rule: dict[str, object]
) -> None:
    emu.faults.add_schedule(f"POST {CREATE}", [rule])
    credits = emu.credits(key)
    async with api.session.post(
        api.base + CREATE, json=UGC, headers={"x-api-key": api.key or ""}
    ) as resp:
        status, kind, text = resp.status, resp.content_type, await resp.text()
    assert status == 503
    if rule["kind"] == "proxy_503":  # a proxy's page, not the service's envelope
        assert kind == "text/html" and "503 Service Temporarily Unavailable" in text
    else:
        assert json.loads(text)["success"] is False
    (project,) = emu.store.projects.values()  # processed and charged all the same
    assert emu.credits(key) < credits
    assert emu.requests[-1].project == project.id


async def test_gzip_bomb_inflates_to_its_size(api: Api, emu: Emulator) -> None:
    emu.faults.add("GET /v1/integration/list", "gzip_bomb", size=3_000_001, times=1)
    async with api.session.get(
        api.base + "/v1/integration/list", headers={"x-api-key": api.key or ""}
    ) as resp:
        assert (resp.status, resp.headers["Content-Encoding"]) == (200, "gzip")
        body = await resp.read()  # aiohttp inflates it, checking the gzip trailer's CRC
    assert len(body) == 3_000_001
    assert body.startswith(b'{"success": true, "data": {"padding": "aaa')
    assert emu.requests[-1].fault == "gzip_bomb"


async def test_gzip_bomb_is_small_on_the_wire_and_a_gib_by_default(emu: Emulator, key: str) -> None:
    emu.faults.add("GET /v1/integration/list", "gzip_bomb", times=1)
    assert emu.faults.rules[0].size == 1 << 30
    url, headers = emu.url + "/v1/integration/list", {"x-api-key": key}
    async with (
        aiohttp.ClientSession(auto_decompress=False) as raw,
        raw.get(url, headers=headers) as resp,
    ):
        wire = await resp.read()
    assert len(wire) < 2 * 1024 * 1024  # a GiB in about a MiB
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    inflated, data = 0, wire[: 64 * 1024]
    while data:  # a MiB at a time
        inflated += len(inflater.decompress(data, 1 << 20))
        data = inflater.unconsumed_tail
    assert inflated > 32 * 1024 * 1024  # 64 KiB on the wire already inflate past 32 MiB


async def test_control_api_takes_the_bomb_size(api: Api, emu: Emulator) -> None:
    async with api.session.post(
        emu.url + "/_emulator/faults", json={"kind": "gzip_bomb", "size": 1000}
    ) as resp:
        assert resp.status == 201 and (await resp.json())["size"] == 1000
    with pytest.raises(ValueError, match="size"):
        emu.faults.add("*", "gzip_bomb", size=-1)
    assert {"ok_without_ids", "proxy_503", "gzip_bomb"} <= set(FAULT_KINDS)


async def test_latency_processes_a_creation_its_client_gave_up_on(
    api: Api, emu: Emulator, key: str
) -> None:
    # The client gives up once the service has the request (the fault is applied only to
    # a request read whole): the handler is not cancelled, and the creation is processed
    # and charged afterwards. Waiting for the fault, not racing a short client timeout,
    # keeps a slow connection on a busy machine from giving up before the request is sent.
    fault = emu.faults.add(f"POST {CREATE}", "latency", latency=0.4, times=1)
    credits = emu.credits(key)
    call = asyncio.ensure_future(api.post(CREATE, UGC))
    for _ in range(1000):
        if fault.applied or call.done():
            break
        await asyncio.sleep(0.01)
    assert fault.applied == 1 and not call.done()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert emu.store.projects == {}  # not yet: it waits out its latency
    for _ in range(1000):  # wait for the emulator, up to 10 s on a busy machine
        if emu.store.projects:
            break
        await asyncio.sleep(0.01)
    (project,) = emu.store.projects.values()
    assert emu.credits(key) < credits
    assert emu.requests[-1].project == project.id
