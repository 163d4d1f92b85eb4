"""Schedule (spec 4.12) and social research (spec 4.15, 4.16) rules."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from asyncclient.models.enums import Platform, SocialPlatform
from asyncclient.models.requests import PlatformData
from asyncclient.validation._checks import (
    Rule,
    _choices,
    _Ctx,
    _enum,
    _flag,
    _obj,
    _show,
    _text,
    check_range,
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


def _pd_title(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # videosite: max 100; clipsite and photosite do not use a title (allowed, ignored)
    rule = _TITLE_VIDEOSITE if ctx.platform is Platform.VIDEOSITE else _TITLE_ANY
    return rule(obj, prefix, ctx)


def _pd_description(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4.12: videosite (and any platform) max 5000; clipsite and photosite max 2200.
    # The limit is on the description as sent: the tags the service appends as
    # hashtags afterwards do not count (README, choices).
    small = ctx.platform in (Platform.CLIPSITE, Platform.PHOTOSITE)
    return (_SHORT_DESCRIPTION if small else _DESCRIPTION)(obj, prefix, ctx)


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
_SHORT_DESCRIPTION = _text("description", 2200)
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
    # spec 4.15: normalized by the service (a leading '@', surrounding spaces); no length given
    if not (value or "").strip().removeprefix("@"):
        return [f"{path}: username is required"]
    return []


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


def schedule_social_rules() -> dict[type, tuple[Rule, ...]]:
    """The rules of a scheduled post (spec 4.12) and of social research (spec 4.15, 4.17)."""
    from asyncclient.models.requests import AnalyzeAccountRequest, ScheduleRequest, SearchRequest
    from asyncclient.validation._checks import _text

    return {
        ScheduleRequest: (
            _text("video_id", None, missing="video ID is required"),
            _text("integration_id", None, missing="integration ID is required"),
            _when, _PLATFORM_DATA,
        ),
        AnalyzeAccountRequest: (_username, _SOCIAL_PLATFORM),
        SearchRequest: (_search_term, _SOCIAL_PLATFORM, _search_limit),
    }  # fmt: skip
