"""Client: the synchronous client, the async one run in an event loop of its own.

``Client`` takes the arguments and environment variables of
:class:`~asyncclient.AsyncClient` (``session`` aside), builds one, and runs each call in
an event loop of its own, in a daemon thread started on the first call
(:class:`LoopThread`, an anyio blocking portal). Any thread may call, many at once; a
thread whose own loop runs (a notebook cell, an async framework) blocks only for the
call. ``close()`` (or leaving ``with``) closes the async client and stops the loop's
thread.

A client used before ``os.fork()`` works in the child (a server that loads the app,
and maybe calls the service, before it forks its workers): the child starts a loop
thread of its own and a new async client from the same arguments.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from asyncclient.client import AsyncClient, batch_status, cached
from asyncclient.http.caller import ClientStats
from asyncclient.http.forks import keep, track
from asyncclient.http.protocol import MAX_BODY_BYTES
from asyncclient.sync._loop import LoopThread
from asyncclient.sync.batch import SyncBatch
from asyncclient.sync.faces import (
    SyncIntegrations,
    SyncJobs,
    SyncProjects,
    SyncSchedule,
    SyncSocial,
    SyncTemplates,
    SyncVideos,
    SyncWebhooks,
)
from asyncclient.sync.raw import SyncRawResponses

if TYPE_CHECKING:
    import ssl

    from typing_extensions import Unpack

    from asyncclient._clock import Clock
    from asyncclient.awaiting.poller import PollPolicy
    from asyncclient.batch.rows import BatchOptions
    from asyncclient.batch.runner import Batch
    from asyncclient.batch.status import BatchStatus
    from asyncclient.http.options import CallOptions
    from asyncclient.http.transport import Timeouts
    from asyncclient.models.requests import CreationRequest
    from asyncclient.ratelimit import Limiter, Plan, RateLimit
    from asyncclient.retry import RetryPolicy

__all__ = ["Client"]

_numbers = itertools.count(1)
_NAMESPACES = (
    "videos", "jobs", "projects", "templates", "integrations", "schedule", "social", "webhooks",
)  # fmt: skip
"""The namespaces a client caches (turned to the new async client after a fork)."""


class Client:
    """The synchronous client of the video-generation service.

    ``with Client() as client: video = client.projects.create_ugc_video(...).wait()``.
    Every namespace and method of :class:`~asyncclient.AsyncClient` is here, blocking:
    creation methods return a :class:`~asyncclient.SyncVideoJob` (``job.wait()``),
    lists a plain iterator (``for video in client.videos.list(): ...``), batches a
    :class:`~asyncclient.SyncBatch` (``batch.wait()``, or ``for result in batch``). The
    errors are the async client's own.

    The arguments are :class:`~asyncclient.AsyncClient`'s, with the same environment
    variables, but for ``session``: an aiohttp session belongs to the event loop it was
    made in, and this client's loop is its own, in its own thread. In a child made by
    ``os.fork()`` the client makes a new async client from these arguments.

    Args:
        api_key: The key; falls back to ``ASYNCCLIENT_API_KEY``.
        base_url: The service's address; falls back to ``ASYNCCLIENT_BASE_URL``.
            ``https://`` is required except for loopback hosts.
        plan: The subscription plan (``Plan``, its name, or a custom ``RateLimit``) that
            sizes the client's token bucket. When omitted, the bucket starts at the Free
            plan's limit and adopts the limit the service announces.
        timeouts: Per-attempt timeouts (connect 10 s, read 60 s, total 120 s); time
            spent waiting for the rate limiter is not counted.
        ssl_context: TLS settings for the client's connections.
        ca_bundle: A PEM file of the certificate authorities to trust instead of the
            system's (a private CA, a TLS-inspecting proxy's). Without it or
            ``ssl_context``, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` are honoured.
        proxy: An ``http://`` or ``https://`` proxy URL (``user:password@`` if it asks)
            for every request; HTTPS requests go through it in a ``CONNECT`` tunnel, so
            the proxy never sees the API key.
        trust_env: Without ``proxy``, read ``HTTPS_PROXY``, ``HTTP_PROXY`` and
            ``NO_PROXY`` (True by default); False connects directly. A plain ``http://``
            loopback ``base_url`` (the emulator) is never proxied.
        max_body_size: The largest response body read, compressed or not (32 MiB); a
            larger one is refused while it streams.
        retry: When to retry; ``RetryPolicy()`` by default, ``RetryPolicy(attempts=1)``
            never retries. Creation requests are retried only when the service cannot
            have processed them.
        limiter: A limiter to use instead of the plan's token bucket, e.g. the
            Redis-backed one shared by many processes. It must not be in use in
            another event loop: the client's loop uses it.
        clock: Time for everything that paces or waits (the token bucket, retries,
            polling, batches); the real clock by default. Tests pass a fake one.
        polling: When the shared poller reads watched jobs (:class:`PollPolicy`); with
            ``webhook_url``, :meth:`PollPolicy.safety_net` unless given.
        webhook_url: Where the service should notify this client's creations (an
            HTTPS URL whose path serves :attr:`webhooks`); falls back to
            ``ASYNCCLIENT_WEBHOOK_URL``. Each creation without a ``webhook`` of its own
            carries it, with the receiver's token.
        webhook_token: The notification token; falls back to
            ``ASYNCCLIENT_WEBHOOK_TOKEN``, else it is derived from the API key (every
            process with the key derives the same one).
        previous_api_keys: Keys being rotated out: notifications carrying their tokens
            are still accepted. An empty or blank one is left out.
        redis: A Redis URL or a ``redis.asyncio.Redis`` shared by the processes of a
            fleet that use this key; falls back to ``ASYNCCLIENT_REDIS_URL``. Through it
            they share the token bucket and the deduplication of notifications. Needs
            the ``redis`` extra.

    Raises:
        ValueError: No API key (or an empty or blank one) or base URL could be found, or
            the URL is unsafe (at once, not on the first call). A
            :class:`~asyncclient.errors.ValidationError` names a bad ``proxy``,
            ``ca_bundle`` or proxy or certificate environment variable.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        plan: Plan | RateLimit | str | None = None,
        timeouts: Timeouts | None = None,
        ssl_context: ssl.SSLContext | None = None,
        ca_bundle: str | os.PathLike[str] | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        max_body_size: int = MAX_BODY_BYTES,
        retry: RetryPolicy | None = None,
        limiter: Limiter | None = None,
        clock: Clock | None = None,
        polling: PollPolicy | None = None,
        webhook_url: str | None = None,
        webhook_token: str | None = None,
        previous_api_keys: Sequence[str] = (),
        redis: str | Any | None = None,
    ) -> None:
        # Kept to make the async client again in a forked child (_after_fork).
        self._arguments: dict[str, Any] = dict(
            api_key=api_key,
            base_url=base_url,
            plan=plan,
            timeouts=timeouts,
            ssl_context=ssl_context,
            ca_bundle=ca_bundle,
            proxy=proxy,
            trust_env=trust_env,
            max_body_size=max_body_size,
            retry=retry,
            limiter=limiter,
            clock=clock,
            polling=polling,
            webhook_url=webhook_url,
            webhook_token=webhook_token,
            previous_api_keys=previous_api_keys,
            redis=redis,
        )
        self._async = AsyncClient(**self._arguments)
        self._loop = LoopThread(f"asyncclient-{next(_numbers)}")
        track(self)  # a forked child makes an async client of its own (_after_fork)

    def _after_fork(self) -> None:
        """In a forked child: the async client's locks, tasks and connections may be bound
        to the parent's loop; a new one is made from the same arguments (the parent's is
        kept, never finalized here), and the namespaces front it."""
        if self._loop.closed:
            return
        keep(self._async)
        self._async = AsyncClient(**self._arguments)
        for name in _NAMESPACES:  # a namespace taken before the fork fronts the new one
            face = self.__dict__.get(name)
            if face is not None:
                face._async = getattr(self._async, name)

    # -- the namespaces --------------------------------------------------------------------

    @property
    @cached
    def videos(self) -> SyncVideos:
        """:class:`~asyncclient.sync.faces.SyncVideos`: read, list and download videos."""
        return SyncVideos(self._async.videos, self._loop)

    @property
    @cached
    def jobs(self) -> SyncJobs:
        """:class:`~asyncclient.sync.faces.SyncJobs`: jobs from stored ids; the shared
        poller (``client.jobs.poller``)."""
        return SyncJobs(self._async.jobs, self._loop)

    @property
    @cached
    def projects(self) -> SyncProjects:
        """:class:`~asyncclient.sync.faces.SyncProjects`: create videos in the nine
        formats."""
        return SyncProjects(self._loop.call(lambda: self._async.projects), self._loop)

    @property
    @cached
    def templates(self) -> SyncTemplates:
        """:class:`~asyncclient.sync.faces.SyncTemplates`: list and read templates; create
        videos from one, one or many at a time."""
        return SyncTemplates(self._loop.call(lambda: self._async.templates), self._loop)

    @property
    @cached
    def integrations(self) -> SyncIntegrations:
        """:class:`~asyncclient.sync.faces.SyncIntegrations`: connected social-platform
        accounts."""
        return SyncIntegrations(self._loop.call(lambda: self._async.integrations), self._loop)

    @property
    @cached
    def schedule(self) -> SyncSchedule:
        """:class:`~asyncclient.sync.faces.SyncSchedule`: schedule posts to social
        platforms."""
        return SyncSchedule(self._loop.call(lambda: self._async.schedule), self._loop)

    @property
    @cached
    def social(self) -> SyncSocial:
        """:class:`~asyncclient.sync.faces.SyncSocial`: social research (searches, niches,
        accounts' analytics)."""
        return SyncSocial(self._loop.call(lambda: self._async.social), self._loop)

    @property
    @cached
    def webhooks(self) -> SyncWebhooks:
        """:class:`~asyncclient.sync.faces.SyncWebhooks`: this client's notification
        receiver, for a synchronous framework's view:
        ``client.webhooks.respond(body, query=...)``."""
        return SyncWebhooks(self._loop.call(lambda: self._async.webhooks), self._loop)

    # -- the rest ----------------------------------------------------------------------------

    def batch(
        self, requests: Iterable[CreationRequest], **options: Unpack[BatchOptions]
    ) -> SyncBatch:
        """Create many videos of any format (see :meth:`AsyncClient.batch`): a
        :class:`~asyncclient.SyncBatch`, run by ``batch.wait()`` or ``for result in
        batch``. ``on_progress`` is called from the client's loop thread."""
        made: Batch = self._loop.call(functools.partial(self._async.batch, requests, **options))
        return SyncBatch(made, self._loop)

    def batch_status(self, journal: str | os.PathLike[str]) -> BatchStatus:
        """What a batch's journal (a file, or ``redis://.../NAME``) says of its batch,
        read while it runs or after (see :func:`asyncclient.batch_status`)."""
        return self._loop.call(batch_status, journal)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        """Call any endpoint (see :meth:`AsyncClient.request`); the envelope's ``data``."""
        return self._loop.call(self._async.request, method, path, params=params, json=json)

    def with_options(self, **options: Unpack[CallOptions]) -> Client:
        """A client that sends with other timeouts or retry policy and shares the rest
        (its loop thread, session, limiter, poller); closing it closes nothing shared
        (see :meth:`AsyncClient.with_options`: ``timeout``, ``timeouts``, ``retry``,
        ``max_retries``). Make it again in a forked child.

        Raises:
            ValidationError: A bad option, named.
        """
        return _WithOptions(self, self._async.with_options(**options))

    @property
    def with_raw_response(self) -> SyncRawResponses:
        """Every namespace's request methods, blocking, each returning a
        :class:`~asyncclient.RawResponse` (status, headers, rate-limit state, request id
        and the parsed ``value``): ``client.with_raw_response.videos.get(video_id)``."""
        return SyncRawResponses(self._async.with_raw_response, self._loop)

    @property
    def async_client(self) -> AsyncClient:
        """The :class:`~asyncclient.AsyncClient` this one runs (in its own loop thread:
        await it only there)."""
        return self._async

    @property
    def base_url(self) -> str:
        """The service's address, without a trailing slash."""
        return self._async.base_url

    @property
    def notification_url(self) -> str | None:
        """The ``webhook`` this client's creations carry by default, or None."""
        return self._async.notification_url

    @property
    def stats(self) -> ClientStats:
        """Counts of requests, attempts, retries and 429s."""
        return self._async.stats

    @property
    def limiter(self) -> Limiter:
        """The rate limiter every request of this client goes through."""
        return self._async.limiter

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._loop.closed

    def __repr__(self) -> str:
        return f"<Client {self._async.base_url}>"

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the async client (its session, its poller: a job still waited for
        raises ``RuntimeError``) and stop the loop's thread. Closing again does nothing;
        a call after it raises ``RuntimeError``."""
        self._loop.close(self._async.aclose)


class _WithOptions(Client):
    """A :class:`Client` made by :meth:`Client.with_options`: its parent's loop thread and
    shared parts, other options; closing it closes nothing."""

    def __init__(self, parent: Client, derived: AsyncClient) -> None:  # no super(): shares
        self._async = derived
        self._loop = parent._loop
        self._arguments = parent._arguments

    def _after_fork(self) -> None:
        """Not tracked: a client made by ``with_options`` is made again in the child."""

    def close(self) -> None:
        """Closes nothing: the loop thread, the session and the poller are the parent's."""
