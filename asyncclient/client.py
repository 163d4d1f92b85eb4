"""The asyncio client of the service, :class:`AsyncClient`, and :func:`batch_status`."""

# The facade on top: it reads the configuration and composes the wings below (http,
# resources, awaiting, batch, fleet); each takes what it uses as arguments, and only
# this module knows them all.

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._version import __version__
from asyncclient.awaiting.jobs import Jobs
from asyncclient.awaiting.poller import JobPoller, Poller, PollPolicy
from asyncclient.http.caller import Caller, ClientStats
from asyncclient.http.gate import Gate
from asyncclient.http.options import ClientOptions
from asyncclient.http.protocol import MAX_BODY_BYTES
from asyncclient.http.transport import AiohttpTransport, ClientSession, Timeouts
from asyncclient.http.urls import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_WEBHOOK_TOKEN,
    ENV_WEBHOOK_URL,
    read_service,
    read_webhook,
)
from asyncclient.ratelimit import (
    Limiter,
    Plan,
    RateLimit,
    TokenBucket,
    resolve_rate_limit,
    spare_tokens_of,
)
from asyncclient.resources.videos import Videos
from asyncclient.retry import RetryPolicy

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from asyncclient.batch.rows import BatchOptions
    from asyncclient.batch.runner import Batch
    from asyncclient.batch.status import BatchStatus
    from asyncclient.fleet.store import FleetStore
    from asyncclient.models.requests import CreationRequest
    from asyncclient.resources.integrations import Integrations
    from asyncclient.resources.projects import Projects
    from asyncclient.resources.schedule import Schedule
    from asyncclient.resources.social import Social
    from asyncclient.resources.templates import Templates
    from asyncclient.webhooks import ClientWebhooks

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_REDIS_URL",
    "ENV_WEBHOOK_TOKEN",
    "ENV_WEBHOOK_URL",
    "AsyncClient",
    "ClientStats",
]

ENV_REDIS_URL = "ASYNCCLIENT_REDIS_URL"
C = TypeVar("C")
T = TypeVar("T")


def cached(make: Callable[[C], T]) -> Callable[[C], T]:
    """A namespace's getter that makes it once and keeps it in the client's ``__dict__``
    under its name, where ``with_options`` and a forked child's client find it."""

    @functools.wraps(make)
    def get(client: C) -> T:
        if make.__name__ not in client.__dict__:
            client.__dict__[make.__name__] = make(client)
        return client.__dict__[make.__name__]  # type: ignore[no-any-return]

    return get


