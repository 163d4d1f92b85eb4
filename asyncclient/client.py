"""AsyncClient: configuration, lifecycle, and the one path every request takes."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import ssl
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

import aiohttp
import attrs

from asyncclient._protocol import (
    Envelope,
    Request,
    build_request,
    decode_envelope,
    parse_rate_limit,
)
from asyncclient._transport import AiohttpTransport, Timeouts
from asyncclient._version import __version__
from asyncclient.batch import Batch, BatchProgress, Item, batch_id_of, items_from_requests
from asyncclient.errors import AmbiguousCreationError, APIError, RateLimitError
from asyncclient.jobs import DEFAULT_WAIT_TIMEOUT, Jobs
from asyncclient.models.requests import CreationRequest, TemplateGenerationRequest
from asyncclient.ratelimit import (
    Limiter,
    Plan,
    RateLimit,
    TokenBucket,
    plan_for_limit,
    resolve_rate_limit,
)
from asyncclient.resources.integrations import Integrations
from asyncclient.resources.projects import Projects
from asyncclient.resources.schedule import Schedule
from asyncclient.resources.social import Social
from asyncclient.resources.templates import Templates
from asyncclient.resources.videos import Videos
from asyncclient.retry import RetryPolicy, is_ambiguous

__all__ = ["ENV_API_KEY", "ENV_BASE_URL", "AsyncClient", "ClientStats"]

logger = logging.getLogger("asyncclient")

ENV_API_KEY = "ASYNCCLIENT_API_KEY"
ENV_BASE_URL = "ASYNCCLIENT_BASE_URL"

_NO_BASE_URL = (
    "no base URL: pass base_url=... or set the ASYNCCLIENT_BASE_URL environment variable "
    "(the service's address is in your dashboard). To try the SDK without an account, start "
    "the emulator with `asyncclient emulator` and use the URL and key it prints."
)
_NO_API_KEY = (
    "no API key: pass api_key=... or set the ASYNCCLIENT_API_KEY environment variable "
    "(keys are made in the service's dashboard under settings, API keys)."
)


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(url: str) -> str:
    """Return ``url`` without a trailing slash, or raise ``ValueError``.

    ``https://`` is required, except ``http://`` to a loopback host (the emulator).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL with a host, got {url!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise ValueError(
            f"base_url {url!r} is plain http to a non-loopback host: the API key would "
            "travel unencrypted; use https:// (http:// is allowed only for loopback hosts)"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"base_url must not have a query or fragment, got {url!r}")
    return url.rstrip("/")


class ClientStats:
    """What a client has sent so far (the demo's summary and benchmarks read it)."""

    __slots__ = ("attempts", "rate_limited", "requests", "retries")

    def __init__(self) -> None:
        self.requests = 0
        """Logical requests (each retried request counts once)."""
        self.attempts = 0
        """HTTP attempts, retries included."""
        self.retries = 0
        self.rate_limited = 0
        """429 answers received."""

    def __repr__(self) -> str:
        return (
            f"<ClientStats requests={self.requests} attempts={self.attempts} "
            f"retries={self.retries} 429s={self.rate_limited}>"
        )


def _with_name(request: CreationRequest, name: str) -> CreationRequest:
    """The request with a name (a template request's name is its title: left alone)."""
    if isinstance(request, TemplateGenerationRequest):
        return request
    renamed: CreationRequest = attrs.evolve(cast(Any, request), name=name)
    return renamed


