"""Client-side request rules (spec parts 2, 4, 7 and 8): every problem at once.

Each request class maps to a tuple of rules (``_RULES``); a rule is a small
function ``(obj, prefix, ctx) -> list[str]`` made by a factory (``_text``,
``_enum``, ``_obj`` ...). Problems read ``<field path>: <reason>`` (spec 7), with
wire (camelCase) field paths such as ``scenes[1].script``, in field order.
:func:`validate` raises :class:`~asyncclient.errors.ValidationError` before any
request is sent. The emulator keeps its own rules on purpose (architecture guide).
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from asyncclient.errors import ValidationError
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
    Platform,
    ScrollMode,
    SocialPlatform,
    TemplateVariableType,
    TextAlignment,
    TextPreset,
    UGCLanguage,
    VisualPreset,
)
from asyncclient.models.requests import (
    AddCaptionsRequest,
    AnalyzeAccountRequest,
    CreationRequest,
    HookDemoRequest,
    PlatformData,
    ProductAdsRequest,
    ScenesRequest,
    ScheduleRequest,
    ScriptToVideoRequest,
    SearchRequest,
    TalkingAvatarRequest,
    TemplateGenerationRequest,
    UGCAdsRequest,
    UGCVideoRequest,
)
from asyncclient.models.scenes import (
    AvatarBox,
    AvatarScene,
    PictureInPictureScene,
    StartEndFrameScene,
    TemplateScene,
    TemplateVariable,
    VideoScene,
)
from asyncclient.models.templates import PLACEHOLDER

__all__ = [
    "check_enum",
    "check_id",
    "check_offset",
    "check_page_size",
    "check_range",
    "problems",
    "raise_if",
    "validate",
]

Request = CreationRequest | ScheduleRequest | AnalyzeAccountRequest | SearchRequest

METADATA_MAX_BYTES = 5120  # spec 4 and 8.2: "max 5KB", measured as compact UTF-8 JSON


class _Ctx(NamedTuple):
    now: datetime
    platform: Platform | None


Rule = Callable[[Any, str, _Ctx], list[str]]
"""A rule: (object, path prefix such as ``scenes[1].``, context) -> problems."""


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _choices(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: object) -> bool:
    """A finite int or float (not a bool): what JSON can carry as a number."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_url(value: str, schemes: tuple[str, ...] = ("https",)) -> bool:
    """Whether ``value`` is an absolute URL of one of ``schemes`` with a host."""
    if any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises ValueError on a bad port
    except ValueError:
        return False
    return parts.scheme.lower() in schemes and bool(parts.hostname)


# -- public checks (also used by the resources for query and path parameters) ----------

# Enums whose problems name the field, as spec 7 does ("invalid alignment (use ...)").
_ENUM_NOUNS: dict[type[enum.Enum], str] = {
    TextAlignment: "alignment",
    LipsyncModel: "lipsync model",
    CaptionPreset: "caption preset",
    TextPreset: "text preset",
    VisualPreset: "visual style preset",
}
_LISTED_AT_MOST = 8  # longer enums (the presets) are not spelled out in a message


def check_enum(path: str, value: object, enum_cls: type[enum.Enum]) -> list[str]:
    """Check an optional enum value: a member of ``enum_cls`` or its exact plain value.

    Args:
        path: The field path used in the message.
        value: The value given; ``None`` (omitted) is accepted.
        enum_cls: The enumeration of allowed values.

    Returns:
        No problem, or one line naming the allowed values.
    """
    if value is None or isinstance(value, enum_cls):
        return []
    values = [str(member.value) for member in enum_cls]
    if isinstance(value, str) and value in values:
        return []
    noun = _ENUM_NOUNS.get(enum_cls)
    if len(values) > _LISTED_AT_MOST:
        return [f"{path}: invalid {noun or 'value'} {_show(value)}"]
    if noun is not None:
        return [f"{path}: invalid {noun} (use {_choices(values)})"]
    return [f"{path}: invalid value {_show(value)} (use {_choices(values)})"]


def check_range(path: str, value: int | None, *, low: int, high: int) -> list[str]:
    """Check an optional integer lies in ``low..high`` (inclusive)."""
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"{path}: must be an integer"]
    if not low <= value <= high:
        return [f"{path}: must be between {low} and {high}"]
    return []


def check_page_size(path: str, value: int | None, *, high: int) -> list[str]:
    """Check an optional ``limit`` of a list call: 1 to ``high`` (spec 8.2)."""
    return check_range(path, value, low=1, high=high)


