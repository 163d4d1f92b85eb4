"""Request bodies, one attrs class per endpoint that takes a JSON body.

The resource methods build these from their keyword arguments; they are public
so that a batch can carry any creation (``client.batch([...])``) and a journal
can store one. ``PATH`` is the endpoint, ``FORMAT`` a short name used in
errors and logs. Optional fields default to ``None`` and are not sent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from attrs import frozen

from asyncclient.models.common import (
    AdSettings,
    Audio,
    Caption,
    GameplaySettings,
    PresetSettings,
    ProductAdSettings,
    TextSettings,
)
from asyncclient.models.enums import (
    AspectRatio,
    LipsyncModel,
    MediaType,
    SocialPlatform,
    UGCLanguage,
)
from asyncclient.models.scenes import Scene, TemplateScene

__all__ = [
    "AddCaptionsRequest",
    "AnalyzeAccountRequest",
    "CreationRequest",
    "HookDemoRequest",
    "PlatformData",
    "ProductAdsRequest",
    "ScenesRequest",
    "ScheduleRequest",
    "ScriptToVideoRequest",
    "SearchRequest",
    "TalkingAvatarRequest",
    "TemplateGenerationRequest",
    "UGCAdsRequest",
    "UGCVideoRequest",
]


@frozen(kw_only=True)
class _Common:
    """Optional fields shared by the creation endpoints."""

    name: str | None = None
    """Project name (max 100)."""
    webhook: str | None = None
    """HTTPS URL notified on completion or failure (max 500)."""
    metadata: dict[str, Any] | None = None
    """Echoed in the completion notification (max 5 KB as JSON)."""


@frozen(kw_only=True)
class UGCAdsRequest(_Common):
    """POST /v1/project/create/ugc-ads."""

    PATH: ClassVar[str] = "/v1/project/create/ugc-ads"
    FORMAT: ClassVar[str] = "ugc_ads"
    script: str
    avatar_id: str
    voice_id: str | None = None
    """Marked required, yet the avatar's default voice is used when omitted."""
    media: list[str]
    lipsync_model: LipsyncModel | str | None = None
    ad_settings: AdSettings | None = None
    music_id: str | None = None
    aspect_ratio: AspectRatio | str | None = None
    caption: Caption | None = None
    audio: Audio | None = None


@frozen(kw_only=True)
class ScriptToVideoRequest(_Common):
    """POST /v1/project/create/script-to-video."""

    PATH: ClassVar[str] = "/v1/project/create/script-to-video"
    FORMAT: ClassVar[str] = "script_to_video"
    script: str
    voice_id: str
    media_type: MediaType | str
    preset_settings: PresetSettings | None = None
    media: list[str] | None = None
    gameplay_settings: GameplaySettings | None = None
    music_id: str | None = None
    caption: Caption | None = None
    audio: Audio | None = None
    aspect_ratio: AspectRatio | str | None = None
    add_stickers: bool | None = None


@frozen(kw_only=True)
class ProductAdsRequest(_Common):
    """POST /v1/project/create/product-ads."""

    PATH: ClassVar[str] = "/v1/project/create/product-ads"
    FORMAT: ClassVar[str] = "product_ads"
    script: str
    product_ad_settings: ProductAdSettings
    avatar_id: str
    voice_id: str
    lipsync_model: LipsyncModel | str | None = None
    music_id: str | None = None
    caption: Caption | None = None
    audio: Audio | None = None
    aspect_ratio: AspectRatio | str | None = None
    add_stickers: bool | None = None


@frozen(kw_only=True)
class ScenesRequest(_Common):
    """POST /v1/project/create/scenes. Each scene is sent with its ``type``."""

    PATH: ClassVar[str] = "/v1/project/create/scenes"
    FORMAT: ClassVar[str] = "scenes"
    scenes: list[Scene]
    music_id: str | None = None
    caption: Caption | None = None
    aspect_ratio: AspectRatio | str | None = None
    add_stickers: bool | None = None
    audio: Audio | None = None
    language: str | None = None


