"""Spec 4.12 to 4.18: scheduled posts, integrations, social research, niches."""

from __future__ import annotations

from typing import Any

import pytest

from asyncclient.emulator import Emulator
from asyncclient.emulator._clock import iso

from .conftest import Api

UGC = {"script": "Hi", "avatarId": "avatar_001", "voiceId": "voice_001", "media": ["media_vid_001"]}


async def _completed_video(api: Api, emu: Emulator, **extra: Any) -> str:
    _, _, created = await api.post("/v1/project/create/ugc-ads", {**UGC, **extra})
    emu.advance(400)
    return str(created["data"]["videoId"])


def _body(
    emu: Emulator, video_id: str, platform: str = "videosite", **extra: Any
) -> dict[str, Any]:
    return {
        "videoId": video_id,
        "integrationId": f"int_{platform}_1",
        "scheduledDateTime": iso(emu.now() + 3600),
        **extra,
    }


async def test_integrations(api: Api, emu: Emulator) -> None:
    status, _, body = await api.get("/v1/integration/list")
    assert status == 200
    data = body["data"]
    assert data["total"] == 3
    assert {i["type"] for i in data["integrations"]} == {"videosite", "clipsite", "photosite"}
    assert [i["id"] for i in data["integrations"]] == emu.catalog.integrations


async def test_schedule_pending_then_published(api: Api, emu: Emulator) -> None:
    video_id = await _completed_video(api, emu, name="My video")
    status, _, body = await api.post("/v1/schedule/create", _body(emu, video_id))
    assert status == 201
    data = body["data"]
    assert (data["status"], data["platform"], data["videoId"]) == ("pending", "videosite", video_id)
    _, _, listed = await api.get("/v1/schedule/list?status=pending")
    post = listed["data"]["scheduledPosts"][0]
    assert post["id"] == data["scheduleId"]
    assert post["platformData"] == {
        "title": "My video",
        "description": "",
        "tags": [],
        "privacyStatus": "public",
        "madeForKids": False,
    }
    assert post["scheduledDateTime"].endswith("Z")
    emu.advance(3601)
    _, _, listed = await api.get("/v1/schedule/list?status=published&platform=videosite")
    assert listed["data"]["total"] == 1


async def test_schedule_failed_post(api: Api, emu: Emulator) -> None:
    video_id = await _completed_video(api, emu)
    _, _, body = await api.post("/v1/schedule/create", _body(emu, video_id, "clipsite"))
    emu.fail_post(body["data"]["scheduleId"], "token revoked")
    emu.advance(3601)
    _, _, listed = await api.get("/v1/schedule/list?status=failed")
    post = listed["data"]["scheduledPosts"][0]
    assert post["platformData"]["error"] == "token revoked"


async def test_hashtags_appended_for_clipsite(api: Api, emu: Emulator) -> None:
    video_id = await _completed_video(api, emu)
    pd = {"description": "New drop", "tags": ["sale", "#shoes"]}
    await api.post("/v1/schedule/create", _body(emu, video_id, "photosite", platformData=pd))
    _, _, listed = await api.get("/v1/schedule/list?platform=photosite")
    assert listed["data"]["scheduledPosts"][0]["platformData"]["description"] == (
        "New drop #sale #shoes"
    )


async def test_schedule_errors(api: Api, emu: Emulator) -> None:
    _, _, created = await api.post("/v1/project/create/ugc-ads", UGC)
    started = created["data"]["videoId"]
    status, _, body = await api.post("/v1/schedule/create", _body(emu, started))
    assert (status, body["message"]) == (400, "Video must be completed")
    done = await _completed_video(api, emu)
    cases = [
        (_body(emu, "vid_nope"), 404, "Video not found"),
        ({**_body(emu, done), "integrationId": "int_nope"}, 404, "Integration not found"),
        ({**_body(emu, done), "scheduledDateTime": iso(emu.now() - 60)}, 400,
         "Scheduled time must be in the future"),
        ({**_body(emu, done), "scheduledDateTime": "2030-01-01T00:00:00"}, 400,
         "scheduledDateTime: must be an ISO 8601 date-time with a timezone"),
        (_body(emu, done, platformData={"title": "t" * 101}), 400,
         "platformData.title: title cannot exceed 100 characters"),
        (_body(emu, done, platformData={"tags": ["t"] * 31}), 400,
         "platformData.tags: cannot have more than 30 tags"),
        (_body(emu, done, "clipsite", platformData={"description": "d" * 2201}), 400,
         "platformData.description: description cannot exceed 2200 characters"),
    ]  # fmt: skip
    for body_in, code, message in cases:
        status, _, body = await api.post("/v1/schedule/create", body_in)
        assert (status, body["message"]) == (code, message)
    other = emu.add_team()
    status, _, body = await api.post("/v1/schedule/create", _body(emu, done), key=other)
    assert (status, body["message"]) == (403, "Video does not belong to your team")


