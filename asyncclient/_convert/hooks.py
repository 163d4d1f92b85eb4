"""The converter's hooks: what a JSON value may be for each kind of field, and the reason
given when it is not (timestamps, exact JSON types, lenient enums, lists that stop at
:data:`MAX_ERRORS` bad items, camelCase names)."""

from __future__ import annotations

import enum
import math
import re
import types
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Union, get_args, get_origin

import attrs
from cattrs import Converter
from cattrs.errors import IterableValidationError, IterableValidationNote

MAX_ERRORS = 20
"""Problems reported (and bad items a list is searched for) before decoding stops."""

_INT_RANGE = 2**63  # ints fit a signed 64-bit integer: -2**63 .. 2**63 - 1
_MIN_TIMESTAMP = -62135596800.0  # 0001-01-01T00:00:00Z
_MAX_TIMESTAMP = 253402300799.0  # 9999-12-31T23:59:59Z
_MAX_TIMESTAMP_CHARS = 64


class _Rejected(ValueError):
    """A value a hook refuses; its text is the reason reported."""


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def to_camel(name: str) -> str:
    """``avatar_intro_seconds`` -> ``avatarIntroSeconds``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_FRACTION = re.compile(r"\.(\d+)(?=[+-]\d\d:?\d\d$|$)")


def _from_number(value: float) -> datetime:
    if not (math.isfinite(value) and _MIN_TIMESTAMP <= value <= _MAX_TIMESTAMP):
        raise _Rejected("timestamp out of range (years 1 to 9999)")
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):  # the platform's time_t may be narrower
        raise _Rejected("timestamp out of range for this platform") from None


def _from_text(value: str) -> datetime:
    text = value.strip()
    if len(text) > _MAX_TIMESTAMP_CHARS:
        raise _Rejected(f"too long for an ISO 8601 timestamp ({len(text)} characters)")
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.10 reads fractions of exactly 3 or 6 digits only: make it 6.
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise _Rejected(f"invalid ISO 8601 timestamp {value.strip()!r}") from None


def _parse_datetime(value: Any, _: type) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return _from_number(value)
    elif isinstance(value, str):
        parsed = _from_text(value)
    else:
        raise _Rejected(f"expected an ISO 8601 timestamp, got {_kind(value)}")
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    try:
        parsed.astimezone(timezone.utc)  # 9999-12-31T23:59-01:00 has no UTC instant
    except OverflowError:
        raise _Rejected("timestamp out of range (years 1 to 9999)") from None
    return parsed


def _format_datetime(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("datetime must be timezone-aware")
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _lenient_enum(tp: Any) -> type[enum.Enum] | None:
    """The enum of a ``SomeEnum | str`` (optionally ``| None``) annotation, else None."""
    if get_origin(tp) not in (Union, types.UnionType):
        return None
    args = [a for a in get_args(tp) if a is not type(None)]
    enums = [a for a in args if isinstance(a, type) and issubclass(a, enum.Enum)]
    if len(args) == 2 and len(enums) == 1 and str in args:
        return enums[0]
    return None


def _enum_hook(strict: bool) -> Callable[[Any, Any], Any]:
    def structure(value: Any, tp: Any) -> Any:
        if value is None and type(None) in get_args(tp):
            return None
        enum_cls = _lenient_enum(tp)
        assert enum_cls is not None
        if not isinstance(value, str):
            raise _Rejected(f"expected a string, got {_kind(value)}")
        try:
            return enum_cls(value)
        except ValueError:
            if strict:
                raise
            return value

    return structure


def _exact(kind: type, accept: tuple[type, ...]) -> Callable[[Any, Any], Any]:
    """A structure hook that checks a JSON scalar's type instead of coercing it.

    cattrs would turn ``5`` into ``"5"`` and ``"false"`` into ``True``; a value
    of the wrong JSON type is a response we cannot decode. Numbers must also be
    finite (``json`` reads ``NaN`` and ``Infinity``). JSON has one number type: an
    integer written with a fraction of zero (``20.0``) is the integer, and a number
    written without one (``100000000000000000000``, JavaScript's ``1e20``) is the number.
    An int fits 64 bits (the OpenAPI document's ``format: int64``); a float is any
    finite double.
    """

    def structure(value: Any, _: Any) -> Any:
        if kind is int and type(value) is float and value.is_integer():
            value = int(value)
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, accept):
            raise _Rejected(f"expected {kind.__name__}, got {_kind(value)}")
        if kind is float and type(value) is int:
            try:
                return float(value)
            except OverflowError:  # more than a double holds (json reads 400 digits)
                raise _Rejected("number out of range (more than a double holds)") from None
        if isinstance(value, int) and not -_INT_RANGE <= value < _INT_RANGE:
            raise _Rejected(f"{kind.__name__} out of range (more than 64 bits)")
        if isinstance(value, float) and not math.isfinite(value):
            raise _Rejected(f"expected a finite number, got {value}")
        return kind(value)

    return structure


def _is_list(tp: Any) -> bool:
    return tp is list or get_origin(tp) is list


def _list_hook(tp: Any, conv: Converter) -> Callable[[Any, Any], list[Any]]:
    """Structure a JSON array only, stopping at the MAX_ERRORS-th bad item.

    cattrs takes any iterable: a string became a list of characters, a long one
    an error per character. Its paths (``@ $[3]``) come from the same notes.
    """
    args = get_args(tp)
    elem: Any = args[0] if args else Any
    handler = conv.get_structure_hook(elem)

    def structure(value: Any, _: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _Rejected(f"expected a list, got {_kind(value)}")
        out: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                out.append(handler(item, elem))
            except Exception as exc:  # what cattrs itself collects per item
                note = IterableValidationNote(f"Structuring {tp} @ index {index}", index, elem)
                # What cattrs does (add_note is 3.11+); transform_error reads the index.
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]
                errors.append(exc)
                if len(errors) == MAX_ERRORS:
                    raise _list_error(tp, errors, len(value) - index - 1) from None
        if errors:
            raise _list_error(tp, errors, 0)
        return out

    return structure


class _CappedListError(IterableValidationError):
    """The bad items of a list, and how many items after them were not checked."""

    unchecked: int = 0


def _list_error(tp: Any, errors: list[Exception], unchecked: int) -> _CappedListError:
    error = _CappedListError(f"While structuring {tp!r}", errors, tp)
    error.unchecked = unchecked
    return error


def _has_none_default(a: attrs.Attribute) -> bool:  # type: ignore[type-arg]
    return a.default is None
