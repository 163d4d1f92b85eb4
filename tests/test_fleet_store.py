"""A fleet's shared state in a real redis-server: notifications once across processes.

When redis-server is missing these tests skip on a developer's machine and fail in CI
(CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import aiohttp
import pytest
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from asyncclient.fleet.bucket import RedisTokenBucket
from asyncclient.fleet.store import FleetStore, fleet_name
from asyncclient.webhooks import WebhookEvent

aioredis = pytest.importorskip("redis.asyncio")

NEVER = PollPolicy(min_interval=3600.0, max_interval=3600.0, jitter=0.0)


def test_the_fleet_is_named_by_a_hash_of_the_key() -> None:
    name = fleet_name("secret-key")
    assert name == fleet_name("secret-key") != fleet_name("other-key")
    assert "secret" not in name and name.startswith("asyncclient:fleet:")


async def test_a_claim_waits_for_the_holder_and_only_a_taken_event_is_a_duplicate(
    redis: Any,
) -> None:
    a, b, c = (FleetStore(redis, "key") for _ in range(3))
    assert len({a.process, b.process, c.process}) == 3
    assert await a.claim_event("p1/v1/COMPLETED")
    waiting = asyncio.ensure_future(b.claim_event("p1/v1/COMPLETED", poll=0.01))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # a holds it
    await a.settle_event("p1/v1/COMPLETED", taken=False)  # a refused it (e.g. a forgery)
    assert await asyncio.wait_for(waiting, 2)  # so b may handle its copy
    await b.settle_event("p1/v1/COMPLETED", taken=True)
    assert not await c.claim_event("p1/v1/COMPLETED")  # taken: a duplicate for anyone
    assert await c.claim_event("p1/v1/FAILED")  # another outcome is another event
    keys = [k.decode() for k in await redis.keys("*")]
    assert all(k.startswith(fleet_name("key")) for k in keys) and "key" not in keys


async def test_a_claim_is_released_only_by_its_holder(redis: Any) -> None:
    a, b = FleetStore(redis, "key"), FleetStore(redis, "key")
    assert await a.claim_event("e")
    await b.settle_event("e", taken=False)  # not b's claim: nothing happens
    assert await redis.get(a.key("hook", "busy", "e")) == a.process.encode()


async def test_a_client_with_redis_shares_the_bucket_under_the_keys_hash(
    redis_url: str,
) -> None:
    async with AsyncClient("k", base_url="http://127.0.0.1:1", redis=redis_url, plan="pro") as c:
        assert isinstance(c._caller.limiter, RedisTokenBucket)
        assert c._caller.limiter.rate == Plan.PRO.rate_limit
    # The environment variable works alike; a client given no Redis keeps its own bucket.
    async with AsyncClient("k", base_url="http://127.0.0.1:1") as plain:
        assert not isinstance(plain._caller.limiter, RedisTokenBucket)


# -- two processes' receivers, one notification ------------------------------------------


@asynccontextmanager
async def receiver_client(
    emu: Emulator, key: str, redis_url: str, ca: trustme.CA, seen: list[str]
) -> AsyncIterator[tuple[AsyncClient, str]]:
    """A client sharing ``redis_url`` whose receiver is served over HTTPS on loopback."""
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}/hooks"
    rate = Plan.PREMIUM.rate_limit.scaled(60.0)
    async with AsyncClient(
        key, base_url=emu.url, plan=rate, polling=NEVER, webhook_url=url, redis=redis_url
    ) as client:

        async def slow(event: WebhookEvent) -> None:
            await asyncio.sleep(0.05)  # long enough for the copies to overlap
            seen.append(event.key)

        client.webhooks.on_event(slow)
        runner = web.AppRunner(client.webhooks.app("/hooks"), access_log=None)
        await runner.setup()
        try:
            await web.SockSite(runner, sock, ssl_context=server_ctx).start()
            yield client, url
        finally:
            await runner.cleanup()


async def test_copies_reach_one_callback_once_across_the_fleet(
    redis_url: str, ca: trustme.CA
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    seen: list[str] = []
    async with AsyncExitStack() as stack:
        emu = await stack.enter_async_context(Emulator(time_scale=60.0, webhook_ssl=trust))
        key = emu.add_team(plan="premium", credits=1000)
        clients = [
            await stack.enter_async_context(receiver_client(emu, key, redis_url, ca, seen))
            for _ in range(3)
        ]
        first, _ = clients[0]
        cat = emu.catalog
        job = await first.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        emu.advance(1000)
        await emu.settle()
        (attempt,) = emu.webhook_attempts
        assert attempt.status == 200 and seen == [f"{job.project_id}/{job.video_id}/COMPLETED"]
        # The service's retries and copies, to every process at once: all answered 200,
        # none reaches a callback again.
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def post(url: str) -> int:
                async with session.post(url, json=attempt.payload, ssl=trust) as resp:
                    return resp.status

            statuses = await asyncio.gather(
                *(post(c.notification_url or "") for c, _ in clients for _ in range(3))
            )
        assert statuses == [200] * 9
        assert len(seen) == 1
        assert sum(c.webhooks.receiver.duplicates for c, _ in clients) == 9