class AsyncClient(ClientOptions):
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
        ssl_context: TLS settings for the session we create.
        ca_bundle: A PEM file of the certificate authorities to trust instead of the
            system's (a private CA, a TLS-inspecting proxy's). Without it or
            ``ssl_context``, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` are honoured.
        proxy: An ``http://`` or ``https://`` proxy URL (``user:password@`` if it asks)
            for every request; HTTPS requests go through it in a ``CONNECT`` tunnel,
            so the proxy never sees the API key.
        trust_env: Without ``proxy``, read ``HTTPS_PROXY``, ``HTTP_PROXY`` and
            ``NO_PROXY`` (True by default); False connects directly. A plain
            ``http://`` loopback ``base_url`` (the emulator) is never proxied.
        max_body_size: The largest response body read, compressed or not (32 MiB);
            a larger one is refused while it streams.
        retry: When to retry; ``RetryPolicy()`` by default, ``RetryPolicy(attempts=1)``
            never retries. Creation requests are retried only when the service
            cannot have processed them.
        limiter: A limiter to use instead of the plan's token bucket, e.g. the
            Redis-backed one shared by many processes.
        clock: Time for everything that paces or waits (the token bucket, retries,
            polling, batches); the real clock by default. Tests pass a fake one.
        polling: When the shared poller reads watched jobs (:class:`PollPolicy`). With
            ``webhook_url`` it is :meth:`PollPolicy.safety_net` unless given: jobs end
            by their notifications, and polling only catches the ones that never come.
        webhook_url: Where the service should notify this client's creations (an
            HTTPS URL whose path serves :attr:`webhooks`); falls back to
            ``ASYNCCLIENT_WEBHOOK_URL``. Each creation without a ``webhook`` of its
            own carries it, with the receiver's token.
        webhook_token: The notification token; falls back to
            ``ASYNCCLIENT_WEBHOOK_TOKEN``, else it is derived from the API key (every
            process with the key derives the same one).
        previous_api_keys: Keys being rotated out: notifications carrying their
            tokens are still accepted. An empty or blank one is left out.
        redis: A Redis URL or a ``redis.asyncio.Redis`` shared by the processes of a
            fleet that use this key; falls back to ``ASYNCCLIENT_REDIS_URL``. Through
            it, under a hash of the key, they share the token bucket (without ``plan``
            it takes the limit the service announces, as a lone client does) and the
            deduplication of notifications. Needs the ``redis`` extra.

    Raises:
        ValueError: No API key (or an empty or blank one) or base URL could be found, or
            the URL is unsafe. A :class:`~asyncclient.errors.ValidationError` names a bad
            ``proxy``, ``ca_bundle`` or proxy or certificate environment variable.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        plan: Plan | RateLimit | str | None = None,
        session: ClientSession | None = None,
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
        key, self._base_url = read_service(api_key, base_url)
        self._webhook_url, token = read_webhook(webhook_url, webhook_token)
        # A blank previous key is left out, as an empty one is: its token is no secret.
        previous = tuple(k for k in previous_api_keys if k and not k.isspace())
        # The notification tokens are derived on first use (webhook_url, client.webhooks).
        self._token_source = (key, token, previous)
        self._clock = clock or SYSTEM_CLOCK
        rate = resolve_rate_limit(plan)
        self._fleet = self._join_fleet(redis, key)
        adopt_limit = rate is None and limiter is None  # the fleet's shared bucket too
        if limiter is None and self._fleet is not None:
            from asyncclient.fleet.bucket import RedisTokenBucket

            # Without a plan: Free at first, then the limit the fleet adopts.
            limiter = RedisTokenBucket.for_api_key(self._fleet.redis, key, rate, clock=self._clock)
        elif limiter is None:
            bucket = rate or Plan.FREE.rate_limit  # adopts X-RateLimit-Limit
            limiter = TokenBucket(bucket, clock=self._clock.monotonic, sleep=self._clock.sleep)
        self._transport = AiohttpTransport(
            self._base_url,
            key,
            session=session,
            timeouts=timeouts,
            ssl_context=ssl_context,
            ca_bundle=ca_bundle,
            proxy=proxy,
            trust_env=trust_env,
            max_body_size=max_body_size,
            user_agent=f"asyncclient/{__version__}",
        )
        self._caller = Caller(
            self._transport,
            limiter=limiter,
            retry=retry,
            clock=self._clock,
            adopt_limit=adopt_limit,
            gate=Gate(spare=spare_tokens_of(limiter)),
        )
        if polling is None and self._webhook_url is not None:
            polling = PollPolicy.safety_net()
        self._compose(polling)

    def _compose(self, polling: PollPolicy | None) -> None:
        """Build what reading and awaiting videos needs; the rest is built on first use."""
        caller = self._caller
        self.__dict__["videos"] = Videos(caller, files=self._transport)
        paced: dict[str, Any] = dict(limiter=caller.limiter, clock=self._clock, gate=caller.gate)
        poller: JobPoller
        if self._fleet is None:
            poller = Poller(self.videos, policy=polling, **paced)
        else:  # one poller for the fleet: the lease holder polls, the others listen
            from asyncclient.fleet.poller import FleetPoller

            # It composes a Poller and offers what jobs need of one (JobPoller).
            poller = FleetPoller(self.videos, store=self._fleet, policy=polling, **paced)
        self.__dict__["jobs"] = Jobs(poller)

    @property
    def videos(self) -> Videos:
        """:class:`~asyncclient.resources.Videos`: read, list and download videos."""
        return self.__dict__["videos"]  # type: ignore[no-any-return]

    @property
    def jobs(self) -> Jobs:
        """:class:`~asyncclient.awaiting.jobs.Jobs`: jobs from stored ids; the shared
        poller (``client.jobs.poller``)."""
        return self.__dict__["jobs"]  # type: ignore[no-any-return]

    @property
    @cached
    def projects(self) -> Projects:
        """:class:`~asyncclient.resources.Projects`: create videos in the nine formats."""
        from asyncclient.resources.projects import Projects

        return Projects(
            self._caller, jobs=self.jobs, videos=self.videos, webhook=self.notification_url
        )

    @property
    @cached
    def templates(self) -> Templates:
        """:class:`~asyncclient.resources.Templates`: list and read templates; create
        videos from one, one or many at a time."""
        from asyncclient.resources.templates import Templates

        return Templates(
            self._caller,
            submitter=self.projects,
            jobs=self.jobs,
            clock=self._clock,
            webhook=self.notification_url,
            journal_key=self._journal_key,
            journal_opener=_open_redis_journal,
        )

    @property
    @cached
    def integrations(self) -> Integrations:
        """:class:`~asyncclient.resources.Integrations`: connected social-platform accounts."""
        from asyncclient.resources.integrations import Integrations

        return Integrations(self._caller)

    @property
    @cached
    def schedule(self) -> Schedule:
        """:class:`~asyncclient.resources.Schedule`: schedule posts to social platforms."""
        from asyncclient.resources.schedule import Schedule

        return Schedule(self._caller, integrations=self.integrations)

    @property
    @cached
    def social(self) -> Social:
        """:class:`~asyncclient.resources.Social`: social research (searches, niches,
        accounts' analytics)."""
        from asyncclient.resources.social import Social

        return Social(self._caller)

    @property
    @cached
    def webhooks(self) -> ClientWebhooks:
        """:class:`~asyncclient.webhooks.ClientWebhooks`: this client's notification
        receiver. Mount ``client.webhooks.handle`` (an aiohttp handler) at the path of
        ``webhook_url``, or serve ``client.webhooks.app(path)``. A genuine notification
        finishes the jobs this process awaits for its video;
        :meth:`ClientWebhooks.on_event` adds callbacks."""
        from asyncclient.webhooks import ClientWebhooks  # aiohttp's server side

        finder, tokens, shared = self.jobs.poller, self._notification_tokens, self._fleet
        return ClientWebhooks(
            self, finder=finder, tokens=tokens, url=self._webhook_url, shared=shared
        )

    @property
    def notification_url(self) -> str | None:
        """The ``webhook`` this client's creations carry by default (``webhook_url`` with
        the receiver's token), or None."""
        if self._webhook_url is None:
            return None
        from asyncclient.awaiting.tokens import with_token

        return with_token(self._webhook_url, self._notification_tokens[0])

    @functools.cached_property
    def _journal_key(self) -> str:
        """What a batch's journal records of the API key (a hash, never the key)."""
        from asyncclient.batch.journal import key_id

        return key_id(self._token_source[0])

    @functools.cached_property
    def _notification_tokens(self) -> list[str]:
        """The tokens the receiver accepts, the one URLs carry first."""
        from asyncclient.awaiting.tokens import notification_tokens

        key, token, previous = self._token_source
        return notification_tokens(key, token, previous)

    def __repr__(self) -> str:
        return f"<AsyncClient {self._base_url}>"

    @property
    def base_url(self) -> str:
        """The service's address, without a trailing slash."""
        return self._base_url

    @property
    def limiter(self) -> Limiter:
        """The rate limiter every request of this client goes through."""
        return self._caller.limiter

    @property
    def stats(self) -> ClientStats:
        """Counts of requests, attempts, retries and 429s."""
        return self._caller.stats

    @property
    def clock(self) -> Clock:
        """The clock the client paces and waits by."""
        return self._clock

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop polling and close the session the client made (a caller's stays open),
        and the Redis connection it made from a URL."""
        await self.jobs.poller.aclose()
        await self._transport.aclose()
        if self._fleet is not None and self._own_redis:
            await self._fleet.redis.aclose()

    def _join_fleet(self, redis: Any, api_key: str) -> FleetStore | None:
        """The fleet's shared store, when a Redis is given or configured."""
        if redis is None:
            redis = os.environ.get(ENV_REDIS_URL) or None
        self._own_redis = False
        if redis is None:
            return None
        from asyncclient.fleet.store import FleetStore, redis_from

        client, self._own_redis = redis_from(redis)
        return FleetStore(client, api_key, clock=self._clock)

    def batch(self, requests: Iterable[CreationRequest], **options: Unpack[BatchOptions]) -> Batch:
        """Create many videos of any format: checked, spaced, bounded, journaled.

        A request without a name is given one (``batch-<id>-<row>``): names are how
        an interrupted batch finds what the service made.

        Args:
            requests: The creation requests: a list or a generator, read one at a
                time as they are sent.
            **options: How the batch runs: ``spacing`` (default 1 s), ``concurrency``,
                ``journal``, ``on_progress``, ``budget``, ``cost_per_row``,
                ``wait_timeout`` (see :class:`BatchSettings`).

        Returns:
            A :class:`Batch`; ``await`` it or ``async for`` it.
        """
        from asyncclient.batch.runner import request_batch  # the batch machinery loads on first use

        return request_batch(
            requests,
            submitter=self.projects,
            jobs=self.jobs,
            clock=self._clock,
            gate=self._caller.gate,
            reach=self._caller.reach,
            journal_key=self._journal_key,
            journal_opener=_open_redis_journal,
            webhook=self.notification_url,
            **options,
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        """Call any endpoint (``path`` begins with ``/v1``; ``params`` whose value is None
        are left out; ``json`` a JSON-ready body) with the auth, limits and error handling
        of the typed methods; the envelope's ``data`` (the whole envelope without one)."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        envelope = await self._caller.call(method, path, params=params, json=json)
        return envelope.get("data", envelope)


async def _open_redis_journal(url: str, batch_id: str, **options: Any) -> Any:
    """A batch's journal in Redis (``journal="redis://..."``): loads the fleet's store on
    first use (the batch never imports the fleet)."""
    from asyncclient.fleet.journal import open_redis_journal

    return await open_redis_journal(url, batch_id, **options)


async def batch_status(journal: str | os.PathLike[str]) -> BatchStatus:
    """What a batch's journal (a file, or ``redis://.../NAME``) says of its batch, read
    by any process while it runs or after, without its lock: rows per outcome, credits
    charged, the run holding it and its last beat (a :class:`BatchStatus`)."""
    from asyncclient.batch.status import batch_status as read

    return await read(journal, reader=_read_redis_status)


async def _read_redis_status(url: str) -> BatchStatus:
    from asyncclient.fleet.journal_status import read_redis_status

    return await read_redis_status(url)
