"""The poller: units over a fake in-memory VideoSource on virtual time, then end to end.

The unit tests drive a :class:`Poller` over :class:`FakeVideos` (no HTTP) with the
:class:`FastForward` clock, so no round waits for real; each sleep of the poller is
one round's end, where the test records what the round read.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio

from asyncclient import AsyncClient, RateLimit, VideoJob
from asyncclient.awaiting import listscan
from asyncclient.awaiting import rounds as rounds_module
from asyncclient.awaiting.poller import Poller, PollPolicy
from asyncclient.awaiting.state import JobState
from asyncclient.emulator import Emulator
from asyncclient.errors import (
    APIError,
    AuthenticationError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
)
from asyncclient.http.gate import Gate
from asyncclient.models import Page, Video, VideoDetail
from tests.conftest import connect
from tests.virtual_time import FastForward

# -- a fake VideoSource --------------------------------------------------------------------


class FakeVideos:
    """Projects in memory, newest first, each with its videos; counts every read.

    A video may finish at a virtual time (``finish(..., at=...)``), read from the
    clock, so what a round sees depends only on the rounds before it.
    """

    def __init__(self, clock: FastForward) -> None:
        self.clock = clock
        self.projects: list[str] = []  # newest first
        self.videos: dict[str, list[str]] = {}  # project -> its video ids
        self.records: dict[str, dict[str, Any]] = {}  # video id -> fields
        self.unlisted: set[str] = set()  # projects the list does not show (yet)
        self.gets: list[str] = []
        self.pages: list[int] = []  # offsets read
        self.get_errors: dict[str, APIError] = {}
        self.list_error: APIError | None = None
        self.hold: dict[str, asyncio.Event] = {}  # "get"/"list" reads wait for their event
        self.hold_pages: dict[int, asyncio.Event] = {}  # list reads at these offsets wait
        self.lists_in_flight = 0
        self.most_lists_in_flight = 0
        self.read_seconds = 0.0  # virtual seconds each read takes
        self.before_page: Callable[[int], None] | None = None  # runs as a page is served

    def add(self, vid: str, project: str, *, progress: int = 0, listed: bool = True) -> None:
        if project not in self.videos:
            self.projects.insert(0, project)
            self.videos[project] = []
        self.videos[project].append(vid)
        self.records[vid] = {"status": "STARTED", "progress": progress, "done_at": None}
        if not listed:
            self.unlisted.add(project)

    def finish(self, vid: str, *, at: float = 0.0, status: str = "COMPLETED") -> None:
        self.records[vid].update(done_at=at, end=status)

    def _fields(self, vid: str, project: str) -> dict[str, Any]:
        record = self.records[vid]
        done = record["done_at"] is not None and self.clock.monotonic() >= record["done_at"]
        status = record["end"] if done else record["status"]
        progress = 100 if done else record["progress"]
        return {"id": vid, "project_id": project, "status": status, "progress": progress}

    async def _pause(self, kind: str) -> None:
        self.clock.time += self.read_seconds
        await asyncio.sleep(0)
        if kind in self.hold:
            await self.hold[kind].wait()

    async def get(self, video_id: str) -> VideoDetail:
        self.gets.append(video_id)
        await self._pause("get")
        if video_id in self.get_errors:
            raise self.get_errors[video_id]
        project = next((p for p, vids in self.videos.items() if video_id in vids), None)
        if project is None:
            raise NotFoundError(
                "Video not found", status_code=404, method="GET", path=f"/v1/video/{video_id}"
            )
        return VideoDetail(**self._fields(video_id, project))

    async def list_page(self, *, limit: int = 100, offset: int = 0) -> Page[Video]:
        self.pages.append(offset)
        self.lists_in_flight += 1
        self.most_lists_in_flight = max(self.most_lists_in_flight, self.lists_in_flight)
        try:
            await self._pause("list")
            if offset in self.hold_pages:
                await self.hold_pages[offset].wait()
        finally:
            self.lists_in_flight -= 1
        if self.list_error is not None:
            raise self.list_error
        if self.before_page is not None:
            self.before_page(offset)
        listed = [p for p in self.projects if p not in self.unlisted]
        items = [
            Video(**self._fields(vid, project))
            for project in listed[offset : offset + limit]
            for vid in self.videos[project]
        ]
        return Page(items=items, total=len(listed), limit=limit, offset=offset)


FAST_PLAN = SimpleNamespace(rate=RateLimit(per_minute=60_000, burst=1000))
"""The poller reads only ``limiter.rate``: a fast plan, so the share never sets the wait."""


class Rig:
    """A poller over FakeVideos on a FastForward clock; ``rounds`` holds each round's reads."""

    def __init__(self, policy: PollPolicy | None = None, limiter: Any = FAST_PLAN) -> None:
        self.clock = FastForward(on_sleep=self._round_ended)
        self.source = FakeVideos(self.clock)
        self.rounds: list[tuple[list[int], list[str]]] = []
        self.poller = Poller(
            self.source,
            limiter=limiter,
            policy=policy or PollPolicy(min_interval=2.0, max_interval=30.0, jitter=0.0),
            clock=self.clock,
        )

    def _round_ended(self, seconds: float) -> None:
        self.rounds.append((list(self.source.pages), list(self.source.gets)))
        self.source.pages.clear()
        self.source.gets.clear()

    def job(self, vid: str, project: str) -> JobState:
        """A job that knows its video, as a creation response leaves it."""
        return JobState(project_id=project, video_id=vid, status="STARTED")

    async def until(self, ready: Callable[[], bool], limit: int = 2000) -> None:
        """Let the poller's task run until ``ready()`` (bounded: never hangs)."""
        for _ in range(limit):
            if ready():
                return
            await asyncio.sleep(0)
        raise AssertionError("the poller never got there")


