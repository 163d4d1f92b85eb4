"""The OpenAPI document's request schemas, for checking what the SDK puts on the wire.

``tests/conftest.py`` checks every creation body the SDK builds in any test against the
schema of its operation (:func:`check_creation_body`); ``tests/contract`` has the rest.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

__all__ = ["DOCUMENT", "check_creation_body"]

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
