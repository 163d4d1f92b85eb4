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
numbers must be finite and in range (ints fit 64 bits, the OpenAPI document's
``format: int64``; a float is any finite double; timestamps fall in years 1 to 9999),
a list stops at its :data:`MAX_ERRORS`-th bad item, and at most :data:`MAX_ERRORS`
lines are reported, then one ``and N more`` line.

Decoding takes a fast path first: per record, a function generated once that checks
each value's exact JSON type and builds the instance without cattrs's error
bookkeeping. It gives what the careful path gives or gives up, and then the careful
path (cattrs, every error with its wire path) decodes the value again from the start.

The hooks live in ``hooks``, the generated fast path in ``fast``.
"""

# May import: nothing of the package; the models reach it as the types it is asked for.

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import attrs
from cattrs import Converter, transform_error
from cattrs.errors import BaseValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

from asyncclient._convert.fast import _Converter, _fast_path
from asyncclient._convert.hooks import (
    MAX_ERRORS,
    _CappedListError,
    _enum_hook,
    _exact,
    _format_datetime,
    _has_none_default,
    _is_list,
    _kind,
    _lenient_enum,
    _list_hook,
    _parse_datetime,
    _Rejected,
    to_camel,
)

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


def make_converter(*, strict: bool = False) -> Converter:
    """Build the converter.

    Args:
        strict: Reject unknown keys and unknown enum values (for tests against
            recorded payloads, so that drift between spec and models fails CI).

    Returns:
        A configured :class:`cattrs.Converter`.
    """
    conv = _Converter(forbid_extra_keys=strict)
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
        made: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, c, **renames)
        optional = frozenset(to_camel(a.name) for a in attrs.fields(cls) if _has_none_default(a))

        def base(obj: Any) -> dict[str, Any]:
            # A request never sends null, and an optional string sent as "" counts as
            # omitted (validation accepts both): neither is put on the wire.
            out = made(obj)
            for key in [k for k, v in out.items() if v is None or (v == "" and k in optional)]:
                del out[key]
            return out

        scene_type = getattr(cls, "TYPE", None)
        if scene_type is None:
            return base

        def with_type(obj: Any) -> dict[str, Any]:
            return {"type": scene_type, **base(obj)}

        return with_type

    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    # Strict decoding (tests) stays careful: unknown keys and enum values must be seen.
    conv.fast_paths = None if strict else {}
    return conv


converter = make_converter()
"""The converter the client uses: tolerant of additions by the service."""

strict_converter = make_converter(strict=True)
"""A converter that rejects unknown keys and enum values (tests use it)."""


def unstructure(obj: Any) -> Any:
    """Turn a request model into JSON-ready data (camelCase; no ``None``, and no optional
    string given as ``""``, which counts as omitted)."""
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
    conv = conv or converter  # the tolerant converter's records have a fast path
    fast = _fast_path(conv, cls)
    if fast is not None:
        try:
            return fast(data)  # type: ignore[no-any-return]
        except Exception:  # anything it does not vouch for: the careful path decides
            pass
    return _decode_careful(data, cls, conv, path)


def _decode_careful(data: Any, cls: type[T], conv: Converter, path: str) -> T:
    """:func:`decode` through cattrs alone: every error collected, with its wire path."""
    try:
        return conv.structure(data, cls)
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
