"""Request ids: the one the SDK sends, the one the service answers, and who sees them.

Every logical request gets an id, ``req_`` and 24 hex digits, sent as ``X-Request-Id``.
Its retries send the same id (one request, one id, however many attempts: the
attempts' log lines and the service's logs group by it). When the service's reply
names a request id of its own (``X-Request-Id``, ``Request-Id`` or
``X-Correlation-Id``), that one is the request's id from then on; the emulator echoes
the one it was sent.

The raw-response face (``client.with_raw_response``) reads the replies a call got
through :data:`RESPONSES`: set for the call, the caller appends each reply it decodes.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from contextvars import ContextVar

from asyncclient.http.protocol import Request, Response

__all__ = [
    "REQUEST_ID_HEADER",
    "RESPONSES",
    "Answered",
    "Sink",
    "new_request_id",
    "service_request_id",
    "with_request_id",
]

REQUEST_ID_HEADER = "X-Request-Id"
"""The header the SDK sends its request id in."""

_SERVICE_HEADERS = (REQUEST_ID_HEADER, "Request-Id", "X-Correlation-Id")
"""Where a service's request id may come (not in the service's document), first found first."""

Answered = tuple[Response, str]
"""A decoded reply and its request's id."""


class Sink:
    """The replies one raw-response call got; closed when the call returns (a task it
    started, which keeps its context, then adds nothing)."""

    __slots__ = ("answers", "open")

    def __init__(self) -> None:
        self.answers: list[Answered] = []
        self.open = True

    def add(self, response: Response, request_id: str) -> None:
        if self.open:
            self.answers.append((response, request_id))


RESPONSES: ContextVar[Sink | None] = ContextVar("asyncclient_responses", default=None)
"""Set by the raw-response face for one call: every reply the caller decodes in it."""


def new_request_id() -> str:
    """A new request id: ``req_`` and 24 hex digits (96 random bits)."""
    return f"req_{secrets.token_hex(12)}"


def service_request_id(headers: Mapping[str, str]) -> str | None:
    """The service's request id, printable and at most 128 characters, or None."""
    for name in _SERVICE_HEADERS:
        value = headers.get(name)
        if value:
            text = value[:128]
            return text if text.isprintable() else repr(text)
    return None


def with_request_id(request: Request) -> tuple[Request, str]:
    """``request`` carrying a request id in ``X-Request-Id``, and that id.

    A request built with an ``X-Request-Id`` of its own keeps it.
    """
    given = request.headers.get(REQUEST_ID_HEADER)
    if given:
        return request, given
    request_id = new_request_id()
    headers = {**request.headers, REQUEST_ID_HEADER: request_id}
    return Request(request.method, request.path, request.params, request.body, headers), request_id
