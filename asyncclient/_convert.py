"""The one cattrs Converter: snake_case models <-> the service's camelCase JSON.

Hooks are registered once, on ``attrs.has``, in :func:`make_converter`:

- field names are renamed to camelCase both ways;
- unstructuring leaves out optional fields that are ``None`` (no ``null`` goes out),
  and a multi-scene scene gains its ``type``;
- timestamps become timezone-aware ``datetime`` (naive ones are read as UTC);
- a ``SomeEnum | str`` field keeps a value the service added later as a plain
  ``str`` instead of failing (the strict converter of the tests rejects it);
- unknown keys are ignored (the strict converter rejects them, so drift fails CI).
"""

from __future__ import annotations

import enum
import re
import types
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar, Union, get_args, get_origin

import attrs
from cattrs import Converter, transform_error
from cattrs.errors import BaseValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

__all__ = ["converter", "decode", "make_converter", "strict_converter", "to_camel", "unstructure"]

T = TypeVar("T")


def to_camel(name: str) -> str:
    """``avatar_intro_seconds`` -> ``avatarIntroSeconds``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_FRACTION = re.compile(r"\.(\d+)(?=[+-]\d\d:?\d\d$|$)")


def _parse_datetime(value: Any, _: type) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        # Python 3.10 reads fractions of exactly 3 or 6 digits only: make it 6.
        text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text)
        parsed = datetime.fromisoformat(text)
    else:
        raise TypeError(f"expected an ISO 8601 timestamp, got {type(value).__name__}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


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
            raise TypeError(f"expected a string, got {type(value).__name__}")
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
    of the wrong JSON type is a response we cannot decode.
    """

    def structure(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got bool")
        if not isinstance(value, accept):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return kind(value)

    return structure


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
        return make_dict_structure_fn(cls, c, _cattrs_forbid_extra_keys=strict, **renames)

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
        DecodeError: With one ``<field path>: <reason>`` line per problem.
    """
    try:
        return (conv or converter).structure(data, cls)
    except BaseValidationError as exc:
        raise DecodeError([_path_first(m) for m in transform_error(exc, path=path)]) from exc
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise DecodeError([f"{path}: {exc}"]) from exc


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
