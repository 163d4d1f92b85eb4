"""Spec part 5 (auth and tenancy) and credits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asyncclient.emulator import DEFAULT_COSTS, Emulator

from .conftest import Api

Body = Callable[..., dict[str, Any]]


async def test_missing_key_is_401(api: Api) -> None:
    async with api.session.get(api.base + "/v1/video/list") as resp:
        assert resp.status == 401
        body = await resp.json()
    assert body["success"] is False
    assert "x-api-key" in body["message"]
    assert "valid" in body["message"]


async def test_unknown_key_is_401(api: Api) -> None:
    status, _, body = await api.get("/v1/video/list", key="emu_not_a_key")
    assert status == 401
    assert body["success"] is False


async def test_unpermitted_key_is_403(api: Api, emu: Emulator) -> None:
    key = emu.add_team(permitted=False)
    status, _, body = await api.get("/v1/integration/list", key=key)
    assert (status, body) == (403, {"success": False, "message": "subscription required"})


async def test_other_teams_video_is_403_unknown_is_404(
    api: Api, emu: Emulator, ugc_body: Body
) -> None:
    _, _, created = await api.post("/v1/project/create/ugc-ads", ugc_body())
    video_id = created["data"]["videoId"]
    other = emu.add_team()
    status, _, body = await api.get(f"/v1/video/{video_id}", key=other)
    assert status == 403
    assert body["success"] is False
    status, _, body = await api.get("/v1/video/vid_unknown", key=other)
    assert (status, body) == (404, {"success": False, "message": "Video not found"})
    status, _, _ = await api.get(f"/v1/video/{video_id}")
    assert status == 200


async def test_second_key_of_a_team_sees_its_videos(
    api: Api, emu: Emulator, key: str, ugc_body: Body
) -> None:
    _, _, created = await api.post("/v1/project/create/ugc-ads", ugc_body())
    second = emu.add_key(key)
    assert second != key
    assert emu.team_id(second) == emu.team_id(key)
    status, _, _ = await api.get(f"/v1/video/{created['data']['videoId']}", key=second)
    assert status == 200


async def test_other_team_list_is_empty(api: Api, emu: Emulator, ugc_body: Body) -> None:
    await api.post("/v1/project/create/ugc-ads", ugc_body())
    _, _, mine = await api.get("/v1/video/list")
    _, _, theirs = await api.get("/v1/video/list", key=emu.add_team())
    assert mine["data"]["total"] == 1
    assert theirs["data"]["total"] == 0


async def test_creation_charges_credits(api: Api, emu: Emulator, key: str, ugc_body: Body) -> None:
    before = emu.credits(key)
    await api.post("/v1/project/create/ugc-ads", ugc_body())
    assert emu.credits(key) == before - DEFAULT_COSTS["ugc_ads"]
    _, _, created = await api.get("/v1/video/list")
    video_id = created["data"]["videos"][0]["id"]
    _, _, detail = await api.get(f"/v1/video/{video_id}")
    assert detail["data"]["usedCredits"] == DEFAULT_COSTS["ugc_ads"]
    assert emu.counters.credits_spent[emu.team_id(key)] == DEFAULT_COSTS["ugc_ads"]


async def test_scene_costs_follow_the_rules(api: Api, emu: Emulator, key: str) -> None:
    scenes = [
        {"type": "avatar", "script": "x" * 250, "avatarId": "avatar_001", "voiceId": "voice_001"},
        {"type": "video", "mediaId": "media_vid_001"},
        {
            "type": "start_end_frame",
            "startFrameMediaId": "media_img_001",
            "endFrameMediaId": "media_img_002",
            "framePrompt": "pan",
        },
    ]
    before = emu.credits(key)
    status, _, body = await api.post("/v1/project/create/scenes", {"scenes": scenes})
    assert status == 200
    assert set(body) == {"success", "projectId", "message"}
    c = DEFAULT_COSTS
    expected = c["scenes"] + 3 * c["scene_avatar_per_100_chars"] + c["scene_start_end_frame"]
    assert before - emu.credits(key) == expected


async def test_not_enough_credits_is_402(api: Api, emu: Emulator, ugc_body: Body) -> None:
    poor = emu.add_team(credits=DEFAULT_COSTS["ugc_ads"] - 1)
    status, _, body = await api.post("/v1/project/create/ugc-ads", ugc_body(), key=poor)
    assert (status, body) == (402, {"success": False, "message": "not enough credits"})
    assert emu.credits(poor) == DEFAULT_COSTS["ugc_ads"] - 1
    assert emu.store.projects == {}


async def test_custom_costs() -> None:
    async with Emulator(costs={"ugc_video": 1}) as emu:
        assert emu.store.costs["ugc_video"] == 1
        assert emu.store.costs["ugc_ads"] == DEFAULT_COSTS["ugc_ads"]


async def test_api_key_never_logged(api: Api, emu: Emulator, key: str) -> None:
    await api.get("/v1/integration/list")
    record = emu.requests[-1]
    assert record.key is not None
    assert key not in repr(record)
    assert record.team == emu.team_id(key)
    assert (record.method, record.path, record.status) == ("GET", "/v1/integration/list", 200)
