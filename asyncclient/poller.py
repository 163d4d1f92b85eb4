"""The client's one background poller: it reads every watched job, cheaply.

One task per client polls every job that some task is waiting on. A round
costs either one ``GET /v1/video/{id}`` per job (when few are watched) or a few
pages of ``GET /v1/video/list`` (100 projects a page, newest first), whichever
is fewer requests. One scan of the list finds running and finished videos
alike, and jobs that only know their project (multi-scene, template
generation) by ``projectId``; it reads as deep as the oldest watched job was
last seen, plus two pages. A job not found there is read by its id. A finished
video's detail is read once, unless the job's ``read_detail`` is off (batches):
then the list's record is its result.

The interval follows a :class:`PollPolicy`: it starts at ``min_interval``, grows
by ``backoff`` each round in which no progress moved, up to ``max_interval``, and
drops back when progress moves; it is jittered, and never shorter than what keeps
polling within ``share`` of the plan's rate, so polling leaves submissions their
share (both go through the same first-come-first-served limiter).

The poller reads through a :class:`VideoSource` (``client.videos`` is one) and
writes what it reads into each job's :class:`~asyncclient._tracking.JobState`;
it knows nothing else of the client.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import random
from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs
from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._gate import Gate
from asyncclient._tasks import run_all
from asyncclient._tracking import JobState
from asyncclient.errors import (
    APIError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
)
from asyncclient.models.pages import Page
from asyncclient.models.videos import Video, VideoDetail
from asyncclient.ratelimit import RateLimit

__all__ = ["PollPolicy", "Poller", "PollerStats", "VideoSource"]

logger = logging.getLogger("asyncclient")

_PAGE = 100
_EXTRA_PAGES = 2  # pages read beyond what the watched jobs fill, before reading one by one
_READS_AT_ONCE = 4  # detail reads of one round in flight together
_PAGES_AT_ONCE = 4  # list pages of one round in flight together


class VideoSource(Protocol):
    """What the poller reads: one video, and a page of the video list."""

    async def get(self, video_id: str) -> VideoDetail: ...

    async def list_page(self, *, limit: int = ..., offset: int = ...) -> Page[Video]: ...


class _HasRate(Protocol):
    @property
    def rate(self) -> RateLimit: ...


@frozen(kw_only=True)
class PollPolicy:
    """How often the poller reads: a pure decision, tested without a poller.

    Attributes:
        min_interval: Seconds between rounds while progress moves.
        max_interval: The longest wait between rounds.
        backoff: Growth of the interval per round without progress.
        jitter: +/- fraction of random spread on each interval.
        share: The largest part of the plan's rate that polling may use.
    """

    min_interval: float = 2.0
    max_interval: float = 30.0
    backoff: float = 1.5
    jitter: float = 0.1
    share: float = 0.5

    def next_interval(
        self,
        current: float,
        *,
        moved: bool,
        spent: int,
        per_second: float,
        spread: Callable[[float, float], float] = random.uniform,
    ) -> tuple[float, float]:
        """The new base interval and the seconds to wait before the next round.

        Args:
            current: The base interval of the round just done.
            moved: Whether some status or progress moved in it.
            spent: Requests it made.
            per_second: The plan's rate.
            spread: ``uniform(a, b)`` for the jitter.
        """
        base = self.min_interval if moved else min(self.max_interval, current * self.backoff)
        floor = spent / (per_second * self.share) if spent else 0.0
        return base, max(floor, base * (1.0 + spread(-self.jitter, self.jitter)))


class PollerStats:
    """Counters of what the poller did (tests and benchmarks read them)."""

    __slots__ = ("detail_requests", "job_rounds", "list_requests", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.list_requests = 0
        self.detail_requests = 0
        self.job_rounds = 0
        """Jobs read, summed over rounds: what one GET per job per round would cost."""

    @property
    def requests(self) -> int:
        """Every request the poller made."""
        return self.list_requests + self.detail_requests


class Poller:
    """Polls every watched job of one client in one background task.

    Args:
        source: Where videos are read (``client.videos``).
        limiter: The client's limiter; its rate sizes polling's share.
        policy: When to poll.
        clock: Sleeps between rounds.
        gate: Work that polling yields to: each read waits its :meth:`~Gate.turn` (the
            client's creations hold it while they wait for a token).
    """

    def __init__(
        self,
        source: VideoSource,
        *,
        limiter: _HasRate,
        policy: PollPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        gate: Gate | None = None,
    ) -> None:
        self.source = source
        self.gate = gate or Gate()
        self.policy = policy or PollPolicy()
        self._limiter = limiter
        self._clock = clock
        self._jobs: dict[int, JobState] = {}
        self._task: asyncio.Task[None] | None = None
        self._interval = self.policy.min_interval
        self._depth: dict[int, int] = {}  # id(job) -> offset of the page it was last seen on
        self.stats = PollerStats()

    def __repr__(self) -> str:
        return f"<Poller watching {len(self._jobs)} jobs every ~{self._interval:.1f} s>"

    @property
    def min_interval(self) -> float:
        """The policy's ``min_interval`` (settable, like the other policy values)."""
        return self.policy.min_interval

    @min_interval.setter
    def min_interval(self, value: float) -> None:
        self.policy = attrs.evolve(self.policy, min_interval=value)

    @property
    def max_interval(self) -> float:
        """The policy's ``max_interval``."""
        return self.policy.max_interval

    @max_interval.setter
    def max_interval(self, value: float) -> None:
        self.policy = attrs.evolve(self.policy, max_interval=value)

    @property
    def watching(self) -> int:
        """How many jobs are watched now."""
        return len(self._jobs)

    def watch(self, job: JobState) -> None:
        """Poll ``job`` until it is done or unwatched; starts the task if needed."""
        self._jobs[id(job)] = job
        self._interval = self.policy.min_interval
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def unwatch(self, job: JobState) -> None:
        """Stop polling ``job`` (nobody waits on it any more)."""
        self._jobs.pop(id(job), None)
        self._depth.pop(id(job), None)

    async def aclose(self) -> None:
        """Stop the background task (the client does this when it closes).

        Jobs still awaited then raise ``RuntimeError``: nothing would read them.
        """
        for job in list(self._jobs.values()):
            job.fail(RuntimeError("the client was closed while this job was awaited"))
        self._jobs.clear()
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})  # a cancel aimed at our caller still reaches it
            if not task.cancelled() and task.exception() is not None:
                logger.warning("the poller had stopped on an error", exc_info=task.exception())

    async def refresh(self, job: JobState) -> None:
        """Read one job once, outside the rounds."""
        await self._round([job])

    # -- the loop ------------------------------------------------------------------------

    async def _run(self) -> None:
        while self._jobs:
            jobs = [j for j in self._jobs.values() if not j.done()]
            before = self.stats.requests
            moved = False
            try:
                moved = await self._round(jobs)
            except (AuthenticationError, PermissionDeniedError) as exc:
                for job in jobs:
                    job.fail(exc)
            except APIError as exc:
                logger.warning("polling failed (%s); trying again later", exc)
            except Exception as exc:  # a bug must not leave the waiters hanging
                logger.exception("polling stopped")
                for job in jobs:
                    job.fail(exc)
            for key in [k for k, j in self._jobs.items() if j.done()]:
                del self._jobs[key]
                self._depth.pop(key, None)
            if not self._jobs:
                break
            self._interval, wait = self.policy.next_interval(
                self._interval,
                moved=moved,
                spent=self.stats.requests - before,
                per_second=self._limiter.rate.per_second,
            )
            await self._clock.sleep(wait)

    async def _round(self, jobs: list[JobState]) -> bool:
        """Read every job once; True when some status or progress moved.

        What moved is counted as the reads are taken in (O(changed jobs)), not by
        comparing every job before and after.
        """
        self.stats.rounds += 1
        with_ids = project_only = 0
        for job in jobs:
            ids = len(job.video_ids)
            with_ids += ids
            project_only += not ids
        self.stats.job_rounds += with_ids + project_only  # one GET a video, or a job
        list_cost = math.ceil(len(jobs) / _PAGE)
        if project_only or with_ids > list_cost:
            return await self._list_round(jobs)
        return await self._read(dict.fromkeys((j, v) for j in jobs for v in j.video_ids))

    async def _list_round(self, jobs: list[JobState]) -> bool:
        """Find every job in the video list, newest first; read the rest one by one."""
        by_video = {v: job for job in jobs for v in job.video_ids}
        by_project = {job.project_id: job for job in jobs if job.project_id}
        found: set[int] = set()
        moved = False

        def take(videos: list[Video], offset: int) -> int:
            nonlocal moved
            for video in videos:
                job = by_video.get(video.id) or by_project.get(video.project_id or "")
                if job is not None:
                    moved = job.take_record(video) or moved
                    found.add(id(job))
                    self._depth[id(job)] = offset
            return len(jobs) - len(found)

        # New jobs are the newest projects; older ones lie where they were last seen.
        deepest = max((self._depth.get(id(j), 0) for j in jobs), default=0)
        most = max(deepest // _PAGE + 1, math.ceil(len(jobs) / _PAGE)) + _EXTRA_PAGES
        await self._pages(most, take)
        unseen = [(j, v) for j in jobs if id(j) not in found for v in j.video_ids]
        reads = [(j, v) for j in jobs if not j.done() for v in j.needs_detail()] + unseen
        read_moved = await self._read(dict.fromkeys(reads))
        return moved or read_moved

    async def _read(self, reads: dict[tuple[JobState, str], None]) -> bool:
        """GET the detail of each (job, video) once, a few at a time; True when some
        status or progress moved."""
        moved = False

        async def read(job: JobState, video_id: str) -> None:
            nonlocal moved
            if job.done():
                return
            await self.gate.turn()
            if job.done():
                return
            self.stats.detail_requests += 1
            try:
                detail = await self.source.get(video_id)
            except NotFoundError as exc:
                job.fail(exc)
                moved = True
                return
            moved = job.take_detail(detail) or moved

        calls: list[Callable[[], Awaitable[None]]] = [
            functools.partial(read, job, video_id) for job, video_id in reads
        ]
        await run_all(calls, limit=_READS_AT_ONCE)
        return moved

    async def _pages(self, most: int, take: Callable[[list[Video], int], int]) -> None:
        """Read up to ``most`` pages of the unfiltered list until ``take`` (which returns
        how many jobs are still unseen) says none is left.

        The first page is read alone (it tells the list's length). The rest go out in
        waves, as many together as the unseen jobs need pages at the least (at most
        ``_PAGES_AT_ONCE``): a round over thousands of jobs takes a few round trips, not
        one per page, and never reads a page that reading one by one would have spared.
        """
        await self.gate.turn()
        self.stats.list_requests += 1
        first = await self.source.list_page(limit=_PAGE, offset=0)
        unseen = take(first.items, 0)
        if not unseen or not first.items or first.limit >= first.total:
            return
        step = first.limit or _PAGE
        offsets = [k * step for k in range(1, min(most, math.ceil(first.total / step)))]
        while offsets and unseen:
            wave = offsets[: max(1, min(_PAGES_AT_ONCE, math.ceil(unseen / step)))]
            del offsets[: len(wave)]
            for offset, page in zip(wave, await self._read_pages(wave), strict=True):
                unseen = take(page.items, offset)
                if not unseen or not page.items:
                    return

    async def _read_pages(self, offsets: list[int]) -> list[Page[Video]]:
        """The pages at ``offsets``, read together."""
        pages: dict[int, Page[Video]] = {}

        async def read(offset: int) -> None:
            await self.gate.turn()
            self.stats.list_requests += 1
            pages[offset] = await self.source.list_page(limit=_PAGE, offset=offset)

        calls: list[Callable[[], Awaitable[None]]] = [
            functools.partial(read, offset) for offset in offsets
        ]
        await run_all(calls, limit=_PAGES_AT_ONCE)
        return [pages[offset] for offset in offsets]