async def wait_done(*jobs: JobState) -> None:
    async def one(job: JobState) -> None:
        while not job.done():
            await job.changed()

    await asyncio.wait_for(asyncio.gather(*(one(j) for j in jobs)), 1.0)


async def close_promptly(poller: Poller) -> None:
    """``poller.aclose()``, which must not hang (it is not cancelled here: that would hide it)."""
    closing = asyncio.ensure_future(poller.aclose())
    done, _ = await asyncio.wait({closing}, timeout=1.0)
    if not done:
        closing.cancel()
        raise AssertionError("aclose() hung")
    closing.result()


@pytest_asyncio.fixture
async def rig() -> AsyncIterator[Rig]:
    made = Rig()
    yield made
    await made.poller.aclose()


# -- which reads a round makes ------------------------------------------------------------


async def test_one_job_is_read_by_its_id(rig: Rig) -> None:
    for i in range(5):
        rig.source.add(f"v{i}", f"p{i}")
    job = rig.job("v3", "p3")
    rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert rig.rounds[:2] == [([], ["v3"]), ([], ["v3"])]  # one GET a round, no list
    assert (job.status, job.progress) == ("STARTED", 0)
    assert rig.poller.stats.list_requests == 0


@pytest.mark.parametrize(
    ("watched", "pages"), [(2, [0]), (100, [0]), (101, [0, 100]), (250, [0, 100, 200])]
)
async def test_many_jobs_are_read_through_list_pages(
    rig: Rig, watched: int, pages: list[int]
) -> None:
    for i in range(300):  # older projects first: v299 is the newest
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(299, 299 - watched, -1)]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 2)
    # A round reads the pages that hold the watched jobs, and no video by id; the
    # second starts each page at a job it knows the place of (leaving room at a page's
    # end for projects made while it is read), so as many pages, not the same offsets.
    assert rig.rounds[0] == (pages, [])
    assert len(rig.rounds[1][0]) == len(pages) and rig.rounds[1][1] == []
    assert all(job.progress == 0 for job in jobs)
    assert rig.poller.stats.job_rounds >= 2 * watched


async def test_the_pages_of_a_large_round_are_read_together_and_none_extra(rig: Rig) -> None:
    """1,000 watched jobs below 150 newer projects: eleven pages hold them. After the first
    page the round keeps several in flight at once, and reads exactly the pages a
    page-by-page scan would have read (no page goes out that the unseen jobs cannot need)."""
    for i in range(1300):  # v1299 is the newest
        rig.source.add(f"v{i}", f"p{i}")
    watched = range(1149, 149, -1)  # below the 150 newest, 1,000 of them
    jobs = [rig.job(f"v{i}", f"p{i}") for i in watched]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1)
    pages, gets = rig.rounds[0]
    assert sorted(pages) == [k * 100 for k in range(12)] and gets == []
    assert pages[0] == 0  # the first page alone tells the list's length
    assert 1 < rig.source.most_lists_in_flight <= rounds_module._PAGES_AT_ONCE


