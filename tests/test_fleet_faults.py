"""A fleet whose Redis fails, a lease held by no live process, a holder fenced out.

On a real redis-server made to refuse writes (``maxmemory`` with ``noeviction``, or a
read-only replica) and the emulator over loopback: every wait and every creation goes
on as a lone process's would, and nothing of ``redis`` reaches the caller. A lease of
no live process is taken over at once; a holder whose lease another took (it was
paused past it) can neither publish nor renew. When redis-server is missing these
tests skip on a developer's machine and fail in CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import SimpleNamespace
from typing import Any

import pytest

from asyncclient import Plan, RateLimit
from asyncclient._states import FleetMode
from asyncclient.emulator import Emulator
from asyncclient.errors import APIError, FleetError
from asyncclient.fleet.bucket import RedisTokenBucket
from asyncclient.fleet.poller import FleetPoller
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import Detail, Message, encode_message, kept
from asyncclient.models.videos import VideoDetail
from tests.test_fleet_poller import create, fleet_client, poller

pytest.importorskip("redis.asyncio")
from redis.exceptions import OutOfMemoryError, ReadOnlyError

MINUTES = 600_000  # a long lease, in milliseconds


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def refusing_writes(redis: Any, how: str) -> AsyncIterator[None]:
    """Make the test's own redis-server refuse writes: out of memory, or a read-only
    replica (of a master that is not there); as it was afterwards."""
    try:
        if how == "oom":
            await redis.config_set("maxmemory-policy", "noeviction")
            await redis.config_set("maxmemory", "1mb")
            with contextlib.suppress(OutOfMemoryError):  # over the limit, whatever it used
                await redis.set("filler", b"x" * 400_000)
            with pytest.raises(OutOfMemoryError):
                await redis.set("probe", b"1")
        else:
            await redis.execute_command("REPLICAOF", "127.0.0.1", str(_unused_port()))
            with pytest.raises(ReadOnlyError):
                await redis.set("probe", b"1")
        yield
    finally:
        await redis.execute_command("REPLICAOF", "NO", "ONE")
        await redis.config_set("maxmemory", "0")
        await redis.delete("filler")


def unstarted(store: FleetStore) -> FleetPoller:
    """A fleet poller whose tasks are not started (its parts are driven by hand)."""
    return FleetPoller(
        source=None,  # type: ignore[arg-type]  # nothing is read here
        store=store,
        limiter=SimpleNamespace(rate=Plan.PREMIUM.rate_limit),
        lease=60.0,
    )


# -- Redis refusing writes: each process polls its own jobs ----------------------------------


async def test_redis_out_of_memory_mid_run_every_wait_still_returns_its_video(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    async with AsyncExitStack() as outer, AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(fleet_client(emu, key, redis_url)) for _ in range(3)
        ]
        jobs = [job for c in clients for job in await create(c, emu, 5)]
        waits = [asyncio.ensure_future(job.wait(timeout=60)) for job in jobs]
        store = poller(clients[0]).store
        for _ in range(500):  # registered, and one process polls for the fleet
            if len(await store.registrations()) == 15 and any(poller(c).leading for c in clients):
                break
            await asyncio.sleep(0.01)
        assert any(poller(c).leading for c in clients)
        await outer.enter_async_context(refusing_writes(redis, "oom"))
        emu.advance(1000)
        results = await asyncio.wait_for(asyncio.gather(*waits, return_exceptions=True), 30)
        assert [getattr(r, "status", r) for r in results] == ["COMPLETED"] * 15
        # The clients closed while Redis still refused writes: nothing was raised.


@pytest.mark.parametrize("how", ["oom", "readonly"])
async def test_creations_and_waits_work_when_redis_refuses_writes_from_the_start(
    emu: Emulator, redis_url: str, redis: Any, how: str
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    async with refusing_writes(redis, how), AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(fleet_client(emu, key, redis_url)) for _ in range(2)
        ]
        jobs = [job for c in clients for job in await create(c, emu, 3)]
        emu.advance(1000)
        done = await asyncio.wait_for(asyncio.gather(*(j.wait(timeout=60) for j in jobs)), 30)
        assert [d.status for d in done] == ["COMPLETED"] * 6
        # No lease could be taken: each process polled its own jobs.
        assert all(poller(c).stats.requests >= 1 for c in clients)
        assert not any(poller(c).fleet.leads for c in clients)


async def test_the_shared_bucket_paces_the_process_alone_when_redis_refuses_writes(
    redis: Any,
) -> None:
    bucket = RedisTokenBucket(redis, "oom", RateLimit(per_minute=60_000, burst=10))
    async with refusing_writes(redis, "oom"):
        waits = [await asyncio.wait_for(bucket.acquire(), 5) for _ in range(3)]
        assert all(w < 1.0 for w in waits) and bucket._fallback is not None
        with pytest.raises(FleetError) as raised:  # ours, the Redis error its cause
            await bucket.tokens()
        assert isinstance(raised.value, APIError)
        assert isinstance(raised.value.__cause__, OutOfMemoryError)


async def test_notifications_on_a_read_only_redis_raise_only_errors_of_the_sdk(
    redis: Any,
) -> None:
    """Deduplication raises a ``FleetError`` (the receiver answers 503, the service
    retries); a confirmed record still finishes the jobs here and raises nothing."""
    store = FleetStore(redis, "key")
    fleet = unstarted(store)
    detail = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
    async with refusing_writes(redis, "readonly"):
        with pytest.raises(FleetError):
            await store.claim_event("p1/v1/COMPLETED")
        with pytest.raises(FleetError):
            await store.settle_event("p1/v1/COMPLETED", taken=True)
        assert await fleet.deliver(detail) == 0
        with pytest.raises(FleetError):
            await store.register({"p1|v1|1": b"{}"}, ())


# -- the lease: liveness and fencing ------------------------------------------------------------


@pytest.mark.parametrize("lease", ["garbage", "dead-process 7", "hash"])
async def test_a_lease_held_by_no_live_process_is_taken_over_at_once(
    redis: Any, lease: str
) -> None:
    store = FleetStore(redis, "key")
    if lease == "hash":  # not even a string
        await redis.hset(store.key("lease"), "holder", "x")
        await redis.pexpire(store.key("lease"), MINUTES)
    else:
        await redis.set(store.key("lease"), lease, px=MINUTES)
    held, _, left = await store.beat(alive_ms=60_000, lease_ms=60_000, lead=True)
    assert held and left == 0.0
    assert store.holding is not None and store.holding.startswith(f"{store.process} ")
    assert await redis.get(store.key("lease")) == store.holding.encode()
    # Now held by a live process: it stands until it lapses.
    other = FleetStore(redis, "key")
    held, _, left = await other.beat(alive_ms=60_000, lease_ms=60_000, lead=True)
    assert not held and other.holding is None and 59.0 < left <= 60.0


async def test_a_foreign_lease_with_a_long_ttl_does_not_stop_the_fleets_polling(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    store = FleetStore(redis, key)
    await redis.set(store.key("lease"), "left-by-someone", px=MINUTES)
    async with fleet_client(emu, key, redis_url) as client:
        jobs = await create(client, emu, 3)
        emu.advance(1000)
        done = await asyncio.wait_for(asyncio.gather(*(j.wait() for j in jobs)), 20)
        assert [d.status for d in done] == ["COMPLETED"] * 3
        assert poller(client).fleet.leads == 1 and poller(client).stats.requests >= 1


async def test_a_paused_holder_can_neither_publish_nor_renew_after_another_took_over(
    redis: Any,
) -> None:
    paused, taker = FleetStore(redis, "key"), FleetStore(redis, "key")
    assert (await paused.beat(alive_ms=60_000, lease_ms=60_000, lead=True))[0]
    # Paused past its lease: its lease and alive key lapse; another takes the lease.
    await redis.delete(paused.key("lease"), paused.key("alive", paused.process))
    assert (await taker.beat(alive_ms=MINUTES, lease_ms=MINUTES, lead=True))[0]
    # It wakes: what it read as holder is neither kept nor published.
    detail = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
    record = kept(Detail("p1|v1|1", detail))
    message = encode_message(Message(sender=paused.process, changes=(Detail("p1|v1|1", detail),)))
    listening = redis.pubsub()
    await listening.subscribe(paused.channel)
    try:
        assert not await paused.publish(message, [("v1", "p1", record)])
        assert await redis.get(paused.key("done", "v", "v1")) is None
        assert await redis.hlen(paused.key("done", "p", "p1")) == 0
        assert await listening.get_message(ignore_subscribe_messages=True, timeout=0.1) is None
    finally:
        await listening.aclose()
    assert taker.holding is not None and taker.holding != paused.holding
    # Its beat renews nothing of the other's lease, and it does not lead.
    await redis.pexpire(paused.key("lease"), 30_000)
    held, _, left = await paused.beat(alive_ms=60_000, lease_ms=60_000, lead=True)
    assert not held and paused.holding is None and 0 < left <= 30.0
    assert await redis.get(paused.key("lease")) == taker.holding.encode()
    # The holder's own publication goes through.
    assert await taker.publish(message, [("v1", "p1", record)])
    assert await redis.get(taker.key("done", "v", "v1")) == record


async def test_a_stale_fencing_number_is_refused_and_the_holder_stops_leading(
    redis: Any,
) -> None:
    store = FleetStore(redis, "key")
    fleet = unstarted(store)
    assert (await store.beat(alive_ms=60_000, lease_ms=60_000, lead=True))[0]
    fleet._set_mode(FleetMode.LEADING)
    # Its token is an older acquisition's (it was paused; the lease moved on since).
    process, number = (store.holding or "").split()
    store.holding = f"{process} {int(number) - 1}"
    detail = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
    fleet._relay.tell(Detail("p1|v1|1", detail))
    await fleet._relay.publish()
    assert fleet.mode is FleetMode.FOLLOWING and fleet.fleet.published == 0
    assert await redis.get(store.key("done", "v", "v1")) is None