def check_offset(path: str, value: int | None) -> list[str]:
    """Check an optional ``offset`` of a list call: an integer, 0 or more."""
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"{path}: must be an integer"]
    return [] if value >= 0 else [f"{path}: must be 0 or more"]


def check_id(path: str, value: object) -> list[str]:
    """Check a path parameter: a non-empty string without '/', '?', '#' or whitespace."""
    if value is None or value == "":
        return [f"{path}: is required"]
    if not isinstance(value, str):
        return [f"{path}: must be a string"]
    if any(ch in "/?#" or ch.isspace() for ch in value):
        return [f"{path}: must not contain '/', '?', '#' or whitespace"]
    return []


def raise_if(problems: list[str]) -> None:
    """Raise :class:`ValidationError` carrying ``problems`` when there are any."""
    if problems:
        raise ValidationError(problems)


# -- rule factories ---------------------------------------------------------------------


def _text(
    attr: str,
    high: int | None,
    *,
    missing: str | None = None,
    low: int = 0,
    long: str | None = None,
    empty_ok: bool = False,
) -> Rule:
    """A string field; required when ``missing`` is given ("" counts as missing)."""
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value, path = getattr(obj, attr), prefix + wire
        if value is None or (value == "" and missing is not None and not empty_ok):
            return [f"{path}: {missing}"] if missing is not None else []
        if not isinstance(value, str):
            return [f"{path}: must be a string"]
        if low == high and len(value) != low:
            return [f"{path}: must be {low} characters"]
        if len(value) < low:
            return [f"{path}: must be at least {low} characters"]
        if high is not None and len(value) > high:
            return [f"{path}: {long or f'must be at most {high} characters'}"]
        return []

    return rule


def _enum(attr: str, enum_cls: type[enum.Enum], *, missing: str | None = None) -> Rule:
    """An enum field; required when ``missing`` is given ("" counts as missing)."""
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value = getattr(obj, attr)
        if missing is not None and (value is None or value == ""):
            return [f"{prefix}{wire}: {missing}"]
        return check_enum(prefix + wire, value, enum_cls)

    return rule


def _flag(attr: str, *, missing: str | None = None) -> Rule:
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value = getattr(obj, attr)
        if value is None:
            return [f"{prefix}{wire}: {missing}"] if missing is not None else []
        return [] if isinstance(value, bool) else [f"{prefix}{wire}: must be true or false"]

    return rule


def _number(attr: str, *, low: float | None = None, high: float | None = None) -> Rule:
    """An optional number; a bounded one uses the spec 7 message of avatarIntroSeconds."""
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value, path = getattr(obj, attr), prefix + wire
        if value is None:
            return []
        if not _is_number(value):
            return [f"{path}: must be a finite number"]
        if low is not None and high is not None and not low <= value <= high:
            return [f"{path}: number must be between {low:g} and {high:g}"]
        return []

    return rule


def _obj(attr: str, cls: type, rules: Sequence[Rule], *, missing: str | None = None) -> Rule:
    """A nested object of class ``cls``, checked by ``rules`` under ``<attr>.``."""
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value = getattr(obj, attr)
        if value is None:
            return [f"{prefix}{wire}: {missing}"] if missing is not None else []
        if not isinstance(value, cls):
            return [f"{prefix}{wire}: must be a {cls.__name__}"]
        return _apply(rules, value, f"{prefix}{wire}.", ctx)

    return rule


def _url(attr: str, *, high: int | None, invalid: str, missing: str | None = None) -> Rule:
    """An HTTPS URL with a host (webhook: spec 4, 8.2; websiteUrl: spec 2.2, 7)."""
    length = _text(attr, high, missing=missing)
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        found = length(obj, prefix, ctx)
        value = getattr(obj, attr)
        if isinstance(value, str) and value and not _is_url(value):
            found.append(f"{prefix}{wire}: {invalid}")
        return found

    return rule


def _media(*, missing: str | None) -> Rule:
    """A list of uploaded media ids: at most 50 (spec 4.1, 4.2, 4.5, 8.2)."""

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value, path = obj.media, prefix + "media"
        if value is None or (isinstance(value, list) and not value):
            return [f"{path}: {missing}"] if missing is not None else []
        if not isinstance(value, list):
            return [f"{path}: must be a list of media IDs"]
        found = [
            f"{path}[{i}]: media ID must be a non-empty string"
            for i, item in enumerate(value)
            if not isinstance(item, str) or not item
        ]
        if len(value) > 50:
            found.insert(0, f"{path}: cannot have more than 50 media items")
        return found

    return rule


