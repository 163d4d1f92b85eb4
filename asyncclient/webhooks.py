"""Receiving the service's notifications: parse them, check them, answer them.

The service POSTs a notification to the ``webhook`` URL of a creation when its
video completes or fails, in one of two forms: form A (``{status, data:{videoId,
url, shareUrl, metadata}, message}``) or form B (``{event: "project.completed",
projectId, status, video:{...}}``). :func:`parse_event` reads either into one
:class:`WebhookEvent` (pure, no I/O); whatever the input, it raises nothing but
:class:`WebhookPayloadError`, and it bounds the body's size and nesting depth.

Notifications carry no signature, so anyone who knows the URL
can send one. :class:`WebhookReceiver` (an aiohttp handler) defends with two options:

- ``token``: a secret in the URL's query (``?token=...``; ``receiver.url_for(url)``
  builds the URL to give the service). A request without it is answered 401, with a
  wrong one 403; either is dropped unread. Several tokens may be accepted at once (the
  first is the one URLs carry): a key rotation keeps the notifications already on their
  way valid. :func:`derive_token` derives one from the API key, so that every process
  holding the key agrees on it without configuration.
- ``confirm_with``: a client (``AsyncClient``). Before your handler runs, the receiver
  reads the video through the API (:meth:`WebhookEvent.confirm`); your handler gets the
  event with ``event.confirmed``, the service's own record. A notification the record
  contradicts is answered 409 and never reaches your handler; a failed read, 503.

Answers: 200 once your handler returned (or for a duplicate, dropped), 500 if it
raised, 400 for a body that is no notification. The service retries any answer but
200, 1, 5 and 15 minutes later. An event is remembered for deduplication
only once your handler took it (and, with ``confirm_with``, the record agreed): a
forged or failed one never makes the genuine notification count as a duplicate.

A receiver with neither ``token`` nor ``confirm_with`` accepts anyone's notifications
(it says so in a warning, once). It remembers an event together with what it said
(:attr:`WebhookEvent.digest`): a copy counts as a duplicate only if it says the same, so
a forged one naming the same video with another URL or status, taken first, cannot make
the genuine one be dropped (your handler sees both, and must judge them itself).

:class:`ClientWebhooks` is ``client.webhooks``, the client's own receiver: with
``webhook_url`` every creation (unless it passes its own ``webhook``) carries a URL with
the receiver's token (from the API key, :func:`derive_token`, or given; tokens of keys
being rotated out stay accepted). Each notification is checked, confirmed (one read of
the video), deduplicated (across a fleet with ``redis=``) and handed to the jobs this
process awaits for it, then to the :meth:`ClientWebhooks.on_event` callbacks. Another
framework's view answers through :meth:`WebhookReceiver.respond` (the raw parts); ASGI apps
mount ``asyncclient.asgi.NotificationApp``. aiohttp's server side loads only when used.
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from asyncclient.awaiting.notifications import (
    MAX_BODY,
    MAX_DEPTH,
    HasJobs,
    WebhookEvent,
    WebhookMismatchError,
    WebhookPayloadError,
    WebhookReply,
    answer,
    parse_event,
    tokens_in,
)
from asyncclient.awaiting.tokens import derive_token, with_token

__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "ClientWebhooks",
    "JobFinder",
    "WebhookEvent",
    "WebhookMismatchError",
    "WebhookPayloadError",
    "WebhookReceiver",
    "WebhookReply",
    "derive_token",
    "parse_event",
]

if TYPE_CHECKING:
    from aiohttp import web

    from asyncclient.models.videos import VideoDetail

logger = logging.getLogger("asyncclient")

Handler = Callable[[WebhookEvent], "Awaitable[None] | None"]


class SharedClaims(Protocol):
    """Deduplication shared by the processes of a fleet (``asyncclient.fleet.store.FleetStore``)."""

    async def claim_event(self, event_key: str) -> bool:
        """True: this process handles the event; False: the fleet already took it."""
        ...

    async def settle_event(self, event_key: str, *, taken: bool) -> None:
        """End the claim; a taken event is remembered across the fleet."""
        ...


def _response(reply: WebhookReply) -> web.Response:
    from aiohttp import web  # the server side: loaded by the aiohttp face only

    return web.Response(status=reply.status, body=reply.body, content_type=reply.content_type)


async def _read_body(request: web.Request, limit: int) -> bytes:
    """The request's body, refused once it passes ``limit`` bytes."""
    if request.content_length is not None and request.content_length > limit:
        raise WebhookPayloadError(f"body: larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.read(65_536):
        size += len(chunk)
        if size > limit:
            raise WebhookPayloadError(f"body: larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class WebhookReceiver:
    """An aiohttp handler for notifications: check, parse, dedupe, hand over, answer.

    Args:
        handler: Called with each new :class:`WebhookEvent` (a function or a coroutine
            function). If it raises, the answer is 500 and the service retries later.
        remember: How many event keys to remember for deduplication.
        token: A secret the notification URL carries as ``?token=...`` (build the URL
            with :meth:`url_for`, e.g. from ``secrets.token_urlsafe(32)`` or
            :func:`derive_token`). Without it a request is answered 401, with a wrong
            one 403. A sequence accepts each of its tokens (compared in constant time,
            all of them every time); URLs carry the first. None: no token checked.
        confirm_with: A client (``AsyncClient``): confirm each event through the API
            before the handler sees it (:meth:`WebhookEvent.confirm`). Disagreement is
            answered 409, a failed read 503; neither reaches the handler nor is remembered.
        max_body: The largest body read, in bytes; a larger one is answered 400.
        max_depth: The deepest JSON nesting read; a deeper body is answered 400.
        shared: Deduplication across the processes of a fleet (through Redis): each
            event reaches one process's handler, once. If it cannot be reached, the
            answer is 503 and the service retries.

    ``app = receiver.app("/hooks/video")`` gives an application to run or to mount;
    ``app.router.add_post(path, receiver.handle)`` adds it to yours.
    """

    def __init__(
        self,
        handler: Handler,
        *,
        remember: int = 10_000,
        token: str | Sequence[str] | None = None,
        confirm_with: HasJobs | None = None,
        max_body: int = MAX_BODY,
        max_depth: int = MAX_DEPTH,
        shared: SharedClaims | None = None,
    ) -> None:
        tokens = [token] if isinstance(token, str) else list(token or ())
        if token is not None and (not tokens or not all(tokens)):
            raise ValueError("token: must not be empty (None checks no token)")
        self._handler = handler
        self._remember = remember
        self._token = None if token is None else tokens[0].encode()
        self._tokens = tuple(t.encode() for t in tokens)
        self._client = confirm_with
        self._max_body = max_body
        self._max_depth = max_depth
        self._shared = shared
        self._open = token is None and confirm_with is None
        if self._open:
            logger.warning(
                "webhook receiver without a token or confirm_with: it accepts anyone's "
                "notifications (anyone who knows its URL can send one); give it a token "
                "(derive_token, url_for) or confirm_with=client"
            )
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._busy: dict[str, asyncio.Event] = {}
        self.duplicates = 0
        """Notifications dropped as duplicates."""
        self.refused = 0
        """Notifications refused: a missing or wrong token, or contradicted by the service."""

    def url_for(self, url: str) -> str:
        """The URL to give the service as ``webhook``: ``url`` with the receiver's token."""
        if self._token is None:
            return url
        return with_token(url, self._token.decode())

    def app(self, path: str = "/webhook") -> web.Application:
        """An application that receives notifications at ``path``."""
        from aiohttp import web

        application = web.Application()
        application.router.add_post(path, self.handle)
        return application

    async def handle(self, request: web.Request) -> web.Response:
        """The aiohttp handler: answer one notification."""
        refused = self._refuse(request.query.getall("token", []))
        if refused is not None:
            return _response(refused)
        try:
            body = await _read_body(request, self._max_body)
        except WebhookPayloadError as exc:
            return _response(answer(400, str(exc)))
        except Exception as exc:  # a broken upload (bad encoding, cut short): no notification
            # The stream is broken: end it so that aiohttp does not read on (and log the
            # error again) after our answer, and close the connection after it.
            request.content.feed_eof()
            response = _response(answer(400, f"body: unreadable ({type(exc).__name__})"))
            response.force_close()
            return response
        return _response(await self.answer_body(body))

    async def respond(
        self,
        body: bytes,
        *,
        query: Mapping[str, str | Sequence[str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> WebhookReply:
        """Answer one notification from its raw parts, as :meth:`handle` answers a
        request: for a view of another framework (Flask, Django, an ASGI app).

        ``body`` is read whole (refuse larger ones in the framework too); ``query`` maps
        each name to its value or values (Flask's ``request.args.to_dict(flat=False)``);
        ``headers`` are read for nothing yet (notifications carry no signature).
        Returns the status and body to answer with.
        """
        del headers
        refused = self.check_url(query)
        return refused if refused is not None else await self.answer_body(body)

    @property
    def max_body(self) -> int:
        """The largest body read, in bytes: refuse a larger one before reading it all."""
        return self._max_body

    def check_url(self, query: Mapping[str, str | Sequence[str]] | None) -> WebhookReply | None:
        """401 (no token) or 403 (a wrong one) when the URL alone refuses a notification;
        None: read its body (up to :attr:`max_body` bytes) and call :meth:`answer_body`."""
        return self._refuse(tokens_in(query))

    def _refuse(self, given: Sequence[str]) -> WebhookReply | None:
        refused = self._check_token(given)
        self.refused += refused is not None
        return refused

    async def answer_body(self, body: bytes) -> WebhookReply:
        """Answer a notification whose URL :meth:`check_url` let through: parse, confirm,
        dedupe, hand over (the framework-neutral half of :meth:`handle`)."""
        if len(body) > self._max_body:
            return answer(400, f"body: larger than {self._max_body} bytes")
        try:
            event = parse_event(body, max_size=self._max_body, max_depth=self._max_depth)
        except WebhookPayloadError as exc:
            return answer(400, str(exc))
        return await self._take(event)

    def _check_token(self, given: Sequence[str]) -> WebhookReply | None:
        if self._token is None:
            return None
        if not given:
            return answer(401, "token: missing")
        if len(given) != 1 or not self._known(given[0].encode("utf-8", "surrogatepass")):
            return answer(403, "token: wrong")
        return None

    def _known(self, given: bytes) -> bool:
        """Whether ``given`` is one of the tokens: every one compared, in constant time."""
        found = False
        for token in self._tokens:
            found |= hmac.compare_digest(given, token)
        return found

    async def _take(self, event: WebhookEvent) -> WebhookReply:
        """Dedupe: a copy waits for the one in flight, then counts as a duplicate only if
        that one was taken (a forged copy in flight must not shadow the genuine one)."""
        key = self._key(event)
        while (busy := self._busy.get(key)) is not None:
            await busy.wait()
        if key in self._seen:
            self.duplicates += 1
            return answer(200, "duplicate ignored")
        busy = self._busy[key] = asyncio.Event()
        try:
            if self._shared is None:
                return await self._process(event, key)
            return await self._take_shared(event, key, self._shared)
        finally:
            del self._busy[key]
            busy.set()

    def _key(self, event: WebhookEvent) -> str:
        """What a duplicate of ``event`` shares: its identity, and for a receiver that
        checks neither token nor record, all that it says (a forgery differs in it)."""
        return f"{event.key}#{event.digest}" if self._open else event.key

    async def _take_shared(
        self, event: WebhookEvent, key: str, shared: SharedClaims
    ) -> WebhookReply:
        """Claim the event across the fleet, handle it, and settle the claim."""
        try:
            claimed = await shared.claim_event(key)
        except Exception as exc:  # the shared store is down: let the service retry
            logger.warning("webhook %r: deduplication unavailable (%r)", key, exc)
            return answer(503, "deduplication unavailable; retry later")
        if not claimed:
            self.duplicates += 1
            self._remember_seen(key)
            return answer(200, "duplicate ignored")
        reply = await self._process(event, key)
        try:
            await shared.settle_event(key, taken=reply.status == 200)
        except Exception as exc:  # the claim lapses on its own; a later copy is handled
            logger.warning("webhook %r: could not record it as handled (%r)", key, exc)
        return reply

    async def _process(self, event: WebhookEvent, key: str) -> WebhookReply:
        if self._client is not None:
            try:
                event = await event.confirm(self._client)
            except WebhookPayloadError as exc:  # contradicted, or names no video nor project
                self.refused += 1
                logger.warning("webhook %r refused: %r", event.key, str(exc))
                return answer(409, "not confirmed by the service")
            except Exception as exc:  # the read failed: neither confirmed nor refuted
                logger.warning(
                    "webhook %r unconfirmed (%r); the service will retry", event.key, exc
                )
                return answer(503, "could not confirm with the service; retry later")
        try:
            result = self._handler(event)
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("webhook handler failed for %r; the service will retry", event.key)
            return answer(500, "handler failed")
        self._remember_seen(key)
        return answer(200)

    def _remember_seen(self, key: str) -> None:
        self._seen[key] = None
        while len(self._seen) > self._remember:
            self._seen.popitem(last=False)


# -- the client's own receiver: client.webhooks ---------------------------------------


_C = TypeVar("_C", bound=Handler)


class JobFinder(Protocol):
    """Where a confirmed video record reaches the jobs awaiting it (the poller)."""

    async def deliver(self, detail: VideoDetail) -> int:
        """Hand ``detail`` to every awaited job of its video or project, in this process
        (and, for a fleet, in every process); how many here took it."""
        ...


class ClientWebhooks:
    """The client's receiver: ``client.webhooks``.

    Args:
        client: Confirms each notification through the API.
        finder: Hands the confirmed record to the jobs awaiting it.
        tokens: The accepted tokens; URLs carry the first.
        url: The notification URL creations carry (without the token), if any.
        remember: How many notifications to remember for deduplication.
        shared: Deduplication across a fleet's processes (its Redis store).
    """

    def __init__(
        self,
        client: HasJobs,
        *,
        finder: JobFinder,
        tokens: Sequence[str],
        url: str | None = None,
        remember: int = 10_000,
        shared: SharedClaims | None = None,
    ) -> None:
        self._finder = finder
        self._callbacks: list[Handler] = []
        self.receiver = WebhookReceiver(
            self._dispatch,
            token=list(tokens),
            confirm_with=client,
            remember=remember,
            shared=shared,
        )
        """The underlying :class:`~asyncclient.webhooks.WebhookReceiver` (its counters)."""
        self._url = None if url is None else self.receiver.url_for(url)
        self.jobs_finished = 0
        """Awaited jobs that a notification finished in this process."""

    def __repr__(self) -> str:
        url = "set" if self._url else None
        return f"<ClientWebhooks url={url} callbacks={len(self._callbacks)}>"

    @property
    def url(self) -> str | None:
        """The notification URL creations carry (with the token), or None when unset."""
        return self._url

    def url_for(self, url: str) -> str:
        """``url`` with this receiver's token: what to give a creation as ``webhook``."""
        return self.receiver.url_for(url)

    def on_event(self, callback: _C) -> _C:
        """Call ``callback`` with each genuine notification, once (usable as a decorator).

        The event is confirmed: ``event.confirmed`` is the service's record. If the
        callback raises, the answer is 500 and the service sends the notification
        again later, so a callback may see an event again after it failed.
        """
        self._callbacks.append(callback)
        return callback

    async def handle(self, request: web.Request) -> web.Response:
        """The aiohttp handler: ``app.router.add_post(path, client.webhooks.handle)``."""
        return await self.receiver.handle(request)

    async def respond(
        self,
        body: bytes,
        *,
        query: Mapping[str, str | Sequence[str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> WebhookReply:
        """Answer one notification from its raw parts (:meth:`WebhookReceiver.respond`)."""
        return await self.receiver.respond(body, query=query, headers=headers)

    def app(self, path: str = "/webhook") -> web.Application:
        """An application that receives notifications at ``path``."""
        return self.receiver.app(path)

    async def _dispatch(self, event: WebhookEvent) -> None:
        if event.confirmed is not None:
            self.jobs_finished += await self._finder.deliver(event.confirmed)
        for callback in self._callbacks:
            result = callback(event)
            if inspect.isawaitable(result):
                await result
