"""The one request path: build -> limiter -> retry -> transport -> decode -> rate-limit headers.

:class:`Caller` is what every resource sends through. It knows requests,
envelopes, the limiter and the retry policy; it knows nothing of resources, jobs
or batches (they sit above it and take it as an argument).
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.errors import APIError, RateLimitError
from asyncclient.http.created import ambiguous, require_created_ids
from asyncclient.http.gate import Gate
from asyncclient.http.headers import http_date, parse_limit, parse_remaining, parse_reset_after
from asyncclient.http.protocol import (
    Envelope,
    Request,
    Response,
    build_request,
    decode_envelope,
    parse_rate_limit,
)
from asyncclient.http.reach import Reach
from asyncclient.http.request_ids import RESPONSES, service_request_id, with_request_id
from asyncclient.http.stats import ClientStats
from asyncclient.http.tracing import client_kind as otel_client_kind
from asyncclient.http.tracing import mark_error as otel_mark_error
from asyncclient.http.tracing import tracer as otel_tracer
from asyncclient.ratelimit import (
    Limiter,
    RateLimit,
    adopt_into,
    observes_every_header,
    plan_for_limit,
)
from asyncclient.retry import RetryPolicy, is_ambiguous

if TYPE_CHECKING:  # annotations only: the creation models load when a creation is made
    from asyncclient.models.requests import CreationRequest

__all__ = ["Caller", "ClientStats", "Sender", "require_created_ids"]

logger = logging.getLogger("asyncclient")
_debug = functools.partial(logger.isEnabledFor, logging.DEBUG)
"""Whether an attempt is logged: the logger's own cached answer (level changes clear it)."""


SEND_GUARD: ContextVar[Callable[[], None] | None] = ContextVar("send_guard", default=None)
"""Called right before each attempt of a creation leaves (its token taken), in the task
that sends it: raising stops it with nothing sent. A batch on a Redis journal sets it to
make sure its run still holds the journal's lease (a run paused past it, whose lease
another run took, must not send)."""


class Sender(Protocol):
    """What the caller needs of a transport: send one request, get (status, headers, body).

    A caller given per-call timeouts (:meth:`Caller.derive`) passes them as ``timeouts=``.
    """

    async def send(self, request: Request) -> Response: ...


