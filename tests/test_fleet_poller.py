"""One poller per API key across a fleet (``AsyncClient(redis=...)``), on a real redis-server.

Several clients of one key in one test stand for the processes of a fleet (each has a
process id of its own in the fleet); ``tests/test_fleet_processes.py`` runs real
processes and kills the lease holder. When redis-server is missing these tests skip on
a developer's machine and fail in CI.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan, RateLimit, VideoFailedError
from asyncclient._convert import converter
from asyncclient._states import FLEET, FleetMode
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.awaiting.state import JobState
from asyncclient.emulator import Emulator
from asyncclient.errors import NotFoundError
from asyncclient.fleet.bucket import RedisTokenBucket
from asyncclient.fleet.poller import FleetPoller
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import (
    WIRE_VERSION,
    Detail,
    Failure,
    Message,
    Notified,
    Record,
    encode_message,
    job_key,
    read_message,
)
from asyncclient.models.videos import Video, VideoDetail

pytest.importorskip("redis.asyncio")

POLICY = PollPolicy(min_interval=0.05, max_interval=0.1, jitter=0.0)
NEVER = PollPolicy(min_interval=3600.0, max_interval=3600.0, jitter=0.0, first_delay=3600.0)


def raw_message(sender: str, entries: list[list[Any]]) -> bytes:
    """A message as the first release wrote it (no version), entries as given."""
    return json.dumps({"from": sender, "j": entries}).encode()


def wire(detail: VideoDetail) -> Any:
    return converter.unstructure(detail)


def fleet_client(emu: Emulator, key: str, redis_url: str, **options: Any) -> AsyncClient:
    options.setdefault("polling", POLICY)
    rate = Plan.PREMIUM.rate_limit.scaled(emu.clock.time_scale)
    return AsyncClient(key, base_url=emu.url, plan=rate, redis=redis_url, **options)


def poller(client: AsyncClient) -> FleetPoller:
    found = client.jobs.poller
    assert isinstance(found, FleetPoller)
    return found


async def create(client: AsyncClient, emu: Emulator, n: int) -> list[VideoJob]:
    cat = emu.catalog
    return [
        await client.projects.create_talking_avatar(
            script=f"Hi {i}", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        for i in range(n)
    ]


async def test_only_the_lease_holder_polls_and_every_process_gets_its_jobs(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(fleet_client(emu, key, redis_url)) for _ in range(3)
        ]
        jobs = [await create(c, emu, 4) for c in clients]
        waits = [asyncio.gather(*(j.wait(timeout=30) for j in js)) for js in jobs]
        # Every process registers its jobs; the holder reads them all.
        store = poller(clients[0]).store
        for _ in range(200):
            if len(await store.registrations()) == 12:
                break
            await asyncio.sleep(0.01)
        assert len(await store.registrations()) == 12
        emu.advance(1000)
        results = await asyncio.wait_for(asyncio.gather(*waits), 30)
        assert all(d.status == "COMPLETED" for done in results for d in done)
        pollers = [poller(c) for c in clients]
        # Only a lease holder polls (it keeps polling for the fleet after its own jobs
        # ended); the others learn of their jobs from it.
        polling = [p for p in pollers if p.stats.requests]
        assert polling
        assert all(p.fleet.leads >= 1 and p.fleet.rounds_led >= 1 for p in polling)
        assert all(p.fleet.taken >= 4 for p in pollers if p not in polling)
        # One detail read per finished video across the fleet, as a lone process makes
        # (a handover may read again a video whose job was not yet unregistered).
        reads = sum(p.stats.detail_requests for p in pollers)
        assert 12 <= reads <= 12 + 4 * (len(polling) - 1)
    # They all left: no registration, no lease.
    assert await redis.hlen(store.key("jobs")) == 0
    assert await redis.get(store.key("lease")) is None


async def test_a_job_awaited_after_it_finished_elsewhere_ends_from_the_kept_outcome(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    async with fleet_client(emu, key, redis_url) as first:
        (job,) = await create(first, emu, 1)
        emu.advance(1000)
        done = await job.wait(timeout=30)
    async with fleet_client(emu, key, redis_url, polling=NEVER) as later:
        again = later.jobs.from_video_id(done.id, project_id=job.project_id)
        assert (await asyncio.wait_for(again.wait(), 10)) == done
        assert later.jobs.poller.stats.requests == 0
        assert poller(later).fleet.taken == 1


async def test_the_registrations_of_a_process_that_ended_are_dropped(
    redis: Any,
) -> None:
    living, dead = FleetStore(redis, "key"), FleetStore(redis, "key")
    for store in (living, dead):
        await store.beat(alive_ms=60_000, lease_ms=60_000, lead=False)
        await store.register({"p1|v1|1": b"{}"}, ())
    await redis.delete(dead.key("alive", dead.process))  # its alive key lapsed
    found = await living.registrations()
    assert [(r.process, r.job) for r in found] == [(living.process, "p1|v1|1")]
    assert await redis.hlen(living.key("jobs")) == 1


async def test_a_process_whose_alive_key_lapsed_registers_again(redis: Any) -> None:
    store = FleetStore(redis, "key")
    beat = store.beat
    assert await beat(alive_ms=60_000, lease_ms=60_000, lead=True) == (True, True, 0.0)
    assert await beat(alive_ms=60_000, lease_ms=60_000, lead=True) == (True, False, 0.0)
    other = FleetStore(redis, "key")
    held, lapsed, left = await other.beat(alive_ms=60_000, lease_ms=60_000, lead=True)
    assert (held, lapsed) == (False, True) and 59.0 < left <= 60.0  # when to try again
    assert await beat(alive_ms=60_000, lease_ms=60_000, lead=False) == (False, False, 0.0)
    assert await other.beat(alive_ms=60_000, lease_ms=60_000, lead=True) == (True, False, 0.0)


def test_a_jobs_key_names_what_it_follows() -> None:
    state = JobState(project_id="p1", video_id="v1")
    assert job_key(state) == "p1|v1|1"
    state.read_detail = False
    assert job_key(state) == "p1|v1|0"
    assert job_key(JobState(project_id="p2")) == "p2||1"


async def test_without_redis_each_process_polls_its_own_jobs(emu: Emulator) -> None:
    """Redis unreachable: the process polls its own jobs, as without ``redis=``, and
    its requests are paced by a bucket of its own (the shared one lives in Redis)."""
    key = emu.add_team(plan="premium", credits=100_000)
    async with fleet_client(emu, key, "redis://127.0.0.1:1/0") as client:
        (job,) = await create(client, emu, 1)
        emu.advance(1000)
        done = await asyncio.wait_for(job.wait(), 30)
        assert done.status == "COMPLETED" and client.jobs.poller.stats.requests >= 1


async def test_a_message_it_cannot_read_is_dropped_and_the_next_one_taken(
    redis: Any,
) -> None:
    """Another version's (or a broken) message or entry changes nothing and raises
    nothing; a message of this process's own is not taken again; another's moves the
    job."""
    store = FleetStore(redis, "key")
    listener = FleetPoller(
        source=None,  # type: ignore[arg-type]  # nothing is read here
        store=store,
        limiter=SimpleNamespace(rate=Plan.PREMIUM.rate_limit),
    )
    job = JobState(project_id="p1", video_id="v1", status="STARTED")
    listener._registry.add(job)  # awaited here (without starting the fleet's tasks)
    junk = [b"not json", b"{}", b"[]", json.dumps({"j": [[1, 2]]}).encode()]
    junk.append(raw_message("other", [[job_key(job), "d", {"id": 5}]]))
    for data in junk:
        listener._listener.take(data)
    assert not job.done() and job.status == "STARTED"
    detail = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
    own = Message(sender=store.process, changes=(Detail(job_key(job), detail),))
    listener._listener.take(encode_message(own))
    assert not job.done()  # its own message: it took the change when it told it
    # A broken entry beside a good one: the good one is still taken.
    entries = [[job_key(job), "d", {"id": 5}], [job_key(job), "d", wire(detail)]]
    listener._listener.take(raw_message("other", entries))
    assert job.done() and job.result == detail and listener.fleet.taken == 1


# -- notifications finish jobs in whichever process awaits them ----------------------------


@asynccontextmanager
async def served_receiver(
    client: AsyncClient, sock: socket.socket, ca: trustme.CA
) -> AsyncIterator[None]:
    """Serve ``client.webhooks`` over HTTPS on ``sock`` (bound on loopback)."""
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    runner = web.AppRunner(client.webhooks.app("/hooks"), access_log=None)
    await runner.setup()
    try:
        await web.SockSite(runner, sock, ssl_context=server_ctx).start()
        yield
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("outcome", ["COMPLETED", "FAILED"])
async def test_a_notification_received_in_one_process_ends_the_job_awaited_in_another(
    redis_url: str, redis: Any, ca: trustme.CA, outcome: str
) -> None:
    """(``redis``: an emptied database; the emulator's ids repeat from test to test.)"""
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}/hooks"
    failing = 1.0 if outcome == "FAILED" else 0.0
    async with AsyncExitStack() as stack:
        emu = await stack.enter_async_context(
            Emulator(time_scale=60.0, webhook_ssl=trust, failure_rate=failing)
        )
        key = emu.add_team(plan="premium", credits=1000)
        # Polling never comes within the test: only the notification can end the job.
        receiving = await stack.enter_async_context(
            fleet_client(emu, key, redis_url, polling=NEVER, webhook_url=url)
        )
        awaiting = await stack.enter_async_context(
            fleet_client(emu, key, redis_url, polling=NEVER, webhook_url=url)
        )
        await stack.enter_async_context(served_receiver(receiving, sock, ca))
        (job,) = await create(awaiting, emu, 1)
        waiting = asyncio.ensure_future(job.wait(timeout=30))
        for _ in range(500):  # registered and listening
            if poller(awaiting).leading:
                break
            await asyncio.sleep(0.01)
        assert poller(awaiting).leading
        emu.advance(1000)
        await emu.settle()
        (attempt,) = emu.webhook_attempts
        assert attempt.status == 200
        if outcome == "COMPLETED":
            assert (await asyncio.wait_for(waiting, 10)).status == "COMPLETED"
        else:
            with pytest.raises(VideoFailedError) as failed:
                await asyncio.wait_for(waiting, 10)
            assert failed.value.video is not None and str(failed.value.video.message) in str(
                failed.value
            )
        assert receiving.webhooks.jobs_finished == 0  # it awaited nothing itself
        assert awaiting.jobs.poller.stats.requests == 0
        assert receiving.jobs.poller.stats.requests == 0


