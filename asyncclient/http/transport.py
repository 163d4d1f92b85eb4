"""The I/O adapter: send a :class:`Request`, return ``(status, headers, body)``.

The only module of the core that imports aiohttp. No retries, no status
checks, no JSON here; redirects are never followed (aiohttp would forward the
``x-api-key`` header to another origin). aiohttp errors become ours, with
``request_sent`` telling whether any byte of the request left the client.

The per-request path does no more than a hand-written aiohttp GET: the headers
of a built request are made once per transport; whether a request went out is told by
the session's request class (:class:`_TrackedRequest`, through aiohttp's
``request_class``) rather than by trace hooks, which aiohttp would run five times a
request. aiohttp's own connection code and its ``connect`` timeout are used as is.

The ``total`` and ``read`` timeouts of :meth:`AiohttpTransport.send` are kept by one
loop timer per transport for every attempt in flight (``attempts.Deadlines``, on loop
time: they are I/O deadlines),
not by aiohttp's three timers an attempt, which cost a request about as much CPU as
the rest of the SDK's own code. An attempt past a deadline is cancelled and the
cancellation becomes :class:`~asyncclient.errors.APITimeoutError`, as aiohttp and
``asyncio.timeout`` do it.

:meth:`AiohttpTransport.stream_get` fetches a signed download URL (spec 2.3) in
chunks on the same session: it sends no API key, so it follows redirects.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import os
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.connector import Connection
from attrs import frozen
from multidict import CIMultiDict, CIMultiDictProxy

from asyncclient.errors import APIConnectionError, APIResponseValidationError, APITimeoutError
from asyncclient.http.attempts import Attempt, Deadlines, seconds_of, timed_out
from asyncclient.http.forks import keep, track
from asyncclient.http.network import Network
from asyncclient.http.protocol import (
    JSON_HEADERS,
    MAX_BODY_BYTES,
    Request,
    Response,
    Stream,
    redact_url,
    response_of,
)

if TYPE_CHECKING:
    from asyncclient.models.videos import Video

__all__ = ["AiohttpTransport", "ClientSession", "Stream", "Timeouts", "redact_url"]

ClientSession = aiohttp.ClientSession
"""The session type a caller may hand to ``AsyncClient(session=...)``."""


@frozen(kw_only=True)
class Timeouts:
    """Per-attempt timeouts in seconds; time spent waiting for the rate limiter is not counted.

    Attributes:
        connect: To get a connection (from the pool or a new one), TLS included.
        read: Between two reads of the response (``None`` for no limit).
        total: For one whole attempt (``None`` for no limit).
    """

    connect: float | None = 10.0
    read: float | None = 60.0
    total: float | None = 120.0

    def to_aiohttp(self) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(total=self.total, connect=self.connect, sock_read=self.read)


_SENDING: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "asyncclient_sending", default=None
)
"""The state of the request the current task is sending (set around ``session.request``)."""


class _TrackedRequest(aiohttp.ClientRequest):
    """aiohttp's request, noting in :data:`_SENDING` that it is being written.

    aiohttp calls ``send`` once it holds a connection, right before writing the
    request line: anything that fails earlier (connecting, the pool) sent nothing.
    """

    async def send(self, conn: Connection) -> aiohttp.ClientResponse:
        state = _SENDING.get()
        if state is not None:
            state.started_sending()
        return await super().send(conn)


class AiohttpTransport:
    """Sends requests over one ``aiohttp.ClientSession``.

    The session is created lazily, inside the running loop, on first use. A
    session given by the caller is used as is and never closed here; without
    our request class on it, a failure after connecting counts as possibly sent.

    A response body is capped while it streams (``max_body_size``, 32 MiB by default):
    a ``Content-Length`` over it is refused unread, and the bytes received (compressed)
    and read (inflated) are both counted, so a small gzip body that inflates to
    gigabytes fails early with :class:`~asyncclient.errors.APIResponseValidationError`
    naming the limit, the memory held staying about twice the cap at most.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        session: aiohttp.ClientSession | None = None,
        timeouts: Timeouts | None = None,
        ssl_context: ssl.SSLContext | None = None,
        ca_bundle: str | os.PathLike[str] | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        user_agent: str = "asyncclient",
        max_body_size: int = MAX_BODY_BYTES,
    ) -> None:
        if max_body_size < 1:
            raise ValueError("max_body_size: must be at least 1 byte")
        network = Network.of(
            ssl_context, ca_bundle, proxy, trust_env, caller_session=session is not None
        )
        self._proxies, self._ssl = network.proxies, network.tls
        # Read once: aiohttp's trust_env reads the environment in a thread each request.
        self._proxy, self._proxy_headers = self._proxies.for_url(base_url)
        self._max_body = max_body_size
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._session = session
        self._owns_session = session is None
        self._timeouts = timeouts or Timeouts()
        self._connect_timeout = _connect_only(self._timeouts)
        self._deadlines: Deadlines | None = None  # made in the running loop, on first use
        self._user_agent = user_agent
        self._closed = False
        # A built request's headers (JSON_HEADERS) with ours: read-only, shared by every send.
        self._json_headers = self._headers(JSON_HEADERS)

    def __repr__(self) -> str:
        return f"<AiohttpTransport {self._base_url}>"

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def timeouts(self) -> Timeouts:
        return self._timeouts

    _tracked = False  # known to forks.track: a forked child lets go of the session
    _inherited = False  # a caller's session, used before os.fork(), in the child

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("the client is closed")
        if not self._tracked:
            self._tracked = True
            track(self)
        if self._session is None:
            connector = aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else True)
            self._session = aiohttp.ClientSession(
                connector=connector, request_class=_TrackedRequest
            )
        elif self._inherited:
            raise RuntimeError(
                "the session given to AsyncClient(session=...) was used before os.fork(): "
                "it belongs to the parent; make it (or the client) in the child"
            )
        return self._session

    def _after_fork(self) -> None:
        """In a forked child: our session (the parent's connections, loop) is left
        alone and a new one made on first use; a caller's session cannot be remade."""
        if self._owns_session:
            keep(self._session, self._deadlines)
            self._session = self._deadlines = None
        elif self._session is not None:
            self._inherited = True

    def _headers(self, given: Mapping[str, str]) -> CIMultiDictProxy[str]:
        headers = CIMultiDict(given)
        headers["x-api-key"] = self._api_key
        headers.setdefault("User-Agent", self._user_agent)
        return CIMultiDictProxy(headers)

    async def send(self, request: Request, *, timeouts: Timeouts | None = None) -> Response:
        """Send one attempt of ``request``.

        Raises:
            APITimeoutError: No response in time.
            APIConnectionError: Connection refused, reset or dropped.
            APIResponseValidationError: The body passed ``max_body_size`` (refused
                unread when its ``Content-Length`` says so; else as soon as it does).
        """
        session = self._get_session()
        given = request.headers
        headers = self._json_headers if given is JSON_HEADERS else self._headers(given)
        limits = self._timeouts if timeouts is None else timeouts
        total, read = seconds_of(limits.total), seconds_of(limits.read)
        state = self._start(total, read)
        token = _SENDING.set(state)
        try:
            async with session.request(
                request.method,
                self._base_url + request.path,
                params=request.params or None,
                data=request.body,
                headers=headers,
                allow_redirects=False,
                proxy=self._proxy,
                proxy_headers=self._proxy_headers,
                timeout=self._aiohttp_timeout(state, timeouts),
            ) as resp:
                body = await _read_body(resp, state, self._max_body)
                if body is None:
                    resp.close()  # the rest is never read: the connection goes with it
                    raise _too_large(request, resp, self._max_body)
                return response_of(resp.status, resp.headers, body)
        except (asyncio.CancelledError, asyncio.TimeoutError, aiohttp.ClientError) as exc:
            sent = self._sent(state)
            if timed_out(state):  # our cancel, whatever aiohttp made of it
                raise APITimeoutError(
                    "request timed out", method=request.method, path=request.path, request_sent=sent
                ) from None
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise _connection_error(
                exc, method=request.method, path=request.path, sent=sent
            ) from exc
        finally:
            _SENDING.reset(token)
            if self._deadlines is not None:
                self._deadlines.discard(state)

    def _aiohttp_timeout(self, state: Attempt, timeouts: Timeouts | None) -> aiohttp.ClientTimeout:
        """What aiohttp is to time: ``connect``, or all of it for an attempt we do not watch."""
        if state.task is None:
            return (timeouts or self._timeouts).to_aiohttp()
        return self._connect_timeout if timeouts is None else _connect_only(timeouts)

    def _start(self, total: float, read: float) -> Attempt:
        """The state of a new attempt, its deadlines watched (when it has any).

        A caller's session has aiohttp's own request class, which does not say when the
        request is written (when ``read`` starts): aiohttp then keeps every timeout.
        """
        if not (total or read) or not self._owns_session:
            return Attempt(None, math.inf, 0.0)
        task = asyncio.current_task()
        watch = self._deadlines
        if watch is None:
            watch = self._deadlines = Deadlines(asyncio.get_running_loop())
        now = watch.time()
        state = Attempt(task, now + total if total else math.inf, read)
        if task is not None:
            cancelling = getattr(task, "cancelling", None)  # as timed_out reads it
            if cancelling is not None:
                state.cancelling = cancelling()
            watch.add(state, now + min(total or math.inf, read or math.inf))
        return state

    @contextlib.asynccontextmanager
    async def stream_get(
        self, url: str, *, chunk_size: int = 64 * 1024, timeouts: Timeouts | None = None
    ) -> AsyncIterator[Stream]:
        """Open a GET of an absolute URL without the API key; read it chunk by chunk.

        For signed download URLs (spec 2.3), which may be on another origin: no
        ``x-api-key`` is sent, so redirects are followed (storage often redirects).
        No rate limiter and no retries here. ``Accept-Encoding: identity`` keeps
        ``Content-Length`` equal to the bytes read. The ``total`` timeout does not
        apply (a large file takes long); ``connect`` and ``read`` do.

        Args:
            url: The absolute URL.
            chunk_size: Largest chunk to yield, in bytes.
            timeouts: Instead of the transport's.

        Yields:
            A :class:`Stream`; the connection is released when the block exits.

        Raises:
            ValueError: A caller's session sends ``x-api-key`` by default.
            APITimeoutError: No response or no data in time.
            APIConnectionError: Connection refused, reset or dropped.
        """
        session = self._get_session()
        if "x-api-key" in session.headers:
            raise ValueError("the session sends x-api-key by default; it must not go to a file URL")
        where = redact_url(url)
        limits = timeouts or self._timeouts
        timeout = aiohttp.ClientTimeout(connect=limits.connect, sock_read=limits.read)
        headers = {"User-Agent": self._user_agent, "Accept-Encoding": "identity"}
        proxy, proxy_headers = self._proxies.for_url(url)  # the same for its redirects
        try:
            async with session.get(
                url,
                headers=headers,
                allow_redirects=True,
                timeout=timeout,
                proxy=proxy,
                proxy_headers=proxy_headers,
            ) as resp:
                chunks = _chunks(resp, chunk_size, where)
                try:
                    yield Stream(resp.status, resp.headers, chunks)
                finally:
                    await chunks.aclose()
        except (asyncio.TimeoutError, aiohttp.ClientError) as exc:
            raise _connection_error(exc, method="GET", path=where) from exc

    def _sent(self, state: Attempt) -> bool:
        # A caller's session has aiohttp's own request class: we cannot know, assume sent.
        return state.sent if self._owns_session else True

    async def download_video(
        self,
        read: Callable[[str], Awaitable[Video]],
        video: str | Video,
        path: str | os.PathLike[str],
        *,
        progress: Callable[[int, int | None], None] | None = None,
        chunk_size: int = 64 * 1024,
    ) -> Path:
        """Download a video's signed file URL to ``path`` on this session (the
        ``Downloads`` that ``client.videos`` takes); see ``client.videos.download``."""
        from asyncclient.http.download import download_video  # loads on the first download

        return await download_video(
            read, self, video, path, progress=progress, chunk_size=chunk_size
        )

    async def aclose(self) -> None:
        """Close the session if we created it; a caller's session is left open."""
        self._closed = True
        if self._deadlines is not None:
            self._deadlines.close()
        session, self._session = self._session, None
        if session is not None and self._owns_session and not session.closed:
            await session.close()


