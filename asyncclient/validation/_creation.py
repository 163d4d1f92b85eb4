"""The creation endpoints' rules (spec 2.2, 4.1-4.8): shared pieces and scenes."""

from __future__ import annotations

from typing import Any

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
    BRollType,
    CaptionPreset,
    FrameModel,
    LipsyncModel,
    MediaType,
    ScrollMode,
    TextAlignment,
    TextPreset,
    UGCLanguage,
    VisualPreset,
)
from asyncclient.models.scenes import (
    AvatarScene,
    PictureInPictureScene,
    StartEndFrameScene,
    VideoScene,
)
from asyncclient.validation._checks import (
    Rule,
    _Ctx,
    _enum,
    _flag,
    _hex_colour,
    _media,
    _metadata,
    _number,
    _obj,
    _plain,
    _scene_list,
    _text,
    _url,
    check_enum,
)

# -- shared pieces of creation requests (spec 2.2, 4) -----------------------------------

_SCRIPT = _text(
    "script", 10000, missing="script is required", long="script cannot exceed 10000 characters"
)
_AVATAR_ID = _text("avatar_id", 30, missing="avatar ID is required")
_VOICE_ID = _text("voice_id", 30, missing="voice ID is required")
_VOICE_ID_OPTIONAL = _text("voice_id", 30)  # ugc-ads: the avatar's default voice (spec 4.1)
_MUSIC_ID = _text("music_id", 30)
_ASPECT = _enum("aspect_ratio", AspectRatio)
_LIPSYNC = _enum("lipsync_model", LipsyncModel)
_STICKERS = _flag("add_stickers")
_WEBHOOK = _url("webhook", high=500, invalid="must be a valid HTTPS URL")
_TAIL: tuple[Rule, ...] = (_text("name", 100), _WEBHOOK, _metadata)

_CAPTION_RULES = (
    _enum("preset", CaptionPreset),
    _enum("alignment", TextAlignment),
    _flag("disabled"),
)
_CAPTION = _obj("caption", Caption, _CAPTION_RULES)
_AUDIO = _obj(
    "audio",
    Audio,
    (
        *(_number(a) for a in ("speed", "stability", "similarity_boost", "style")),
        _flag("use_speaker_boost"),
    ),
)
_AD_SETTINGS = _obj(
    "ad_settings", AdSettings, (_enum("b_roll_type", BRollType), _flag("remove_avatar_background"))
)
_PRODUCT_AD_SETTINGS = _obj(
    "product_ad_settings",
    ProductAdSettings,
    (
        _url(
            "website_url",
            high=None,
            missing="website URL is required",
            invalid="invalid website URL",
        ),
        _number("avatar_intro_seconds", low=1, high=30),
        *(_number(a) for a in ("scroll_interval", "scroll_duration", "scroll_delay")),
        _enum("scroll_mode", ScrollMode),
    ),
    missing="product ad settings are required",
)


_TEXT_SETTINGS = _obj(
    "text_settings",
    TextSettings,
    (
        _enum("preset", TextPreset),
        _enum("alignment", TextAlignment),
        _hex_colour("text_color"),
        _hex_colour("background_color", also="transparent"),
        _flag("disabled"),
    ),
)

# -- script to video: conditional requirements (spec 4.2) -------------------------------

_NEEDS_PRESET = (MediaType.AI_IMAGES.value, MediaType.AI_VIDEOS.value)
_PRESET_REQUIRED = _obj(
    "preset_settings",
    PresetSettings,
    (_enum("preset", VisualPreset, missing="preset is required"), _text("quality", None)),
)
_PRESET_OPTIONAL = _obj(
    "preset_settings", PresetSettings, (_enum("preset", VisualPreset), _text("quality", None))
)
_GAMEPLAY_RULES = (_text("selected_game", None), _text("selected_video", None))
_GAMEPLAY_REQUIRED = _obj(
    "gameplay_settings",
    GameplaySettings,
    _GAMEPLAY_RULES,
    missing="gameplay settings are required when mediaType is gameplay",
)
_GAMEPLAY_OPTIONAL = _obj("gameplay_settings", GameplaySettings, _GAMEPLAY_RULES)
_MEDIA_REQUIRED = _media(missing="at least 1 media item is required when mediaType is media")
_MEDIA_OPTIONAL = _media(missing=None)


