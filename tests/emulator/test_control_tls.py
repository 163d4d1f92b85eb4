"""The control API under /_emulator/, HTTPS serving, lifecycle."""

from __future__ import annotations

import ssl

import aiohttp
import pytest
from aiohttp import web

from asyncclient.emulator import Emulator

from .conftest import Api

UGC = {"script": "Hi", "avatarId": "avatar_001", "voiceId": "voice_001", "media": ["media_vid_001"]}


async def test_control_team_catalog_log_counters(
    emu: Emulator, session: aiohttp.ClientSession
) -> None:
    base = emu.url + "/_emulator"
    async with session.post(base + "/teams", json={"plan": "starter", "credits": 50}) as resp:
        assert resp.status == 201
        team = await resp.json()
    assert emu.credits(team["apiKey"]) == 50
    async with session.post(base + "/teams", json={"plan": "gold"}) as resp:
        assert resp.status == 400
    api = Api(session, emu.url, team["apiKey"])
    status, headers, created = await api.post("/v1/project/create/ugc-ads", UGC)
    assert status == 200
    assert headers["X-RateLimit-Limit"] == "3600"  # starter, per real minute at scale 60
    async with session.get(base + "/catalog") as resp:
        catalog = await resp.json()
    assert catalog["avatars"] == emu.catalog.avatars
    assert catalog["mediaVideos"] == emu.catalog.media_videos
    async with session.get(base + "/requests") as resp:
        log = (await resp.json())["requests"]
    assert [(r["method"], r["path"], r["status"], r["team"]) for r in log] == [
        ("POST", "/v1/project/create/ugc-ads", 200, team["teamId"])
    ]
    async with session.get(base + "/counters") as resp:
        counters = await resp.json()
    assert counters["requests"] == {"POST /v1/project/create/{format}": 1}
    assert counters["projects"] == {team["teamId"]: 1}
    assert counters["rateLimited"] == 0
    video_id = created["data"]["videoId"]
    async with session.post(base + f"/videos/{video_id}/fail", json={"message": "nope"}) as resp:
        assert resp.status == 200
    async with session.post(base + f"/videos/{video_id}/fail", json={}) as resp:
        assert resp.status == 409
    async with session.post(base + "/videos/vid_x/fail", json={}) as resp:
        assert resp.status == 404
    _, _, detail = await api.get(f"/v1/video/{video_id}")
    assert (detail["data"]["status"], detail["data"]["message"]) == ("FAILED", "nope")


async def test_control_clock_advance(emu: Emulator, session: aiohttp.ClientSession) -> None:
    before = emu.now()
    async with session.post(emu.url + "/_emulator/clock/advance", json={"seconds": 3600}) as resp:
        assert resp.status == 200
        body = await resp.json()
    assert body["unix"] >= before + 3600
    assert emu.now() >= before + 3600
    async with session.post(emu.url + "/_emulator/clock/advance", json={"seconds": -1}) as resp:
        assert resp.status == 400


async def test_permitted_false_and_custom_limit_via_control(
    emu: Emulator, session: aiohttp.ClientSession
) -> None:
    body = {"plan": "pro", "perMinute": 5, "burst": 7, "permitted": False}
    async with session.post(emu.url + "/_emulator/teams", json=body) as resp:
        key = (await resp.json())["apiKey"]
    status, headers, _ = await Api(session, emu.url, key).get("/v1/video/list")
    assert status == 403
    assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Remaining"]) == ("300", "6")


async def test_unknown_v1_route_is_json_404(api: Api) -> None:
    status, _, body = await api.get("/v1/nothing/here")
    assert (status, body) == (404, {"success": False, "message": "Not found"})


async def test_https(server_ssl: ssl.SSLContext, client_ssl: ssl.SSLContext) -> None:
    async with Emulator(ssl=server_ssl) as emu:
        assert emu.url.startswith("https://127.0.0.1:")
        key = emu.add_team()
        async with aiohttp.ClientSession() as session:
            async with session.get(
                emu.url + "/v1/integration/list", headers={"x-api-key": key}, ssl=client_ssl
            ) as resp:
                assert resp.status == 200
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await session.get(emu.url + "/v1/integration/list")


async def test_lifecycle() -> None:
    emu = Emulator()
    with pytest.raises(RuntimeError):
        _ = emu.url
    await emu.start()
    url = emu.url
    await emu.stop()
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(url + "/_emulator/catalog")


async def test_mounted_app_without_start() -> None:
    """``emu.app`` can be served by another runner; URLs use the request's host."""
    emu = Emulator()
    runner = web.AppRunner(emu.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        key = emu.add_team()
        async with aiohttp.ClientSession(headers={"x-api-key": key}) as session:
            base = f"http://127.0.0.1:{port}"
            async with session.post(
                base + "/v1/project/create/hook-demo", json={"avatarId": "avatar_001", "text": "Hi"}
            ) as resp:
                video_id = (await resp.json())["data"]["videoId"]
            async with session.get(base + f"/v1/video/{video_id}") as resp:
                url = (await resp.json())["data"]["url"]
            assert url.startswith(base + "/_files/")
    finally:
        await runner.cleanup()