@frozen(kw_only=True)
class HookDemoRequest(_Common):
    """POST /v1/project/create/hook-demo; completes at once."""

    PATH: ClassVar[str] = "/v1/project/create/hook-demo"
    FORMAT: ClassVar[str] = "hook_demo"
    avatar_id: str
    text: str
    text_settings: TextSettings | None = None
    media: list[str] | None = None
    aspect_ratio: AspectRatio | str | None = None
    music_id: str | None = None


@frozen(kw_only=True)
class TalkingAvatarRequest(_Common):
    """POST /v1/project/create/talking-avatar."""

    PATH: ClassVar[str] = "/v1/project/create/talking-avatar"
    FORMAT: ClassVar[str] = "talking_avatar"
    script: str
    avatar_id: str
    voice_id: str
    music_id: str | None = None
    lipsync_model: LipsyncModel | str | None = None
    caption: Caption | None = None
    audio: Audio | None = None


@frozen(kw_only=True)
class UGCVideoRequest(_Common):
    """POST /v1/project/create/ugc-video."""

    PATH: ClassVar[str] = "/v1/project/create/ugc-video"
    FORMAT: ClassVar[str] = "ugc_video"
    script: str
    avatar_id: str
    voice_id: str
    caption: Caption
    aspect_ratio: AspectRatio | str
    language: UGCLanguage | str
    music_id: str | None = None


@frozen(kw_only=True)
class AddCaptionsRequest(_Common):
    """POST /v1/project/create/add-captions."""

    PATH: ClassVar[str] = "/v1/project/create/add-captions"
    FORMAT: ClassVar[str] = "add_captions"
    media: str
    caption: Caption | None = None
    add_stickers: bool | None = None
    music_id: str | None = None


@frozen(kw_only=True)
class TemplateGenerationRequest:
    """POST /v1/project/create: a video from a template.

    Unlike the other formats it has ``title`` instead of ``name`` and no musicId.
    """

    PATH: ClassVar[str] = "/v1/project/create"
    FORMAT: ClassVar[str] = "template"
    template_id: str
    title: str
    scenes: list[TemplateScene]
    caption: bool = True
    language: str = "en"
    type: str = "class"
    webhook: str | None = None
    metadata: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The project's name, which is its title (used to reconcile creations)."""
        return self.title


CreationRequest = (
    UGCAdsRequest
    | ScriptToVideoRequest
    | ProductAdsRequest
    | ScenesRequest
    | HookDemoRequest
    | TalkingAvatarRequest
    | UGCVideoRequest
    | AddCaptionsRequest
    | TemplateGenerationRequest
)
"""Any creation body; ``client.projects.create(request)`` sends one."""


@frozen(kw_only=True)
class PlatformData:
    """Publication details of a scheduled post; which fields a platform takes is
    checked by :func:`~asyncclient.validation.validate` given the platform."""

    title: str | None = None
    """videosite: max 100 (falls back to the video name)."""
    description: str | None = None
    """videosite: max 5000; clipsite and photosite: max 2200."""
    tags: list[str] | None = None
    """videosite: max 30; appended as hashtags elsewhere."""
    privacy_status: str | None = None
    """videosite: default ``public``."""
    made_for_kids: bool | None = None
    """videosite: default false."""


@frozen(kw_only=True)
class ScheduleRequest:
    """POST /v1/schedule/create."""

    PATH: ClassVar[str] = "/v1/schedule/create"
    video_id: str
    integration_id: str
    scheduled_date_time: datetime
    """When to publish: timezone-aware and in the future; sent as ISO 8601 UTC."""
    platform_data: PlatformData | None = None


@frozen(kw_only=True)
class AnalyzeAccountRequest:
    """POST /v1/social/account/analyze."""

    PATH: ClassVar[str] = "/v1/social/account/analyze"
    username: str
    platform: SocialPlatform | str


@frozen(kw_only=True)
class SearchRequest:
    """POST /v1/social/search/create."""

    PATH: ClassVar[str] = "/v1/social/search/create"
    search_term: str
    platform: SocialPlatform | str
    limit: int | None = None