async def test_a_slow_page_holds_up_no_other_page_of_the_round(rig: Rig) -> None:
    """While one page is slow, the pages after it keep going out as others arrive (a
    sliding window, not waves that wait for their slowest page)."""
    for i in range(1100):
        rig.source.add(f"v{i}", f"p{i}")
    for i in range(1099, 99, -1):  # 1,000 jobs on the pages at offsets 0 to 900
        rig.poller.watch(rig.job(f"v{i}", f"p{i}"))
    rig.source.hold_pages[100] = held = asyncio.Event()
    await rig.until(lambda: 900 in rig.source.pages)
    assert not rig.rounds  # the round is still waiting for page 100...
    assert sorted(rig.source.pages) == [k * 100 for k in range(10)]  # ...and read the rest
    held.set()
    await rig.until(lambda: len(rig.rounds) >= 1)


async def test_a_finished_video_is_read_while_the_later_pages_are_in_flight(rig: Rig) -> None:
    """The detail read of a video that the first page shows finished goes out at once,
    not after the round's last page."""
    for i in range(300):
        rig.source.add(f"v{i}", f"p{i}")
    for i in range(299, -1, -1):
        rig.poller.watch(rig.job(f"v{i}", f"p{i}"))
    rig.source.finish("v299")  # the newest: on page 0
    for offset in (100, 200):
        rig.source.hold_pages[offset] = asyncio.Event()
    await rig.until(lambda: rig.source.gets == ["v299"])
    assert not rig.rounds and sorted(rig.source.pages) == [0, 100, 200]
    for held in rig.source.hold_pages.values():
        held.set()
    await rig.until(lambda: len(rig.rounds) >= 1)


async def test_a_few_jobs_left_deep_in_the_list_are_read_on_their_own_page(rig: Rig) -> None:
    """1,000 jobs, of which 997 finish at once: the three left lie on the tenth page.
    The first page (the list's length) and the one page at their place (2 requests)
    are cheaper than reading them by id (3) or the ten pages down to them."""
    for i in range(1000):  # v999 is the newest
        rig.source.add(f"v{i}", f"p{i}")
    for i in range(999, -1, -1):
        rig.poller.watch(rig.job(f"v{i}", f"p{i}"))
    for i in range(3, 1000):
        rig.source.finish(f"v{i}")
    await rig.until(lambda: len(rig.rounds) >= 3)
    pages, gets = rig.rounds[0]
    assert sorted(pages) == [k * 100 for k in range(10)] and len(gets) == 997
    assert rig.rounds[1:3] == [([0, 997], [])] * 2


async def test_rounds_start_an_interval_apart_however_long_a_round_takes() -> None:
    """A round that takes 0.5 s of a 2 s interval is followed by a 1.5 s sleep: rounds
    begin every 2 s (a detection delay of at most one interval), not 2 s after the last
    round ended; a round longer than the interval is followed at once."""
    rig = Rig(PollPolicy(min_interval=2.0, max_interval=2.0, jitter=0.0))
    rig.source.add("v1", "p1")
    rig.poller.watch(rig.job("v1", "p1"))
    rig.source.read_seconds = 0.5
    await rig.until(lambda: len(rig.clock.sleeps) >= 2)
    rig.source.read_seconds = 3.0
    await rig.until(lambda: len(rig.clock.sleeps) >= 3)
    assert rig.clock.sleeps[:3] == [1.5, 1.5, 0.0]
    await rig.poller.aclose()


async def test_polling_waits_while_a_creation_waits_for_a_token(rig: Rig) -> None:
    """Submissions first: while the gate is held (a creation waits for its token), the
    poller sends nothing; once it is released, the round goes on."""
    rig.source.add("v1", "p1")
    job = rig.job("v1", "p1")
    with rig.poller.gate.foreground():
        rig.poller.watch(job)
        for _ in range(50):
            await asyncio.sleep(0)
        assert rig.source.gets == [] and rig.source.pages == []
        assert rig.poller.stats.requests == 0
    await rig.until(lambda: rig.source.gets == ["v1"])


async def test_a_gate_lets_background_work_through_only_when_nobody_waits() -> None:
    gate = Gate()
    await asyncio.wait_for(gate.turn(), 1)  # nobody waits: at once
    order: list[str] = []

    async def background() -> None:
        await gate.turn()
        order.append("background")

    with gate.foreground():
        with gate.foreground():
            task = asyncio.ensure_future(background())
            await asyncio.sleep(0)
            order.append("first done")
        await asyncio.sleep(0)
        assert not task.done()  # one still waits
        order.append("second done")
    await asyncio.wait_for(task, 1)
    assert order == ["first done", "second done", "background"]
    assert gate.waiting == 0


