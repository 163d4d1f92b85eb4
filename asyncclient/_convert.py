"""The one cattrs Converter: snake_case models <-> the service's camelCase JSON.

Hooks are registered once, on ``attrs.has``, in :func:`make_converter`:

- field names are renamed to camelCase both ways;
- unstructuring leaves out optional fields that are ``None`` (no ``null`` goes out),
  and a multi-scene scene gains its ``type``;
- timestamps become timezone-aware ``datetime`` (naive ones are read as UTC);
- a ``SomeEnum | str`` field keeps a value the service added later as a plain
  ``str`` instead of failing (the strict converter of the tests rejects it);
- unknown keys are ignored (the strict converter rejects them, so drift fails CI).

Whatever JSON it is given, :func:`decode` returns an instance or raises
:class:`DecodeError`, in time linear in the data: a record takes only a JSON
object and a list only a JSON array (a string is never split into characters),
numbers must be finite and in range (ints fit 64 bits, timestamps fall in years
1 to 9999), a list stops at its :data:`MAX_ERRORS`-th bad item, and at most
:data:`MAX_ERRORS` lines are reported, then one ``and N more`` line.
"""

from __future__ import annotations

import enum
import math
import re
import types
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar, Union, get_args, get_origin

import attrs
from cattrs import Converter, transform_error
from cattrs.errors import BaseValidationError, IterableValidationError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

__all__ = [
    "MAX_ERRORS",
    "DecodeError",
    "converter",
    "decode",
    "make_converter",
    "strict_converter",
    "to_camel",
    "unstructure",
]

T = TypeVar("T")

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
    finite (``json`` reads ``NaN`` and ``Infinity``) and ints fit 64 bits.
    """

    def structure(value: Any, _: Any) -> Any:
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, accept):
            raise _Rejected(f"expected {kind.__name__}, got {_kind(value)}")
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


def make_converter(*, strict: bool = False) -> Converter:
    """Build the converter.

    Args:
        strict: Reject unknown keys and unknown enum values (for tests against
            recorded payloads, so that drift between spec and models fails CI).

    Returns:
        A configured :class:`cattrs.Converter`.
    """
    conv = Converter(forbid_extra_keys=strict)
    conv.register_structure_hook(datetime, _parse_datetime)
    conv.register_structure_hook(str, _exact(str, (str,)))
    conv.register_structure_hook(int, _exact(int, (int,)))
    conv.register_structure_hook(float, _exact(float, (int, float)))
    conv.register_structure_hook(bool, _exact(bool, (bool,)))
    conv.register_structure_hook_factory(_is_list, _list_hook)
    conv.register_unstructure_hook(datetime, _format_datetime)
    conv.register_structure_hook_func(lambda t: _lenient_enum(t) is not None, _enum_hook(strict))
    conv.register_unstructure_hook_func(
        lambda t: _lenient_enum(t) is not None,
        lambda v: v.value if isinstance(v, enum.Enum) else v,
    )

    def structure_factory(cls: type, c: Converter) -> Callable[[Any, Any], Any]:
        renames: dict[str, Any] = {
            a.name: override(rename=to_camel(a.name)) for a in attrs.fields(cls)
        }
        fields: Callable[[Any, Any], Any] = make_dict_structure_fn(
            cls, c, _cattrs_forbid_extra_keys=strict, **renames
        )

        def structure(value: Any, tp: Any) -> Any:
            # Else every field reports its own error for one string or list.
            if not isinstance(value, dict):
                raise _Rejected(f"expected a JSON object, got {_kind(value)}")
            return fields(value, tp)

        return structure

    def unstructure_factory(cls: type, c: Converter) -> Callable[[Any], Any]:
        renames: dict[str, Any] = {
            a.name: override(rename=to_camel(a.name), omit_if_default=_has_none_default(a))
            for a in attrs.fields(cls)
        }
        base: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, c, **renames)
        scene_type = getattr(cls, "TYPE", None)
        if scene_type is None:
            return base

        def with_type(obj: Any) -> dict[str, Any]:
            return {"type": scene_type, **base(obj)}

        return with_type

    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return conv


converter = make_converter()
"""The converter the client uses: tolerant of additions by the service."""

strict_converter = make_converter(strict=True)
"""A converter that rejects unknown keys and enum values (tests use it)."""


def unstructure(obj: Any) -> Any:
    """Turn a request model into JSON-ready data (camelCase, no ``None`` optionals)."""
    return converter.unstructure(obj)


def decode(data: Any, cls: type[T], *, conv: Converter | None = None, path: str = "data") -> T:
    """Structure ``data`` into ``cls``.

    Args:
        data: Decoded JSON.
        cls: The attrs class (or a ``list[...]`` of one) to build.
        conv: The converter; the tolerant one by default.
        path: Where ``data`` sits in the response, for error messages.

    Returns:
        The instance.

    Raises:
        DecodeError: With one ``<field path>: <reason>`` line per problem (at
            most MAX_ERRORS, then ``and N more``); nothing else, whatever ``data`` is.
    """
    try:
        return (conv or converter).structure(data, cls)
    except BaseValidationError as exc:
        try:
            lines = [_path_first(m) for m in transform_error(exc, path, _reason)]
        except Exception:  # last resort: the data was decoded no further anyway
            lines = [f"{path}: {_reason(exc, None)}"]
        raise DecodeError(_capped(lines, _unchecked(exc))) from exc
    except Exception as exc:  # last resort at the decode boundary: one line, its path
        raise DecodeError([f"{path}: {_reason(exc, None)}"]) from exc


def _reason(exc: BaseException, tp: Any) -> str:
    """Our hooks' reasons as they are; cattrs's wording for the rest."""
    if isinstance(exc, _Rejected):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return format_exception(exc, tp)


def _unchecked(exc: BaseException) -> int:
    """Items left unchecked by the lists that stopped at MAX_ERRORS (the tree is model-deep)."""
    own = exc.unchecked if isinstance(exc, _CappedListError) else 0
    return own + sum(_unchecked(e) for e in getattr(exc, "exceptions", ()))


def _capped(lines: list[str], unchecked: int) -> list[str]:
    shown, more = lines[:MAX_ERRORS], len(lines) - MAX_ERRORS
    tail = [f"{more} more"] if more > 0 else []
    if unchecked:
        tail.append(f"{unchecked} more items not checked")
    return [*shown, f"and {', and '.join(tail)}"] if tail else shown


def _path_first(message: str) -> str:
    """cattrs says ``reason @ path``; the spec's shape is ``path: reason``."""
    reason, sep, path = message.rpartition(" @ ")
    if not sep:
        return message
    wire = ".".join(to_camel(part) for part in path.split("."))
    return f"{wire}: {reason}"


class DecodeError(Exception):
    """A payload did not fit its model; ``errors`` holds the field paths."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors
