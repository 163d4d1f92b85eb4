"""Decoding of responses: recorded payloads, tolerance, malformed bodies.

Recorded payloads live in ``tests/data/<Model>-<case>.json`` (architecture guide,
example 9). They are written from the field tables of spec part 2 with every
field present and no ``null`` values: the converter leaves ``None`` optionals out
when unstructuring, so a file without nulls round-trips exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

from asyncclient import AsyncClient
from asyncclient._convert import DecodeError, converter, decode, strict_converter
from asyncclient.errors import APIResponseValidationError
from asyncclient.http.protocol import Envelope
from asyncclient.models import (
    AnalyzedAccount,
    AspectRatio,
    CaptionPreset,
    Integration,
    KeywordsStatus,
    Niche,
    Platform,
    ScheduledPost,
    ScheduledPostCreated,
    ScheduleStatus,
    Search,
    SearchCreated,
    SocialPlatform,
    SocialVideo,
    Template,
    TemplateDetail,
    TemplateVariableType,
    TextAlignment,
    Video,
    VideoDetail,
    VideoStatus,
)
from asyncclient.resources._base import page_of
from asyncclient.retry import RetryPolicy
from tests.wire import mocked as aioresponses

DATA = Path(__file__).parent / "data"
BASE = "https://api.example.test"
UTC = timezone.utc

MODELS: dict[str, type[Any]] = {
    "AnalyzedAccount": AnalyzedAccount,
    "Integration": Integration,
    "Niche": Niche,
    "ScheduledPost": ScheduledPost,
    "ScheduledPostCreated": ScheduledPostCreated,
    "Search": Search,
    "SearchCreated": SearchCreated,
    "SocialVideo": SocialVideo,
    "Template": Template,
    "TemplateDetail": TemplateDetail,
    "Video": Video,
    "VideoDetail": VideoDetail,
}

PAYLOADS = sorted(p.name for p in DATA.glob("*.json"))


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def model_of(filename: str) -> type[Any]:
    return MODELS[filename.split("-", 1)[0]]


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# -- recorded payloads: strict decoding and round trip ------------------------------------


def test_every_model_has_a_recorded_payload() -> None:
    assert {name.split("-", 1)[0] for name in PAYLOADS} == set(MODELS)


@pytest.mark.parametrize("filename", PAYLOADS)
def test_recorded_payload_decodes_strictly_and_round_trips(filename: str) -> None:
    data = load(filename)
    cls = model_of(filename)
    decoded = decode(data, cls, conv=strict_converter)
    assert isinstance(decoded, cls)
    assert converter.unstructure(decoded) == data
    assert strict_converter.unstructure(decoded) == data


@pytest.mark.parametrize("filename", PAYLOADS)
def test_strict_converter_rejects_a_key_the_model_lacks(filename: str) -> None:
    data = {**load(filename), "fieldAddedLater": 1}
    with pytest.raises(DecodeError) as info:
        decode(data, model_of(filename), conv=strict_converter)
    assert any("fieldAddedLater" in line for line in info.value.errors)


def test_video_detail_completed_fields() -> None:
    video = decode(load("VideoDetail-completed.json"), VideoDetail, conv=strict_converter)
    assert video.id == "vid_7f3a91c2"
    assert video.status is VideoStatus.COMPLETED
    assert video.is_terminal
    assert video.type == "ugc_ads"
    assert video.url is not None
    assert video.url.startswith("https://cdn.example.test/")
    assert video.progress == 100
    assert video.duration_in_frames == 750
    assert video.duration_in_seconds == 30.0
    assert video.size == 10485760
    assert video.project_id == "proj_5b21e0aa"
    assert video.team_id == "team_0042"
    assert (video.avatar_id, video.voice_id, video.music_id) == (
        "avatar_anna",
        "voice_rachel",
        "music_upbeat_01",
    )
    assert video.video_settings is not None
    assert video.video_settings.aspect_ratio is AspectRatio.RATIO_9_16
    assert video.video_settings.caption is not None
    assert video.video_settings.caption.preset is CaptionPreset.RETRO_TV
    assert video.video_settings.caption.disabled is False
    assert video.used_credits == 12
    assert video.webhook == "https://hooks.example.test/video-events"
    assert video.created_at == utc(2024, 5, 1, 12, 0, 0)
    assert video.updated_at == utc(2024, 5, 1, 12, 3, 20)
    assert video.created_at.tzinfo is not None


def test_video_detail_failed_has_no_url_and_keeps_the_reason() -> None:
    video = decode(load("VideoDetail-failed.json"), VideoDetail, conv=strict_converter)
    assert video.status is VideoStatus.FAILED
    assert video.is_terminal
    assert video.url is None
    assert video.message == "voiceId: voice voice_gone not found"


def test_scheduled_post_fields() -> None:
    post = decode(load("ScheduledPost-pending.json"), ScheduledPost, conv=strict_converter)
    assert post.status is ScheduleStatus.PENDING
    assert post.platform is Platform.VIDEOSITE
    assert post.scheduled_date_time == utc(2030, 6, 1, 15, 30)
    assert post.integration is not None
    assert post.integration.type is Platform.VIDEOSITE
    assert post.integration.account is not None
    assert post.integration.account.avatar_url == "https://cdn.example.test/avatars/acmecoffee.png"
    assert post.video is not None
    assert post.video.duration_in_seconds == 30.0
    assert post.platform_data is not None
    assert post.platform_data.tags == ["coffee", "launch", "spring"]
    assert post.platform_data.made_for_kids is False


def test_failed_scheduled_post_keeps_the_error_detail_of_platform_data() -> None:
    # spec 3.2: "error detail is in platformData"; the key name is not shown, the model says "error"
    post = decode(load("ScheduledPost-failed.json"), ScheduledPost, conv=strict_converter)
    assert post.status is ScheduleStatus.FAILED
    assert post.platform is Platform.CLIPSITE
    assert post.platform_data is not None
    assert post.platform_data.error == "token expired: reconnect the integration"


def test_search_retrieved_fields() -> None:
    search = decode(load("Search-retrieved.json"), Search, conv=strict_converter)
    assert search.platform is SocialPlatform.VIDEOSITE
    assert search.keywords_status is KeywordsStatus.COMPLETED
    assert search.music == ["Kitchen Groove", "Sizzle Beat"]
    assert search.analytics is not None
    assert search.analytics.avg_shares == 5300.0
    assert search.pagination is not None
    assert (search.pagination.total, search.pagination.limit, search.pagination.offset) == (
        20,
        2,
        0,
    )
    assert search.pagination.has_more is True
    assert search.videos is not None
    assert [v.id for v in search.videos] == ["sv_001", "sv_002"]
    first = search.videos[0]
    assert first.music is not None
    assert first.music.artist == "DJ Spoon"
    assert first.creator is not None
    assert first.creator.is_verified is False
    assert first.stats is not None
    assert first.stats.shares == 12000
    assert first.duration == 58.5
    assert first.published_at == utc(2024, 4, 20, 18, 30)


def test_search_created_has_pending_keywords_and_no_videos() -> None:
    created = decode(load("SearchCreated-basic.json"), SearchCreated, conv=strict_converter)
    assert created.videos_found == 20
    assert created.search.keywords == []
    assert created.search.keywords_status is KeywordsStatus.PENDING
    assert created.search.videos is None
    assert created.search.pagination is None


def test_template_detail_fields() -> None:
    tpl = decode(load("TemplateDetail-basic.json"), TemplateDetail, conv=strict_converter)
    assert tpl.is_template is True
    assert tpl.video_settings is not None
    assert tpl.video_settings.aspect_ratio is AspectRatio.RATIO_9_16
    assert tpl.video_settings.caption is not None
    assert tpl.video_settings.caption.preset is CaptionPreset.BEAST
    assert tpl.video_settings.caption.alignment is TextAlignment.BOTTOM
    assert tpl.scenes is not None
    assert len(tpl.scenes) == 2
    scene = tpl.scenes[0]
    assert scene.variables is not None
    assert [(v.key, v.type) for v in scene.variables] == [
        ("first_name", TemplateVariableType.TEXT),
        ("product", TemplateVariableType.TEXT),
        ("logo", TemplateVariableType.MEDIA),
    ]
    assert scene.variables[2].type is TemplateVariableType.MEDIA
    assert scene.avatar is not None
    assert scene.avatar.id == "avatar_anna"
    assert scene.avatar.top_left is not None
    assert scene.avatar.bottom_right is not None
    assert (scene.avatar.top_left.x, scene.avatar.top_left.y) == (0, 480)
    assert (scene.avatar.bottom_right.x, scene.avatar.bottom_right.y) == (540, 960)
    assert scene.caption is not None
    assert scene.caption.top_left is not None
    assert scene.caption.top_left.y == 700
    assert scene.placeholders() == ["first_name", "product"]
    assert tpl.variable_names() == ["first_name", "product", "logo", "url"]
    assert tpl.updated_at == utc(2024, 4, 12, 9, 30)


def test_template_list_item_fields() -> None:
    tpl = decode(load("Template-list-item.json"), Template, conv=strict_converter)
    assert tpl.variables == ["first_name", "product"]
    assert tpl.scenes is not None
    assert tpl.scenes[0].variables is not None
    assert tpl.scenes[0].variables[0].type is None  # the list view has {key, value} only
    assert tpl.scenes[0].variables[1].value == "the Thermo bottle"


def test_analyzed_account_fields() -> None:
    account = decode(load("AnalyzedAccount-basic.json"), AnalyzedAccount, conv=strict_converter)
    assert account.platform is SocialPlatform.CLIPSITE
    assert account.is_verified is True
    assert account.stats is not None
    assert account.stats.followers == 1250000
    assert account.analytics is not None
    assert account.analytics.virality_score == 78.5
    assert account.top_hashtags == ["recipe", "foodtok", "quickmeals"]
    assert account.last_analyzed == utc(2024, 5, 3, 10, 0)


# -- tolerance of the default converter ---------------------------------------------------


def test_unknown_keys_are_ignored_at_every_level() -> None:
    data = load("VideoDetail-completed.json")
    data["brandNewField"] = {"x": 1}
    data["videoSettings"]["resolution"] = "1080p"
    data["videoSettings"]["caption"]["fontSize"] = 42
    video = decode(data, VideoDetail)
    assert video.id == "vid_7f3a91c2"
    assert video.video_settings is not None
    assert video.video_settings.caption is not None
    assert video.video_settings.caption.preset is CaptionPreset.RETRO_TV
    assert "brandNewField" not in converter.unstructure(video)


def test_unknown_keys_in_list_items_and_nested_objects_are_ignored() -> None:
    data = load("Search-retrieved.json")
    data["videos"][0]["creator"]["region"] = "EU"
    data["videos"][1]["sponsored"] = True
    data["pagination"]["cursor"] = "abc"
    search = decode(data, Search)
    assert search.videos is not None
    assert len(search.videos) == 2
    assert search.pagination is not None
    assert search.pagination.has_more is True


@pytest.mark.parametrize(
    ("filename", "cls", "pointer", "new_value"),
    [
        (
            "VideoDetail-completed.json",
            VideoDetail,
            ("videoSettings", "caption", "preset"),
            "sparkle",
        ),
        ("VideoDetail-completed.json", VideoDetail, ("status",), "QUEUED"),
        ("VideoDetail-completed.json", VideoDetail, ("videoSettings", "aspectRatio"), "ratio_4_5"),
        ("ScheduledPost-pending.json", ScheduledPost, ("status",), "archived"),
        ("ScheduledPost-pending.json", ScheduledPost, ("platform",), "newsite"),
        ("Search-retrieved.json", Search, ("keywordsStatus",), "failed"),
        (
            "TemplateDetail-basic.json",
            TemplateDetail,
            ("scenes", 0, "variables", 0, "type"),
            "audio",
        ),
        ("Integration-basic.json", Integration, ("type",), "newsite"),
    ],
)
def test_unknown_enum_value_is_kept_as_plain_str(
    filename: str, cls: type[Any], pointer: tuple[Any, ...], new_value: str
) -> None:
    data = load(filename)
    target = data
    for part in pointer[:-1]:
        target = target[part]
    target[pointer[-1]] = new_value

    decoded = decode(data, cls)
    value: Any = decoded
    for part in pointer:
        if isinstance(part, int):
            value = value[part]
        else:
            value = getattr(value, re.sub(r"([A-Z])", r"_\1", part).lower())
    assert value == new_value
    assert type(value) is str
    assert converter.unstructure(decoded) == data

    with pytest.raises(DecodeError):
        decode(data, cls, conv=strict_converter)


def test_known_enum_value_becomes_the_member() -> None:
    video = decode({"id": "v", "status": "STARTED"}, Video)
    assert video.status is VideoStatus.STARTED
    assert not video.is_terminal


@pytest.mark.parametrize(
    ("cls", "data", "required"),
    [
        (Video, {"id": "v1", "status": "STARTED"}, {"id", "status"}),
        (VideoDetail, {"id": "v1", "status": "STARTED"}, {"id", "status"}),
        (ScheduledPost, {"id": "s1", "status": "draft"}, {"id", "status"}),
        (Integration, {"id": "i1"}, {"id"}),
        (AnalyzedAccount, {"id": "a1"}, {"id"}),
        (Search, {"id": "s1"}, {"id"}),
        (SocialVideo, {"id": "sv1"}, {"id"}),
        (Template, {"id": "t1"}, {"id"}),
        (TemplateDetail, {"id": "t1"}, {"id"}),
        (Niche, {"id": "n1"}, {"id"}),
    ],
)
def test_missing_optional_fields_are_none(
    cls: type[Any], data: dict[str, Any], required: set[str]
) -> None:
    decoded = decode(data, cls)
    values = {a.name: getattr(decoded, a.name) for a in attrs.fields(cls)}
    optional = {name: v for name, v in values.items() if name not in required}
    assert optional, "the model should have optional fields"
    assert all(v is None for v in optional.values()), optional
    assert converter.unstructure(decoded) == data


def test_video_without_url_while_started() -> None:
    video = decode(
        {"id": "v1", "status": "STARTED", "progress": 35, "thumbnail": None, "projectId": None},
        Video,
    )
    assert video.url is None
    assert video.thumbnail is None
    assert video.project_id is None
    assert video.progress == 35


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-05-01T12:00:00Z", utc(2024, 5, 1, 12, 0, 0)),
        ("2024-05-01T12:00:00.250Z", utc(2024, 5, 1, 12, 0, 0) + timedelta(milliseconds=250)),
        ("2024-05-01T12:00:00", utc(2024, 5, 1, 12, 0, 0)),
        ("2024-05-01T12:00:00.123456", utc(2024, 5, 1, 12, 0, 0) + timedelta(microseconds=123456)),
        ("2024-05-01T14:00:00+02:00", utc(2024, 5, 1, 12, 0, 0)),
        ("2024-05-01T12:00:00+00:00", utc(2024, 5, 1, 12, 0, 0)),
    ],
)
def test_timestamps_are_timezone_aware(raw: str, expected: datetime) -> None:
    video = decode({"id": "v", "status": "COMPLETED", "createdAt": raw}, Video)
    assert video.created_at is not None
    assert video.created_at.tzinfo is not None
    assert video.created_at.utcoffset() is not None
    assert video.created_at == expected


def test_naive_timestamp_is_read_as_utc() -> None:
    video = decode({"id": "v", "status": "COMPLETED", "updatedAt": "2024-05-01T12:00:00"}, Video)
    assert video.updated_at is not None
    assert video.updated_at.utcoffset() == timedelta(0)
    assert converter.unstructure(video)["updatedAt"] == "2024-05-01T12:00:00Z"


def test_millisecond_timestamp_round_trips_to_the_same_instant() -> None:
    # The wire text may differ ("...00.250Z" -> "...00.250000Z"); the instant must not.
    video = decode(
        {"id": "v", "status": "COMPLETED", "createdAt": "2024-05-01T12:00:00.250Z"}, Video
    )
    again = decode(converter.unstructure(video), Video)
    assert again.created_at == video.created_at


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"status": "STARTED"}, "data.id"),
        ({"id": "v", "status": "STARTED", "durationInFrames": "long"}, "data.durationInFrames"),
        ({"id": "v", "status": "STARTED", "createdAt": "yesterday"}, "data.createdAt"),
        ({"id": "v", "status": 3}, "data.status"),
        (
            {"id": "v", "status": "STARTED", "videoSettings": {"caption": {"preset": 7}}},
            "data.videoSettings.caption.preset",
        ),
    ],
)
def test_decode_error_names_the_wire_field_path(data: dict[str, Any], path: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode(data, VideoDetail)
    assert any(line.startswith(f"{path}: ") for line in info.value.errors), info.value.errors


@pytest.mark.parametrize(
    ("cls", "data", "path"),
    [
        # A JSON string where the spec has a boolean: "false" must not become True.
        (AnalyzedAccount, {"id": "a1", "isVerified": "false"}, "data.isVerified"),
        (
            VideoDetail,
            {"id": "v", "status": "STARTED", "durationInFrames": "750"},
            "data.durationInFrames",
        ),
        (
            VideoDetail,
            {"id": "v", "status": "STARTED", "durationInFrames": 7.5},
            "data.durationInFrames",
        ),
        (VideoDetail, {"id": "v", "status": "STARTED", "progress": True}, "data.progress"),
        (Niche, {"id": 5}, "data.id"),
    ],
)
def test_wrong_scalar_type_is_rejected_not_coerced(
    cls: type[Any], data: dict[str, Any], path: str
) -> None:
    with pytest.raises(DecodeError) as info:
        decode(data, cls)
    assert any(line.startswith(f"{path}: ") for line in info.value.errors), info.value.errors


def test_strict_converter_rejects_a_wrong_scalar_type() -> None:
    # Type drift in a recorded payload (a number sent as a string) must fail CI too.
    data = {**load("Video-list-item.json"), "durationInFrames": "750"}
    with pytest.raises(DecodeError) as info:
        decode(data, Video, conv=strict_converter)
    assert any(line.startswith("data.durationInFrames: ") for line in info.value.errors)


def test_decode_error_lists_every_problem() -> None:
    with pytest.raises(DecodeError) as info:
        decode({"durationInFrames": "long", "status": "STARTED"}, Video)
    paths = sorted(line.split(": ", 1)[0] for line in info.value.errors)
    assert paths == ["data.durationInFrames", "data.id"]


# -- malformed bodies through the client --------------------------------------------------


@pytest.fixture
async def client(mock: aioresponses) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api_key="test-key", base_url=BASE, retry=RetryPolicy(attempts=1)) as c:
        yield c


def reply(mock: aioresponses, method: str, path: str, **kwargs: Any) -> None:
    """Answer ``method`` on ``path`` (any query string) once."""
    pattern = re.compile("^" + re.escape(BASE + path) + r"(\?.*)?$")
    mock.add(pattern, method=method, **kwargs)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("<html><body>Bad gateway</body></html>", "text/html"),
        ('{"success": true, "data": {', "application/json"),
        ("", "application/json"),
    ],
)
async def test_non_json_success_body_raises_with_the_raw_body(
    client: AsyncClient, mock: aioresponses, body: str, content_type: str
) -> None:
    reply(mock, "GET", "/v1/video/vid_1", status=200, body=body, content_type=content_type)
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.get("vid_1")
    err = info.value
    assert err.body == body.encode()
    assert err.status_code == 200
    assert err.method == "GET"
    assert err.path == "/v1/video/vid_1"
    assert err.errors


async def test_json_array_body_is_not_an_envelope(client: AsyncClient, mock: aioresponses) -> None:
    reply(mock, "GET", "/v1/integration/list", status=200, body="[1, 2]")
    with pytest.raises(APIResponseValidationError) as info:
        await client.integrations.list()
    assert info.value.body == b"[1, 2]"


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d.pop("id"), "data.id"),
        (lambda d: d.update(durationInFrames="750 frames"), "data.durationInFrames"),
        (lambda d: d.update(status=None), "data.status"),
        (lambda d: d.update(createdAt="not a date"), "data.createdAt"),
    ],
)
async def test_video_detail_with_a_bad_field_raises_naming_the_path(
    client: AsyncClient, mock: aioresponses, mutate: Any, path: str
) -> None:
    data = load("VideoDetail-completed.json")
    mutate(data)
    reply(mock, "GET", "/v1/video/vid_1", payload={"success": True, "message": "ok", "data": data})
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.get("vid_1")
    err = info.value
    assert any(line.startswith(f"{path}: ") for line in err.errors), err.errors
    assert err.method == "GET"
    assert err.path == "/v1/video/vid_1"


async def test_envelope_without_data_raises(client: AsyncClient, mock: aioresponses) -> None:
    reply(mock, "GET", "/v1/video/vid_1", payload={"success": True, "message": "ok"})
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.get("vid_1")
    assert info.value.errors
    assert all(line.startswith("data") for line in info.value.errors)


@pytest.mark.parametrize("videos", [None, {"0": {"id": "v"}}, "v1,v2", 3])
async def test_list_whose_videos_is_not_a_list_raises(
    client: AsyncClient, mock: aioresponses, videos: Any
) -> None:
    reply(
        mock,
        "GET",
        "/v1/video/list",
        payload={"success": True, "data": {"videos": videos, "total": 1, "limit": 50, "offset": 0}},
    )
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.list_page()
    assert info.value.errors == ["data.videos: expected a list"]
    assert info.value.path == "/v1/video/list"


async def test_list_without_data_raises(client: AsyncClient, mock: aioresponses) -> None:
    reply(mock, "GET", "/v1/schedule/list", payload={"success": True, "message": "ok"})
    with pytest.raises(APIResponseValidationError) as info:
        await client.schedule.list_page()
    assert info.value.errors == ["data.scheduledPosts: expected a list"]


async def test_bad_list_item_names_its_wire_path(client: AsyncClient, mock: aioresponses) -> None:
    good = load("Video-list-item.json")
    bad = {k: v for k, v in good.items() if k != "id"}
    reply(
        mock,
        "GET",
        "/v1/video/list",
        payload={
            "success": True,
            "data": {"videos": [good, bad], "total": 2, "limit": 50, "offset": 0},
        },
    )
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.list_page()
    # The item sits at data.videos[1] on the wire.
    assert "data.videos[1].id: required field missing" in info.value.errors, info.value.errors


async def test_bad_nested_record_names_its_wire_path(
    client: AsyncClient, mock: aioresponses
) -> None:
    account = load("AnalyzedAccount-basic.json")
    account["stats"]["followers"] = "many"
    reply(
        mock,
        "POST",
        "/v1/social/account/analyze",
        status=201,
        payload={"success": True, "message": "Account analyzed", "data": {"account": account}},
    )
    with pytest.raises(APIResponseValidationError) as info:
        await client.social.analyze_account("chefmaria", "clipsite")
    # The field sits at data.account.stats.followers on the wire.
    assert any(line.startswith("data.account.stats.followers: ") for line in info.value.errors), (
        info.value.errors
    )


async def test_unknown_keys_and_enum_values_pass_through_the_client(
    client: AsyncClient, mock: aioresponses
) -> None:
    data = load("VideoDetail-completed.json")
    data["status"] = "ARCHIVED"
    data["videoSettings"]["caption"]["preset"] = "sparkle"
    data["resolution"] = "1080x1920"
    reply(
        mock,
        "GET",
        "/v1/video/vid_1",
        payload={"success": True, "message": "ok", "data": data, "requestId": "r-1"},
    )
    video = await client.videos.get("vid_1")
    assert video.status == "ARCHIVED"
    assert type(video.status) is str
    assert video.video_settings is not None
    assert video.video_settings.caption is not None
    assert video.video_settings.caption.preset == "sparkle"
    assert video.created_at == utc(2024, 5, 1, 12, 0, 0)


async def test_undecodable_data_carries_the_raw_body_and_status(
    client: AsyncClient, mock: aioresponses
) -> None:
    reply(mock, "GET", "/v1/video/vid_1", payload={"success": True, "data": {"status": "STARTED"}})
    with pytest.raises(APIResponseValidationError) as info:
        await client.videos.get("vid_1")
    err = info.value
    assert isinstance(err.body, bytes)
    assert json.loads(err.body) == {"success": True, "data": {"status": "STARTED"}}
    assert (err.status_code, err.method, err.path) == (200, "GET", "/v1/video/vid_1")
    assert err.errors == ["data.id: required field missing"]


# -- hostile values: out of range, wrong shape, huge ----------------------------------------

VIDEO = {"id": "v", "status": "STARTED"}


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("createdAt", 1e20, "timestamp out of range"),
        ("createdAt", -1e20, "timestamp out of range"),
        ("createdAt", 10**30, "timestamp out of range"),
        ("createdAt", float("nan"), "timestamp out of range"),
        ("createdAt", float("inf"), "timestamp out of range"),
        ("createdAt", "9" * 1000, "too long"),
        ("createdAt", "99999-01-01T00:00:00Z", "invalid ISO 8601 timestamp"),
        ("durationInSeconds", float("nan"), "expected a finite number"),
        ("durationInSeconds", float("-inf"), "expected a finite number"),
        ("durationInSeconds", 10**400, "out of range"),
        ("progress", 2**63, "out of range"),
        ("progress", -(2**63) - 1, "out of range"),
        ("name", {"first": "a"}, "expected str, got dict"),
        ("name", ["a"], "expected str, got list"),
    ],
)
def test_out_of_range_values_are_one_decode_error_naming_the_path(
    field: str, value: Any, reason: str
) -> None:
    with pytest.raises(DecodeError) as info:
        decode({**VIDEO, field: value}, VideoDetail)
    assert len(info.value.errors) == 1
    line = info.value.errors[0]
    assert line.startswith(f"data.{field}: ") and reason in line, line


def test_largest_int64_still_decodes() -> None:
    assert decode({**VIDEO, "size": 2**63 - 1}, Video).size == 2**63 - 1


@pytest.mark.parametrize("value", ["abc", b"abc", {"a": "b"}, 7, True])
def test_a_list_field_given_no_list_is_one_error_and_never_split(value: Any) -> None:
    with pytest.raises(DecodeError) as info:
        decode({"id": "s", "keywords": value}, Search)
    assert info.value.errors == [f"data.keywords: expected a list, got {type(value).__name__}"]


@pytest.mark.parametrize("value", ["abc", ["a"], 7, None])
def test_a_record_given_no_object_is_one_error(value: Any) -> None:
    with pytest.raises(DecodeError) as info:
        decode({"search": value}, SearchCreated)
    kind = "null" if value is None else type(value).__name__
    assert info.value.errors == [f"data.search: expected a JSON object, got {kind}"]


def test_a_megabyte_string_where_a_list_belongs_is_one_error() -> None:
    with pytest.raises(DecodeError) as info:
        decode({"id": "s", "videos": "v" * 1_000_000}, Search)
    assert info.value.errors == ["data.videos: expected a list, got str"]


def test_a_long_list_of_wrong_items_stops_after_a_bounded_number_of_errors() -> None:
    with pytest.raises(DecodeError) as info:
        decode([1] * 100_000, list[Video])
    # The list stops at its 20th bad item: the work done is bounded, not per item.
    assert info.value.errors == [
        *(f"data[{i}]: expected a JSON object, got int" for i in range(20)),
        "and 99980 more items not checked",
    ]


def test_many_errors_in_one_record_are_capped() -> None:
    # Nested lists, each stopping at its own cap, still give at most 20 lines plus one.
    bad_item = {"id": 1, "title": 2, "duration": "long"}
    with pytest.raises(DecodeError) as info:
        decode({"id": "s", "videos": [bad_item] * 50}, Search)
    # 20 bad items of 3 problems each are found; 20 lines are shown.
    errors = info.value.errors
    assert len(errors) == 21
    assert errors[0] == "data.videos[0].id: expected str, got int"
    assert errors[-1] == "and 40 more, and 30 more items not checked"


@pytest.mark.parametrize(
    "data",
    [
        None,
        "text",
        3.5,
        [[[[[[]]]]]],
        {"id": {"id": {"id": None}}, "videos": [[1], {"x": [None]}]},
        {"id": "s", "pagination": {"total": float("nan"), "limit": "1", "offset": []}},
        {"id": "s", "videos": [{"id": "x", "publishedAt": -(10**20), "stats": "many"}]},
    ],
)
def test_any_json_shape_is_a_decode_error_never_another_exception(data: Any) -> None:
    with pytest.raises(DecodeError):
        decode(data, Search)


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ({"total": "10", "limit": "abc", "offset": float("inf")}, (1, 50, 0)),
        ({"total": True, "limit": {}, "offset": -5}, (1, 50, 0)),
        ({"total": 10**40, "limit": 10**40, "offset": 10**40}, (1, 50, 0)),
        ({"total": 7, "limit": 5, "offset": 2}, (7, 5, 2)),
    ],
)
async def test_page_numbers_of_the_wrong_type_or_range_fall_back(
    client: AsyncClient, mock: aioresponses, page: dict[str, Any], expected: tuple[int, ...]
) -> None:
    video = load("Video-list-item.json")
    reply(
        mock,
        "GET",
        "/v1/video/list",
        payload={"success": True, "data": {"videos": [video], **page}},
    )
    result = await client.videos.list_page()
    assert (result.total, result.limit, result.offset) == expected


def test_a_long_string_where_the_page_items_belong_is_one_error() -> None:
    envelope = Envelope({"success": True, "data": {"videos": "v" * 10**6}})
    with pytest.raises(APIResponseValidationError) as info:
        page_of(envelope, "videos", Video, limit=50, offset=0)
    assert info.value.errors == ["data.videos: expected a list"]


def test_a_long_list_of_wrong_page_items_is_a_short_error() -> None:
    envelope = Envelope({"success": True, "data": {"videos": ["v"] * 100_000}})
    with pytest.raises(APIResponseValidationError) as info:
        page_of(envelope, "videos", Video, limit=50, offset=0)
    assert len(info.value.errors) == 21
    assert info.value.errors[-1] == "and 99980 more items not checked"