def _connection_error(
    exc: BaseException, *, method: str, path: str, sent: bool = True
) -> APIConnectionError:
    """Map an aiohttp error (or a timeout) to ours.

    ``sent`` says whether bytes of the request had left; a refused connection
    never sent any.
    """
    if isinstance(exc, asyncio.TimeoutError):
        return APITimeoutError("request timed out", method=method, path=path, request_sent=sent)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return APIConnectionError(
            f"cannot connect: {exc.os_error or exc}", method=method, path=path, request_sent=False
        )
    return APIConnectionError(
        f"connection error: {type(exc).__name__}: {exc}",
        method=method,
        path=path,
        request_sent=sent,
    )


async def _chunks(
    resp: aiohttp.ClientResponse, chunk_size: int, where: str
) -> AsyncGenerator[bytes, None]:
    """The body of ``resp`` in chunks of at most ``chunk_size`` bytes, errors mapped."""
    try:
        async for chunk in resp.content.iter_chunked(chunk_size):
            yield chunk
    except (asyncio.TimeoutError, aiohttp.ClientError) as exc:
        raise _connection_error(exc, method="GET", path=where) from exc


def _connect_only(timeouts: Timeouts) -> aiohttp.ClientTimeout:
    """What aiohttp keeps of an attempt's timeouts: getting a connection (the rest is ours)."""
    return aiohttp.ClientTimeout(total=None, connect=timeouts.connect, sock_read=None)


