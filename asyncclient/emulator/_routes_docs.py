"""The service's description and an explorer of it: ``GET /openapi.json``, ``GET /docs``
and the explorer's example values, ``GET /docs/examples.json``.

Both are package data (``data/openapi.json`` and ``data/explorer.html``), read when first
asked for and then kept by the application. The served description names the emulator
as its server where the document's own ``servers`` are relative (or absent, which means
``/``), so that an explorer or a contract tester aims at the emulator; absolute ones are
kept, and the document read is never changed. Like ``/_files/`` and ``/_emulator/``,
neither route needs a key, is rate limited or logged (the service middleware handles
``/v1/`` only).

The explorer is one static page (its CSS and JavaScript inline) that loads
``openapi.json`` from beside itself and renders it; its Content-Security-Policy lets it
load nothing else and send requests to this origin only. Its "Try it" forms prefill
request bodies from the description's schemas; where a field names one of the
emulator's own resources (an avatar, a voice, a template...), which a schema cannot
know, the value comes from ``/docs/examples.json`` so that a prefilled creation is
accepted as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urljoin, urlsplit

from aiohttp import web

from asyncclient.emulator._context import CTX, error
from asyncclient.emulator._seed import Catalog

__all__ = [
    "DOCS_PATH",
    "EXAMPLES_PATH",
    "OPENAPI_PATH",
    "add_docs_routes",
    "explorer_examples",
    "read_data",
    "served_document",
]

JSON = dict[str, Any]
OPENAPI_PATH = "/openapi.json"
"""Where the description is served."""
DOCS_PATH = "/docs"
"""Where the explorer page is served."""
EXAMPLES_PATH = "/docs/examples.json"
"""Where the explorer reads example values of the emulator's own resources."""
OPENAPI_FILE = "openapi.json"
EXPLORER_FILE = "explorer.html"
EXPLORER_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self'"
)
"""The page's own script and style, requests to this origin, nothing else."""


def read_data(name: str) -> bytes:
    """The bytes of the emulator's package data file ``data/<name>``.

    Raises:
        FileNotFoundError: The package has no such file.
    """
    return (resources.files("asyncclient.emulator") / "data" / name).read_bytes()


def _resolved(server: Any, base_url: str) -> Any:
    """``server`` (a Server Object) with a relative ``url`` resolved against ``base_url``."""
    if not isinstance(server, dict) or not isinstance(server.get("url"), str):
        return server
    url = server["url"]
    if urlsplit(url).scheme:  # absolute: another server, kept
        return server
    return {**server, "url": urljoin(base_url + "/", url).rstrip("/") or base_url}


def served_document(document: JSON, base_url: str) -> JSON:
    """``document`` as the emulator serves it: a copy whose relative ``servers`` (or the
    absent list's default, ``/``) are resolved against ``base_url``.

    Only the top level is copied: ``document`` and what it holds are never changed.
    """
    servers = document.get("servers", [{"url": "/"}])
    if not isinstance(servers, list):
        return dict(document)
    return {**document, "servers": [_resolved(server, base_url) for server in servers]}


def explorer_examples(catalog: Catalog) -> JSON:
    """Example values for the explorer's prefilled bodies and path parameters: a field's
    name (or ``Schema.field`` for one schema's field) -> a value the emulator accepts.

    A name stands for every field so named; an array field gets ``[value]`` when the value
    is not itself an array.
    """
    template = catalog.records["templates"][0]
    scenes = [
        {"script": scene["script"], "variables": scene["variables"]} for scene in template["scenes"]
    ]
    video = catalog.media_videos[0]
    return {
        "avatarId": catalog.avatars[0],
        "voiceId": catalog.voices[0],
        "musicId": catalog.music[0],
        "media": video,
        "mediaId": video,
        "startFrameMediaId": catalog.media_images[0],
        "endFrameMediaId": catalog.media_images[-1],
        "templateId": template["id"],
        "integrationId": catalog.integrations[0],
        "nicheId": catalog.niches[0],
        "username": catalog.accounts["clipsite"][0],
        "websiteUrl": "https://www.example.com/",
        "CreateFromTemplateRequest.type": template["type"],
        "CreateFromTemplateRequest.language": "en",
        "CreateFromTemplateRequest.scenes": scenes,
    }


@dataclass
class _Docs:
    """What the routes read once: the served description and the page, as bytes."""

    document: bytes | None = None
    page: bytes | None = None


DOCS = web.AppKey("asyncclient.emulator.docs", _Docs)


async def openapi(request: web.Request) -> web.Response:
    """GET /openapi.json: the service's OpenAPI description, naming this emulator as its
    server (no key)."""
    docs = request.app[DOCS]
    if docs.document is None:
        try:
            document = json.loads(read_data(OPENAPI_FILE))
        except FileNotFoundError:
            return error(404, "The OpenAPI description is not packaged")
        base_url = request.app[CTX].base_url or f"{request.scheme}://{request.host}"
        served = served_document(document, base_url)
        docs.document = json.dumps(served, ensure_ascii=False, indent=2).encode("utf-8")
    return web.Response(body=docs.document, content_type="application/json", charset="utf-8")


async def explorer(request: web.Request) -> web.Response:
    """GET /docs: the API explorer page, which renders ``/openapi.json`` (no key)."""
    docs = request.app[DOCS]
    if docs.page is None:
        docs.page = read_data(EXPLORER_FILE)
    return web.Response(
        body=docs.page,
        content_type="text/html",
        charset="utf-8",
        headers={"Content-Security-Policy": EXPLORER_POLICY, "Cache-Control": "no-cache"},
    )


async def examples(request: web.Request) -> web.Response:
    """GET /docs/examples.json: the explorer's example values (no key)."""
    return web.json_response(explorer_examples(request.app[CTX].catalog))


def add_docs_routes(app: web.Application) -> None:
    """Register ``GET /openapi.json``, ``GET /docs`` and ``GET /docs/examples.json``."""
    app[DOCS] = _Docs()
    app.router.add_get(OPENAPI_PATH, openapi)
    app.router.add_get(DOCS_PATH, explorer)
    app.router.add_get(EXAMPLES_PATH, examples)
