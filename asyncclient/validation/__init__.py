"""Client-side request rules (spec parts 2, 4, 7 and 8): every problem at once.

Each request class maps to a tuple of rules (``_rules()``); a rule is a small
function ``(obj, prefix, ctx) -> list[str]`` made by a factory (``_text``,
``_enum``, ``_obj`` ...). Problems read ``<field path>: <reason>`` (spec 7), with
wire (camelCase) field paths such as ``scenes[1].script``, in field order.
:func:`validate` raises :class:`~asyncclient.errors.ValidationError` before any
request is sent. The emulator keeps its own rules on purpose (architecture guide).

Layout: ``_checks`` (generic checks and rule factories), ``_creation`` (spec 4.1-4.8),
``_template`` (4.9), ``_schedule_social`` (4.12, 4.15, 4.16); this module holds the
dispatch table, :func:`problems` and :func:`validate`. Importing it loads only
``_checks`` (the path and query checks every resource uses); the request rules are
imported when the first request is checked.
"""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from asyncclient.models.enums import Platform
from asyncclient.validation._checks import METADATA_MAX_BYTES as METADATA_MAX_BYTES
from asyncclient.validation._checks import Rule as Rule
from asyncclient.validation._checks import (
    _apply,
    _Ctx,
    check_enum,
    check_id,
    check_offset,
    check_page_size,
    check_range,
    raise_if,
)

if TYPE_CHECKING:
    from asyncclient.models.requests import (
        AnalyzeAccountRequest,
        CreationRequest,
        ScheduleRequest,
        SearchRequest,
        TemplateGenerationRequest,
    )

    Request = CreationRequest | ScheduleRequest | AnalyzeAccountRequest | SearchRequest

__all__ = [
    "check_enum",
    "check_id",
    "check_offset",
    "check_page_size",
    "check_range",
    "problems",
    "raise_if",
    "unfilled_placeholders",
    "validate",
]


# -- the table: request class -> rules, in the spec's field order ------------------------


@functools.cache
def _rules() -> dict[type, tuple[Rule, ...]]:
    """The table, built when the first request is checked (it imports every request rule)."""
    from asyncclient.models.enums import MediaType
    from asyncclient.models.requests import (
        AddCaptionsRequest,
        AnalyzeAccountRequest,
        HookDemoRequest,
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
    from asyncclient.validation._checks import _enum, _flag, _media, _metadata, _text
    from asyncclient.validation._creation import (
        _AD_SETTINGS,
        _ASPECT,
        _AUDIO,
        _AVATAR_ID,
        _CAPTION,
        _LIPSYNC,
        _MEDIA_OPTIONAL,
        _MUSIC_ID,
        _PRODUCT_AD_SETTINGS,
        _SCENES,
        _SCRIPT,
        _STICKERS,
        _TAIL,
        _TEXT_SETTINGS,
        _UGC_ASPECT,
        _UGC_CAPTION,
        _VOICE_ID,
        _VOICE_ID_OPTIONAL,
        _WEBHOOK,
        _gameplay,
        _preset_settings,
        _s2v_media,
        _ugc_language,
    )
    from asyncclient.validation._schedule_social import (
        _PLATFORM_DATA,
        _SOCIAL_PLATFORM,
        _search_limit,
        _search_term,
        _username,
        _when,
    )
    from asyncclient.validation._template import _TEMPLATE_SCENES

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
        TemplateGenerationRequest: (
            _text("type", None, missing="type is required"),
            _text("template_id", 20, missing="template ID is required"),
            _text("title", 200, missing="title is required"),  # spec 8.3 (4.9 says 100)
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
    table = _rules()
    for cls in type(request).__mro__:
        if cls in table:
            return table[cls]
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
    failures: bool = True,
) -> list[str]:
    """Return every problem of ``request``, in field order, as ``<field path>: <reason>``.

    Args:
        request: A creation, schedule, account-analysis or search request.
        now: The current time (timezone-aware) for the schedule rule; defaults to now in UTC.
        platform: The integration's platform, for the platformData rules of spec 4.12.
            ``None`` (or an unknown value) applies only platform-independent checks.
        failures: Also report what the service accepts but whose generation then
            fails (:func:`unfilled_placeholders`, spec 4.9 rule 2), so that a batch
            does not pay for such a row. :func:`validate` leaves them out.

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
    found = _apply(_rules_for(request), request, "", ctx)
    if failures:
        from asyncclient.models.requests import TemplateGenerationRequest

        if isinstance(request, TemplateGenerationRequest):
            found += unfilled_placeholders(request)
    return found


def validate(
    request: Request,
    *,
    now: datetime | None = None,
    platform: Platform | str | None = None,
) -> None:
    """Check ``request`` before it is sent: what the service would refuse.

    A request the service accepts is never refused, even one whose generation is
    bound to fail (a placeholder without a value, spec 4.9 rule 2: see
    :func:`unfilled_placeholders`).

    Raises:
        ValidationError: Listing every problem found (see :func:`problems`).
    """
    raise_if(problems(request, now=now, platform=platform, failures=False))


def unfilled_placeholders(request: TemplateGenerationRequest) -> list[str]:
    """The ``{{placeholders}}`` of each scene script that no variable fills.

    The service accepts such a request and the generation then fails (spec 4.9
    rule 2), so :func:`validate` does not refuse it; a batch rejects such a row
    before paying for it. Placeholders are case-sensitive (spec 4.9 rule 1).

    Returns:
        One ``scenes[<i>].script: missing value for variable '<name>'`` per name.
    """
    from asyncclient.validation._template import unfilled_placeholders as unfilled

    return unfilled(request)
