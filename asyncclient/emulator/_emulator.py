"""The ``Emulator``: the service on a loopback port, for demos, tests and benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import ssl as ssl_module
from types import TracebackType

from aiohttp import web

from asyncclient.emulator._app import build_app
from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._context import Context, Counters, RequestLog
from asyncclient.emulator._faults import Faults
from asyncclient.emulator._seed import Catalog, build_catalog
from asyncclient.emulator._state import DEFAULT_PROCESSING, Key, Store
from asyncclient.emulator._webhooks import AttemptLog

_ACCEPT_TURNS = 4  # loop turns from a socket's accept to its handler's registration

__all__ = ["Emulator"]


class Emulator:
    """The video-generation service, emulated in memory on a loopback port.

    ``async with Emulator(time_scale=60.0, seed=0) as emu:`` serves on a free port;
    ``time_scale=60`` means one service minute per real second.

    Args:
        time_scale: service seconds per real second (processing, retries, refill, expiry).
        seed: seeds ids, processing jitter, failures and probabilistic faults.
        host: address to bind (loopback by default).
        port: port to bind; 0 picks a free one.
        ssl: serve HTTPS with this server context.
        webhook_ssl: client context for HTTPS webhook deliveries (e.g. trusting a test CA).
        costs: credits per project type, merged over the defaults (``DEFAULT_COSTS``).
        processing_seconds: mean processing time in service seconds, for every type
            (a number) or per project type (a dict merged over ``DEFAULT_PROCESSING``).
        jitter: processing time is the mean times ``uniform(1 - jitter, 1 + jitter)``.
        failure_rate: seeded probability that a video fails, per project type or ``"*"``.
        webhook_form: ``"auto"`` (form A for creation endpoints, B for templates), ``"A"``, ``"B"``.
        keywords_seconds: service seconds until a search's keywords are completed.
    """

    def __init__(
        self,
        time_scale: float = 60.0,
        seed: int = 0,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl: ssl_module.SSLContext | None = None,
        webhook_ssl: ssl_module.SSLContext | None = None,
        costs: dict[str, int] | None = None,
        processing_seconds: float | dict[str, float] | None = None,
        jitter: float = 0.5,
        failure_rate: float | dict[str, float] | None = None,
        webhook_form: str = "auto",
        keywords_seconds: float = 30.0,
    ) -> None:
        if webhook_form not in ("auto", "A", "B"):
            raise ValueError("webhook_form must be 'auto', 'A' or 'B'")
        self._host, self._port, self._ssl = host, port, ssl
        clock = ServiceClock(time_scale)
        processing: dict[str, float] | None = None
        if isinstance(processing_seconds, (int, float)):
            processing = {k: float(processing_seconds) for k in DEFAULT_PROCESSING}
        else:
            processing = processing_seconds
        rates = {"*": failure_rate} if isinstance(failure_rate, (int, float)) else failure_rate
        store = Store(
            clock, seed, costs=costs, processing=processing, jitter=jitter, failure_rate=rates
        )
        self._catalog = build_catalog()
        self._ctx = Context(
            store,
            self._catalog,
            Faults(random.Random(seed + 1)),
            secret=random.Random(seed + 2).getrandbits(256).to_bytes(32, "big"),
            webhook_form=webhook_form,
            keywords_seconds=keywords_seconds,
            webhook_ssl=webhook_ssl,
        )
        self._app = build_app(self._ctx)
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._listener: socket.socket | None = None

    # -- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        """Start serving and the webhook scheduler."""
        if self._runner is not None:
            return
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        listener = socket.create_server((self._host, self._port), family=family)
        runner = web.AppRunner(self._app, access_log=None)
        await runner.setup()
        site = web.SockSite(runner, listener, ssl_context=self._ssl)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            listener.close()
            raise
        self._runner, self._listener = runner, listener
        port = runner.addresses[0][1]
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._url = f"{'https' if self._ssl else 'http'}://{host}:{port}"
        self._ctx.base_url = self._url
        await self._ctx.dispatcher.start()

    async def stop(self) -> None:
        """Stop serving; cancel pending webhook deliveries and close every session."""
        await self._ctx.dispatcher.stop()
        if self._runner is not None:
            await self._stop_accepting()
            await self._runner.cleanup()
            self._runner = None

    async def _stop_accepting(self) -> None:
        # asyncio cannot attach a connection it accepted to a server already closed, and
        # leaves that socket open for the garbage collector; so accepting stops first, and
        # the connections accepted by then reach their handlers, which the runner closes.
        if self._listener is not None:
            with contextlib.suppress(NotImplementedError, ValueError):
                asyncio.get_running_loop().remove_reader(self._listener.fileno())
            self._listener = None
        for _ in range(_ACCEPT_TURNS):
            await asyncio.sleep(0)

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- read-only views -----------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL, such as ``http://127.0.0.1:54321`` (after ``start()``)."""
        if self._url is None:
            raise RuntimeError("the emulator is not started")
        return self._url

    @property
    def app(self) -> web.Application:
        """The aiohttp application (mountable in another server)."""
        return self._app

    @property
    def catalog(self) -> Catalog:
        """The seeded ids every team can use."""
        return self._catalog

    @property
    def clock(self) -> ServiceClock:
        """The service clock."""
        return self._ctx.clock

    @property
    def faults(self) -> Faults:
        """The fault rules: ``emu.faults.add(route=..., kind=...)``."""
        return self._ctx.faults

    @property
    def requests(self) -> RequestLog:
        """Every request to the service API, oldest first (a sequence of ``RequestRecord``)."""
        return self._ctx.requests

    @property
    def counters(self) -> Counters:
        """Requests per route, statuses, 429s, projects and credits per team."""
        self._ctx.counters.webhook_attempts = len(self._ctx.dispatcher.attempts)
        return self._ctx.counters

    @property
    def webhook_attempts(self) -> AttemptLog:
        """Every webhook delivery attempt, oldest first (a sequence of ``Attempt``)."""
        return self._ctx.dispatcher.attempts

    @property
    def store(self) -> Store:
        """The in-memory records (teams, projects, videos, posts, searches)."""
        return self._ctx.store

    # -- teams and credits ---------------------------------------------------

    def add_team(
        self,
        plan: str = "free",
        credits: int = 1000,
        *,
        per_minute: int | None = None,
        burst: int | None = None,
        permitted: bool = True,
        name: str | None = None,
    ) -> str:
        """Create a team and return its new API key.

        Args:
            plan: ``free``, ``starter``, ``pro`` or ``premium``: the plan's rate limit
                (see :class:`~asyncclient.ratelimit.Plan`).
            credits: the starting balance.
            per_minute: a custom rate instead of the plan's (``burst`` defaults to it).
            burst: a custom bucket size.
            permitted: False makes every request of the key a 403 (subscription required).
            name: the team name.

        Raises:
            ValueError: an unknown plan.
        """
        key = self._ctx.store.add_team(
            plan, credits, per_minute=per_minute, burst=burst, permitted=permitted, name=name
        )
        return key.secret

    def _key(self, api_key: str) -> Key:
        try:
            return self._ctx.store.keys[api_key]
        except KeyError:
            raise KeyError("unknown API key") from None

    def add_key(self, api_key: str) -> str:
        """Return a new key of the team owning ``api_key`` (its own rate-limit bucket)."""
        return self._ctx.store.add_key(self._key(api_key).team).secret

    def team_id(self, api_key: str) -> str:
        """Return the id of the team owning ``api_key``."""
        return self._key(api_key).team.id

    def credits(self, api_key: str) -> int:
        """Return the credit balance of the team owning ``api_key``."""
        return self._key(api_key).team.credits

    def set_credits(self, api_key: str, credits: int) -> None:
        """Set the credit balance of the team owning ``api_key``."""
        self._key(api_key).team.credits = credits

    # -- time and failures ---------------------------------------------------

    def now(self) -> float:
        """Return the service time (Unix seconds)."""
        return self._ctx.clock.now()

    def advance(self, seconds: float) -> None:
        """Move the service clock forward; ``await settle()`` to deliver what is due."""
        self._ctx.clock.advance(seconds)

    async def settle(self) -> None:
        """Deliver every webhook due now and wait for deliveries in flight."""
        await self._ctx.dispatcher.settle()

    def fail_video(self, video_id: str, message: str = "generation failed") -> None:
        """Make a started video fail now (its failure webhook is then due).

        Raises:
            KeyError: unknown video.
            ValueError: the video is already completed or failed.
        """
        video = self._ctx.store.fail_video(video_id, message)
        self._ctx.dispatcher.watch(video)

    def fail_post(self, post_id: str, message: str = "publishing failed") -> None:
        """Make a scheduled post fail at its scheduled time (error in platformData)."""
        self._ctx.store.posts[post_id].error = message
