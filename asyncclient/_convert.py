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

Decoding takes a fast path first: per record, a function generated once that checks
each value's exact JSON type and builds the instance without cattrs's error
bookkeeping. It gives what the careful path gives or gives up, and then the careful
path (cattrs, every error with its wire path) decodes the value again from the start.
"""

from __future__ import annotations

import enum
import linecache
import math
import re
import sys
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


# -- the fast path --------------------------------------------------------------------------
#
# cattrs collects every error of every field, which a well-formed response pays for on
# every field. For each record the tolerant converter meets, a plain function is generated
# once: it checks each value's exact JSON type and builds the instance. A value it does not
# recognise at once goes to that field's own cattrs hook, so the result is the careful
# path's; anything raised sends the whole value down the careful path, which reports.


class _Converter(Converter):
    """A Converter that keeps the fast paths of its records (``None``: it has none).

    The fast paths mirror the hooks :func:`make_converter` registers: registering another
    structure hook afterwards turns them off, so that the new hook is never bypassed.
    """

    __slots__ = ("fast_paths",)

    fast_paths: dict[Any, Callable[[Any], Any] | None] | None

    def register_structure_hook(self, *args: Any, **kwargs: Any) -> Any:
        self.fast_paths = None
        return super().register_structure_hook(*args, **kwargs)

    def register_structure_hook_func(self, *args: Any, **kwargs: Any) -> Any:
        self.fast_paths = None
        return super().register_structure_hook_func(*args, **kwargs)

    def register_structure_hook_factory(self, *args: Any, **kwargs: Any) -> Any:
        self.fast_paths = None
        return super().register_structure_hook_factory(*args, **kwargs)


class _Miss(Exception):
    """The fast path meets a shape it does not vouch for."""


_ABSENT = object()

# A value that fails the test goes to the field's hook; None too unless the field is Optional.
_TESTS = {
    str: "type(v) is not str",
    bool: "type(v) is not bool",
    int: f"type(v) is not int or not {-_INT_RANGE} <= v < {_INT_RANGE}",
    float: "type(v) is not float or not -1e999 < v < 1e999",  # finite; ints take the hook
}

# 3.11+ reads "Z" and fractions of any length as _from_text does; a result in another zone
# (or naive) is left to the hook. 3.10 reads neither: it gets "...Z" as "...+00:00", and
# reads nothing longer than 42 characters. (An empty string raises: the careful path says.)
if sys.version_info >= (3, 11):
    _TIMESTAMP = (f"type(v) is str and len(v) <= {_MAX_TIMESTAMP_CHARS}", "fromiso(v)")
else:
    _TIMESTAMP = ('type(v) is str and v[-1] == "Z"', "fromiso(v[:-1] + '+00:00')")


def _fast_path(conv: Converter, tp: Any) -> Callable[[Any], Any] | None:
    """The fast structuring function of ``tp`` for ``conv``, built on first use; else None."""
    paths: dict[Any, Callable[[Any], Any] | None] | None = getattr(conv, "fast_paths", None)
    if paths is None:
        return None
    try:
        return paths[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation
        return None
    paths[tp] = None  # while it is built: a record that contains itself stays careful
    paths[tp] = fn = _build_fast_path(conv, tp)
    return fn


def _build_fast_path(conv: Converter, tp: Any) -> Callable[[Any], Any] | None:
    if _is_list(tp):
        args = get_args(tp)
        item = _fast_path(conv, args[0]) if args else None
        if item is None:
            return None

        def structure_list(value: Any) -> list[Any]:
            if type(value) is not list:
                raise _Miss
            return [item(x) for x in value]

        return structure_list
    if isinstance(tp, type) and attrs.has(tp) and not getattr(tp, "__parameters__", ()):
        return _record_fast_path(conv, tp)
    return None


def _field_code(conv: Converter, tp: Any, names: dict[str, Any]) -> list[str]:
    """Lines that turn ``v`` into the field's value as ``{h}``, the hook of ``{t}``, would.

    ``{e}`` is the value-to-member table of an enum, ``{f}`` the fast path of a record or a
    list of them; each is put in ``names``, and numbered per field by the caller.
    """
    args = get_args(tp)
    nullable = get_origin(tp) in (Union, types.UnionType) and type(None) in args
    base = tp
    if nullable:
        rest = [a for a in args if a is not type(None)]
        base = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
    if base in _TESTS:
        test = f"({_TESTS[base]}) and v is not None" if nullable else _TESTS[base]
        return [f"if {test}:", "    v = {h}(v, {t})"]
    otherwise = ["elif v is not None:" if nullable else "else:", "    v = {h}(v, {t})"]
    if base is datetime:
        test, parse = _TIMESTAMP
        return [
            f"if {test}:",
            "    try:",
            f"        w = {parse}",
            "    except ValueError:",
            "        w = None",
            "    v = w if w is not None and w.tzinfo is UTC else {h}(v, {t})",
            *otherwise,
        ]
    enum_cls = _lenient_enum(base)
    if enum_cls is not None:
        names["e"] = {member.value: member for member in enum_cls}
        return ["if type(v) is str:", "    v = {e}.get(v, v)", *otherwise]
    nested = _fast_path(conv, base)
    if nested is not None:
        names["f"] = nested
        kind = "list" if _is_list(base) else "dict"
        return [f"if type(v) is {kind}:", "    v = {f}(v)", *otherwise]
    return ["if v is not None:", "    v = {h}(v, {t})"] if nullable else ["v = {h}(v, {t})"]


def _record_fast_path(conv: Converter, cls: type) -> Callable[[Any], Any] | None:
    """Generate ``structure(d)`` for the attrs class ``cls``: one straight run per field."""
    attrs.resolve_types(cls)
    builder = _builder(cls)
    names: dict[str, Any] = {"Miss": _Miss, "ABSENT": _ABSENT, "cls": cls, "B": builder}
    names.update(fromiso=datetime.fromisoformat, UTC=timezone.utc, new=object.__new__)
    names.update({f.__name__: f for f in (type, len, str, bool, int, float, dict, list)})
    body = ["if type(d) is not dict:", "    raise Miss", "get = d.get"]
    body += ["o = new(B)"] if builder is not None else []
    kwargs = []
    for i, a in enumerate(attrs.fields(cls)):
        if not a.init or isinstance(a.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        own: dict[str, Any] = {"h": conv.get_structure_hook(a.type), "t": a.type}
        numbered = {name: f"{name}{i}" for name in "htef"}
        code = [line.format(**numbered) for line in _field_code(conv, a.type, own)]
        names.update({numbered[name]: value for name, value in own.items()})
        key = to_camel(a.name)
        if a.default is attrs.NOTHING:
            body += [f"v = d[{key!r}]", *code]
        elif a.default is None:
            body += [f"v = get({key!r})", *code]
        else:
            names[f"default{i}"] = a.default
            body += [f"v = get({key!r}, ABSENT)", "if v is ABSENT:", f"    v = default{i}"]
            body += ["else:", *("    " + line for line in code)]
        body.append(f"o.{a.name} = v" if builder is not None else f"a{i} = v")
        kwargs.append(f"{a.alias}=a{i}")
    tail = ["o.__class__ = cls", "return o"] if builder is not None else []
    body += tail or [f"return cls({', '.join(kwargs)})"]
    # Everything it names is a closure cell: faster to read than a global (3.10 above all).
    source = "".join(
        [f"def make({', '.join(names)}):\n", "    def structure(d):\n"]
        + [f"        {line}\n" for line in body]
        + ["    return structure\n"]
    )
    filename = f"<asyncclient fast structure {cls.__module__}.{cls.__qualname__}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), scope)
    fn: Callable[[Any], Any] = scope["make"](**names)
    return fn


def _builder(cls: type) -> type | None:
    """A subclass of ``cls`` whose instances take plain attribute stores, or None.

    A frozen attrs ``__init__`` stores each field through ``object.__setattr__``, a call per
    field that costs more than parsing the JSON did. The builder has the same slots and
    neither the frozen ``__setattr__`` nor ``__delattr__``, so its fields are stored at the
    speed of a plain slot; the instance then becomes a ``cls`` by ``__class__`` assignment
    (the layouts are the same), just as ``cls(**fields)`` would have made it. Only for a
    class whose ``__init__`` does nothing else: slotted throughout, every slot a field, no
    validator, converter, ``__attrs_pre_init__`` or ``__attrs_post_init__``.
    """
    fields = attrs.fields(cls)
    plain = all(a.init and a.validator is None and a.converter is None for a in fields)
    hooks = hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__")
    mro = cls.__mro__[:-1]
    slotted = all("__slots__" in c.__dict__ for c in mro)
    slots = {s for c in mro for s in c.__dict__.get("__slots__", ())} - {"__weakref__"}
    if not plain or hooks or not slotted or slots != {a.name for a in fields}:
        return None
    namespace = {
        "__slots__": (),
        "__setattr__": object.__setattr__,  # both, or the type keeps the slow setattr slot
        "__delattr__": object.__delattr__,
        "__module__": cls.__module__,
        "__qualname__": f"{cls.__qualname__}._Builder",
    }
    return type(f"_{cls.__name__}Builder", (cls,), namespace)


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
        base: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, c, **renames)
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