# -- typed, versioned messages; the fleet's mode; one clock ---------------------------------


def test_a_message_is_written_with_its_version_and_read_back_typed() -> None:
    detail = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
    record = Video(id="v2", project_id="p2", status="STARTED", progress=40)
    changes = (
        Record("p2|v2|1", record),
        Detail("p1|v1|1", detail),
        Failure.of("p3|v3|1", NotFoundError("gone", status_code=404)),
        Notified(detail),
    )
    data = encode_message(Message(sender="a", changes=changes))
    assert json.loads(data)["v"] == WIRE_VERSION
    read = read_message(data)
    assert read == Message(sender="a", changes=changes, version=WIRE_VERSION)
    rebuilt = changes[2].rebuilt()  # type: ignore[union-attr]
    assert isinstance(rebuilt, NotFoundError) and rebuilt.status_code == 404
    # The first release wrote no version: read as version 1.
    old = read_message(raw_message("b", [["p1|v1|1", "d", wire(detail)]]))
    assert old is not None and old.version == 1 and old.changes == (Detail("p1|v1|1", detail),)
    # A version this one does not know is dropped whole; unwanted keys are not read.
    assert read_message(json.dumps({"v": 99, "from": "c", "j": []}).encode()) is None
    only = read_message(data, wanted=lambda key: key == "p1|v1|1")
    assert only is not None and only.changes == (changes[1], changes[3]) and only.dropped == 0


