"""The fast path of decoding: per record, a structuring function generated once.

cattrs collects every error of every field, which a well-formed response pays for on
every field. For each record the tolerant converter meets, a plain function is generated
once: it checks each value's exact JSON type and builds the instance. A value it does not
recognise at once goes to that field's own cattrs hook, so the result is the careful
path's; anything raised sends the whole value down the careful path, which reports.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Union, get_args, get_origin

import attrs
from cattrs import Converter

from asyncclient._convert.hooks import (
    _INT_RANGE,
    _MAX_TIMESTAMP_CHARS,
    _is_list,
    _lenient_enum,
    to_camel,
)


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
