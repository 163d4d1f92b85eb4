"""The shared context of the emulator's application: state, clock, faults, log."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._faults import Faults
from asyncclient.emulator._requestlog import RequestLog, RequestRecord
from asyncclient.emulator._seed import Catalog
from asyncclient.emulator._state import Key, Store, Video
from asyncclient.emulator._views import URL_VALIDITY, download_url
from asyncclient.emulator._webhooks import Dispatcher, payload_a, payload_b

__all__ = [
    "CTX",
    "KEY",
    "PROJECT",
    "Context",
    "Counters",
    "RequestLog",
    "RequestRecord",
    "error",
    "ok",
    "read_json",
]

JSON = dict[str, Any]


@dataclass
class Counters:
    """Counters a test or benchmark reads."""

    requests: collections.Counter[str] = field(default_factory=collections.Counter)
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    rate_limited: int = 0
    projects: collections.Counter[str] = field(default_factory=collections.Counter)
    credits_spent: collections.Counter[str] = field(default_factory=collections.Counter)
    webhook_attempts: int = 0
    faults: collections.Counter[str] = field(default_factory=collections.Counter)
    """Faults applied, by kind."""

    def to_json(self) -> JSON:
        """Return the counters as JSON."""
        return {
            "requests": dict(self.requests),
            "statuses": {str(k): v for k, v in self.statuses.items()},
            "rateLimited": self.rate_limited,
            "projects": dict(self.projects),
            "creditsSpent": dict(self.credits_spent),
            "webhookAttempts": self.webhook_attempts,
            "faults": dict(self.faults),
        }


class Context:
    """Everything the handlers share."""

    def __init__(
        self,
        store: Store,
        catalog: Catalog,
        faults: Faults,
        *,
        secret: bytes,
        webhook_form: str = "auto",
        keywords_seconds: float = 30.0,
        webhook_ssl: Any = None,
    ) -> None:
        self.store = store
        self.clock: ServiceClock = store.clock
        self.catalog = catalog
        self.faults = faults
        self.secret = secret
        self.webhook_form = webhook_form
        self.keywords_seconds = keywords_seconds
        self.base_url = ""
        self.requests = RequestLog(store.table)
        """Every request to the service API, oldest first."""
        self.counters = Counters()
        self.dispatcher = Dispatcher(store, self.clock, self._payload, ssl_context=webhook_ssl)

    def form_for(self, natural: str) -> str:
        """Return the webhook form of a creation whose natural form is ``natural``."""
        return natural if self.webhook_form == "auto" else self.webhook_form

    def _payload(self, video: Video, now: float) -> JSON:
        if video.form == "B":
            url = download_url(self.base_url, self.secret, video.id, now, validity=7 * 86400)
            return payload_b(video, url, now)
        url = download_url(self.base_url, self.secret, video.id, now, validity=URL_VALIDITY)
        return payload_a(video, url, now)

    def key_of(self, request: web.Request) -> Key:
        """Return the authenticated key of a request (set by the middleware)."""
        return request[KEY]


CTX = web.AppKey("asyncclient.emulator", Context)
KEY = web.RequestKey("asyncclient.emulator.key", Key)
PROJECT = web.RequestKey("asyncclient.emulator.project", str)
"""The id of the project a creation request made (for the request log)."""


def ok(data: JSON, status: int = 200) -> web.Response:
    """Return a JSON response."""
    return web.json_response(data, status=status)


def error(status: int, message: str) -> web.Response:
    """Return the error envelope of spec 7."""
    return web.json_response({"success": False, "message": message}, status=status)


async def read_json(request: web.Request) -> JSON | web.Response:
    """Return the JSON object body, or a 400 response."""
    raw = await request.read()
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return error(400, "body: invalid JSON")
    if not isinstance(body, dict):
        return error(400, "body: must be a JSON object")
    return body
