"""Spec part 3.1 and 4.1 to 4.11: creation responses, state machine, list, files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asyncclient.emulator import Emulator

from .conftest import Api

Body = Callable[..., dict[str, Any]]
LIST_OMITS = {"type", "durationInSeconds", "avatarId", "voiceId", "musicId", "videoSettings",
              "script", "usedCredits", "webhook"}  # fmt: skip


async def _create(api: Api, body: dict[str, Any], fmt: str = "ugc-ads") -> dict[str, Any]:
    status, _, data = await api.post(f"/v1/project/create/{fmt}", body)
    assert status == 200, data
    return data  # type: ignore[no-any-return]


async def test_started_then_completed_with_progress(
    api: Api, emu: Emulator, ugc_body: Body
) -> None:
    created = await _create(api, ugc_body())
    assert created["data"]["status"] == "STARTED"
    video_id = created["data"]["videoId"]
    video = emu.store.videos[video_id]
    span = video.done_at - video.created_at
    assert 60 <= span <= 180  # default 120 s +-50 %
    _, _, first = await api.get(f"/v1/video/{video_id}")
    assert first["data"]["status"] == "STARTED"
    assert "url" not in first["data"]
    assert first["data"]["progress"] < 5
    emu.advance(span / 2)
    _, _, middle = await api.get(f"/v1/video/{video_id}")
    assert 45 <= middle["data"]["progress"] <= 55
    emu.advance(span)
    _, _, done = await api.get(f"/v1/video/{video_id}")
    data = done["data"]
    assert (data["status"], data["progress"]) == ("COMPLETED", 100)
    assert data["url"].startswith(emu.url + f"/_files/{video_id}.mp4?expires=")
    assert data["thumbnail"]
    assert data["durationInFrames"] == data["durationInSeconds"] * 25 > 0
    assert data["size"] > 0
    assert data["projectId"] == created["data"]["projectId"]
    assert data["teamId"] == emu.team_id(api.key or "")
    assert data["type"] == "ugc_ads"


async def test_forced_failure(api: Api, emu: Emulator, ugc_body: Body) -> None:
    created = await _create(api, ugc_body())
    video_id = created["data"]["videoId"]
    emu.fail_video(video_id, "renderer crashed")
    _, _, data = await api.get(f"/v1/video/{video_id}")
    assert (data["data"]["status"], data["data"]["message"]) == ("FAILED", "renderer crashed")
    assert "url" not in data["data"]
    with pytest.raises(ValueError, match="already FAILED"):
        emu.fail_video(video_id)


async def test_seeded_failure_rate(api: Api) -> None:
    async with Emulator(failure_rate=1.0, processing_seconds=10) as emu:
        key = emu.add_team()
        a = Api(api.session, emu.url, key)
        body = {"script": "Hi", "avatarId": "avatar_001", "voiceId": "voice_001"}
        created = await _create(a, body, "talking-avatar")
        emu.advance(20)
        _, _, data = await a.get(f"/v1/video/{created['data']['videoId']}")
        assert data["data"]["status"] == "FAILED"
        assert data["data"]["message"]


async def test_download_url_serves_mp4_and_expires(api: Api, emu: Emulator, ugc_body: Body) -> None:
    created = await _create(api, ugc_body())
    emu.advance(400)
    _, _, detail = await api.get(f"/v1/video/{created['data']['videoId']}")
    url = detail["data"]["url"]
    async with api.session.get(url) as resp:
        assert resp.status == 200
        assert resp.content_type == "video/mp4"
        content = await resp.read()
    assert int(resp.headers["Content-Length"]) == len(content) == detail["data"]["size"]
    assert content[4:8] == b"ftyp"
    async with api.session.get(url.replace("sig=", "sig=0")) as resp:
        assert resp.status == 403
    emu.advance(24 * 3600 + 1)
    async with api.session.get(url) as resp:
        assert resp.status == 403
        assert (await resp.json())["message"] == "URL expired"


async def test_hook_demo_is_completed_at_once(api: Api, emu: Emulator) -> None:
    created = await _create(api, {"avatarId": "avatar_001", "text": "Wait!"}, "hook-demo")
    assert created["data"]["status"] == "COMPLETED"
    assert created["projectId"] == created["data"]["projectId"]
    _, _, detail = await api.get(f"/v1/video/{created['data']['videoId']}")
    assert detail["data"]["status"] == "COMPLETED"
    assert "url" in detail["data"]


async def test_response_shapes(api: Api, emu: Emulator) -> None:
    captions = await _create(api, {"media": "media_vid_002"}, "add-captions")
    assert set(captions) == {"success", "data"}
    assert captions["data"]["status"] == "STARTED"
    scenes = await _create(
        api, {"scenes": [{"type": "video", "mediaId": "media_vid_001"}]}, "scenes"
    )
    assert set(scenes) == {"success", "projectId", "message"}
    assert len(emu.store.projects[scenes["projectId"]].videos) == 1


def _template_body(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "class",
        "templateId": "tpl_welcome",
        "title": "Welcome Sam",
        "caption": True,
        "language": "en",
        "scenes": [
            {
                "script": "Hi {{first_name}}, welcome to {{product}}!",
                "variables": [
                    {"key": "first_name", "type": "text", "value": "Sam"},
                    {"key": "product", "type": "text", "value": ""},
                ],
            }
        ],
    }
    body.update(extra)
    return body


async def test_template_generation_processing_then_completed(api: Api, emu: Emulator) -> None:
    status, _, created = await api.post("/v1/project/create", _template_body())
    assert status == 200
    assert created["data"]["status"] == "processing"
    project = emu.store.projects[created["data"]["projectId"]]
    assert project.type == "class"
    video = project.videos[0]
    assert video.name == "Welcome Sam"
    emu.advance(400)
    _, _, detail = await api.get(f"/v1/video/{video.id}")
    assert detail["data"]["status"] == "COMPLETED"
    assert detail["data"]["projectId"] == project.id


async def test_template_missing_variable_fails_generation(api: Api, emu: Emulator) -> None:
    body = _template_body()
    body["scenes"][0]["variables"] = [{"key": "First_name", "type": "text", "value": "Sam"}]
    status, _, created = await api.post("/v1/project/create", body)
    assert status == 200  # accepted; generation fails (spec 4.9 rule 2)
    video = emu.store.projects[created["data"]["projectId"]].videos[0]
    emu.advance(400)
    _, _, detail = await api.get(f"/v1/video/{video.id}")
    assert detail["data"]["status"] == "FAILED"
    assert (
        detail["data"]["message"] == "scenes[0].variables: missing value for variable 'first_name'"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "ugc_ads"}, "type: must match the template type (class)"),
        ({"templateId": "tpl_nope"}, "templateId: template tpl_nope not found"),
        ({"templateId": "t" * 21}, "templateId: templateId cannot exceed 20 characters"),
        ({"title": "x" * 201}, "title: title cannot exceed 200 characters"),
        ({"caption": None}, "caption: caption is required"),
        ({"language": "eng"}, "language: language cannot exceed 2 characters"),
        ({"scenes": []}, "scenes: at least one scene is required"),
        ({"scenes": [{"script": "a", "variables": []}] * 21},
         "scenes: cannot have more than 20 scenes"),
        ({"scenes": [{"script": "a" * 5001, "variables": []}]},
         "scenes[0].script: script cannot exceed 5000 characters"),
        ({"scenes": [{"script": "a", "variables": [{"key": "k", "value": "v"}] * 21}]},
         "scenes[0].variables: cannot have more than 20 variables"),
        ({"scenes": [{"script": "a", "variables": [{"key": "k" * 101, "value": ""}]}]},
         "scenes[0].variables[0].key: key cannot exceed 100 characters"),
        ({"scenes": [{"script": "a", "variables": [{"key": "k", "value": "v" * 2001}]}]},
         "scenes[0].variables[0].value: value cannot exceed 2000 characters"),
    ],
)  # fmt: skip
async def test_template_generation_validation(
    api: Api, change: dict[str, Any], message: str
) -> None:
    status, _, body = await api.post("/v1/project/create", _template_body(**change))
    assert (status, body) == (400, {"success": False, "message": message})


async def test_list_pagination_counts_projects(api: Api, emu: Emulator, ugc_body: Body) -> None:
    ids = [(await _create(api, ugc_body(name=f"v{i}")))["data"]["projectId"] for i in range(5)]
    _, _, page = await api.get("/v1/video/list?limit=2&offset=1")
    data = page["data"]
    assert (data["total"], data["limit"], data["offset"]) == (5, 2, 1)
    assert [v["projectId"] for v in data["videos"]] == [ids[3], ids[2]]  # newest first
    assert not LIST_OMITS & set(data["videos"][0])
    _, _, last = await api.get("/v1/video/list?limit=2&offset=4")
    assert [v["projectId"] for v in last["data"]["videos"]] == [ids[0]]
    _, _, past = await api.get("/v1/video/list?limit=2&offset=7")
    assert (past["data"]["videos"], past["data"]["total"]) == ([], 5)
    _, _, filtered = await api.get("/v1/video/list?limit=2&offset=1&status=processing")
    assert [v["projectId"] for v in filtered["data"]["videos"]] == [ids[3], ids[2]]
    status, _, body = await api.get("/v1/video/list?limit=101")
    assert (status, body["message"]) == (400, "limit: must be between 1 and 100")


async def test_list_filters(api: Api, emu: Emulator, ugc_body: Body) -> None:
    first = await _create(api, ugc_body())
    await _create(api, {"media": "media_vid_001"}, "add-captions")
    emu.fail_video(first["data"]["videoId"])
    _, _, failed = await api.get("/v1/video/list?status=failed")
    assert [v["id"] for v in failed["data"]["videos"]] == [first["data"]["videoId"]]
    _, _, processing = await api.get("/v1/video/list?status=processing")
    assert processing["data"]["total"] == 1
    _, _, captions = await api.get("/v1/video/list?type=add_captions")
    assert captions["data"]["total"] == 1
    _, _, draft = await api.get("/v1/video/list?status=draft")
    assert draft["data"]["total"] == 0
    emu.advance(400)
    _, _, completed = await api.get("/v1/video/list?status=completed&type=all")
    assert completed["data"]["total"] == 1


async def test_templates(api: Api, emu: Emulator) -> None:
    _, _, listed = await api.get("/v1/template/list?type=class&limit=2")
    data = listed["data"]
    assert data["total"] == len(emu.catalog.templates) >= 3
    assert len(data["templates"]) == 2
    item = data["templates"][0]
    assert set(item) == {"id", "name", "type", "script", "variables", "avatarId", "voiceId",
                         "scenes", "createdAt"}  # fmt: skip
    _, _, detail = await api.get(f"/v1/template/{item['id']}")
    assert detail["data"]["isTemplate"] is True
    assert detail["data"]["scenes"][0]["variables"][0]["type"] in ("text", "media")
    status, _, _ = await api.get("/v1/template/nope")
    assert status == 404


async def test_simple_lists(api: Api, emu: Emulator) -> None:
    for path, field, ids in [
        ("/v1/avatar/list?type=library", "avatars", emu.catalog.avatars),
        ("/v1/voice/list", "voices", emu.catalog.voices),
        ("/v1/music/list", "music", emu.catalog.music),
        ("/v1/niche/list", "niches", emu.catalog.niches),
    ]:
        status, _, body = await api.get(path)
        assert status == 200
        assert [r["id"] for r in body["data"][field]] == ids
