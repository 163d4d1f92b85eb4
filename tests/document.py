"""The OpenAPI document's operations, for checking what the SDK puts on the wire.

``tests/conftest.py`` checks every creation body the SDK builds in any test against the
schema of its operation (:func:`check_creation_body`), and every other request it builds
(method, path, query, body) against its operation (:func:`check_request`);
``tests/contract`` has the rest.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

import asyncclient
from asyncclient.http.protocol import Request

__all__ = ["DOCUMENT", "check_creation_body", "check_request", "sent_by_hand"]

DOCUMENT: dict[str, Any] = json.loads(
    (resources.files("asyncclient.emulator") / "data" / "openapi.json").read_text("utf-8")
)
_BASE = "urn:asyncclient:openapi"
_REGISTRY: Registry[Any] = Registry().with_resource(_BASE, DRAFT202012.create_resource(DOCUMENT))


@cache
def _validator(path: str) -> Draft202012Validator | None:
    """The validator of the body of ``POST path``; None when the document has no body."""
    operation = DOCUMENT["paths"].get(path, {}).get("post")
    if not operation or "requestBody" not in operation:
        return None
    escaped = path.replace("~", "~0").replace("/", "~1")
    pointer = f"{_BASE}#/paths/{escaped}/post/requestBody/content/application~1json/schema"
    return Draft202012Validator({"$ref": pointer}, registry=_REGISTRY)


def check_creation_body(path: str, body: Any) -> None:
    """Raise AssertionError naming each place ``body`` breaks ``POST path``'s schema."""
    validator = _validator(path)
    if validator is None:
        raise AssertionError(f"POST {path}: the OpenAPI document has no such operation")
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [
            f"  {'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in errors
        ]
        raise AssertionError(
            f"POST {path}: the SDK built a body the OpenAPI document refuses:\n"
            + "\n".join(lines[:10])
        )


# -- any request: its operation, its parameters and their values, its body ----------------

_PACKAGE = os.path.join(Path(asyncclient.__file__).parent, "")
"""Where the SDK's own modules are (a request they ask for is the SDK's)."""
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_PARAMETER = re.compile(r"\\\{(\w+)\\\}")
"""A path parameter, as ``re.escape`` writes it: ``\\{videoId\\}``."""


def _escaped(path: str) -> str:
    return path.replace("~", "~0").replace("/", "~1")