async def test_a_project_only_job_is_found_by_project_id(rig: Rig) -> None:
    rig.source.add("x", "p-other")
    rig.source.add("a7", "p7", progress=40)
    rig.source.add("b7", "p7", progress=10)
    rig.source.add("y", "p-newer")
    job = JobState(project_id="p7")  # a template generation: no video id yet
    rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert rig.rounds[0] == ([0], [])
    assert (job.video_ids, job.status, job.progress) == (["a7", "b7"], "STARTED", 10)

    soon = rig.clock.monotonic() + 1.0  # from the next round on
    rig.source.finish("a7", at=soon)
    rig.source.finish("b7", at=soon)
    await wait_done(job)
    assert job.result is not None and job.result.id == "a7"
    assert [v.id for v in job.videos] == ["a7", "b7"]
    # The last round found both finished in the list, then read each one's detail once.
    assert (rig.source.pages, rig.source.gets) == ([0], ["a7", "b7"])
    assert all(gets == [] for _, gets in rig.rounds)


async def test_a_job_missing_from_the_list_is_read_by_id(rig: Rig) -> None:
    rig.source.add("v1", "p1")
    rig.source.add("v2", "p2", progress=30, listed=False)  # the list lags behind
    one, two = rig.job("v1", "p1"), rig.job("v2", "p2")
    rig.poller.watch(one)
    rig.poller.watch(two)
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert rig.rounds[0] == ([0], ["v2"])
    assert (one.progress, two.progress) == (0, 30)


async def test_not_found_fails_only_that_job(rig: Rig) -> None:
    rig.source.add("v1", "p1")
    one, gone = rig.job("v1", "p1"), rig.job("v-gone", "p-gone")  # deleted meanwhile
    rig.poller.watch(one)
    rig.poller.watch(gone)
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert isinstance(gone.error, NotFoundError)
    assert not one.done() and one.error is None
    assert rig.poller.watching == 1
    # Later rounds read the job still watched, alone: by its id.
    assert rig.rounds[1] == ([], ["v1"])


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("Authentication required", status_code=401),
        PermissionDeniedError("Forbidden", status_code=403),
    ],
    ids=["401", "403"],
)
@pytest.mark.parametrize("watched", [1, 3])
async def test_a_refused_key_fails_every_watched_job(
    rig: Rig, error: APIError, watched: int
) -> None:
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(watched)]
    for i in range(watched):
        rig.source.add(f"v{i}", f"p{i}")
        rig.source.get_errors[f"v{i}"] = error
    rig.source.list_error = error
    for job in jobs:
        rig.poller.watch(job)
    await wait_done(*jobs)
    assert all(job.error is error for job in jobs)
    assert rig.poller.watching == 0
    assert rig.poller.stats.rounds == 1


async def test_a_server_error_is_tried_again_next_round(rig: Rig) -> None:
    rig.source.add("v1", "p1")
    rig.source.add("v2", "p2")
    rig.source.list_error = InternalServerError("oops", status_code=500)
    jobs = [rig.job("v1", "p1"), rig.job("v2", "p2")]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert not any(job.done() for job in jobs) and rig.poller.watching == 2
    rig.source.list_error = None
    await rig.until(lambda: jobs[0].progress == 0)


async def test_a_server_error_on_a_later_page_ends_the_round_and_the_next_one_goes_on(
    rig: Rig,
) -> None:
    """A page in flight that fails stops the round's other reads (none is left running)
    and the next round reads everything again."""
    for i in range(500):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(499, -1, -1)]
    for job in jobs:
        rig.poller.watch(job)
    rig.source.hold_pages[100] = held = asyncio.Event()
    failing = rig.source.list_page

    cancelled: list[int] = []

    async def list_page(*, limit: int = 100, offset: int = 0) -> Page[Video]:
        if offset == 300 and not rig.rounds:
            raise InternalServerError("oops", status_code=500)
        try:
            return await failing(limit=limit, offset=offset)
        except asyncio.CancelledError:
            cancelled.append(offset)
            raise

    rig.source.list_page = list_page  # type: ignore[method-assign]
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert 100 in cancelled  # the held page was cancelled before the round ended
    held.set()
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert sorted(rig.rounds[1][0]) == [0, 100, 200, 300, 400]
    assert all(job.progress == 0 for job in jobs) and rig.poller.watching == 500


