"""Every endpoint on the wire (spec part 4), with aioresponses.

Each test checks what actually left the client (method, path, query, JSON body,
``x-api-key``) and how a response shaped like the spec's envelope is decoded.
Error statuses map to the exception tree of ``asyncclient.errors`` (spec 7, 8.1).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from yarl import URL

from asyncclient import AsyncClient
from asyncclient.errors import (
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
)
from asyncclient.models import (
    AdSettings,
    AspectRatio,
    Audio,
    AvatarBox,
    AvatarScene,
    BRollType,
    Caption,
    CaptionPreset,
    FrameModel,
    GameplaySettings,
    KeywordsStatus,
    LipsyncModel,
    MediaType,
    PictureInPictureScene,
    Platform,
    PlatformData,
    Point,
    PresetSettings,
    ProductAdSettings,
    ProjectType,
    ScheduleStatus,
    ScrollMode,
    SocialPlatform,
    StartEndFrameScene,
    TemplateScene,
    TemplateVariable,
    TemplateVariableType,
    TextAlignment,
    TextPreset,
    TextSettings,
    UGCLanguage,
    VideoListStatus,
    VideoScene,
    VideoStatus,
    VisualPreset,
)
from asyncclient.retry import RetryPolicy
from tests.virtual_time import FastForward
from tests.wire import Reply as CallbackResult
from tests.wire import mocked as aioresponses

BASE = "https://api.example.test"
API_KEY = "test-key"
DATA = Path(__file__).parent / "data"
UTC = timezone.utc


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# -- the wire -----------------------------------------------------------------------------


@attrs.frozen
class Sent:
    """One request as it left the client."""

    method: str
    url: URL
    kwargs: dict[str, Any]

    @property
    def path(self) -> str:
        return self.url.path

    @property
    def query(self) -> dict[str, str]:
        pairs = list(self.url.query.items())
        assert len(pairs) == len({k for k, _ in pairs}), f"repeated query keys: {pairs}"
        return dict(pairs)

    @property
    def headers(self) -> Any:
        return self.kwargs["headers"]

    @property
    def raw_body(self) -> bytes | None:
        return self.kwargs.get("data")

    @property
    def json(self) -> Any:
        raw = self.raw_body
        assert raw is not None, "no body was sent"
        return json.loads(raw)


Responder = Callable[[Sent], dict[str, Any]]


class Wire:
    """Registers answers and records, in order, every request that was sent."""

    def __init__(self, mock: aioresponses) -> None:
        self.mock = mock
        self.sent: list[Sent] = []

    def on(
        self,
        method: str,
        path: str,
        *,
        payload: Any = None,
        respond: Responder | None = None,
        status: int = 200,
        body: str | bytes = "",
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
        repeat: bool = False,
    ) -> None:
        """Answer ``method path`` (any query string); ``respond`` builds the payload per request."""
        pattern = re.compile("^" + re.escape(BASE + path) + r"(\?.*)?$")

        def record(url: URL, **kwargs: Any) -> CallbackResult | None:
            sent = Sent(method, url, kwargs)
            self.sent.append(sent)
            if respond is None:
                return None
            return CallbackResult(
                status=status,
                payload=respond(sent),
                headers=headers,
            )

        self.mock.add(
            pattern,
            method=method,
            status=status,
            payload=payload,
            body=body,
            headers=headers,
            content_type=content_type,
            repeat=repeat,
            callback=record,
        )

    def only(self) -> Sent:
        assert len(self.sent) == 1, [f"{s.method} {s.url}" for s in self.sent]
        return self.sent[0]


def assert_common(sent: Sent, method: str, path: str) -> None:
    assert sent.method == method
    assert sent.url.scheme == "https"
    assert sent.url.host == "api.example.test"
    assert sent.path == path
    assert sent.headers["x-api-key"] == API_KEY
    if method == "POST":
        assert sent.headers["Content-Type"] == "application/json"
    else:
        assert sent.raw_body is None


def assert_no_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert item is not None, f"{key} is null"
            assert_no_nulls(item)
    elif isinstance(value, list):
        for item in value:
            assert_no_nulls(item)


@pytest.fixture
def wire(mock: aioresponses) -> Wire:
    return Wire(mock)


@pytest.fixture
async def client(mock: aioresponses) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api_key=API_KEY, base_url=BASE) as c:
        yield c


@pytest.fixture
async def once(mock: aioresponses) -> AsyncIterator[AsyncClient]:
    """A client that never retries: each error surfaces after one request."""
    async with AsyncClient(api_key=API_KEY, base_url=BASE, retry=RetryPolicy(attempts=1)) as c:
        yield c


def started(video_id: str, project_id: str) -> dict[str, Any]:
    """The creation envelope of spec part 4 (status STARTED)."""
    return {
        "success": True,
        "message": "Video creation started",
        "data": {"videoId": video_id, "projectId": project_id, "status": "STARTED"},
    }


WEBHOOK = "https://hooks.example.test/done"
METADATA = {"order_id": "o-17", "campaign": {"utm_source": "spring"}}
AUDIO = Audio(speed=1.1, stability=0.5, similarity_boost=0.75, style=0.2, use_speaker_boost=True)
AUDIO_WIRE = {
    "speed": 1.1,
    "stability": 0.5,
    "similarityBoost": 0.75,
    "style": 0.2,
    "useSpeakerBoost": True,
}


# -- creation: spec 4.1 to 4.9 ------------------------------------------------------------


@pytest.mark.heavy
async def test_create_ugc_ads_sends_every_field(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/ugc-ads", payload=started("vid_u1", "proj_u1"))
    created = await client.projects.create_ugc_ads(
        script="Meet the bottle that keeps coffee hot.",
        avatar_id="avatar_anna",
        voice_id="voice_rachel",
        media=["media_1", "media_2"],
        lipsync_model=LipsyncModel.PRO,
        ad_settings=AdSettings(b_roll_type=BRollType.ROUNDED_COVER, remove_avatar_background=True),
        music_id="music_upbeat",
        aspect_ratio=AspectRatio.RATIO_16_9,
        caption=Caption(preset=CaptionPreset.RETRO_TV, alignment=TextAlignment.BOTTOM),
        audio=AUDIO,
        name="Spring launch",
        webhook=WEBHOOK,
        metadata=METADATA,
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/ugc-ads")
    assert sent.query == {}
    assert sent.json == {
        "script": "Meet the bottle that keeps coffee hot.",
        "avatarId": "avatar_anna",
        "voiceId": "voice_rachel",
        "media": ["media_1", "media_2"],
        "lipsyncModel": "pro",
        "adSettings": {"bRollType": "rounded-cover", "removeAvatarBackground": True},
        "musicId": "music_upbeat",
        "aspectRatio": "ratio_16_9",
        "caption": {"preset": "retroTV", "alignment": "bottom"},
        "audio": AUDIO_WIRE,
        "name": "Spring launch",
        "webhook": WEBHOOK,
        # metadata is the caller's data: its keys are not renamed
        "metadata": {"order_id": "o-17", "campaign": {"utm_source": "spring"}},
    }
    assert created.project_id == "proj_u1"
    assert created.video_id == "vid_u1"
    assert created.status == VideoStatus.STARTED
    assert created.created is not None
    assert created.created.message == "Video creation started"
    assert created.format == "ugc_ads"


@pytest.mark.heavy
async def test_create_ugc_ads_minimal_body_has_no_nulls(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/ugc-ads", payload=started("vid_u2", "proj_u2"))
    await client.projects.create_ugc_ads(
        script="Short.", avatar_id="avatar_anna", voice_id="voice_rachel", media=["media_1"]
    )
    body = wire.only().json
    assert body == {
        "script": "Short.",
        "avatarId": "avatar_anna",
        "voiceId": "voice_rachel",
        "media": ["media_1"],
    }


@pytest.mark.heavy
async def test_create_script_to_video_ai_images(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/script-to-video", payload=started("vid_s1", "proj_s1"))
    created = await client.projects.create_script_to_video(
        script="Ten facts about owls.",
        voice_id="voice_rachel",
        media_type=MediaType.AI_IMAGES,
        preset_settings=PresetSettings(preset=VisualPreset.FANTASY_MOVIE_80S, quality="pro"),
        music_id="music_calm",
        caption=Caption(preset="neon", alignment="middle", disabled=False),
        audio=Audio(speed=0.9),
        aspect_ratio="ratio_1_1",
        add_stickers=True,
        name="Owls",
        webhook=WEBHOOK,
        metadata={"k": 1},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/script-to-video")
    assert sent.json == {
        "script": "Ten facts about owls.",
        "voiceId": "voice_rachel",
        "mediaType": "ai-images",
        "presetSettings": {"preset": "80s-fantasy-movie", "quality": "pro"},
        "musicId": "music_calm",
        "caption": {"preset": "neon", "alignment": "middle", "disabled": False},
        "audio": {"speed": 0.9},
        "aspectRatio": "ratio_1_1",
        "addStickers": True,
        "name": "Owls",
        "webhook": WEBHOOK,
        "metadata": {"k": 1},
    }
    assert (created.video_id, created.project_id, created.format) == (
        "vid_s1",
        "proj_s1",
        "script_to_video",
    )


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("kwargs", "wire_fields"),
    [
        (
            {
                "media_type": MediaType.GAMEPLAY,
                "gameplay_settings": GameplaySettings(
                    selected_game="blockgame", selected_video="clip_7"
                ),
            },
            {
                "mediaType": "gameplay",
                "gameplaySettings": {"selectedGame": "blockgame", "selectedVideo": "clip_7"},
            },
        ),
        (
            {"media_type": "media", "media": ["media_1", "media_2", "media_3"]},
            {"mediaType": "media", "media": ["media_1", "media_2", "media_3"]},
        ),
    ],
    ids=["gameplay", "media"],
)
async def test_create_script_to_video_other_media_types(
    client: AsyncClient, wire: Wire, kwargs: dict[str, Any], wire_fields: dict[str, Any]
) -> None:
    wire.on("POST", "/v1/project/create/script-to-video", payload=started("vid_s2", "proj_s2"))
    await client.projects.create_script_to_video(script="Go.", voice_id="voice_1", **kwargs)
    assert wire.only().json == {"script": "Go.", "voiceId": "voice_1", **wire_fields}


@pytest.mark.heavy
async def test_create_product_ads(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/product-ads", payload=started("vid_p1", "proj_p1"))
    created = await client.projects.create_product_ads(
        script="Our shop has it all.",
        product_ad_settings=ProductAdSettings(
            website_url="https://shop.example.com/products/thermo",
            avatar_intro_seconds=3,
            scroll_interval=2.5,
            scroll_duration=10,
            scroll_delay=1,
            scroll_mode=ScrollMode.LOOP,
        ),
        avatar_id="avatar_anna",
        voice_id="voice_rachel",
        lipsync_model="base",
        music_id="music_upbeat",
        caption=Caption(preset=CaptionPreset.CLASSIC),
        audio=Audio(stability=0.3),
        aspect_ratio=AspectRatio.RATIO_9_16,
        add_stickers=False,
        name="Shop ad",
        webhook=WEBHOOK,
        metadata={"sku": "T-1"},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/product-ads")
    assert sent.json == {
        "script": "Our shop has it all.",
        "productAdSettings": {
            "websiteUrl": "https://shop.example.com/products/thermo",
            "avatarIntroSeconds": 3,
            "scrollInterval": 2.5,
            "scrollDuration": 10,
            "scrollDelay": 1,
            "scrollMode": "loop",
        },
        "avatarId": "avatar_anna",
        "voiceId": "voice_rachel",
        "lipsyncModel": "base",
        "musicId": "music_upbeat",
        "caption": {"preset": "classic"},
        "audio": {"stability": 0.3},
        "aspectRatio": "ratio_9_16",
        "addStickers": False,
        "name": "Shop ad",
        "webhook": WEBHOOK,
        "metadata": {"sku": "T-1"},
    }
    assert (created.video_id, created.project_id, created.format) == (
        "vid_p1",
        "proj_p1",
        "product_ads",
    )


@pytest.mark.heavy
async def test_create_scenes_sends_each_scene_with_its_type(
    client: AsyncClient, wire: Wire
) -> None:
    # spec 4.4: the response is {success, projectId, message} with no data object
    wire.on(
        "POST",
        "/v1/project/create/scenes",
        payload={"success": True, "projectId": "proj_sc1", "message": "Project created"},
    )
    created = await client.projects.create_scenes(
        scenes=[
            AvatarScene(script="Hello there.", avatar_id="avatar_anna", voice_id="voice_rachel"),
            VideoScene(media_id="media_clip", script="Look at this.", voice_id="voice_rachel"),
            VideoScene(media_id="media_silent"),
            PictureInPictureScene(
                script="Over the clip.",
                avatar_id="avatar_anna",
                voice_id="voice_rachel",
                media_id="media_bg",
            ),
            StartEndFrameScene(
                start_frame_media_id="media_a",
                end_frame_media_id="media_b",
                frame_prompt="a smooth zoom",
                frame_model=FrameModel.MODELB_3_1,
                frame_duration=5,
            ),
        ],
        music_id="music_calm",
        caption=Caption(preset=CaptionPreset.BUBBLE, alignment="top"),
        aspect_ratio=AspectRatio.RATIO_16_9,
        add_stickers=False,
        audio=Audio(style=0.1),
        language="es",
        name="Storyboard",
        webhook=WEBHOOK,
        metadata={"board": 1},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/scenes")
    assert sent.json == {
        "scenes": [
            {
                "type": "avatar",
                "script": "Hello there.",
                "avatarId": "avatar_anna",
                "voiceId": "voice_rachel",
            },
            {
                "type": "video",
                "mediaId": "media_clip",
                "script": "Look at this.",
                "voiceId": "voice_rachel",
            },
            {"type": "video", "mediaId": "media_silent"},
            {
                "type": "picture_in_picture",
                "script": "Over the clip.",
                "avatarId": "avatar_anna",
                "voiceId": "voice_rachel",
                "mediaId": "media_bg",
            },
            {
                "type": "start_end_frame",
                "startFrameMediaId": "media_a",
                "endFrameMediaId": "media_b",
                "framePrompt": "a smooth zoom",
                "frameModel": "modelb_3_1",
                "frameDuration": 5,
            },
        ],
        "musicId": "music_calm",
        "caption": {"preset": "bubble", "alignment": "top"},
        "aspectRatio": "ratio_16_9",
        "addStickers": False,
        "audio": {"style": 0.1},
        "language": "es",
        "name": "Storyboard",
        "webhook": WEBHOOK,
        "metadata": {"board": 1},
    }
    assert created.project_id == "proj_sc1"
    assert created.video_id is None
    assert created.status is None
    assert created.created is not None
    assert created.created.message == "Project created"
    assert created.format == "scenes"


@pytest.mark.heavy
async def test_create_hook_demo_completes_at_once(client: AsyncClient, wire: Wire) -> None:
    # spec 4.5: data.status COMPLETED and a top-level projectId
    wire.on(
        "POST",
        "/v1/project/create/hook-demo",
        payload={
            "success": True,
            "message": "Video generated",
            "projectId": "proj_h1",
            "data": {"videoId": "vid_h1", "status": "COMPLETED"},
        },
    )
    created = await client.projects.create_hook_demo(
        avatar_id="avatar_tpl_3",
        text="Stop scrolling!",
        text_settings=TextSettings(
            preset=TextPreset.SLICED_TEXT,
            alignment=TextAlignment.TOP,
            text_color="#FFFFFF",
            background_color="transparent",
            disabled=False,
        ),
        media=["media_demo"],
        aspect_ratio="ratio_9_16",
        music_id="music_hook",
        name="Hook",
        webhook=WEBHOOK,
        metadata={"test": True},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/hook-demo")
    assert sent.json == {
        "avatarId": "avatar_tpl_3",
        "text": "Stop scrolling!",
        "textSettings": {
            "preset": "slicedText",
            "alignment": "top",
            "textColor": "#FFFFFF",
            "backgroundColor": "transparent",
            "disabled": False,
        },
        "media": ["media_demo"],
        "aspectRatio": "ratio_9_16",
        "musicId": "music_hook",
        "name": "Hook",
        "webhook": WEBHOOK,
        "metadata": {"test": True},
    }
    assert created.project_id == "proj_h1"
    assert created.video_id == "vid_h1"
    assert created.status == VideoStatus.COMPLETED
    assert created.created is not None
    assert created.created.message == "Video generated"
    assert created.format == "hook_demo"


@pytest.mark.heavy
async def test_create_talking_avatar(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/talking-avatar", payload=started("vid_t1", "proj_t1"))
    created = await client.projects.create_talking_avatar(
        script="Hi, I am Anna.",
        avatar_id="avatar_anna",
        voice_id="voice_rachel",
        music_id="music_calm",
        lipsync_model=LipsyncModel.BASE,
        caption=Caption(disabled=True),
        audio=Audio(use_speaker_boost=False),
        name="Intro",
        webhook=WEBHOOK,
        metadata={"n": 1},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/talking-avatar")
    assert sent.json == {
        "script": "Hi, I am Anna.",
        "avatarId": "avatar_anna",
        "voiceId": "voice_rachel",
        "musicId": "music_calm",
        "lipsyncModel": "base",
        "caption": {"disabled": True},
        "audio": {"useSpeakerBoost": False},
        "name": "Intro",
        "webhook": WEBHOOK,
        "metadata": {"n": 1},
    }
    assert (created.video_id, created.project_id, created.status, created.format) == (
        "vid_t1",
        "proj_t1",
        "STARTED",
        "talking_avatar",
    )


@pytest.mark.heavy
async def test_create_ugc_video(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/ugc-video", payload=started("vid_v1", "proj_v1"))
    created = await client.projects.create_ugc_video(
        script="Hola a todos.",
        avatar_id="avatar_lucia",
        voice_id="voice_es_1",
        caption=Caption(preset=CaptionPreset.WRAP1, alignment=TextAlignment.MIDDLE),
        aspect_ratio=AspectRatio.RATIO_9_16,
        language=UGCLanguage.ES,
        music_id="music_latin",
        name="Hola",
        webhook=WEBHOOK,
        metadata={"lang": "es"},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/ugc-video")
    assert sent.json == {
        "script": "Hola a todos.",
        "avatarId": "avatar_lucia",
        "voiceId": "voice_es_1",
        "caption": {"preset": "wrap1", "alignment": "middle"},
        "aspectRatio": "ratio_9_16",
        "language": "es",
        "musicId": "music_latin",
        "name": "Hola",
        "webhook": WEBHOOK,
        "metadata": {"lang": "es"},
    }
    assert (created.video_id, created.project_id, created.format) == (
        "vid_v1",
        "proj_v1",
        "ugc_video",
    )


@pytest.mark.heavy
async def test_create_add_captions_response_without_message(
    client: AsyncClient, wire: Wire
) -> None:
    # spec 4.8: {success, data:{videoId, projectId, status:STARTED}} with no message
    wire.on(
        "POST",
        "/v1/project/create/add-captions",
        payload={
            "success": True,
            "data": {"videoId": "vid_c1", "projectId": "proj_c1", "status": "STARTED"},
        },
    )
    created = await client.projects.create_add_captions(
        media="media_upload_9",
        caption=Caption(preset=CaptionPreset.BRANDNAME, alignment="bottom", disabled=False),
        add_stickers=True,
        music_id="music_calm",
        name="Captioned",
        webhook=WEBHOOK,
        metadata={"src": "upload"},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create/add-captions")
    assert sent.json == {
        "media": "media_upload_9",
        "caption": {"preset": "brandname", "alignment": "bottom", "disabled": False},
        "addStickers": True,
        "musicId": "music_calm",
        "name": "Captioned",
        "webhook": WEBHOOK,
        "metadata": {"src": "upload"},
    }
    assert created.video_id == "vid_c1"
    assert created.project_id == "proj_c1"
    assert created.status == "STARTED"
    assert created.created is not None
    assert created.created.message is None
    assert created.format == "add_captions"


@pytest.mark.heavy
async def test_create_from_template(client: AsyncClient, wire: Wire) -> None:
    # spec 4.9: {success, message, data:{projectId, status:processing}}, no video id
    wire.on(
        "POST",
        "/v1/project/create",
        payload={
            "success": True,
            "message": "Template generation started",
            "data": {"projectId": "proj_tp1", "status": "processing"},
        },
    )
    created = await client.projects.create_from_template(
        template_id="tpl_8k2m",
        title="Intro for Sam",
        scenes=[
            TemplateScene(
                script="Hi {{first_name}}, meet {{product}}.",
                variables=[
                    TemplateVariable(key="first_name", value="Sam"),
                    TemplateVariable(key="product", value=""),
                    TemplateVariable(
                        key="logo",
                        type=TemplateVariableType.MEDIA,
                        value="https://cdn.example.test/media/logo.png",
                    ),
                ],
                avatar=AvatarBox(
                    id="avatar_anna",
                    top_left=Point(x=0, y=480),
                    bottom_right=Point(x=540, y=960),
                ),
                voice="voice_rachel",
            )
        ],
        caption=True,
        language="en",
        webhook=WEBHOOK,
        metadata={"customer": "sam"},
    )
    sent = wire.only()
    assert_common(sent, "POST", "/v1/project/create")
    assert sent.json == {
        "type": "class",
        "templateId": "tpl_8k2m",
        "title": "Intro for Sam",
        "caption": True,
        "language": "en",
        "scenes": [
            {
                "script": "Hi {{first_name}}, meet {{product}}.",
                "variables": [
                    {"key": "first_name", "type": "text", "value": "Sam"},
                    {"key": "product", "type": "text", "value": ""},
                    {
                        "key": "logo",
                        "type": "media",
                        "value": "https://cdn.example.test/media/logo.png",
                    },
                ],
                "avatar": {
                    "id": "avatar_anna",
                    "topLeft": {"x": 0, "y": 480},
                    "bottomRight": {"x": 540, "y": 960},
                },
                "voice": "voice_rachel",
            }
        ],
        "webhook": WEBHOOK,
        "metadata": {"customer": "sam"},
    }
    assert created.project_id == "proj_tp1"
    assert created.video_id is None
    assert created.status == "STARTED"  # the job's word for the response's "processing"
    assert created.created is not None
    assert created.created.status == "processing"
    assert created.created.message == "Template generation started"
    assert created.format == "template"


async def test_client_side_validation_sends_nothing(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/project/create/ugc-ads", payload=started("v", "p"))
    with pytest.raises(ValidationError):
        await client.projects.create_ugc_ads(
            script="", avatar_id="avatar_anna", voice_id="voice_rachel", media=[]
        )
    assert wire.sent == []


# -- videos: spec 4.10, 4.11 --------------------------------------------------------------


async def test_videos_get(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/video/vid_7f3a91c2",
        payload={"success": True, "message": "ok", "data": load("VideoDetail-completed.json")},
    )
    video = await client.videos.get("vid_7f3a91c2")
    sent = wire.only()
    assert_common(sent, "GET", "/v1/video/vid_7f3a91c2")
    assert sent.query == {}
    assert video.id == "vid_7f3a91c2"
    assert video.status is VideoStatus.COMPLETED
    assert video.url == "https://cdn.example.test/videos/vid_7f3a91c2.mp4?signature=abc123"
    assert video.duration_in_frames == 750
    assert video.duration_in_seconds == 30.0
    assert video.used_credits == 12
    assert video.video_settings is not None
    assert video.video_settings.aspect_ratio is AspectRatio.RATIO_9_16
    assert video.created_at == utc(2024, 5, 1, 12, 0, 0)
    assert video.created_at.tzinfo is not None


def video_item(n: int, project: str | None = None) -> dict[str, Any]:
    return {
        **load("Video-list-item.json"),
        "id": f"vid_{n}",
        "projectId": project or f"proj_{n}",
    }


async def test_videos_list_page(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/video/list",
        payload={
            "success": True,
            "data": {
                # two videos of one project: limit and total count projects (spec 4.10)
                "videos": [video_item(5), video_item(6, "proj_5"), video_item(7)],
                "total": 12,
                "limit": 2,
                "offset": 4,
            },
        },
    )
    page = await client.videos.list_page(
        type=ProjectType.UGC_ADS, status=VideoListStatus.COMPLETED, limit=2, offset=4
    )
    sent = wire.only()
    assert_common(sent, "GET", "/v1/video/list")
    assert sent.query == {"type": "ugc_ads", "status": "completed", "limit": "2", "offset": "4"}
    assert [v.id for v in page.items] == ["vid_5", "vid_6", "vid_7"]
    assert [v.project_id for v in page.items] == ["proj_5", "proj_5", "proj_7"]
    assert (page.total, page.limit, page.offset) == (12, 2, 4)
    assert page.has_more
    assert page.items[0].status is VideoStatus.COMPLETED
    assert page.items[0].created_at == utc(2024, 5, 1, 12, 0, 0)


async def test_videos_list_page_defaults(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/video/list",
        payload={"success": True, "data": {"videos": [], "total": 0, "limit": 50, "offset": 0}},
    )
    page = await client.videos.list_page()
    assert wire.only().query == {"limit": "50", "offset": "0"}
    assert page.items == []
    assert page.total == 0
    assert not page.has_more


async def test_videos_list_iterates_three_pages(client: AsyncClient, wire: Wire) -> None:
    pages = {
        0: [video_item(1), video_item(2)],
        2: [video_item(3), video_item(4), video_item(5, "proj_4")],
        4: [video_item(6)],
    }

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        return {
            "success": True,
            "data": {"videos": pages[offset], "total": 5, "limit": 2, "offset": offset},
        }

    wire.on("GET", "/v1/video/list", respond=respond, repeat=True)
    ids = [video.id async for video in client.videos.list(status="processing", page_size=2)]
    assert [s.query for s in wire.sent] == [
        {"status": "processing", "limit": "2", "offset": "0"},
        {"status": "processing", "limit": "2", "offset": "2"},
        {"status": "processing", "limit": "2", "offset": "4"},
    ]
    assert all(s.path == "/v1/video/list" for s in wire.sent)
    assert ids == ["vid_1", "vid_2", "vid_3", "vid_4", "vid_5", "vid_6"]


async def test_videos_list_yields_an_item_once_when_the_list_shifts(
    client: AsyncClient, wire: Wire
) -> None:
    pages = {0: [video_item(1), video_item(2)], 2: [video_item(2), video_item(3)]}

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        return {
            "success": True,
            "data": {"videos": pages[offset], "total": 4, "limit": 2, "offset": offset},
        }

    wire.on("GET", "/v1/video/list", respond=respond, repeat=True)
    ids = [video.id async for video in client.videos.list(page_size=2)]
    assert ids == ["vid_1", "vid_2", "vid_3"]
    assert [s.query["offset"] for s in wire.sent] == ["0", "2"]


async def test_videos_list_fetches_nothing_before_iteration(
    client: AsyncClient, wire: Wire
) -> None:
    wire.on("GET", "/v1/video/list", payload={"success": True, "data": {"videos": []}})
    pager = client.videos.list()
    assert wire.sent == []
    assert [v async for v in pager] == []
    assert len(wire.sent) == 1


# -- templates: spec 4.19, 4.20 -----------------------------------------------------------


def template_item(n: int) -> dict[str, Any]:
    return {**load("Template-list-item.json"), "id": f"tpl_{n}"}


async def test_templates_list_page(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/template/list",
        payload={
            "success": True,
            "data": {"templates": [template_item(1)], "total": 1, "limit": 10, "offset": 0},
        },
    )
    page = await client.templates.list_page(type=ProjectType.CLASS, limit=10)
    sent = wire.only()
    assert_common(sent, "GET", "/v1/template/list")
    assert sent.query == {"type": "class", "limit": "10", "offset": "0"}
    assert [t.id for t in page.items] == ["tpl_1"]
    tpl = page.items[0]
    assert tpl.variables == ["first_name", "product"]
    assert tpl.avatar_id == "avatar_anna"
    assert tpl.created_at == utc(2024, 4, 10, 14, 0)
    assert (page.total, page.limit, page.offset) == (1, 10, 0)


async def test_templates_list_iterates(client: AsyncClient, wire: Wire) -> None:
    pages = {0: [template_item(1), template_item(2)], 2: [template_item(3)]}

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        return {
            "success": True,
            "data": {"templates": pages[offset], "total": 3, "limit": 2, "offset": offset},
        }

    wire.on("GET", "/v1/template/list", respond=respond, repeat=True)
    ids = [t.id async for t in client.templates.list(type="ugc_ads", page_size=2)]
    assert ids == ["tpl_1", "tpl_2", "tpl_3"]
    assert [s.query for s in wire.sent] == [
        {"type": "ugc_ads", "limit": "2", "offset": "0"},
        {"type": "ugc_ads", "limit": "2", "offset": "2"},
    ]


async def test_templates_get(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/template/tpl_8k2m",
        payload={"success": True, "data": load("TemplateDetail-basic.json")},
    )
    tpl = await client.templates.get("tpl_8k2m")
    sent = wire.only()
    assert_common(sent, "GET", "/v1/template/tpl_8k2m")
    assert sent.query == {}
    assert tpl.id == "tpl_8k2m"
    assert tpl.is_template is True
    assert tpl.video_settings is not None
    assert tpl.video_settings.caption is not None
    assert tpl.video_settings.caption.preset is CaptionPreset.BEAST
    assert tpl.scenes is not None
    assert tpl.scenes[0].variables is not None
    assert tpl.scenes[0].variables[2].type is TemplateVariableType.MEDIA
    assert tpl.variable_names() == ["first_name", "product", "logo", "url"]
    assert tpl.created_at == utc(2024, 4, 10, 14, 0)


# -- schedule and integrations: spec 4.12 to 4.14 -----------------------------------------


def in_a_day() -> datetime:
    return (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)


def wire_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def schedule_created(when: datetime, platform: str) -> dict[str, Any]:
    return {
        "success": True,
        "message": "Post scheduled",
        "data": {
            "scheduleId": "sched_1",
            "status": "pending",
            "scheduledDateTime": wire_time(when),
            "platform": platform,
            "videoId": "vid_7f3a91c2",
        },
    }


async def test_schedule_create_with_platform(client: AsyncClient, wire: Wire) -> None:
    when = in_a_day().astimezone(timezone(timedelta(hours=2)))  # sent as UTC
    wire.on("POST", "/v1/schedule/create", status=201, payload=schedule_created(when, "videosite"))
    created = await client.schedule.create(
        "vid_7f3a91c2",
        "int_videosite_1",
        when,
        PlatformData(
            title="Spring launch",
            description="Hot coffee all day.",
            tags=["coffee", "launch"],
            privacy_status="unlisted",
            made_for_kids=False,
        ),
        platform=Platform.VIDEOSITE,
    )
    sent = wire.only()  # no integration list read: the platform was given
    assert_common(sent, "POST", "/v1/schedule/create")
    assert sent.json == {
        "videoId": "vid_7f3a91c2",
        "integrationId": "int_videosite_1",
        "scheduledDateTime": wire_time(when),
        "platformData": {
            "title": "Spring launch",
            "description": "Hot coffee all day.",
            "tags": ["coffee", "launch"],
            "privacyStatus": "unlisted",
            "madeForKids": False,
        },
    }
    assert sent.json["scheduledDateTime"].endswith("Z")
    assert created.schedule_id == "sched_1"
    assert created.status is ScheduleStatus.PENDING
    assert created.platform is Platform.VIDEOSITE
    assert created.video_id == "vid_7f3a91c2"
    assert created.scheduled_date_time == when
    assert created.scheduled_date_time is not None
    assert created.scheduled_date_time.utcoffset() == timedelta(0)


def integrations_envelope(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "success": True,
        "message": "ok",
        "data": {"integrations": list(items), "total": len(items)},
    }


async def test_schedule_create_reads_the_platform_from_the_integration_list(
    client: AsyncClient, wire: Wire
) -> None:
    clipsite = {**load("Integration-basic.json"), "id": "int_clip", "type": "clipsite"}
    wire.on(
        "GET",
        "/v1/integration/list",
        payload=integrations_envelope(load("Integration-basic.json"), clipsite),
    )
    when = in_a_day()
    wire.on("POST", "/v1/schedule/create", status=201, payload=schedule_created(when, "clipsite"))
    created = await client.schedule.create(
        "vid_7f3a91c2", "int_clip", when, PlatformData(description="New!", tags=["coffee"])
    )
    assert [(s.method, s.path) for s in wire.sent] == [
        ("GET", "/v1/integration/list"),
        ("POST", "/v1/schedule/create"),
    ]
    assert_common(wire.sent[0], "GET", "/v1/integration/list")
    assert_common(wire.sent[1], "POST", "/v1/schedule/create")
    assert wire.sent[1].json == {
        "videoId": "vid_7f3a91c2",
        "integrationId": "int_clip",
        "scheduledDateTime": wire_time(when),
        "platformData": {"description": "New!", "tags": ["coffee"]},
    }
    assert created.platform is Platform.CLIPSITE


async def test_schedule_create_applies_the_rules_of_the_listed_platform(
    client: AsyncClient, wire: Wire
) -> None:
    # The integration list says videosite, whose rule is at most 30 tags (spec 4.12).
    wire.on(
        "GET", "/v1/integration/list", payload=integrations_envelope(load("Integration-basic.json"))
    )
    wire.on("POST", "/v1/schedule/create", status=201, payload=schedule_created(in_a_day(), "x"))
    with pytest.raises(ValidationError) as info:
        await client.schedule.create(
            "vid_7f3a91c2",
            "int_videosite_1",
            in_a_day(),
            PlatformData(tags=[f"t{i}" for i in range(31)]),
        )
    assert any("tags" in e for e in info.value.errors)
    assert [(s.method, s.path) for s in wire.sent] == [("GET", "/v1/integration/list")]


async def test_schedule_create_without_platform_data_skips_the_integration_list(
    client: AsyncClient, wire: Wire
) -> None:
    when = in_a_day()
    wire.on("POST", "/v1/schedule/create", status=201, payload=schedule_created(when, "photosite"))
    created = await client.schedule.create("vid_7f3a91c2", "int_photo", when)
    sent = wire.only()
    assert sent.json == {
        "videoId": "vid_7f3a91c2",
        "integrationId": "int_photo",
        "scheduledDateTime": wire_time(when),
    }
    assert created.platform is Platform.PHOTOSITE


async def test_schedule_list_page(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/schedule/list",
        payload={
            "success": True,
            "message": "ok",
            "data": {
                "scheduledPosts": [load("ScheduledPost-pending.json")],
                "total": 21,
                "limit": 10,
                "offset": 20,
            },
        },
    )
    page = await client.schedule.list_page(
        status=ScheduleStatus.PENDING, platform=Platform.VIDEOSITE, limit=10, offset=20
    )
    sent = wire.only()
    assert_common(sent, "GET", "/v1/schedule/list")
    assert sent.query == {
        "status": "pending",
        "platform": "videosite",
        "limit": "10",
        "offset": "20",
    }
    assert (page.total, page.limit, page.offset) == (21, 10, 20)
    post = page.items[0]
    assert post.id == "sched_1a2b3c"
    assert post.status is ScheduleStatus.PENDING
    assert post.platform is Platform.VIDEOSITE
    assert post.scheduled_date_time == utc(2030, 6, 1, 15, 30)
    assert post.integration is not None
    assert post.integration.account is not None
    assert post.integration.account.username == "acmecoffee"
    assert post.platform_data is not None
    assert post.platform_data.privacy_status == "public"


async def test_schedule_list_iterates(client: AsyncClient, wire: Wire) -> None:
    post = load("ScheduledPost-pending.json")
    pages = {0: [{**post, "id": "s1"}, {**post, "id": "s2"}], 2: [{**post, "id": "s3"}]}

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        return {
            "success": True,
            "message": "ok",
            "data": {"scheduledPosts": pages[offset], "total": 3, "limit": 2, "offset": offset},
        }

    wire.on("GET", "/v1/schedule/list", respond=respond, repeat=True)
    ids = [p.id async for p in client.schedule.list(platform="clipsite", page_size=2)]
    assert ids == ["s1", "s2", "s3"]
    assert [s.query for s in wire.sent] == [
        {"platform": "clipsite", "limit": "2", "offset": "0"},
        {"platform": "clipsite", "limit": "2", "offset": "2"},
    ]


async def test_integrations_list(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET", "/v1/integration/list", payload=integrations_envelope(load("Integration-basic.json"))
    )
    integrations = await client.integrations.list()
    sent = wire.only()
    assert_common(sent, "GET", "/v1/integration/list")
    assert sent.query == {}
    assert len(integrations) == 1
    integration = integrations[0]
    assert integration.id == "int_videosite_1"
    assert integration.type is Platform.VIDEOSITE
    assert integration.identifier == "videosite"
    assert integration.account is not None
    assert integration.account.name == "Acme Coffee"
    assert integration.account.avatar_url == "https://cdn.example.test/avatars/acmecoffee.png"


# -- social research: spec 4.15 to 4.18 ---------------------------------------------------


async def test_social_analyze_account_strips_the_at(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "POST",
        "/v1/social/account/analyze",
        status=201,
        payload={
            "success": True,
            "message": "Account analyzed",
            "data": {"account": load("AnalyzedAccount-basic.json")},
        },
    )
    account = await client.social.analyze_account("@chefmaria", SocialPlatform.CLIPSITE)
    sent = wire.only()
    assert_common(sent, "POST", "/v1/social/account/analyze")
    assert sent.json == {"username": "chefmaria", "platform": "clipsite"}
    assert account.id == "acct_55e1"
    assert account.username == "chefmaria"
    assert account.platform is SocialPlatform.CLIPSITE
    assert account.is_verified is True
    assert account.stats is not None
    assert account.stats.followers == 1250000
    assert account.analytics is not None
    assert account.analytics.engagement_rate == 6.4
    assert account.last_analyzed == utc(2024, 5, 3, 10, 0)


async def test_social_create_search(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "POST",
        "/v1/social/search/create",
        status=201,
        payload={
            "success": True,
            "message": "Search created",
            "data": load("SearchCreated-basic.json"),
        },
    )
    created = await client.social.create_search("  cooking hacks  ", "videosite", limit=10)
    sent = wire.only()
    assert_common(sent, "POST", "/v1/social/search/create")
    assert sent.json == {"searchTerm": "cooking hacks", "platform": "videosite", "limit": 10}
    assert created.videos_found == 20
    assert created.search.id == "srch_3c9d"
    assert created.search.platform is SocialPlatform.VIDEOSITE
    assert created.search.keywords == []
    assert created.search.keywords_status is KeywordsStatus.PENDING
    assert created.search.videos is None
    assert created.search.created_at == utc(2024, 5, 3, 11, 0)


async def test_social_create_search_without_limit(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "POST",
        "/v1/social/search/create",
        status=201,
        payload={"success": True, "message": "ok", "data": load("SearchCreated-basic.json")},
    )
    await client.social.create_search("cooking hacks", SocialPlatform.CLIPSITE)
    assert wire.only().json == {"searchTerm": "cooking hacks", "platform": "clipsite"}


async def test_social_get_search(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/social/search/srch_3c9d",
        payload={"success": True, "data": load("Search-retrieved.json")},
    )
    search = await client.social.get_search("srch_3c9d", limit=10)
    sent = wire.only()
    assert_common(sent, "GET", "/v1/social/search/srch_3c9d")
    assert sent.query == {"limit": "10"}  # offset is not shown in the spec: not sent
    assert search.keywords_status is KeywordsStatus.COMPLETED
    assert search.videos is not None
    assert [v.id for v in search.videos] == ["sv_001", "sv_002"]
    assert search.pagination is not None
    assert search.pagination.has_more is True
    assert search.last_searched == utc(2024, 5, 3, 11, 0)


async def test_social_search_videos_iterates(client: AsyncClient, wire: Wire) -> None:
    base = load("Search-retrieved.json")
    video = load("SocialVideo-search.json")
    pages = {
        0: [{**video, "id": "sv_1"}, {**video, "id": "sv_2"}],
        2: [{**video, "id": "sv_3"}],
    }

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        pagination = {"total": 3, "limit": 2, "offset": offset, "hasMore": offset == 0}
        data = {**base, "videos": pages[offset], "pagination": pagination}
        return {"success": True, "data": data}

    wire.on("GET", "/v1/social/search/srch_3c9d", respond=respond, repeat=True)
    ids = [v.id async for v in client.social.search_videos("srch_3c9d", page_size=2)]
    assert ids == ["sv_1", "sv_2", "sv_3"]
    assert [s.query for s in wire.sent] == [
        {"limit": "2", "offset": "0"},
        {"limit": "2", "offset": "2"},
    ]


def niche_envelope(videos: list[dict[str, Any]], total: int, limit: int, offset: int) -> Any:
    return {
        "success": True,
        "data": {
            "niche": load("Niche-basic.json"),
            "videos": videos,
            "total": total,
            "limit": limit,
            "offset": offset,
        },
    }


async def test_social_niche_videos_page(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/niche/fitness/videos",
        payload=niche_envelope([load("SocialVideo-niche.json")], 11, 5, 10),
    )
    page = await client.social.niche_videos_page(
        "fitness", platform=SocialPlatform.CLIPSITE, limit=5, offset=10
    )
    sent = wire.only()
    assert_common(sent, "GET", "/v1/niche/fitness/videos")
    assert sent.query == {"platform": "clipsite", "limit": "5", "offset": "10"}
    assert page.niche is not None
    assert (page.niche.id, page.niche.label, page.niche.emoji) == ("fitness", "Fitness", "💪")
    assert page.niche.description == "Workouts, nutrition and gym culture"
    assert (page.total, page.limit, page.offset) == (11, 5, 10)
    video = page.items[0]
    assert video.id == "sv_204"
    assert video.platform is SocialPlatform.CLIPSITE
    assert video.creator is not None
    assert video.creator.is_verified is True
    assert video.stats is not None
    assert video.stats.views == 820000
    assert video.description is None  # search only
    assert video.published_at == utc(2024, 4, 28, 6, 0)


async def test_social_niche_videos_iterates_all_platforms(client: AsyncClient, wire: Wire) -> None:
    video = load("SocialVideo-niche.json")
    pages = {0: [{**video, "id": "n1"}, {**video, "id": "n2"}], 2: [{**video, "id": "n3"}]}

    def respond(sent: Sent) -> dict[str, Any]:
        offset = int(sent.query["offset"])
        return niche_envelope(pages[offset], 3, 2, offset)

    wire.on("GET", "/v1/niche/fitness/videos", respond=respond, repeat=True)
    ids = [v.id async for v in client.social.niche_videos("fitness", page_size=2)]
    assert ids == ["n1", "n2", "n3"]
    assert [s.query for s in wire.sent] == [  # no platform: all platforms
        {"limit": "2", "offset": "0"},
        {"limit": "2", "offset": "2"},
    ]


# -- the untyped escape hatch: spec 4.21 --------------------------------------------------


async def test_request_returns_the_envelope_data(client: AsyncClient, wire: Wire) -> None:
    avatars = {"avatars": [{"id": "avatar_anna", "name": "Anna"}], "total": 1}
    wire.on("GET", "/v1/avatar/list", payload={"success": True, "message": "ok", "data": avatars})
    result = await client.request("GET", "/v1/avatar/list", params={"type": "library"})
    sent = wire.only()
    assert_common(sent, "GET", "/v1/avatar/list")
    assert sent.query == {"type": "library"}
    assert result == avatars


async def test_request_sends_a_json_body(client: AsyncClient, wire: Wire) -> None:
    wire.on("POST", "/v1/account/refresh", payload={"success": True, "message": "refreshing"})
    result = await client.request("post", "/v1/account/refresh", json={"accountId": "a1"})
    sent = wire.only()
    assert_common(sent, "POST", "/v1/account/refresh")
    assert sent.json == {"accountId": "a1"}
    assert result == {"success": True, "message": "refreshing"}  # no data: the whole envelope


# -- errors: spec 5, 7, 8.1 ---------------------------------------------------------------

AUTH_MESSAGE = "Authentication required: provide a valid API key in the x-api-key header"


@pytest.mark.parametrize(
    ("status", "message", "cls"),
    [
        (400, "script: script cannot exceed 10000 characters", BadRequestError),
        (401, AUTH_MESSAGE, AuthenticationError),
        (403, "Video does not belong to your team", PermissionDeniedError),
        (404, "Video not found", NotFoundError),
        (429, "Rate limit exceeded", RateLimitError),
        (500, "Internal server error", InternalServerError),
        (502, "Bad gateway", InternalServerError),
        (503, "Service unavailable", InternalServerError),
        (402, "not enough credits", InsufficientCreditsError),
        (400, "Not enough credits to create this video", InsufficientCreditsError),
        (409, "Conflict", APIStatusError),
    ],
)
async def test_error_status_maps_to_its_class(
    once: AsyncClient, wire: Wire, status: int, message: str, cls: type[APIStatusError]
) -> None:
    payload = {"success": False, "message": message}
    wire.on(
        "GET", "/v1/video/vid_1", status=status, payload=payload, headers={"X-Request-Id": "r-9"}
    )
    with pytest.raises(APIStatusError) as info:
        await once.videos.get("vid_1")
    err = info.value
    assert type(err) is cls
    assert err.status_code == status
    assert err.message == message
    assert err.body == payload
    assert err.headers["X-Request-Id"] == "r-9"
    assert err.method == "GET"
    assert err.path == "/v1/video/vid_1"
    assert message in str(err)
    assert API_KEY not in str(err)
    assert API_KEY not in repr(err)


async def test_insufficient_credits_on_creation(once: AsyncClient, wire: Wire) -> None:
    payload = {"success": False, "message": "not enough credits"}
    wire.on("POST", "/v1/project/create/talking-avatar", status=402, payload=payload)
    with pytest.raises(InsufficientCreditsError) as info:
        await once.projects.create_talking_avatar(
            script="Hi.", avatar_id="avatar_anna", voice_id="voice_rachel"
        )
    err = info.value
    assert (err.status_code, err.message, err.body) == (402, "not enough credits", payload)
    assert (err.method, err.path) == ("POST", "/v1/project/create/talking-avatar")


async def test_rate_limit_error_reads_the_headers(once: AsyncClient, wire: Wire) -> None:
    payload = {"success": False, "message": "Too many requests"}
    headers = {
        "Retry-After": "7",
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "1717171717",
    }
    wire.on("GET", "/v1/integration/list", status=429, payload=payload, headers=headers)
    with pytest.raises(RateLimitError) as info:
        await once.integrations.list()
    err = info.value
    assert err.status_code == 429
    assert err.message == "Too many requests"
    assert err.body == payload
    assert err.retry_after == 7.0
    assert err.limit == 60
    assert err.remaining == 0
    assert err.reset == 1717171717.0
    assert err.headers["X-RateLimit-Limit"] == "60"
    assert (err.method, err.path) == ("GET", "/v1/integration/list")


async def test_rate_limit_retry_after_as_http_date(once: AsyncClient, wire: Wire) -> None:
    headers = {
        "Date": "Wed, 21 Oct 2026 07:28:00 GMT",
        "Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT",
    }
    wire.on(
        "GET",
        "/v1/video/vid_1",
        status=429,
        payload={"success": False, "message": "slow down"},
        headers=headers,
    )
    with pytest.raises(RateLimitError) as info:
        await once.videos.get("vid_1")
    assert info.value.retry_after == 30.0
    assert info.value.limit is None
    assert info.value.remaining is None
    assert info.value.reset is None


async def test_success_false_with_status_200(once: AsyncClient, wire: Wire) -> None:
    payload = {"success": False, "message": "Integration not found"}
    wire.on("POST", "/v1/schedule/create", status=200, payload=payload)
    with pytest.raises(APIStatusError) as info:
        await once.schedule.create("vid_7f3a91c2", "int_gone", in_a_day())
    err = info.value
    assert type(err) is APIStatusError
    assert err.status_code == 200
    assert err.message == "Integration not found"
    assert err.body == payload
    assert (err.method, err.path) == ("POST", "/v1/schedule/create")


async def test_success_false_with_credits_message(once: AsyncClient, wire: Wire) -> None:
    wire.on(
        "POST",
        "/v1/social/search/create",
        status=200,
        payload={"success": False, "message": "Not enough credits"},
    )
    with pytest.raises(InsufficientCreditsError) as info:
        await once.social.create_search("cooking", "clipsite")
    assert info.value.status_code == 200


async def test_non_json_error_body_keeps_the_text(once: AsyncClient, wire: Wire) -> None:
    html = "<html><body>502 Bad Gateway</body></html>"
    wire.on("GET", "/v1/template/tpl_1", status=502, body=html, content_type="text/html")
    with pytest.raises(InternalServerError) as info:
        await once.templates.get("tpl_1")
    err = info.value
    assert err.status_code == 502
    assert err.message == html
    assert err.body == html
    assert (err.method, err.path) == ("GET", "/v1/template/tpl_1")


async def test_error_without_body_has_a_message(once: AsyncClient, wire: Wire) -> None:
    wire.on("GET", "/v1/niche/nowhere/videos", status=404, body="")
    with pytest.raises(NotFoundError) as info:
        await once.social.niche_videos_page("nowhere")
    assert info.value.message == "HTTP 404"
    assert info.value.path == "/v1/niche/nowhere/videos"


async def test_analyze_already_analyzed_is_a_bad_request(once: AsyncClient, wire: Wire) -> None:
    message = "Account already analyzed: use the refresh endpoint"
    wire.on(
        "POST",
        "/v1/social/account/analyze",
        status=400,
        payload={"success": False, "message": message},
    )
    with pytest.raises(BadRequestError) as info:
        await once.social.analyze_account("chefmaria", "clipsite")
    assert info.value.message == message
    assert wire.only().json == {"username": "chefmaria", "platform": "clipsite"}


async def test_redirect_is_not_followed(once: AsyncClient, wire: Wire) -> None:
    wire.on(
        "GET",
        "/v1/video/vid_1",
        status=302,
        headers={"Location": "https://elsewhere.example.test/steal"},
    )
    with pytest.raises(APIStatusError) as info:
        await once.videos.get("vid_1")
    assert info.value.status_code == 302
    assert "elsewhere.example.test" in info.value.message
    assert len(wire.sent) == 1


@pytest.mark.heavy
async def test_every_creation_body_is_null_free(client: AsyncClient, wire: Wire) -> None:
    wire.on(
        "POST",
        "/v1/project/create/product-ads",
        payload=started("v", "p"),
    )
    await client.projects.create_product_ads(
        script="s",
        product_ad_settings=ProductAdSettings(website_url="https://shop.example.com"),
        avatar_id="a",
        voice_id="v",
        caption=Caption(preset="classic"),
    )
    body = wire.only().json
    assert_no_nulls(body)
    assert body == {
        "script": "s",
        "productAdSettings": {"websiteUrl": "https://shop.example.com"},
        "avatarId": "a",
        "voiceId": "v",
        "caption": {"preset": "classic"},
    }


class YearAhead(FastForward):
    """A clock whose wall-clock time is a year ahead of the real one."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + timedelta(days=365)


async def test_a_schedule_is_checked_against_the_clients_clock(mock: aioresponses) -> None:
    """Spec 4.12's "in the future" is read on the clock given to the client."""
    async with AsyncClient(api_key=API_KEY, base_url=BASE, clock=YearAhead()) as c:
        with pytest.raises(ValidationError, match="scheduledDateTime"):
            await c.schedule.create("vid_7f3a91c2", "int_videosite_1", in_a_day())
    assert mock.requests == {}  # refused before any request