async def test_analyze_account(api: Api, emu: Emulator) -> None:
    user = emu.catalog.accounts["clipsite"][0]
    body = {"username": "@" + user.upper(), "platform": "clipsite"}
    status, _, created = await api.post("/v1/social/account/analyze", body)
    assert status == 201
    account = created["data"]["account"]
    assert (account["username"], account["platform"]) == (user, "clipsite")
    assert set(account["stats"]) == {"followers", "following", "videos", "likes"}
    status, _, again = await api.post("/v1/social/account/analyze", body)
    assert status == 400
    assert "refresh" in again["message"]
    status, _, missing = await api.post(
        "/v1/social/account/analyze", {"username": "ghost_user", "platform": "videosite"}
    )
    assert (status, missing["message"]) == (404, "Account not found: ghost_user")
    status, _, bad = await api.post("/v1/social/account/analyze", {"username": "x"})
    assert (status, bad["message"]) == (400, "platform: platform is required")


async def test_search_create_update_and_keywords(api: Api, emu: Emulator) -> None:
    body = {"searchTerm": "  home workout ", "platform": "videosite", "limit": 12}
    status, _, created = await api.post("/v1/social/search/create", body)
    assert status == 201
    search = created["data"]["search"]
    assert created["data"]["videosFound"] == 12
    assert (search["searchTerm"], search["keywords"], search["keywordsStatus"]) == (
        "home workout",
        [],
        "pending",
    )
    assert "videos" not in search
    _, _, again = await api.post("/v1/social/search/create", {**body, "limit": 15})
    assert again["data"]["search"]["id"] == search["id"]
    emu.advance(31)
    status, _, got = await api.get(f"/v1/social/search/{search['id']}?limit=10&offset=10")
    assert status == 200
    data = got["data"]
    assert data["keywordsStatus"] == "completed"
    assert data["keywords"]
    assert len(data["videos"]) == 5
    assert data["pagination"] == {"total": 15, "limit": 10, "offset": 10, "hasMore": False}
    assert {"description", "duration", "music"} <= set(data["videos"][0])
    status, _, _ = await api.get(f"/v1/social/search/{search['id']}", key=emu.add_team())
    assert status == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"searchTerm": "   ", "platform": "clipsite"},
         "searchTerm: searchTerm must be at least 1 character"),
        ({"searchTerm": "s" * 201, "platform": "clipsite"},
         "searchTerm: searchTerm cannot exceed 200 characters"),
        ({"searchTerm": "ok", "platform": "clipsite", "limit": 51},
         "limit: must be an integer between 1 and 50"),
        ({"searchTerm": "ok", "platform": "photosite"},
         "platform: invalid value 'photosite' (use clipsite or videosite)"),
    ],
)  # fmt: skip
async def test_search_validation(api: Api, body: dict[str, Any], message: str) -> None:
    status, _, out = await api.post("/v1/social/search/create", body)
    assert (status, out["message"]) == (400, message)


async def test_niche_videos(api: Api, emu: Emulator) -> None:
    niche = emu.catalog.niches[0]
    status, _, body = await api.get(f"/v1/niche/{niche}/videos?platform=clipsite&limit=5&offset=2")
    assert status == 200
    data = body["data"]
    assert data["niche"]["id"] == niche
    assert {"label", "emoji", "description"} <= set(data["niche"])
    assert len(data["videos"]) == 5
    assert (data["limit"], data["offset"]) == (5, 2)
    assert {v["platform"] for v in data["videos"]} == {"clipsite"}
    _, _, all_platforms = await api.get(f"/v1/niche/{niche}/videos")
    assert all_platforms["data"]["total"] == 2 * data["total"]
    assert all_platforms["data"]["limit"] == 20
    status, _, missing = await api.get("/v1/niche/not-a-niche/videos")
    assert (status, missing["success"]) == (404, False)
    status, _, _ = await api.get(f"/v1/niche/{niche}/videos?limit=51")
    assert status == 400


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=101", "limit: must be between 1 and 100"),
        ("offset=-1", "offset: must be 0 or more"),
        ("limit=abc", "limit: must be an integer"),
        ("status=done", "status: invalid status (use pending, published, failed or draft)"),
    ],
)
async def test_schedule_list_query_validation(api: Api, query: str, message: str) -> None:
    status, _, body = await api.get(f"/v1/schedule/list?{query}")
    assert (status, body["message"]) == (400, message)


async def test_schedule_list_pagination(api: Api, emu: Emulator) -> None:
    video_id = await _completed_video(api, emu)
    for hours in (3, 1, 2):
        body = {**_body(emu, video_id), "scheduledDateTime": iso(emu.now() + hours * 3600)}
        assert (await api.post("/v1/schedule/create", body))[0] == 201
    _, _, page = await api.get("/v1/schedule/list?limit=2&offset=1")
    data = page["data"]
    assert (data["total"], data["limit"], data["offset"]) == (3, 2, 1)
    times = [p["scheduledDateTime"] for p in data["scheduledPosts"]]
    assert times == sorted(times)
    assert len(times) == 2