async def test_aclose_fails_the_waiting_jobs_and_leaves_no_task() -> None:
    before = asyncio.all_tasks()
    rig = Rig()
    for i in range(3):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(3)]
    for job in jobs:
        rig.poller.watch(job)
    waiting = asyncio.ensure_future(wait_done(*jobs))
    await rig.until(lambda: len(rig.rounds) >= 1)
    rig.source.hold["list"] = asyncio.Event()  # the next round hangs in its reads
    await rig.until(lambda: bool(rig.source.pages))

    await close_promptly(rig.poller)
    await waiting
    for job in jobs:
        assert isinstance(job.error, RuntimeError)
        assert "client was closed" in str(job.error)
    assert rig.poller.watching == 0
    assert asyncio.all_tasks() == before  # the poller's task and its readers are gone
    await rig.poller.aclose()  # twice is fine


async def test_aclose_with_reads_in_flight_cancels_every_reader() -> None:
    before = asyncio.all_tasks()
    rig = Rig()
    jobs = []
    for i in range(3):
        rig.source.add(f"v{i}", f"p{i}", listed=False)  # read one by one, together
        jobs.append(rig.job(f"v{i}", f"p{i}"))
        rig.poller.watch(jobs[-1])
    rig.source.hold["get"] = asyncio.Event()
    await rig.until(lambda: len(rig.source.gets) == 3)
    assert len(asyncio.all_tasks()) > len(before) + 1  # the task and its readers
    await close_promptly(rig.poller)
    assert asyncio.all_tasks() == before
    assert all(isinstance(job.error, RuntimeError) for job in jobs)


async def test_a_cancel_aimed_at_the_closer_reaches_it() -> None:
    rig = Rig()
    rig.source.add("v0", "p0", listed=False)
    job = rig.job("v0", "p0")
    rig.poller.watch(job)
    slow = asyncio.Event()

    async def stubborn_get(video_id: str) -> VideoDetail:  # ignores one cancellation
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await slow.wait()
        raise AssertionError("unreachable")

    rig.source.get = stubborn_get  # type: ignore[method-assign]
    await rig.until(lambda: rig.poller.watching == 1)
    await asyncio.sleep(0.01)  # the round is in its read
    closer = asyncio.ensure_future(rig.poller.aclose())
    await asyncio.sleep(0)
    closer.cancel()  # e.g. a shutdown deadline around client.aclose()
    slow.set()
    with pytest.raises(asyncio.CancelledError):
        await closer


async def test_the_poller_sleeps_on_the_injected_clock() -> None:
    rig = Rig(PollPolicy(min_interval=2.0, max_interval=30.0, backoff=1.5, jitter=0.0))
    rig.source.add("v1", "p1")
    rig.source.finish("v1", at=20.0)  # virtual seconds
    job = rig.job("v1", "p1")
    started = time.perf_counter()
    rig.poller.watch(job)
    await wait_done(job)
    assert time.perf_counter() - started < 0.5
    # The first read moved progress (none -> 0): the minimum; then no progress: backoff.
    assert rig.clock.sleeps == [2.0, 3.0, 4.5, 6.75, 10.125]
    assert rig.clock.monotonic() == pytest.approx(26.375)
    assert job.result is not None and job.result.status == "COMPLETED"
    assert rig.poller.stats.rounds == 6 and rig.poller.watching == 0
    await rig.poller.aclose()


async def test_the_share_of_the_plan_sets_the_least_wait() -> None:
    # 6 requests a minute, polling held to half: one list page a round -> 20 s at least.
    slow = SimpleNamespace(rate=RateLimit(per_minute=6, burst=10))
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=5.0, jitter=0.0, share=0.5), slow)
    for i in range(2):
        rig.source.add(f"v{i}", f"p{i}")
        rig.poller.watch(rig.job(f"v{i}", f"p{i}"))
    await rig.until(lambda: len(rig.rounds) >= 3)
    assert rig.clock.sleeps[:3] == [20.0, 20.0, 20.0]
    await rig.poller.aclose()


# -- end to end, against the emulator ----------------------------------------------------


@pytest_asyncio.fixture
async def client(emu: Emulator) -> AsyncIterator[AsyncClient]:
    async with connect(emu, credits=1_000_000) as c:
        yield c


async def talking(client: AsyncClient, emu: Emulator, **kw: Any) -> VideoJob:
    cat = emu.catalog
    return await client.projects.create_talking_avatar(
        script="Hello", avatar_id=cat.avatars[0], voice_id=cat.voices[0], **kw
    )