class AsyncClient:
    """The asyncio client of the video-generation service.

    Build it anywhere (a notebook cell, a module); its aiohttp session is made
    lazily inside the running loop on the first request. Use it with
    ``async with`` or call :meth:`aclose`.

    Args:
        api_key: The key; falls back to ``ASYNCCLIENT_API_KEY``.
        base_url: The service's address; falls back to ``ASYNCCLIENT_BASE_URL``.
            ``https://`` is required except for loopback hosts.
        plan: The subscription plan (``Plan``, its name, or a custom
            ``RateLimit``) that sizes the client's token bucket. When omitted,
            the bucket starts at the Free plan's limit and adopts the limit the
            service announces in ``X-RateLimit-Limit``.
        session: A caller's ``aiohttp.ClientSession`` to use; never closed by us.
        timeouts: Per-attempt timeouts (connect 10 s, read 60 s, total 120 s);
            time spent waiting for the rate limiter is not counted.
        ssl_context: TLS settings for the session we create (e.g. a private CA).
        retry: When to retry; ``RetryPolicy()`` by default, ``RetryPolicy(attempts=1)``
            never retries. Creation requests are retried only when the service
            cannot have processed them.
        limiter: A limiter to use instead of the plan's token bucket, e.g. the
            Redis-backed one shared by many processes.

    Raises:
        ValueError: No API key or base URL could be found, or the URL is unsafe.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        plan: Plan | RateLimit | str | None = None,
        session: aiohttp.ClientSession | None = None,
        timeouts: Timeouts | None = None,
        ssl_context: ssl.SSLContext | None = None,
        retry: RetryPolicy | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(ENV_API_KEY)
        if not key:
            raise ValueError(_NO_API_KEY)
        url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL)
        if not url:
            raise ValueError(_NO_BASE_URL)
        self._base_url = check_base_url(url)
        rate = resolve_rate_limit(plan)
        self._adopt_limit = rate is None and limiter is None
        self._limiter: Limiter = limiter or TokenBucket(rate or Plan.FREE.rate_limit)
        self._retry = retry if retry is not None else RetryPolicy()
        self._sleep = asyncio.sleep  # between retries; tests replace it
        self.stats = ClientStats()
        """Counts of requests, attempts, retries and 429s."""
        self._transport = AiohttpTransport(
            self._base_url,
            key,
            session=session,
            timeouts=timeouts,
            ssl_context=ssl_context,
            user_agent=f"asyncclient/{__version__}",
        )
        self.videos = Videos(self)
        """Read and list videos (spec 4.10, 4.11)."""
        self.projects = Projects(self)
        """Create videos in the nine formats (spec 4.1 to 4.9)."""
        self.templates = Templates(self)
        """List and read templates (spec 4.19, 4.20)."""
        self.schedule = Schedule(self)
        """Schedule posts to social platforms (spec 4.12, 4.13)."""
        self.integrations = Integrations(self)
        """Connected social-platform accounts (spec 4.14)."""
        self.social = Social(self)
        """Social research (spec 4.15 to 4.18)."""
        self.jobs = Jobs(self)
        """Rebuild jobs from stored ids; the shared poller (``client.jobs.poller``)."""

    def __repr__(self) -> str:
        return f"<AsyncClient {self._base_url}>"

    @property
    def base_url(self) -> str:
        """The service's address, without a trailing slash."""
        return self._base_url

    @property
    def limiter(self) -> Limiter:
        """The rate limiter every request of this client goes through."""
        return self._limiter

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop polling and close the session the client made (a caller's stays open)."""
        await self.jobs.poller.aclose()
        await self._transport.aclose()

    def batch(
        self,
        requests: Iterable[CreationRequest],
        *,
        spacing: float = 1.0,
        concurrency: int = 4,
        journal: str | os.PathLike[str] | None = None,
        on_progress: Callable[[BatchProgress], None] | None = None,
        budget: int | None = None,
        cost_per_row: int | None = None,
        wait_timeout: float | None = DEFAULT_WAIT_TIMEOUT,
    ) -> Batch:
        """Create many videos of any format: checked, spaced, bounded, journaled.

        A request without a name is given one (``batch-<id>-<row>``): names are how
        an interrupted batch finds what the service made. See
        ``client.templates.generate_many`` for the arguments.

        Returns:
            A :class:`Batch`; ``await`` it or ``async for`` it.
        """
        listed = list(requests)
        bid = batch_id_of("requests", len(listed))
        named = [
            r if getattr(r, "name", None) else _with_name(r, f"batch-{bid[:6]}-{i}")
            for i, r in enumerate(listed)
        ]

        async def prepare() -> list[Item]:
            return items_from_requests(named)

        return Batch(
            self,
            prepare,
            batch_id=bid,
            spacing=spacing,
            concurrency=concurrency,
            journal=journal,
            on_progress=on_progress,
            budget=budget,
            cost_per_row=cost_per_row,
            wait_timeout=wait_timeout,
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        """Call any endpoint, e.g. the lists of spec 4.21 whose shapes are not shown.

        Same auth, limits and error handling as the typed methods.

        Args:
            method: HTTP method.
            path: Path beginning with ``/v1``.
            params: Query parameters (``None`` values are left out).
            json: A JSON-ready body.

        Returns:
            The envelope's ``data`` (or the whole envelope when it has none).
        """
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        envelope = await self._call(method, path, params=params, json=json)
        return envelope.get("data", envelope)

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        creation: Any = None,
    ) -> Envelope:
        """Send a request and return the decoded envelope (resources use this).

        ``creation`` is the creation request a POST carries: its failures that
        leave open whether the service processed it raise AmbiguousCreationError.
        """
        request = build_request(method, path, params=params, json_body=json)
        return await self._send(request, creation=creation)

    async def _send(self, request: Request, *, creation: Any = None) -> Envelope:
        """Send with the limiter, the retry policy and the ambiguity rule."""
        started = time.monotonic()
        sent_at = datetime.now(timezone.utc)
        attempt = 0
        self.stats.requests += 1
        while True:
            attempt += 1
            self.stats.attempts += 1
            await self._limiter.acquire()
            try:
                return await self._attempt(request, attempt)
            except APIError as exc:
                if isinstance(exc, RateLimitError):
                    self.stats.rate_limited += 1
                    self._limiter.pause(exc.retry_after if exc.retry_after is not None else 1.0)
                delay = self._retry(attempt, exc, elapsed=time.monotonic() - started)
                if delay is None:
                    if creation is not None and is_ambiguous(exc):
                        raise AmbiguousCreationError(
                            f"the service may or may not have created this {creation.FORMAT} "
                            f"project ({exc}); not resent, to avoid paying twice: use "
                            "client.projects.reconcile(error) to look for it",
                            request=creation,
                            sent_at=sent_at,
                            cause=exc,
                            method=request.method,
                            path=request.path,
                        ) from exc
                    raise
                self.stats.retries += 1
                logger.info(
                    "%s %s failed (%s); retry %d in %.2f s",
                    request.method,
                    request.path,
                    type(exc).__name__,
                    attempt,
                    delay,
                )
                await self._sleep(delay)

    async def _attempt(self, request: Request, attempt: int) -> Envelope:
        started = time.perf_counter()
        status: int | str = "error"
        try:
            response = await self._transport.send(request)
            status = response.status
            self._follow_headers(response.headers)
            return decode_envelope(request, response)
        finally:
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug(
                    "%s %s -> %s in %.1f ms (attempt %d)",
                    request.method,
                    request.path,
                    status,
                    (time.perf_counter() - started) * 1000,
                    attempt,
                )

    def _follow_headers(self, headers: Any) -> None:
        info = parse_rate_limit(headers)
        bucket = self._limiter if isinstance(self._limiter, TokenBucket) else None
        if self._adopt_limit and bucket and info.limit and info.limit != bucket.rate.per_minute:
            bucket.set_rate(plan_for_limit(info.limit))
        self._limiter.observe(info.remaining, info.reset_after)