class Caller:
    """Sends requests through the limiter, the retry policy and the transport.

    Args:
        transport: Sends one request (``AiohttpTransport``, or a fake in tests).
        limiter: Every attempt takes a token of it first.
        retry: Decides whether and when a failed attempt is tried again.
        clock: Measures the time a request has taken and sleeps between retries.
        adopt_limit: Take the limit of ``X-RateLimit-Limit`` into the token bucket
            (the plan was not given). A limit below the bucket's is adopted in any
            case, with a warning once: a wrong plan then costs at most a few 429s.
        gate: Held while a creation waits for its token; the poller yields to it, so
            that submissions come first on a plan they saturate.
    """

    def __init__(
        self,
        transport: Sender,
        *,
        limiter: Limiter,
        retry: RetryPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        adopt_limit: bool = False,
        gate: Gate | None = None,
    ) -> None:
        self.transport = transport
        self.gate = gate or Gate()
        self.limiter = limiter
        self.retry = retry if retry is not None else RetryPolicy()
        self.clock = clock
        self.stats = ClientStats()
        self.reach = Reach(clock)
        """Whether the service answers (a batch stops when it has not for long)."""
        self._adopt_limit = adopt_limit
        self._warned_limit = False
        # The X-RateLimit-Limit last followed, and the bucket's rate after it: while
        # neither changes, following it again would change nothing.
        self._limit_text: str | None = None
        self._limit_rate: RateLimit | None = None
        # The last response's Date and when it came (monotonic): the service's own clock,
        # which reconciliation compares a project's createdAt with (never ours).
        self._date_seen: tuple[str, float] | None = None
        self.timeouts: Any = None
        """Per-attempt timeouts given to the transport's ``send``; None: the transport's own."""

    def derive(self, *, retry: RetryPolicy | None = None, timeouts: Any = None) -> Caller:
        """A caller sharing this one's transport, limiter, gate, stats and reach, with
        another retry policy and/or per-attempt timeouts (``client.with_options``)."""
        derived = copy.copy(self)
        if retry is not None:
            derived.retry = retry
        if timeouts is not None:
            derived.timeouts = timeouts
        return derived

    def __repr__(self) -> str:
        return f"<Caller {self.limiter!r}>"

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        creation: CreationRequest | None = None,
    ) -> Coroutine[Any, Any, Envelope]:
        """Send a request and return the decoded envelope (``await caller.call(...)``).

        The request is built at once (a :class:`~asyncclient.errors.ValidationError` is
        raised then); what is awaited is :meth:`send` itself, a coroutine less a call.

        Args:
            method: HTTP method.
            path: Path beginning with ``/v1``.
            params: Query parameters (``None`` values are left out).
            json: A JSON-ready body.
            creation: The creation request a POST carries: a failure that leaves open
                whether the service processed it raises :class:`AmbiguousCreationError`
                and is never retried.

        Raises:
            APIError: What the service or the connection answered, after the retries.
        """
        request = build_request(method, path, params=params, json_body=json)
        return self.send(request, creation=creation)

    async def send(
        self, request: Request, *, creation: CreationRequest | None = None, span: Any = None
    ) -> Envelope:
        """Send ``request`` with the limiter, the retry policy and the ambiguity rule.

        When the application traces (OpenTelemetry, see ``asyncclient.http.tracing``) the
        request is a span; ``span`` is that span, given by the traced way in.
        """
        if span is None and (tracer := otel_tracer()) is not None:
            return await self._traced(tracer, request, creation)
        request, sent_id = with_request_id(request)  # one id, every attempt
        started = self.clock.monotonic()
        sent_at = self.clock.now() if creation is not None else None  # only an ambiguity says it
        service_at = self.service_now() if creation is not None else None
        attempt = 0
        stats = self.stats
        stats.requests += 1
        while True:
            attempt += 1
            stats.attempts += 1
            if creation is None:
                waited = await self.limiter.acquire()
            else:
                with self.gate.foreground():  # polling waits while a creation does
                    waited = await self.limiter.acquire()
            if creation is not None and (guard := SEND_GUARD.get()) is not None:
                guard()  # raises: not a byte left
            if span is not None:
                span.set_attribute("asyncclient.attempts", attempt)
                span.add_event("attempt", {"limiter_wait_ms": waited * 1000})
            try:
                if _debug():
                    return await self._logged_attempt(request, sent_id, attempt, waited, creation)
                # The attempt, inline (a coroutine less a call); _logged_attempt is the same.
                return self._answered(request, await self._attempt(request), sent_id, creation)
            except APIError as exc:
                if exc.request_id is None:  # no reply named one: the id sent
                    exc.request_id = sent_id
                self.reach.failed(exc)
                if isinstance(exc, RateLimitError):
                    stats.rate_limited += 1
                    self.limiter.pause(exc.retry_after if exc.retry_after is not None else 1.0)
                delay = self.retry(attempt, exc, elapsed=self.clock.monotonic() - started)
                if delay is None:
                    if creation is not None and is_ambiguous(exc):
                        raise ambiguous(request, creation, exc, sent_at, service_at) from exc
                    raise
                stats.retries += 1
                logger.info(
                    "%s %s failed (%s); retry %d in %.2f s, request id %s",
                    request.method,
                    request.path,
                    type(exc).__name__,
                    attempt,
                    delay,
                    exc.request_id,
                    extra={"request_id": exc.request_id, "attempt": attempt},
                )
                await self.clock.sleep(delay)

    async def _traced(
        self, tracer: Any, request: Request, creation: CreationRequest | None
    ) -> Envelope:
        """:meth:`send` in a span of its own (kind CLIENT, named by the method)."""
        attributes = {"http.request.method": request.method, "url.path": request.path}
        with tracer.start_as_current_span(
            request.method,
            kind=otel_client_kind(),
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                envelope = await self.send(request, creation=creation, span=span)
            except BaseException as exc:
                status = getattr(exc, "status_code", None)
                if status is not None:
                    span.set_attribute("http.response.status_code", status)
                otel_mark_error(span, exc)
                raise
            span.set_attribute("http.response.status_code", envelope.status)
            return envelope

    def _attempt(self, request: Request) -> Coroutine[Any, Any, Response]:
        """The transport's send of one attempt, with this caller's timeouts if it has any."""
        if self.timeouts is None:
            return self.transport.send(request)
        send: Any = self.transport.send
        return send(request, timeouts=self.timeouts)  # type: ignore[no-any-return]

    def _answered(
        self, request: Request, response: Response, sent_id: str, creation: CreationRequest | None
    ) -> Envelope:
        """Follow a reply's headers and decode it; the envelope, or the error it is, carries
        the request's id (the service's when it names one, else the one sent)."""
        request_id = service_request_id(response.headers) or sent_id
        self._follow_headers(response.headers)
        try:
            envelope = decode_envelope(request, response)
            if creation is not None:
                require_created_ids(envelope)
        except APIError as exc:
            exc.request_id = request_id
            raise
        envelope.request_id = request_id
        if (sink := RESPONSES.get()) is not None:  # a raw-response call
            sink.add(response, request_id)
        self.reach.heard()
        return envelope

    async def _logged_attempt(
        self,
        request: Request,
        sent_id: str,
        attempt: int,
        waited: float,
        creation: CreationRequest | None,
    ) -> Envelope:
        """One attempt, with its DEBUG line: method, path, status, time, attempt, the time
        spent waiting for the limiter and the request's id (the service's when it names
        one, else the one sent; never the key). The same values travel as the record's
        attributes (``extra``) for structured logs."""
        started = self.clock.monotonic()  # the log line's duration, on the client's clock
        status: int | str = "error"
        request_id = sent_id
        try:
            response = await self._attempt(request)
            status = response.status
            request_id = service_request_id(response.headers) or sent_id
            return self._answered(request, response, sent_id, creation)
        except BaseException as exc:
            if status == "error":
                status = type(exc).__name__
            raise
        finally:
            elapsed = (self.clock.monotonic() - started) * 1000
            logger.debug(
                "%s %s -> %s in %.1f ms (attempt %d, %.1f ms waiting for the limiter), "
                "request id %s",
                request.method,
                request.path,
                status,
                elapsed,
                attempt,
                waited * 1000,
                request_id,
                extra={
                    "http_method": request.method,
                    "http_path": request.path,
                    "http_status": status,
                    "duration_ms": elapsed,
                    "attempt": attempt,
                    "limiter_wait_ms": waited * 1000,
                    "request_id": request_id,
                },
            )

    def service_now(self) -> datetime | None:
        """A lower bound of the service's clock now, from the ``Date`` of its last
        response (plus the time since, on this client's monotonic clock); None before
        any response with a readable ``Date``.

        A ``Date`` is whole seconds, never ahead of the service's clock, and the service's
        clock runs at least as fast as ours since: the bound never passes the service's
        time. Reconciliation compares a project's ``createdAt`` with it, not with ours.
        """
        seen = self._date_seen
        if seen is None:
            return None
        date = http_date(seen[0])
        if date is None:
            return None
        return date + timedelta(seconds=max(0.0, self.clock.monotonic() - seen[1]))

    def _follow_headers(self, headers: Mapping[str, str]) -> None:
        """Take the rate-limit headers in; never raises (a paid creation keeps its answer).

        A limiter that reads ``reset_after`` only once none remain (the token bucket:
        :attr:`Limiter.observes_every_header` is False) has only what can change it
        parsed: the limit when its text (or the limiter's rate) changed since the last
        response, the remaining count always (a plain integer), and ``Date`` and
        ``X-RateLimit-Reset`` only once none remain. It ends up as
        :func:`parse_rate_limit` read in full would leave it. Any other limiter gets
        every field of every response.
        """
        date = headers.get("Date")
        if date is not None:
            self._date_seen = (date, self.clock.monotonic())
        try:
            limiter = self.limiter
            if observes_every_header(limiter):
                info = parse_rate_limit(headers)
                self._adopt(info.limit)
                limiter.observe(info.remaining, info.reset_after)
                return
            limit = headers.get("X-RateLimit-Limit")
            rate = limiter.rate
            if limit is not None and (limit != self._limit_text or rate is not self._limit_rate):
                self._adopt(parse_limit(limit))
                self._limit_text, self._limit_rate = limit, limiter.rate  # after any adoption
            remaining = parse_remaining(headers.get("X-RateLimit-Remaining"))
            if remaining is not None:
                limiter.observe(remaining, parse_reset_after(headers) if remaining <= 0 else None)
        except Exception:  # the parsers are total; this guards a bug, not the service
            logger.warning("rate-limit headers not followed", exc_info=True)

    def _adopt(self, limit: int | None) -> None:
        """Follow ``X-RateLimit-Limit``: always when it is lower than the limiter's, and
        when higher only if no plan was given; a limiter may keep its own limit."""
        configured = self.limiter.rate.per_minute
        if not limit or limit <= 0 or limit == configured:
            return
        if not self._adopt_limit and limit > configured:
            return  # a configured plan is never raised by a header
        if not adopt_into(self.limiter, plan_for_limit(limit)):
            return
        if not self._adopt_limit and not self._warned_limit:
            self._warned_limit = True
            logger.warning(
                "the service allows %d requests a minute, fewer than the configured %g: "
                "following the service (check the plan given to the client)",
                limit,
                configured,
            )
