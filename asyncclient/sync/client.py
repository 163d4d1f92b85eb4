"""Client: the synchronous client, the async one run in an event loop of its own.

``Client`` takes the same arguments and environment variables as
:class:`~asyncclient.AsyncClient`, builds one, and runs each call in an event loop of
its own, in a daemon thread started on the first call (:class:`LoopThread`, an anyio
blocking portal). Any thread may call, many at once; a thread whose own loop runs (a
notebook cell, an async framework) blocks only for the call. ``close()`` (or leaving
``with``) closes the async client and stops the loop's thread.

A client used before ``os.fork()`` works in the child (a server that loads the app,
and maybe calls the service, before it forks its workers): the child starts a loop
thread of its own and a new async client from the same arguments.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from asyncclient.client import AsyncClient, batch_status
from asyncclient.http.caller import ClientStats
from asyncclient.http.forks import keep, track
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
    from typing_extensions import Unpack

    from asyncclient.batch.rows import BatchOptions
    from asyncclient.batch.runner import Batch
    from asyncclient.batch.status import BatchStatus
    from asyncclient.http.options import CallOptions
    from asyncclient.models.requests import CreationRequest
    from asyncclient.ratelimit import Limiter

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

    Args:
        api_key: The key; falls back to ``ASYNCCLIENT_API_KEY``.
        **options: Every other argument of :class:`~asyncclient.AsyncClient`
            (``base_url``, ``plan``, ``timeouts``, ``retry``, ``polling``,
            ``webhook_url``, ``redis``, ...), with the same environment variables. A
            ``session`` or ``limiter`` given must not be bound to another event loop.
            In a child made by ``os.fork()`` the client makes a new async client from
            these arguments, except with a ``session`` given: that session is the
            parent's, and each call in the child raises ``RuntimeError``.

    Raises:
        ValueError: No API key or base URL could be found, or the URL is unsafe (at
            once, not on the first call).
    """

    def __init__(self, api_key: str | None = None, **options: Any) -> None:
        self._async = AsyncClient(api_key, **options)
        self._loop = LoopThread(f"asyncclient-{next(_numbers)}")
        self._arguments = (api_key, options)
        track(self)  # a forked child makes an async client of its own (_after_fork)

    def _after_fork(self) -> None:
        """In a forked child: the async client's locks, tasks and connections may be bound
        to the parent's loop; a new one is made from the same arguments (the parent's is
        kept, never finalized here), and the namespaces front it. A caller's session
        cannot be made again: the old client stays, and its requests raise."""
        api_key, options = self._arguments
        if self._loop.closed or options.get("session") is not None:
            return
        keep(self._async)
        self._async = AsyncClient(api_key, **options)
        for name in _NAMESPACES:  # a namespace taken before the fork fronts the new one
            face = self.__dict__.get(name)
            if face is not None:
                face._async = getattr(self._async, name)

    # -- the namespaces --------------------------------------------------------------------

    @functools.cached_property
    def videos(self) -> SyncVideos:
        """Read, list and download videos (spec 4.10, 4.11)."""
        return SyncVideos(self._async.videos, self._loop)

    @functools.cached_property
    def jobs(self) -> SyncJobs:
        """Rebuild jobs from stored ids; the shared poller (``client.jobs.poller``)."""
        return SyncJobs(self._async.jobs, self._loop)

    @functools.cached_property
    def projects(self) -> SyncProjects:
        """Create videos in the nine formats (spec 4.1 to 4.9)."""
        return SyncProjects(self._loop.call(lambda: self._async.projects), self._loop)

    @functools.cached_property
    def templates(self) -> SyncTemplates:
        """List and read templates (spec 4.19, 4.20); generate from one in bulk."""
        return SyncTemplates(self._loop.call(lambda: self._async.templates), self._loop)

    @functools.cached_property
    def integrations(self) -> SyncIntegrations:
        """Connected social-platform accounts (spec 4.14)."""
        return SyncIntegrations(self._loop.call(lambda: self._async.integrations), self._loop)

    @functools.cached_property
    def schedule(self) -> SyncSchedule:
        """Schedule posts to social platforms (spec 4.12, 4.13)."""
        return SyncSchedule(self._loop.call(lambda: self._async.schedule), self._loop)

    @functools.cached_property
    def social(self) -> SyncSocial:
        """Social research (spec 4.15 to 4.18)."""
        return SyncSocial(self._loop.call(lambda: self._async.social), self._loop)

    @functools.cached_property
    def webhooks(self) -> SyncWebhooks:
        """This client's notification receiver, for a synchronous framework's view:
        ``client.webhooks.respond(body, query=...)`` (see :class:`SyncWebhooks`)."""
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