@pytest.mark.emulator(seed=3)
@pytest.mark.emulator(time_scale=1.0)  # the service's clock moves as the test moves it
async def test_many_jobs_are_polled_through_list_pages(emu: Emulator, client: AsyncClient) -> None:
    jobs = [await talking(client, emu, name=f"v{i}") for i in range(250)]
    poller = client.jobs.poller
    waiting = asyncio.gather(*(job.wait() for job in jobs))
    deadline = time.monotonic() + 60
    while poller.stats.rounds < 4:  # 5 service seconds a round: no video finishes yet
        seen = poller.stats.rounds
        while poller.stats.rounds == seen:
            assert time.monotonic() < deadline, f"the poller stopped after {seen} rounds"
            await asyncio.sleep(0.01)
        emu.advance(5)
    rounds_before_done = poller.stats.rounds
    emu.advance(1000)
    videos = await asyncio.wait_for(waiting, 10)
    assert {v.name for v in videos} == {f"v{i}" for i in range(250)}
    stats = poller.stats
    # Each finished video is read once (a few more when the list shifts between two
    # pages of a round and a running video looks finished for a moment).
    assert 250 <= stats.detail_requests <= 260
    # 3 pages a round for 250 processing videos, instead of 250 GETs a round.
    assert stats.list_requests <= 3 * stats.rounds + 1
    assert rounds_before_done >= 3
    per_job_polling = 250 * stats.rounds
    assert stats.requests < 0.3 * per_job_polling


def test_interval_backs_off_comes_down_and_respects_the_share() -> None:
    policy = PollPolicy(jitter=0.0)
    per_second = RateLimit(per_minute=60, burst=100).per_second  # 1 a second
    base = policy.min_interval

    def step(moved: bool, spent: int) -> float:
        nonlocal base
        base, wait = policy.next_interval(base, moved=moved, spent=spent, per_second=per_second)
        return wait

    assert step(moved=False, spent=0) == 3.0
    assert step(moved=False, spent=0) == 4.5
    for _ in range(10):
        step(moved=False, spent=0)
    assert step(moved=False, spent=0) == 30.0
    assert step(moved=True, spent=0) == 2.0
    # 5 requests in a round at 1 a second, polling held to half of it: 10 s at least.
    assert step(moved=True, spent=5) == 10.0
    # The jitter spreads the wait by up to 10% either way.
    jittered = PollPolicy(jitter=0.1)
    _, low = jittered.next_interval(2.0, moved=True, spent=0, per_second=1.0, spread=min)
    _, high = jittered.next_interval(2.0, moved=True, spent=0, per_second=1.0, spread=max)
    assert (round(low, 6), round(high, 6)) == (1.8, 2.2)


async def test_a_move_of_progress_wakes_only_who_follows_progress() -> None:
    """``waiter()`` (what ``await job`` waits on) is resolved by the outcome alone: a
    round that moves every job's progress wakes none of the tasks awaiting jobs, while
    ``changed()`` (``job.updates()``) still sees each move."""
    job = JobState(project_id="p1", video_id="v1", status="STARTED")
    outcome = job.waiter()
    change = asyncio.ensure_future(job.changed())
    await asyncio.sleep(0)
    assert job.take_record(Video(id="v1", project_id="p1", status="STARTED", progress=40))
    await asyncio.sleep(0)
    assert change.done() and not outcome.done()
    job.take_record(Video(id="v1", project_id="p1", status="COMPLETED", progress=100))
    assert not outcome.done()  # finished, but its detail is still to be read
    job.take_detail(VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100))
    assert outcome.done() and job.result is not None
    failing = JobState(project_id="p2", video_id="v2", status="STARTED")
    ended = failing.waiter()
    failing.fail(RuntimeError("closed"))
    assert ended.done()
    failing.forget(ended)


async def test_the_share_paces_the_rounds_not_the_read_of_each_finished_video() -> None:
    """6 requests a minute, polling's rounds held to half: a round of one list page and
    two reads of finished videos waits 20 s (the page), not 60 s. Those reads are made
    once a video, whatever the rounds; the limiter's tokens pace them like any request."""
    slow = SimpleNamespace(rate=RateLimit(per_minute=6, burst=10))
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=5.0, jitter=0.0, share=0.5), slow)
    for i in range(3):
        rig.source.add(f"v{i}", f"p{i}")
        rig.poller.watch(rig.job(f"v{i}", f"p{i}"))
    rig.source.finish("v1")
    rig.source.finish("v2")
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert rig.rounds[0] == ([0], ["v2", "v1"])
    assert rig.poller.stats.result_reads == 2
    assert rig.rounds[1] == ([], ["v0"]) and rig.clock.sleeps[:2] == [20.0, 20.0]
    await rig.poller.aclose()


