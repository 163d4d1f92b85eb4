"""Injected faults: status, latency, drops before and after processing, malformed JSON."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest

from asyncclient.emulator import Emulator

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
