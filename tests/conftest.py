"""Shared fixtures: the emulator and a client bound to it; a tiny real aiohttp server.

``emu`` starts an :class:`Emulator` (time scale 60, seed 0); a module or test changes
its options with ``@pytest.mark.emulator(seed=5, processing_seconds=60)``. ``client``
is an :class:`AsyncClient` of a new premium team with a fast poller; :func:`connect`
makes more such clients.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from tests.wire import mocked as aioresponses

Serve = Callable[[web.Application], Awaitable[str]]

SCALE = 60.0
FAST_POLLING = PollPolicy(min_interval=0.01, max_interval=0.05)
"""Tests move the emulator's clock by hand: the poller need not wait for seconds."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "emulator(**options): options of the emu fixture")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked heavy run first (the order is otherwise kept): spread over the
    workers from the start, one of them does not leave a worker running alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest_asyncio.fixture
async def emu(request: pytest.FixtureRequest) -> AsyncIterator[Emulator]:
    options: dict[str, Any] = {"time_scale": SCALE, "seed": 0}
    marker = request.node.get_closest_marker("emulator")
    if marker is not None:
        options.update(marker.kwargs)
    async with Emulator(**options) as emulator:
        yield emulator


def connect(
    emu: Emulator,
    key: str | None = None,
    *,
    plan: Plan = Plan.PREMIUM,
    credits: int = 100_000,
    **options: Any,
) -> AsyncClient:
    """A client of a new team (or of ``key``), its bucket scaled to the emulator's time."""
    if key is None:
        key = emu.add_team(plan=plan.value, credits=credits)
    options.setdefault("polling", FAST_POLLING)
    rate = plan.rate_limit.scaled(emu.clock.time_scale)
    return AsyncClient(key, base_url=emu.url, plan=rate, **options)


@pytest_asyncio.fixture
async def client(emu: Emulator) -> AsyncIterator[AsyncClient]:
    async with connect(emu) as sdk:
        yield sdk


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start aiohttp apps on free loopback ports; returns each one's base URL."""
    runners: list[web.AppRunner] = []

    async def start(app: web.Application) -> str:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()


# -- a real redis-server (tests of what processes share) -----------------------------------


def _redis_server(appendfsync: str | None) -> Iterator[str]:
    """A throwaway redis-server on loopback (``appendfsync``: its AOF's policy, None for
    no AOF); skipped without one, failed in CI."""
    from tests.redis_server import RedisUnavailable, redis_server, require_redis

    try:
        with redis_server(appendfsync=appendfsync) as url:
            yield url
    except RedisUnavailable as exc:
        if require_redis():
            pytest.fail(f"CI needs redis-server: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A throwaway redis-server on loopback, without AOF (it can lose what it
    acknowledged); skipped without one, failed in CI."""
    yield from _redis_server(None)


@pytest.fixture(scope="module")
def aof_url() -> Iterator[str]:
    """A throwaway redis-server whose AOF is synced on every write: durable once it
    acknowledged a write (what a Redis journal of a paid batch needs)."""
    yield from _redis_server("always")


@pytest_asyncio.fixture
async def redis(redis_url: str) -> AsyncIterator[Any]:
    """A ``redis.asyncio`` client of that server, its database emptied first."""
    aioredis = pytest.importorskip("redis.asyncio")
    client = aioredis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    """A certificate authority of the tests' own, for HTTPS over loopback (trustme)."""
    return trustme.CA()


@pytest.fixture
def mock() -> Iterator[aioresponses]:
    """aioresponses, for the wire-level unit tests (no real HTTP)."""
    with aioresponses() as m:
        yield m


SENT_CHECKED = 100
"""Distinct creation bodies a test has checked against the OpenAPI document, at most."""


@pytest.fixture(autouse=True)
def _sent_creations_match_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every creation the SDK builds in a test (the first :data:`SENT_CHECKED` distinct
    bodies) validates against its operation's request schema in the OpenAPI document;
    a body it refuses fails the test that built it."""
    import json

    from asyncclient.http import prepared
    from tests.document import check_creation_body

    real = prepared.build_request
    seen: set[str] = set()

    def checked(method: str, path: str, **kwargs: Any) -> Any:
        built = real(method, path, **kwargs)
        body = kwargs.get("json_body")
        if method == "POST" and len(seen) < SENT_CHECKED:
            text = json.dumps(body, sort_keys=True)
            if text not in seen:
                seen.add(text)
                check_creation_body(path, body)
        return built

    monkeypatch.setattr(prepared, "build_request", checked)


@pytest.fixture(autouse=True)
def _sent_requests_match_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every other request the SDK builds in a test (reads, lists and their queries, the
    bodies of schedules and research; the first :data:`SENT_CHECKED` distinct ones) is an
    operation of the OpenAPI document, with the parameters it declares and values its
    schemas allow; one it refuses fails the test that built it. What a test sends by hand
    (``client.request``, for endpoints the SDK has no method for) is left to the test."""
    from asyncclient.http import caller
    from tests.document import check_request, sent_by_hand

    real = caller.build_request
    seen: set[Any] = set()

    def checked(method: str, path: str, **kwargs: Any) -> Any:
        built = real(method, path, **kwargs)
        key = (built.method, built.path, built.params, built.body)
        if len(seen) < SENT_CHECKED and key not in seen and not sent_by_hand():
            seen.add(key)
            check_request(built)
        return built

    monkeypatch.setattr(caller, "build_request", checked)