async def test_a_notified_record_finishes_the_watched_jobs_of_its_video(rig: Rig) -> None:
    rig.source.add("v1", "p1")
    rig.source.add("v2", "p2")
    one, two = rig.job("v1", "p1"), rig.job("v2", "p2")
    with rig.poller.gate.foreground():  # no round reads them meanwhile
        rig.poller.watch(one)
        rig.poller.watch(two)
        done = VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100)
        assert rig.poller.take_notified(done) == 1
        assert rig.poller.take_notified(done) == 0  # already finished
    assert one.result is done and not two.done()


async def test_a_small_plan_keeps_few_reads_in_flight() -> None:
    """On a plan of 60 requests a minute, two pages at a time and two detail reads at a
    time: reads waiting in the limiter would go ahead of a later creation."""
    slow = SimpleNamespace(rate=RateLimit(per_minute=60, burst=100))
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=5.0, jitter=0.0), slow)
    for i in range(1000):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(999, -1, -1)]
    for job in jobs:
        rig.poller.watch(job)
    for i in range(900, 1000):  # page 0: finished
        rig.source.finish(f"v{i}")
    rig.source.hold["get"] = held = asyncio.Event()
    await rig.until(lambda: len(rig.source.gets) >= 2 and 900 in rig.source.pages)
    assert rig.source.most_lists_in_flight == 2
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(rig.source.gets) == 2  # the other reads wait for a slot
    held.set()
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert sum(job.done() for job in jobs) == 100
    await rig.poller.aclose()


async def test_jobs_pushed_down_by_projects_made_since_are_found_in_the_list() -> None:
    """500 projects made between two rounds push 150 watched jobs to offsets 500-649:
    the next round reads that much deeper instead of reading 150 videos by id."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    for i in range(150):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(150)]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1)
    for i in range(500):  # someone else's projects, newer than every watched one
        rig.source.add(f"other{i}", f"q{i}")
    await rig.until(lambda: len(rig.rounds) >= 2)
    pages, gets = rig.rounds[1]
    assert gets == []  # all found in the list, none read by id...
    assert pages == [0, 500, 598]  # ...on the pages where they lie now, not the ones above
    await rig.poller.aclose()


async def test_behind_notifications_a_finished_video_is_read_only_when_seen_again() -> None:
    """``notified_first``: the round that first sees a video finished leaves it to its
    notification; the next round, finding the job still unfinished, reads it."""
    policy = PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0, notified_first=True)
    rig = Rig(policy)
    for i in range(3):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [rig.job(f"v{i}", f"p{i}") for i in range(3)]
    for job in jobs:
        rig.poller.watch(job)
    rig.source.finish("v0")
    rig.source.finish("v1")
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert rig.rounds[0][1] == []  # seen finished, not read
    assert jobs[0].status == "COMPLETED" and not jobs[0].done()
    jobs[1].take_detail(VideoDetail(id="v1", project_id="p1", status="COMPLETED", progress=100))
    await rig.until(lambda: len(rig.rounds) >= 2)
    assert rig.rounds[1][1] == ["v0"]  # its notification never came: read now
    assert jobs[0].done() and jobs[1].done() and not jobs[2].done()
    await rig.poller.aclose()
    assert PollPolicy.safety_net().notified_first and not PollPolicy().notified_first


async def test_old_jobs_the_pages_do_not_reach_are_found_within_a_few_rounds() -> None:
    """Issue "A million rows": the oldest rows of a large batch never completed. Five
    template jobs (no video id to read them by) lie under 450 newer projects whose jobs
    already ended; a round reads only as deep as the watched jobs were last seen (never,
    here) plus two pages. A job the pages did not reach is placed past them, so the next
    rounds read deeper until it is found."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    for i in range(5):
        rig.source.add(f"old{i}", f"p-old{i}")
        rig.source.finish(f"old{i}")
    for i in range(450):  # newer projects: a batch's rows that ended (nobody watches them)
        rig.source.add(f"new{i}", f"p-new{i}")
    jobs = [JobState(project_id=f"p-old{i}") for i in range(5)]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: all(job.done() for job in jobs) or len(rig.rounds) >= 6, 20_000)
    assert all(job.done() for job in jobs), [(job.list_rank, job.list_below) for job in jobs]
    assert len(rig.rounds) <= 3  # found in the list within a few rounds
    await rig.poller.aclose()