def _too_large(
    request: Request, resp: aiohttp.ClientResponse, limit: int
) -> APIResponseValidationError:
    if _declared_over(resp, limit):
        how = f"Content-Length {resp.headers['Content-Length']}: refused unread"
    else:
        how = "reading stopped there"
    return APIResponseValidationError(
        f"response body is larger than the client's max_body_size of {limit} bytes ({how})",
        status_code=resp.status,
        errors=[f"body: larger than max_body_size ({limit} bytes)"],
        method=request.method,
        path=request.path,
    )


def _declared_over(resp: aiohttp.ClientResponse, limit: int) -> bool:
    """Whether ``Content-Length`` announces more than ``limit`` bytes (the raw body)."""
    declared = resp.headers.get("Content-Length")
    if declared is None:
        return False
    try:
        return int(declared) > limit
    except ValueError:  # aiohttp refuses a bad one first; belt and braces
        return False


async def _read_body(resp: aiohttp.ClientResponse, state: Attempt, limit: int) -> bytes | None:
    """The whole body, or None once it passes ``limit`` bytes, raw or decompressed.

    A ``Content-Length`` over the limit is refused before any byte is read. aiohttp
    inflates a compressed body as it arrives, a bounded piece at a time; the inflated
    bytes are counted as they are read and the raw ones as aiohttp received them, so
    the body held never passes ``limit`` by more than a chunk, whatever it inflates to.
    The read timer starts again at the head and at each chunk.
    """
    if _declared_over(resp, limit):
        return None
    content = resp.content
    if state.read:
        state.received(state.task.get_loop().time() if state.task else 0.0)
    chunk = await content.readany()
    size = len(chunk)
    if content.at_eof() and size <= limit:  # the usual body: all there in one chunk
        return chunk
    chunks = [chunk]
    while chunk:
        if size > limit or content.total_raw_bytes > limit:
            return None
        if state.read and state.task is not None:
            state.received(state.task.get_loop().time())
        chunk = await content.readany()
        size += len(chunk)
        chunks.append(chunk)
    return None if size > limit else b"".join(chunks)
