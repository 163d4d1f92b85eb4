"""The notification receiver as a plain ASGI application: any server, any framework.

:class:`NotificationApp` answers the service's notifications as ``client.webhooks.handle``
does for aiohttp, through the same :class:`~asyncclient.webhooks.WebhookReceiver`: the
token in the URL checked first (401 without it, 403 wrong; the body is not read), the
body read up to the receiver's ``max_body`` (a larger one, announced or sent, is answered
400 and the connection closed), then parsed, confirmed through the API, deduplicated
(across the fleet with ``redis=``) and handed to the jobs awaiting it in any process and
to the ``on_event`` callbacks. Only ``POST`` is answered (405 otherwise).

It is a class instance, so Starlette and FastAPI treat it as an ASGI application of its
own: ``app.add_route("/hooks/video", NotificationApp(), methods=["POST"])``, or mounted
under a prefix (``app.mount("/hooks", NotificationApp())`` answers every path under it).
Alone, any ASGI server runs it (``uvicorn module:receiver``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from asyncclient.asgi.lifespan import client_of
from asyncclient.awaiting.notifications import WebhookPayloadError, WebhookReply, answer
from asyncclient.client import AsyncClient
from asyncclient.errors import ValidationError
from asyncclient.webhooks import ClientWebhooks, WebhookReceiver

__all__ = ["NotificationApp", "Receive", "Scope", "Send"]

logger = logging.getLogger("asyncclient")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class _Disconnected(Exception):
    """The sender went away before its body was read: nobody is left to answer."""


class NotificationApp:
    """The client's notification receiver as an ASGI application.

    Args:
        source: Whose notifications: an ``AsyncClient`` (its ``client.webhooks``), a
            ``ClientWebhooks`` or a :class:`~asyncclient.webhooks.WebhookReceiver` of your
            own. None (the default): the client :func:`asyncclient.asgi.lifespan` opened,
            found in each request's scope; until there is one, the answer is 503 (the
            service sends the notification again later).

    Raises:
        ValidationError: ``source`` is none of these.
    """

    def __init__(self, source: AsyncClient | ClientWebhooks | WebhookReceiver | None = None):
        if source is not None and not isinstance(
            source, (AsyncClient, ClientWebhooks, WebhookReceiver)
        ):
            raise ValidationError(
                [
                    "source: must be an AsyncClient, client.webhooks or a WebhookReceiver, "
                    f"not {type(source).__name__}"
                ]
            )
        self._source = source
        self._warned = False

    def __repr__(self) -> str:
        source = "lifespan" if self._source is None else type(self._source).__name__
        return f"<NotificationApp of {source}>"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI connection: a notification (``http``), or the server's
        ``lifespan`` messages when it runs this application alone."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] != "http":  # a websocket: refused
            await send({"type": "websocket.close", "code": 1008})
        elif scope.get("method") != "POST":
            await _send(send, answer(405, "method: only POST"), [(b"allow", b"POST")])
        else:
            await self._notification(scope, receive, send)

    async def _notification(self, scope: Scope, receive: Receive, send: Send) -> None:
        receiver = self._receiver(scope)
        if receiver is None:
            await _send(send, answer(503, "receiver not ready; retry later"))
            return
        refused = receiver.check_url(_query(scope))
        if refused is not None:  # dropped unread
            await _send(send, refused, _CLOSE)
            return
        try:
            body = await _read_body(scope, receive, receiver.max_body)
        except WebhookPayloadError as exc:  # larger than max_body: the rest stays unread
            await _send(send, answer(400, str(exc)), _CLOSE)
            return
        except _Disconnected:
            return
        await _send(send, await receiver.answer_body(body))

    def _receiver(self, scope: Scope) -> WebhookReceiver | None:
        source = self._source if self._source is not None else client_of(scope)
        if source is None:
            if not self._warned:
                self._warned = True
                logger.error(
                    "NotificationApp: no client; give it one, or start the application "
                    "with lifespan=asyncclient.asgi.lifespan(make_client)"
                )
            return None
        if isinstance(source, WebhookReceiver):
            return source
        if isinstance(source, ClientWebhooks):
            return source.receiver
        return source.webhooks.receiver


_CLOSE = [(b"connection", b"close")]


def _query(scope: Scope) -> dict[str, list[str]]:
    """The query's values by name, as a framework hands them over (every value kept,
    blank ones too: ``?token=`` is a wrong token, not a missing one)."""
    raw: bytes = scope.get("query_string", b"")
    text = raw.decode("utf-8", "surrogateescape")
    return parse_qs(text, keep_blank_values=True, errors="surrogateescape")


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The request's body, refused once it is announced or read to be over ``limit``.

    Raises:
        WebhookPayloadError: Larger than ``limit`` bytes.
        _Disconnected: The sender went away first.
    """
    length = _content_length(scope)
    if length is not None and length > limit:
        raise WebhookPayloadError(f"body: larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise WebhookPayloadError(f"body: larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send(
    send: Send, reply: WebhookReply, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": reply.status,
            "headers": [
                (b"content-type", reply.content_type.encode("latin-1")),
                (b"content-length", str(len(reply.body)).encode("ascii")),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": reply.body})


async def _lifespan(receive: Receive, send: Send) -> None:
    """Served alone, the application has nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