async def test_unreadable_messages_and_entries_are_counted_as_dropped(redis: Any) -> None:
    store = FleetStore(redis, "key")
    fleet = FleetPoller(
        source=None,  # type: ignore[arg-type]  # nothing is read here
        store=store,
        limiter=SimpleNamespace(rate=Plan.PREMIUM.rate_limit),
    )
    job = JobState(project_id="p1", video_id="v1", status="STARTED")
    fleet._registry.add(job)
    fleet._listener.take(b"not json")
    fleet._listener.take(raw_message("other", [[job_key(job), "d", {"id": 5}], [1, 2]]))
    assert fleet.fleet.dropped == 3 and fleet.fleet.taken == 0


def test_the_fleet_modes_move_through_their_table() -> None:
    assert {m.value for m in FleetMode} == {"following", "leading", "alone"}
    for old in FleetMode:
        for new in FleetMode:
            assert FLEET.check(old, new) is new
    with pytest.raises(ValueError, match="fleet mode"):
        FLEET.check(FleetMode.LEADING, "gone")  # type: ignore[arg-type]


class RecordingClock:
    """The real clock, recording every sleep asked of it."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.reads = 0

    def monotonic(self) -> float:
        self.reads += 1
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


async def test_the_clients_clock_reaches_the_bucket_the_store_and_the_fleets_waits(
    redis_url: str, redis: Any
) -> None:
    clock = RecordingClock()
    rate = RateLimit(per_minute=600, burst=2)  # 10 a second: the third token waits
    async with AsyncClient(
        "key", base_url="http://127.0.0.1:1", plan=rate, redis=redis_url, clock=clock
    ) as client:
        bucket = client._caller.limiter
        assert isinstance(bucket, RedisTokenBucket)
        for _ in range(3):
            await bucket.acquire()
        assert any(0 < s <= 0.2 for s in clock.sleeps)  # the bucket's wait
        # The store waits on another process's claim through the same clock.
        store = poller(client).store
        other = FleetStore(redis, "key")
        assert await other.claim_event("e")
        before = len(clock.sleeps)
        claiming = asyncio.ensure_future(store.claim_event("e", poll=0.01))
        await asyncio.sleep(0.05)
        await other.settle_event("e", taken=True)
        assert not await asyncio.wait_for(claiming, 2)
        assert 0.01 in clock.sleeps[before:]
        # A job awaited through the fleet: its beats wait on the clock.
        before = len(clock.sleeps)
        job = client.jobs.from_video_id("v1", project_id="p1")
        waiting = asyncio.ensure_future(job.wait())
        for _ in range(200):
            if poller(client).fleet.leads:
                break
            await asyncio.sleep(0.01)
        lease = poller(client).lease

        def beat_slept() -> bool:
            return lease / 4 in clock.sleeps[before:] or any(
                0 < s <= lease / 4 + 0.01 for s in clock.sleeps[before:]
            )

        for _ in range(200):  # the leader's beat sleeps once it runs (a loaded machine)
            if beat_slept():
                break
            await asyncio.sleep(0.01)
        assert beat_slept()
        waiting.cancel()