def _deref(pointer: str) -> Any:
    node: Any = DOCUMENT
    for raw in pointer.removeprefix("#/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


@cache
def _paths() -> list[tuple[re.Pattern[str], str]]:
    """Each documented path as a pattern (a parameter is one segment, not empty), literal
    paths first."""
    found = []
    for path in DOCUMENT["paths"]:
        pattern = _PARAMETER.sub(r"(?P<\1>[^/]+)", re.escape(path))
        found.append((re.compile(pattern), path))
    return sorted(found, key=lambda item: item[1].count("{"))


def _operation(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    """The documented path ``method path`` is an operation of, and its path parameters."""
    for pattern, documented in _paths():
        found = pattern.fullmatch(path)
        if found is not None and method in DOCUMENT["paths"][documented]:
            return documented, found.groupdict()
    return None


@cache
def _parameters(path: str, method: str) -> dict[tuple[str, str], tuple[bool, str]]:
    """``(in, name)`` -> whether the parameter is required, and the pointer of its schema."""
    out: dict[tuple[str, str], tuple[bool, str]] = {}
    for where in (f"#/paths/{_escaped(path)}", f"#/paths/{_escaped(path)}/{method}"):
        for index, param in enumerate(_deref(where).get("parameters", [])):
            pointer = f"{where}/parameters/{index}"
            while "$ref" in param:
                pointer, param = param["$ref"], _deref(param["$ref"])
            out[(param["in"], param["name"])] = (bool(param.get("required")), f"{pointer}/schema")
    return out


@cache
def _schema(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": _BASE + pointer}, registry=_REGISTRY)


def _types(schema: Any) -> set[str]:
    """The JSON types ``schema`` allows, its ``$ref``s followed (none named: any)."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    own = {kind} if isinstance(kind, str) else set(kind or ())
    return own | (_types(_deref(schema["$ref"])) if "$ref" in schema else set())


def _value_errors(where: str, name: str, text: str, pointer: str) -> list[str]:
    """What the schema at ``pointer`` says of ``text``, a value as the URL carries it, read
    as the JSON value the schema's type makes of it (``5`` an integer, ``5.0`` not)."""
    kinds = _types(_deref(pointer))
    value: Any = text
    if "integer" in kinds and _INTEGER.fullmatch(text):
        value = int(text)
    elif "number" in kinds and _NUMBER.fullmatch(text):
        value = float(text)
    elif "boolean" in kinds and text in ("true", "false"):
        value = text == "true"
    return [f"{where} {name}={text!r}: {e.message}" for e in _schema(pointer).iter_errors(value)]


def _query_errors(path: str, method: str, params: tuple[tuple[str, str], ...]) -> list[str]:
    declared = _parameters(path, method)
    names = [name for name, _ in params]
    errors = []
    for name, text in params:
        if ("query", name) not in declared:
            errors.append(f"query {name}={text!r}: not a parameter of {method.upper()} {path}")
        elif names.count(name) > 1:
            errors.append(f"query {name}: sent {names.count(name)} times")
        else:
            errors += _value_errors("query", name, text, declared[("query", name)][1])
    missing = [n for (where, n), (required, _) in declared.items() if where == "query" and required]
    return errors + [f"query {name}: required, not sent" for name in missing if name not in names]


def _body_errors(path: str, method: str, body: bytes | None) -> list[str]:
    operation = DOCUMENT["paths"][path][method]
    if body is None:
        needed = operation.get("requestBody", {}).get("required", False)
        return [f"body: {method.upper()} {path} needs one, none sent"] if needed else []
    if "requestBody" not in operation:
        return [f"body: {method.upper()} {path} takes none"]
    pointer = f"#/paths/{_escaped(path)}/{method}/requestBody/content/application~1json/schema"
    errors = _schema(pointer).iter_errors(json.loads(body))
    return [f"body {'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in errors]


def check_request(request: Request) -> None:
    """Raise AssertionError naming each way ``request`` breaks the OpenAPI document: no
    such operation; a parameter it does not declare, or sent twice; a value its schema
    refuses; a required one missing; a body it does not take, or whose schema refuses it."""
    method = request.method.lower()
    found = _operation(method, request.path)
    if found is None:
        raise AssertionError(
            f"{request.method} {request.path}: the OpenAPI document has no such operation"
        )
    path, values = found
    declared = _parameters(path, method)
    errors = [
        error
        for name, text in values.items()
        for error in _value_errors("path", name, text, declared[("path", name)][1])
    ]
    errors += _query_errors(path, method, request.params)
    errors += _body_errors(path, method, request.body)
    if errors:
        raise AssertionError(
            f"{request.method} {request.path}: the SDK built a request the OpenAPI document "
            "refuses:\n" + "\n".join(f"  {error}" for error in errors[:10])
        )


def sent_by_hand() -> bool:
    """Whether the request being built was asked for by hand, not by one of the SDK's
    methods: ``Caller.call`` called from outside the package (a test of the request path
    itself) or through ``AsyncClient.request`` (for endpoints the SDK has no method for)."""
    from asyncclient.client import AsyncClient
    from asyncclient.http.caller import Caller

    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code is not Caller.call.__code__:
        frame = frame.f_back
    asker = frame.f_back.f_code if frame is not None and frame.f_back is not None else None
    if asker is None:  # the builder called directly (the tests of this check): checked
        return False
    return asker is AsyncClient.request.__code__ or not asker.co_filename.startswith(_PACKAGE)
