"""Generic field checks and rule factories shared by every request's rules.

A rule is a small function ``(obj, prefix, ctx) -> list[str]`` made by a factory
(``_text``, ``_enum``, ``_obj`` ...); problems read ``<field path>: <reason>``
(spec 7) with wire (camelCase) field paths. The public ``check_*`` functions and
:func:`raise_if` are also used by the resources for query and path parameters.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from asyncclient.errors import ValidationError
from asyncclient.models.enums import (
    CaptionPreset,
    LipsyncModel,
    Platform,
    TextAlignment,
    TextPreset,
    VisualPreset,
)

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
    if enum_cls is TextAlignment:  # the shape spec 7 gives ("bad alignment")
        return [f"{path}: alignment value invalid (use {_choices(values)})"]
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
    """Check an optional ``limit`` of a list call: 1 to ``high`` (the endpoint's most)."""
    return check_range(path, value, low=1, high=high)


def check_offset(path: str, value: int | None) -> list[str]:
    """Check an optional ``offset`` of a list call: an integer, 0 to 2**63 - 1 (the
    document's int64: the service refuses a larger one)."""
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"{path}: must be an integer"]
    if value < 0:
        return [f"{path}: must be 0 or more"]
    return [] if value <= _INT64_MAX else [f"{path}: must be at most {_INT64_MAX}"]


_INT64_MAX = 2**63 - 1


_NOT_IN_ID = re.compile(r"[/?#\s]")
"""What a path parameter must not hold; ``\\s`` is exactly what ``str.isspace`` calls space."""


def check_id(path: str, value: object) -> list[str]:
    """Check a path parameter: a non-empty string without '/', '?', '#' or whitespace."""
    if value is None or value == "":
        return [f"{path}: is required"]
    if not isinstance(value, str):
        return [f"{path}: must be a string"]
    if _NOT_IN_ID.search(value) is not None:
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
    # spec 4 and 8.2: an object of at most 5KB: 5120 bytes of compact UTF-8 JSON (README)
    value, path = obj.metadata, prefix + "metadata"
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{path}: must be an object (a dict)"]
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return [f"{path}: must be valid Unicode text (it holds a lone surrogate)"]
    except RecursionError:
        return [f"{path}: nested too deeply to be sent"]
    except (TypeError, ValueError):
        return [f"{path}: must be JSON-serialisable"]
    if size > METADATA_MAX_BYTES:
        limit = f"{METADATA_MAX_BYTES} bytes as JSON, got {size}"
        return [f"{path}: metadata cannot exceed 5KB ({limit})"]
    return []


def _apply(rules: Sequence[Rule], obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    return [line for rule in rules for line in rule(obj, prefix, ctx)]


def _plain(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value


def _hex_colour(attr: str, *, also: str | None = None) -> Rule:
    """A hex colour, '#' optional, 3/4/6/8 digits (spec 2.2); lenient on purpose.

    ``""`` counts as omitted, as for every optional string without a length (README).
    """
    wire = _camel(attr)

    def rule(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
        value = getattr(obj, attr)
        if value is None or value == "" or value == also:
            return []
        digits = value.removeprefix("#") if isinstance(value, str) else ""
        if len(digits) in (3, 4, 6, 8) and all(c in "0123456789abcdefABCDEF" for c in digits):
            return []
        extra = f" or '{also}'" if also else ""
        return [f"{prefix}{wire}: must be a hex colour{extra}"]

    return rule


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