async def test_a_job_pushed_deep_is_read_on_the_page_where_it_lies_now() -> None:
    """Issue "A million rows": the first rows of a large run were seen finished only
    after its last creation. A job seen once keeps its place counted from the oldest; when
    3,000 newer projects push it down, the next round reads the page where it lies now
    (and the first page, for the list's length), not the thirty pages above it."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    rig.source.add("old", "p-old")
    for i in range(120):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [JobState(project_id="p-old")] + [JobState(project_id=f"p{i}") for i in range(120)]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1)
    assert jobs[0].list_rank == 1 and jobs[-1].list_rank == 121  # counted from the oldest
    for i in range(3000):
        rig.source.add(f"new{i}", f"q{i}")
    rig.source.finish("old")
    await rig.until(lambda: len(rig.rounds) >= 2)
    pages, gets = rig.rounds[1]
    assert jobs[0].done() and gets == ["old"]  # its result, once a page showed it finished
    assert pages == [0, 3000, 3098]  # the first page, then where the 121 jobs lie now
    await rig.poller.aclose()


async def test_a_job_the_list_moves_while_the_round_reads_is_looked_for_again() -> None:
    """Projects made while a round reads push the watched jobs down between its pages
    (a batch still submitting): a page that does not show a job it was read for is
    followed, in the same round, by one at the place its own total gives."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    for i in range(400):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [JobState(project_id=f"p{i}") for i in range(400)]
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1)
    made = itertools.count()

    def submitting(offset: int) -> None:
        for _ in range(30 if offset else 1000):  # a thousand before the round, more as it reads
            n = next(made)
            rig.source.add(f"new{n}", f"q{n}")

    rig.source.before_page = submitting
    for i in range(400):
        rig.source.finish(f"v{i}")
    await rig.until(lambda: all(job.done() for job in jobs), 20_000)
    assert len(rig.rounds) == 1  # every one found in the second round (the poller then ends)
    pages, gets = rig.source.pages, rig.source.gets
    assert sorted(gets) == sorted(f"v{i}" for i in range(400))  # their results only
    # The first page, five for the 400 jobs, and the chases where the list moved them:
    # no more than the pages again and a few (30 a page, 8 in flight, is a fast list).
    assert pages[:2] == [0, 1000] and len(pages) <= 2 * (1 + 5) + listscan.CHASES
    await rig.poller.aclose()


async def test_a_resumed_batch_s_oldest_rows_are_found_in_one_pass_down_the_list() -> None:
    """A resumed batch picks up rows an earlier process sent, among them its very first
    ones (their ``done`` never reached the journal before the kill): never seen by this
    process, under 6,000 newer projects. The first round reads the new jobs' pages from
    the top and places the old ones below them; the next reads down from there, to the
    end of the list if need be, in one pass: they are found in the second round, not a
    few pages a round (which took minutes at 100,000 rows)."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    for i in range(3):
        rig.source.add(f"old{i}", f"p-old{i}")
        rig.source.finish(f"old{i}")
    for i in range(6000):  # the earlier process's other rows (done) and the new ones
        rig.source.add(f"v{i}", f"p{i}")
    old = [JobState(project_id=f"p-old{i}") for i in range(3)]
    new = [JobState(project_id=f"p{i}") for i in range(5900, 6000)]
    for job in old + new:
        job.read_detail = False
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1, 50_000)
    assert not any(job.done() for job in old) and all(job.list_below for job in old)
    assert rig.rounds[0][0] == [0, 100, 200, 300]  # the new jobs' pages, and two more
    await rig.until(lambda: all(job.done() for job in old), 50_000)
    assert len(rig.rounds) == 1  # found in the second round (then nothing was left)
    assert max(rig.source.pages) == 6000  # read down to the end of the list, once
    await rig.poller.aclose()


async def test_new_jobs_are_all_found_in_one_round_while_the_list_grows_under_it() -> None:
    """A batch's first round: 3,394 new jobs, and ten projects made while each page is
    read (the batch still sends). The pages from the top go as far as the projects made
    since the round's first page push the oldest jobs: none is left for the next round."""
    rig = Rig(PollPolicy(min_interval=1.0, max_interval=1.0, jitter=0.0))
    for i in range(3394):
        rig.source.add(f"v{i}", f"p{i}")
    jobs = [JobState(project_id=f"p{i}") for i in range(3394)]
    made = itertools.count()

    def submitting(offset: int) -> None:
        for _ in range(10):
            n = next(made)
            rig.source.add(f"new{n}", f"q{n}")

    rig.source.before_page = submitting
    for job in jobs:
        rig.poller.watch(job)
    await rig.until(lambda: len(rig.rounds) >= 1, 200_000)
    assert all(job.list_rank for job in jobs), [j.list_below for j in jobs if not j.list_rank]
    await rig.poller.aclose()
