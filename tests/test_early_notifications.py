"""A notification that arrives before its job is awaited is kept (issue 30, point 4).

The service notifies as soon as a video finishes, which may be before any task awaits
its job (a stateless worker awaits it later, by id). The receiver confirms it through the
API and answers 200, so the service sends it no more: the confirmed outcome must finish a
job awaited after it at once, not a minute later when the safety-net polling comes.
``wait(timeout=0)`` is the check: it returns only a job finished when the wait starts.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from contextlib import AsyncExitStack
from datetime import datetime, timezone
from typing import Any

import pytest
import trustme

from asyncclient import AsyncClient, JobTimeoutError, VideoFailedError
from asyncclient.awaiting.outcomes import KeptOutcomes
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.awaiting.state import JobState
from asyncclient.emulator import Emulator
from asyncclient.models.videos import VideoDetail
from tests.test_client_webhooks import fleet_of_one
from tests.test_fleet_poller import create, fleet_client, served_receiver

# Polling that never comes within a test: a job can only end by a notification.
NEVER = PollPolicy(min_interval=3600.0, max_interval=3600.0, jitter=0.0, first_delay=3600.0)


async def test_a_job_awaited_after_its_notification_ends_at_once(ca: trustme.CA) -> None:
    # The client's default polling with notifications: the safety net, a minute away.
    async with fleet_of_one(ca, polling=None) as (emu, client, _):
        cat = emu.catalog
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        emu.advance(1000)  # it completes; its notification is received and confirmed
        await emu.settle()
        assert [a.status for a in emu.webhook_attempts] == [200]
        assert client.webhooks.jobs_finished == 0  # nobody awaited it yet
        sent = client.stats.requests
        detail = await job.wait(timeout=0)  # done when the wait starts: no timeout
        assert detail.id == job.video_id and detail.status == "COMPLETED" and detail.url
        # A stateless worker rebuilds the job from its stored ids later: ended too.
        by_id = client.jobs.from_video_id(detail.id)
        assert (await by_id.wait(timeout=0)) == detail
        by_project = client.jobs.from_project_id(str(job.project_id))
        assert (await by_project.wait(timeout=0)) == detail
        assert client.stats.requests == sent  # not one read: no polling round, no GET
        assert client.jobs.poller.stats.requests == 0


async def test_a_failure_notified_before_the_wait_fails_the_job_at_once(ca: trustme.CA) -> None:
    async with fleet_of_one(ca, polling=None) as (emu, client, _):
        cat = emu.catalog
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        assert job.video_id is not None
        emu.fail_video(job.video_id, "the avatar could not be rendered")
        await emu.settle()
        assert [a.status for a in emu.webhook_attempts] == [200]
        with pytest.raises(VideoFailedError, match="the avatar could not be rendered"):
            await job.wait(timeout=0)
        assert client.jobs.poller.stats.requests == 0


async def test_without_a_notification_the_wait_still_polls(ca: trustme.CA) -> None:
    """The check can fail: a job nothing was told of is not done when its wait starts."""
    async with fleet_of_one(ca, polling=None) as (emu, client, _):
        cat = emu.catalog
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        with pytest.raises(JobTimeoutError):
            await job.wait(timeout=0)


# -- the bound ---------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds

    def now_utc(self) -> datetime:  # pragma: no cover - not read here
        return datetime.now(timezone.utc)


def _finished(video_id: str, project_id: str | None = None, status: str = "COMPLETED") -> Any:
    return VideoDetail(id=video_id, status=status, project_id=project_id)


def test_kept_outcomes_hold_at_most_their_limit_the_oldest_dropped_first() -> None:
    kept = KeptOutcomes(limit=3, clock=_Clock())  # type: ignore[arg-type]
    for i in range(10):
        assert kept.keep(_finished(f"v{i}", f"p{i}"))
    assert len(kept) == 3
    for i in range(7):  # dropped, by video and by project
        assert kept.hand_to(JobState(project_id=None, video_id=f"v{i}")) == 0
        assert kept.hand_to(JobState(project_id=f"p{i}")) == 0
    job = JobState(project_id="p9")
    assert kept.hand_to(job) == 1 and job.done() and job.result == _finished("v9", "p9")
    assert len(kept._by_project) == 3  # the project index shrinks with it


def test_kept_outcomes_expire_and_keep_only_finished_records() -> None:
    clock = _Clock()
    kept = KeptOutcomes(limit=100, ttl=60.0, clock=clock)  # type: ignore[arg-type]
    assert not kept.keep(_finished("started", status="STARTED"))
    assert kept.keep(_finished("v1", "p1"))
    clock.now = 59.0
    assert kept.hand_to(JobState(project_id=None, video_id="v1")) == 1
    clock.now = 60.0
    job = JobState(project_id="p1")
    assert kept.hand_to(job) == 0 and not job.done()
    assert len(kept) == 0  # an expired record found is dropped
    with pytest.raises(ValueError, match="limit"):
        KeptOutcomes(limit=-1)


async def test_the_clients_memory_of_notifications_stays_within_its_bound() -> None:
    async with AsyncClient("k", base_url="http://127.0.0.1:1") as client:
        poller = client.jobs.poller
        poller.kept.limit = 50  # type: ignore[attr-defined]
        for i in range(500):
            poller.take_notified(_finished(f"v{i}", f"p{i}"))  # type: ignore[attr-defined]
        assert len(poller.kept) == 50  # type: ignore[attr-defined]
        job = client.jobs.from_video_id("v499")
        assert (await job.wait(timeout=0)).id == "v499"
        with pytest.raises(JobTimeoutError):
            await client.jobs.from_video_id("v0").wait(timeout=0)


# -- across a fleet (Redis) ------------------------------------------------------------------


async def test_across_the_fleet_a_notification_before_the_wait_ends_it_in_any_process(
    redis_url: str, redis: Any, ca: trustme.CA
) -> None:
    """Process A receives the notification while nobody awaits the job; then A, and B
    (a fleet's other process, by the stored id), await it: both end without polling."""
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}/hooks"
    async with AsyncExitStack() as stack:
        emu = await stack.enter_async_context(Emulator(time_scale=60.0, webhook_ssl=trust))
        key = emu.add_team(plan="premium", credits=1000)
        a = await stack.enter_async_context(
            fleet_client(emu, key, redis_url, polling=NEVER, webhook_url=url)
        )
        b = await stack.enter_async_context(
            fleet_client(emu, key, redis_url, polling=NEVER, webhook_url=url)
        )
        await stack.enter_async_context(served_receiver(a, sock, ca))
        (job,) = await create(a, emu, 1)
        emu.advance(1000)
        await emu.settle()
        assert [attempt.status for attempt in emu.webhook_attempts] == [200]
        detail = await job.wait(timeout=0)  # in A: kept in the process
        assert detail.status == "COMPLETED"
        later = b.jobs.from_video_id(detail.id, project_id=job.project_id)
        assert (await asyncio.wait_for(later.wait(timeout=30), 10)) == detail  # from Redis
        assert a.jobs.poller.stats.requests == 0
        assert b.jobs.poller.stats.requests == 0