def _preset_settings(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    if _plain(obj.media_type) not in _NEEDS_PRESET:
        return _PRESET_OPTIONAL(obj, prefix, ctx)
    if obj.preset_settings is None:
        return [f"{prefix}presetSettings.preset: preset is required"]
    return _PRESET_REQUIRED(obj, prefix, ctx)


def _s2v_media(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    needed = _plain(obj.media_type) == MediaType.MEDIA.value
    return (_MEDIA_REQUIRED if needed else _MEDIA_OPTIONAL)(obj, prefix, ctx)


def _gameplay(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    needed = _plain(obj.media_type) == MediaType.GAMEPLAY.value
    return (_GAMEPLAY_REQUIRED if needed else _GAMEPLAY_OPTIONAL)(obj, prefix, ctx)


_UGC_CAPTION = _obj("caption", Caption, _CAPTION_RULES, missing="caption is required")
_UGC_ASPECT = _enum("aspect_ratio", AspectRatio, missing="aspect ratio is required")


def _ugc_language(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4.7: en or es
    value = obj.language
    if value is None or value == "":
        return [f"{prefix}language: language is required"]
    if check_enum("language", value, UGCLanguage):
        return [f"{prefix}language: invalid language (use en or es)"]
    return []


# -- scenes (spec 4.4) ------------------------------------------------------------------


def _scene_rules(kind: str, *fields: tuple[str, str, int | None]) -> tuple[Rule, ...]:
    """Required string fields of a scene type: (attribute, noun, max length).

    Spec 7 ("avatar scene fields"): ``scenes[0].script: script is required for avatar
    scenes``, one line per missing field, the path naming the scene and the field.
    """
    return tuple(
        _text(
            attr,
            high,
            missing=f"{noun} is required for {kind} scenes",
            long="script cannot exceed 10000 characters" if attr == "script" else None,
        )
        for attr, noun, high in fields
    )


_SCRIPT_F = ("script", "script", 10000)
_AVATAR_F = ("avatar_id", "avatar ID", 30)
_VOICE_F = ("voice_id", "voice ID", 30)
_MEDIA_F = ("media_id", "media ID", None)
_SCENE_RULES: dict[type, tuple[Rule, ...]] = {
    AvatarScene: _scene_rules("avatar", _SCRIPT_F, _AVATAR_F, _VOICE_F),
    VideoScene: (
        *_scene_rules("video", _MEDIA_F),
        _text("script", 10000, long="script cannot exceed 10000 characters"),
        _text("voice_id", 30),
    ),
    PictureInPictureScene: _scene_rules(
        "picture-in-picture", _SCRIPT_F, _AVATAR_F, _VOICE_F, _MEDIA_F
    ),
    StartEndFrameScene: (
        *_scene_rules(
            "start/end frame",
            ("start_frame_media_id", "start frame media ID", None),
            ("end_frame_media_id", "end frame media ID", None),
            ("frame_prompt", "frame prompt", None),
        ),
        _enum("frame_model", FrameModel),
        _number("frame_duration"),
    ),
}


_SCENES = _scene_list(
    lambda scene: next((_SCENE_RULES[c] for c in type(scene).__mro__ if c in _SCENE_RULES), None),
    50,
    "an AvatarScene, VideoScene, PictureInPictureScene or StartEndFrameScene",
)


def creation_rules() -> dict[type, tuple[Rule, ...]]:
    """The rules of the eight creation formats but templates (spec 4.1 to 4.8), in field order."""
    from asyncclient.models.requests import (
        AddCaptionsRequest,
        HookDemoRequest,
        ProductAdsRequest,
        ScenesRequest,
        ScriptToVideoRequest,
        TalkingAvatarRequest,
        UGCAdsRequest,
        UGCVideoRequest,
    )

    return {
        UGCAdsRequest: (
            _SCRIPT, _AVATAR_ID, _VOICE_ID_OPTIONAL,
            _media(missing="at least 1 media item is required"),
            _LIPSYNC, _AD_SETTINGS, _MUSIC_ID, _ASPECT, _CAPTION, _AUDIO, *_TAIL,
        ),
        ScriptToVideoRequest: (
            _SCRIPT, _VOICE_ID, _enum("media_type", MediaType, missing="media type is required"),
            _preset_settings, _s2v_media, _gameplay, _MUSIC_ID, _CAPTION, _AUDIO, _ASPECT,
            _STICKERS, *_TAIL,
        ),
        ProductAdsRequest: (
            _SCRIPT, _PRODUCT_AD_SETTINGS, _AVATAR_ID, _VOICE_ID, _LIPSYNC, _MUSIC_ID, _CAPTION,
            _AUDIO, _ASPECT, _STICKERS, *_TAIL,
        ),
        ScenesRequest: (
            _SCENES, _MUSIC_ID, _CAPTION, _ASPECT, _STICKERS, _AUDIO, _text("language", 2, low=2),
            *_TAIL,
        ),
        HookDemoRequest: (
            _AVATAR_ID,
            _text(
                "text", 5000, missing="text is required", long="text cannot exceed 5000 characters"
            ),
            _TEXT_SETTINGS, _MEDIA_OPTIONAL, _ASPECT, _MUSIC_ID, *_TAIL,
        ),
        TalkingAvatarRequest: (
            _SCRIPT, _AVATAR_ID, _VOICE_ID, _MUSIC_ID, _LIPSYNC, _CAPTION, _AUDIO, *_TAIL,
        ),
        UGCVideoRequest: (
            _SCRIPT, _AVATAR_ID, _VOICE_ID, _UGC_CAPTION, _UGC_ASPECT, _ugc_language, _MUSIC_ID,
            *_TAIL,
        ),
        AddCaptionsRequest: (
            _text("media", None, missing="media ID is required"), _CAPTION, _STICKERS, _MUSIC_ID,
            *_TAIL,
        ),
    }  # fmt: skip