def _metadata(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4 and 8.2: an object of at most 5KB
    value, path = obj.metadata, prefix + "metadata"
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{path}: must be an object (a dict)"]
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return [f"{path}: must be JSON-serialisable"]
    size = len(text.encode("utf-8"))
    if size > METADATA_MAX_BYTES:
        return [f"{path}: must be at most {METADATA_MAX_BYTES} bytes as JSON (got {size})"]
    return []


def _apply(rules: Sequence[Rule], obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    return [line for rule in rules for line in rule(obj, prefix, ctx)]


def _plain(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value


# -- shared pieces of creation requests (spec 2.2, 4) -----------------------------------

_SCRIPT = _text(
    "script", 10000, missing="script is required", long="script cannot exceed 10000 characters"
)
_AVATAR_ID = _text("avatar_id", 30, missing="avatar ID is required")
_VOICE_ID = _text("voice_id", 30, missing="voice ID is required")
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


def _hex_colour(attr: str, *, also: str | None = None) -> Rule:
    """A hex colour, '#' optional, 3/4/6/8 digits (spec 2.2); lenient on purpose."""
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value = getattr(obj, attr)
        if value is None or value == also:
            return []
        digits = value.removeprefix("#") if isinstance(value, str) else ""
        if len(digits) in (3, 4, 6, 8) and all(c in "0123456789abcdefABCDEF" for c in digits):
            return []
        extra = f" or '{also}'" if also else ""
        return [f"{prefix}{wire}: must be a hex colour{extra}"]

    return rule


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
        return [f"{prefix}language: must be 'en' or 'es'"]
    return []


# -- scenes (spec 4.4) ------------------------------------------------------------------


def _scene_rules(kind: str, *fields: tuple[str, str, int | None]) -> tuple[Rule, ...]:
    """Required string fields of a scene type: (attribute, noun, max length)."""
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
        "picture_in_picture", _SCRIPT_F, _AVATAR_F, _VOICE_F, _MEDIA_F
    ),
    StartEndFrameScene: (
        *_scene_rules(
            "start_end_frame",
            ("start_frame_media_id", "start frame media ID", None),
            ("end_frame_media_id", "end frame media ID", None),
            ("frame_prompt", "frame prompt", None),
        ),
        _enum("frame_model", FrameModel),
        _number("frame_duration"),
    ),
}


def _scene_list(rules_for: Callable[[object], Sequence[Rule] | None], high: int, what: str) -> Rule:
    """The ``scenes`` list: 1 to ``high`` items, each checked by ``rules_for(item)``."""

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        scenes, path = obj.scenes, prefix + "scenes"
        if scenes is None or (isinstance(scenes, list) and not scenes):
            return [f"{path}: at least one scene is required"]
        if not isinstance(scenes, list):
            return [f"{path}: must be a list of scenes"]
        found = [f"{path}: cannot have more than {high} scenes"] if len(scenes) > high else []
        for i, scene in enumerate(scenes):
            rules = rules_for(scene)
            if rules is None:
                found.append(f"{path}[{i}]: must be {what}")
            else:
                found += _apply(rules, scene, f"{path}[{i}].", ctx)
        return found

    return rule


_SCENES = _scene_list(
    lambda scene: next((_SCENE_RULES[c] for c in type(scene).__mro__ if c in _SCENE_RULES), None),
    50,
    "an AvatarScene, VideoScene, PictureInPictureScene or StartEndFrameScene",
)

# -- template generation (spec 4.9, 8.3) ------------------------------------------------


def _variables(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4.9 rules 1-3, 8.3: up to 20 variables, keys 1..100, values 0..2000
    variables, path = obj.variables, prefix + "variables"
    if variables is None:
        return [f"{path}: variables are required"]
    if not isinstance(variables, list):
        return [f"{path}: must be a list of TemplateVariable"]
    found = [f"{path}: cannot have more than 20 variables"] if len(variables) > 20 else []
    seen: set[str] = set()
    for j, var in enumerate(variables):
        where = f"{path}[{j}]"
        if not isinstance(var, TemplateVariable):
            found.append(f"{where}: must be a TemplateVariable")
            continue
        found += _apply(_VARIABLE_RULES, var, where + ".", ctx)
        if isinstance(var.key, str) and var.key:
            if var.key in seen:
                found.append(f"{where}.key: duplicate variable {_show(var.key)}")
            seen.add(var.key)
    return found


def _media_value(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 2.9: a media variable's value is a URL ("" stays valid: spec 4.9 rule 3)
    value = obj.value
    if _plain(obj.type) != TemplateVariableType.MEDIA.value or not isinstance(value, str):
        return []
    if value == "" or _is_url(value, ("http", "https")):
        return []
    return [f"{prefix}value: must be a URL for a media variable"]


_VARIABLE_RULES: tuple[Rule, ...] = (
    _text("key", 100, missing="key is required"),
    _text("value", 2000, missing="value is required", empty_ok=True),
    _enum("type", TemplateVariableType, missing="type is required"),
    _media_value,
)


def _placeholders(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4.9 rules 1 and 2: every placeholder has a value, case-sensitive
    script, variables = obj.script, obj.variables
    if not isinstance(script, str) or not isinstance(variables, list):
        return []
    keys = {v.key for v in variables if isinstance(v, TemplateVariable) and isinstance(v.key, str)}
    names = dict.fromkeys(PLACEHOLDER.findall(script))
    return [
        f"{prefix}script: missing value for variable {_show(name)}"
        for name in names
        if name not in keys
    ]


_TEMPLATE_SCENE_RULES: tuple[Rule, ...] = (
    _text(
        "script",
        5000,
        missing="script is required",
        long="script cannot exceed 5000 characters",
        empty_ok=True,
    ),
    _placeholders,
    _variables,
    _obj("avatar", AvatarBox, (_text("id", 30),)),
    _text("voice", 30),
)
_TEMPLATE_SCENES = _scene_list(
    lambda scene: _TEMPLATE_SCENE_RULES if isinstance(scene, TemplateScene) else None,
    20,
    "a TemplateScene",
)

# -- schedule (spec 4.12) ---------------------------------------------------------------


def _when(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    value, path = obj.scheduled_date_time, prefix + "scheduledDateTime"
    if value is None:
        return [f"{path}: scheduled date and time is required"]
    if not isinstance(value, datetime):
        return [f"{path}: must be a datetime"]
    if value.tzinfo is None or value.utcoffset() is None:
        return [f"{path}: must be timezone-aware"]
    return [] if value > ctx.now else [f"{path}: must be in the future"]


# videosite privacy values: the spec names only the default ``public``; we accept the
# three the platform itself knows (public, private, unlisted).
_PRIVACY = ("public", "private", "unlisted")
_HASHTAG_LIMIT = 2200  # clipsite and photosite: description plus appended hashtags


def _pd_title(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # videosite: max 100; clipsite and photosite do not use a title (allowed, ignored)
    rule = _TITLE_VIDEOSITE if ctx.platform is Platform.VIDEOSITE else _TITLE_ANY
    return rule(obj, prefix, ctx)


def _pd_description(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    if ctx.platform not in (Platform.CLIPSITE, Platform.PHOTOSITE):
        return _DESCRIPTION(obj, prefix, ctx)  # videosite, and any platform: max 5000
    found = _ANY_DESCRIPTION(obj, prefix, ctx)
    if found:
        return found
    # clipsite, photosite: max 2200, tags are appended as " #tag" (a leading '#' kept once)
    text = obj.description or ""
    tags = [t for t in obj.tags if isinstance(t, str)] if isinstance(obj.tags, list) else []
    total = len(text) + sum(len(" #" + t.removeprefix("#")) for t in tags)
    if total <= _HASHTAG_LIMIT:
        return []
    if not tags:
        return [f"{prefix}description: must be at most {_HASHTAG_LIMIT} characters"]
    return [
        f"{prefix}description: must be at most {_HASHTAG_LIMIT} characters"
        f" with the tags appended as hashtags (got {total})"
    ]


def _pd_tags(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    value, path = obj.tags, prefix + "tags"
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"{path}: must be a list of strings"]
    found = [
        f"{path}[{i}]: must be a string" for i, t in enumerate(value) if not isinstance(t, str)
    ]
    if ctx.platform is Platform.VIDEOSITE and len(value) > 30:
        found.insert(0, f"{path}: cannot have more than 30 tags")
    return found


def _pd_privacy(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    found = _PRIVACY_TEXT(obj, prefix, ctx)
    value = obj.privacy_status
    if found or value is None or ctx.platform is not Platform.VIDEOSITE or value in _PRIVACY:
        return found
    return [f"{prefix}privacyStatus: invalid value {_show(value)} (use {_choices(_PRIVACY)})"]


_TITLE_ANY = _text("title", None)
_TITLE_VIDEOSITE = _text("title", 100)
_DESCRIPTION = _text("description", 5000)
_ANY_DESCRIPTION = _text("description", None)
_PRIVACY_TEXT = _text("privacy_status", None)
_PLATFORM_DATA = _obj(
    "platform_data",
    PlatformData,
    (_pd_title, _pd_description, _pd_tags, _pd_privacy, _flag("made_for_kids")),
)


# -- social research (spec 4.15, 4.16) --------------------------------------------------


def _username(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    value, path = obj.username, prefix + "username"
    if value is not None and not isinstance(value, str):
        return [f"{path}: must be a string"]
    name = (value or "").removeprefix("@")
    if not name:
        return [f"{path}: username is required"]
    return [f"{path}: must not contain whitespace"] if any(c.isspace() for c in name) else []


def _search_term(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    value, path = obj.search_term, prefix + "searchTerm"
    if value is not None and not isinstance(value, str):
        return [f"{path}: must be a string"]
    term = (value or "").strip()
    if not term:
        return [f"{path}: search term is required"]
    return [f"{path}: must be at most 200 characters"] if len(term) > 200 else []


def _search_limit(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    return check_range(prefix + "limit", obj.limit, low=1, high=50)


_SOCIAL_PLATFORM = _enum("platform", SocialPlatform, missing="platform is required")

# -- the table: request class -> rules, in the spec's field order ------------------------

_RULES: dict[type, tuple[Rule, ...]] = {
    UGCAdsRequest: (
        _SCRIPT, _AVATAR_ID, _VOICE_ID, _media(missing="at least 1 media item is required"),
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
        _text("text", 5000, missing="text is required", long="text cannot exceed 5000 characters"),
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
    TemplateGenerationRequest: (
        _text("type", None, missing="type is required"),
        _text("template_id", 20, missing="template ID is required"),
        _text("title", 100, missing="title is required"),
        _flag("caption", missing="caption is required"),
        _text("language", 2, missing="language is required"),
        _TEMPLATE_SCENES, _WEBHOOK, _metadata,
    ),
    ScheduleRequest: (
        _text("video_id", None, missing="video ID is required"),
        _text("integration_id", None, missing="integration ID is required"),
        _when, _PLATFORM_DATA,
    ),
    AnalyzeAccountRequest: (_username, _SOCIAL_PLATFORM),
    SearchRequest: (_search_term, _SOCIAL_PLATFORM, _search_limit),
}  # fmt: skip


def _rules_for(request: object) -> tuple[Rule, ...]:
    for cls in type(request).__mro__:
        if cls in _RULES:
            return _RULES[cls]
    raise TypeError(f"no validation rules for {type(request).__name__}")


def _as_platform(platform: Platform | str | None) -> Platform | None:
    if platform is None or isinstance(platform, Platform):
        return platform
    try:
        return Platform(platform)
    except ValueError:  # a platform added later: platform-independent checks only
        return None


def problems(
    request: Request,
    *,
    now: datetime | None = None,
    platform: Platform | str | None = None,
) -> list[str]:
    """Return every problem of ``request``, in field order, as ``<field path>: <reason>``.

    Args:
        request: A creation, schedule, account-analysis or search request.
        now: The current time (timezone-aware) for the schedule rule; defaults to now in UTC.
        platform: The integration's platform, for the platformData rules of spec 4.12.
            ``None`` (or an unknown value) applies only platform-independent checks.

    Returns:
        The problems; empty when the request is valid.

    Raises:
        TypeError: ``request`` is not a request class.
        ValueError: ``now`` is naive.
    """
    if now is None:
        now = datetime.now(timezone.utc)
    elif now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    ctx = _Ctx(now=now, platform=_as_platform(platform))
    return _apply(_rules_for(request), request, "", ctx)


def validate(
    request: Request,
    *,
    now: datetime | None = None,
    platform: Platform | str | None = None,
) -> None:
    """Check ``request`` before it is sent (see :func:`problems`).

    Raises:
        ValidationError: Listing every problem found.
    """
    raise_if(problems(request, now=now, platform=platform))
