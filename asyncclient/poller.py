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

The interval starts at ``min_interval``, grows by ``backoff`` each round in
which no progress moved, up to ``max_interval``, and drops back when progress
moves; it is jittered, and never shorter than what keeps polling within
``share`` of the plan's rate, so polling leaves submissions their share (both go
through the same first-come-first-served limiter, so neither starves the other).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from asyncclient.errors import (
    APIError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
)
from asyncclient.models.videos import Video

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient
    from asyncclient.jobs import VideoJob

__all__ = ["Poller", "PollerStats"]

logger = logging.getLogger("asyncclient")

_PAGE = 100
_EXTRA_PAGES = 2  # pages read beyond what the watched jobs fill, before reading one by one


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
        client: The client whose limiter and retries the requests go through.
        min_interval: Seconds between rounds while progress moves.
        max_interval: The longest wait between rounds.
        backoff: Growth of the interval per round without progress.
        jitter: +/- fraction of random spread on each interval.
        share: The largest part of the plan's rate that polling may use.
        sleep: Awaitable sleep (tests inject one).
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        min_interval: float = 2.0,
        max_interval: float = 30.0,
        backoff: float = 1.5,
        jitter: float = 0.1,
        share: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._client = client
        self.min_interval = min_interval
        self.max_interval = max_interval
        self.backoff = backoff
        self.jitter = jitter
        self.share = share
        self._sleep = sleep
        self._jobs: dict[int, VideoJob] = {}
        self._task: asyncio.Task[None] | None = None
        self._interval = min_interval
        self._depth: dict[int, int] = {}  # id(job) -> offset of the page it was last seen on
        self.stats = PollerStats()

    def __repr__(self) -> str:
        return f"<Poller watching {len(self._jobs)} jobs every ~{self._interval:.1f} s>"

    @property
    def watching(self) -> int:
        """How many jobs are watched now."""
        return len(self._jobs)

    def watch(self, job: VideoJob) -> None:
        """Poll ``job`` until it is done or unwatched; starts the task if needed."""
        self._jobs[id(job)] = job
        self._interval = self.min_interval
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def unwatch(self, job: VideoJob) -> None:
        """Stop polling ``job`` (nobody waits on it any more)."""
        self._jobs.pop(id(job), None)
        self._depth.pop(id(job), None)

    async def aclose(self) -> None:
        """Stop the background task (the client does this when it closes).

        Jobs still awaited then raise ``RuntimeError``: nothing would read them.
        """
        for job in list(self._jobs.values()):
            job._fail(RuntimeError("the client was closed while this job was awaited"))
        self._jobs.clear()
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def refresh(self, job: VideoJob) -> None:
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
                    job._fail(exc)
            except APIError as exc:
                logger.warning("polling failed (%s); trying again later", exc)
            except Exception as exc:  # a bug must not leave the waiters hanging
                logger.exception("polling stopped")
                for job in jobs:
                    job._fail(exc)
            for key in [k for k, j in self._jobs.items() if j.done()]:
                del self._jobs[key]
                self._depth.pop(key, None)
            if not self._jobs:
                break
            await self._sleep(self._next_interval(moved, self.stats.requests - before))

    def _next_interval(self, moved: bool, spent: int) -> float:
        if moved:
            self._interval = self.min_interval
        else:
            self._interval = min(self.max_interval, self._interval * self.backoff)
        floor = 0.0
        if spent:
            floor = spent / (self._client.limiter.rate.per_second * self.share)
        spread = 1.0 + random.uniform(-self.jitter, self.jitter)
        return max(floor, self._interval * spread)

    async def _round(self, jobs: list[VideoJob]) -> bool:
        """Read every job once; True when some status or progress moved."""
        self.stats.rounds += 1
        self.stats.job_rounds += sum(max(1, len(j.video_ids)) for j in jobs)
        before = [(j.status, j.progress, len(j.video_ids)) for j in jobs]
        with_ids = [j for j in jobs if j.video_ids]
        project_only = [j for j in jobs if not j.video_ids]
        per_job_cost = sum(len(j.video_ids) for j in with_ids)
        list_cost = math.ceil(len(jobs) / _PAGE)
        if project_only or per_job_cost > list_cost:
            await self._list_round(jobs)
        else:
            await self._read(dict.fromkeys((j, v) for j in with_ids for v in j.video_ids))
        after = [(j.status, j.progress, len(j.video_ids)) for j in jobs]
        return before != after

    async def _list_round(self, jobs: list[VideoJob]) -> None:
        """Find every job in the video list, newest first; read the rest one by one."""
        by_video = {v: job for job in jobs for v in job.video_ids}
        by_project = {job.project_id: job for job in jobs if job.project_id}
        found: set[int] = set()

        def take(videos: list[Video], offset: int) -> bool:
            for video in videos:
                job = by_video.get(video.id) or by_project.get(video.project_id or "")
                if job is not None:
                    job._apply_list_item(video)
                    found.add(id(job))
                    self._depth[id(job)] = offset
            return len(found) == len(jobs)

        # New jobs are the newest projects; older ones lie where they were last seen.
        deepest = max((self._depth.get(id(j), 0) for j in jobs), default=0)
        most = max(deepest // _PAGE + 1, math.ceil(len(jobs) / _PAGE)) + _EXTRA_PAGES
        await self._pages(most, take)
        unseen = [(j, v) for j in jobs if id(j) not in found for v in j.video_ids]
        reads = [(j, v) for j in jobs for v in j._needs_detail()] + unseen
        await self._read(dict.fromkeys(reads))

    async def _read(self, reads: dict[tuple[VideoJob, str], None]) -> None:
        """GET the detail of each (job, video) once."""
        for job, video_id in reads:
            if job.done():
                continue
            self.stats.detail_requests += 1
            try:
                detail = await self._client.videos.get(video_id)
            except NotFoundError as exc:
                job._fail(exc)
                continue
            job._apply_detail(detail)

    async def _pages(self, most: int, take: Callable[[list[Video], int], bool]) -> None:
        """Read up to ``most`` pages of the unfiltered list until ``take`` says enough."""
        offset = 0
        for _ in range(most):
            self.stats.list_requests += 1
            page = await self._client.videos.list_page(limit=_PAGE, offset=offset)
            if take(page.items, offset) or not page.items or offset + page.limit >= page.total:
                return
            offset += page.limit
