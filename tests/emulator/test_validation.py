"""Spec part 7: every validation message row, as ``<field path>: <reason>``."""

from __future__ import annotations

from typing import Any

import pytest

from asyncclient.emulator import Emulator

from .conftest import Api

AV, VO, VID, IMG = "avatar_001", "voice_001", "media_vid_001", "media_img_001"
UGC = {"script": "Hi", "avatarId": AV, "voiceId": VO, "media": [VID]}
HOOK = {"avatarId": AV, "text": "Stop scrolling"}
S2V = {"script": "Hi", "voiceId": VO, "mediaType": "media", "media": [VID]}
PROD = {
    "script": "Hi",
    "avatarId": AV,
    "voiceId": VO,
    "productAdSettings": {"websiteUrl": "https://shop.example.com"},
}

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("empty script", "ugc-ads", {**UGC, "script": ""},
     "script: script must be at least 1 character"),
    ("missing script", "ugc-ads", {k: v for k, v in UGC.items() if k != "script"},
     "script: script is required"),
    ("script over limit", "talking-avatar", {"script": "x" * 10001, "avatarId": AV, "voiceId": VO},
     "script: script cannot exceed 10000 characters"),
    ("unknown avatar", "ugc-ads", {**UGC, "avatarId": "nope"}, "avatarId: avatar nope not found"),
    ("unknown voice", "ugc-ads", {**UGC, "voiceId": "nope"}, "voiceId: voice nope not found"),
    ("unknown music", "ugc-ads", {**UGC, "musicId": "nope"}, "musicId: music nope not found"),
    ("webhook not https", "ugc-ads", {**UGC, "webhook": "http://example.com/h"},
     "webhook: must be a valid HTTPS URL"),
    ("too many media", "ugc-ads", {**UGC, "media": [VID] * 51},
     "media: cannot have more than 50 media items"),
    ("missing hook text", "hook-demo", {"avatarId": AV}, "text: text is required"),
    ("bad alignment", "ugc-ads", {**UGC, "caption": {"alignment": "left"}},
     "caption.alignment: alignment value invalid (use top, middle or bottom)"),
    ("bad text alignment", "hook-demo", {**HOOK, "textSettings": {"alignment": "x"}},
     "textSettings.alignment: alignment value invalid (use top, middle or bottom)"),
    ("bad lipsync", "ugc-ads", {**UGC, "lipsyncModel": "max"},
     "lipsyncModel: invalid lipsync model (use base or pro)"),
    ("missing preset", "script-to-video", {**S2V, "mediaType": "ai-images"},
     "presetSettings.preset: preset is required"),
    ("missing page url", "product-ads", {**PROD, "productAdSettings": {"scrollMode": "loop"}},
     "productAdSettings.websiteUrl: website URL is required"),
    ("bad page url", "product-ads", {**PROD, "productAdSettings": {"websiteUrl": "not a url"}},
     "productAdSettings.websiteUrl: invalid website URL"),
    ("intro out of range", "product-ads",
     {**PROD, "productAdSettings": {"websiteUrl": "https://a.example", "avatarIntroSeconds": 31}},
     "productAdSettings.avatarIntroSeconds: number must be between 1 and 30"),
    ("captions media missing", "add-captions", {}, "media: media ID is required"),
    ("captions media unknown", "add-captions", {"media": "media_vid_999"},
     "media: media not found"),
    ("captions media image", "add-captions", {"media": IMG}, "media: media is not a video"),
    ("scenes empty", "scenes", {"scenes": []}, "scenes: at least one scene is required"),
    ("too many scenes", "scenes", {"scenes": [{"type": "video", "mediaId": VID}] * 51},
     "scenes: cannot have more than 50 scenes"),
    ("avatar scene fields", "scenes", {"scenes": [{"type": "avatar", "script": "Hi"}]},
     "scenes[0].avatarId: avatar ID is required for avatar scenes; "
     "scenes[0].voiceId: voice ID is required for avatar scenes"),
    ("video scene field", "scenes", {"scenes": [{"type": "video", "script": "Hi"}]},
     "scenes[0].mediaId: media ID is required for video scenes"),
    ("name too long", "ugc-ads", {**UGC, "name": "n" * 101},
     "name: name cannot exceed 100 characters"),
    ("avatar id too long", "ugc-ads", {**UGC, "avatarId": "a" * 31},
     "avatarId: avatarId cannot exceed 30 characters"),
    ("hook text too long", "hook-demo", {**HOOK, "text": "t" * 5001},
     "text: text cannot exceed 5000 characters"),
    ("metadata too big", "ugc-ads", {**UGC, "metadata": {"k": "v" * 5200}},
     "metadata: metadata cannot exceed 5KB"),
    ("ugc-video language", "ugc-video",
     {"script": "Hi", "avatarId": AV, "voiceId": VO, "caption": {}, "aspectRatio": "ratio_1_1",
      "language": "fr"},
     "language: invalid language (use en or es)"),
    ("scenes language", "scenes",
     {"scenes": [{"type": "video", "mediaId": VID}], "language": "eng"},
     "language: language must be exactly 2 characters"),
    ("unknown media", "ugc-ads", {**UGC, "media": ["media_x"]},
     "media[0]: media media_x not found"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "body", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_validation_message(api: Api, fmt: str, body: dict[str, Any], message: str) -> None:
    status, _, data = await api.post(f"/v1/project/create/{fmt}", body)
    assert status == 400
    assert data == {"success": False, "message": message}


async def test_several_problems_are_joined(api: Api) -> None:
    status, _, data = await api.post(
        "/v1/project/create/ugc-ads",
        {"script": "", "avatarId": "zz", "voiceId": VO, "media": [VID]},
    )
    assert status == 400
    assert (
        data["message"]
        == "script: script must be at least 1 character; avatarId: avatar zz not found"
    )


async def test_invalid_json_body(api: Api) -> None:
    async with api.session.post(
        api.base + "/v1/project/create/ugc-ads",
        data=b"{not json",
        headers={"x-api-key": api.key or ""},
    ) as resp:
        assert resp.status == 400
        assert (await resp.json())["message"] == "body: invalid JSON"


async def test_rejected_creation_changes_nothing(api: Api, emu: Emulator, key: str) -> None:
    before = emu.credits(key)
    await api.post("/v1/project/create/ugc-ads", {**UGC, "script": ""})
    assert emu.credits(key) == before
    assert emu.store.projects == {}


VALID = [
    ("ugc-ads", UGC),
    ("script-to-video", {**S2V, "mediaType": "ai-videos", "presetSettings": {"preset": "anime"}}),
    ("script-to-video", {**S2V, "mediaType": "gameplay", "media": None,
                         "gameplaySettings": {"selectedGame": "blockgame"}}),
    ("product-ads", PROD),
    ("talking-avatar", {"script": "Hi", "avatarId": AV, "voiceId": VO}),
    ("ugc-video", {"script": "Hi", "avatarId": AV, "voiceId": VO, "caption": {"preset": "neon"},
                   "aspectRatio": "ratio_16_9", "language": "es"}),
    ("add-captions", {"media": VID}),
    ("hook-demo", HOOK),
    ("scenes", {"scenes": [
        {"type": "avatar", "script": "Hi", "avatarId": AV, "voiceId": VO},
        {"type": "video", "mediaId": VID},
        {"type": "picture_in_picture", "script": "Hi", "avatarId": AV, "voiceId": VO,
         "mediaId": VID},
        {"type": "start_end_frame", "startFrameMediaId": IMG, "endFrameMediaId": IMG,
         "framePrompt": "zoom", "frameModel": "modela_2_5"},
    ]}),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "body"), VALID, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALID)])
async def test_valid_bodies_are_accepted(api: Api, fmt: str, body: dict[str, Any]) -> None:
    status, _, data = await api.post(f"/v1/project/create/{fmt}", body)
    assert status == 200, data
    assert data["success"] is True
