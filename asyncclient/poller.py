"""The client's one background poller: it reads every watched job, cheaply.

One task per client polls every job that some task is waiting on. A round
costs either one ``GET /v1/video/{id}`` per job (when few are watched) or a few
pages of ``GET /v1/video/list?status=processing`` (100 a page), whichever is
fewer requests; a video that leaves the processing list has finished, and its
detail is read once. Jobs that only know their project (multi-scene, template
generation) are matched by ``projectId`` in those pages, or in the unfiltered
list when already finished.

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
from typing import TYPE_CHECKING, Any

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
_TERMINAL = ("COMPLETED", "FAILED")
_SCAN_PAGES = 5  # unfiltered pages read at most per round to find finished projects


class PollerStats:
    """Counters of what the poller did (tests and benchmarks read them)."""

    __slots__ = ("detail_requests", "list_requests", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.list_requests = 0
        self.detail_requests = 0

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
        self._processing_total = 0
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

    async def aclose(self) -> None:
        """Stop the background task (the client does this when it closes)."""
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
            for key in [k for k, j in self._jobs.items() if j.done()]:
                del self._jobs[key]
            if not self._jobs:
                break
            await self._sleep(self._next_interval(moved, self.stats.requests - before))

    def _next_interval(self, moved: bool, spent: int) -> float:
        if moved:
            self._interval = self.min_interval
        else:
            self._interval = min(self.max_interval, self._interval * self.backoff)
        floor = 0.0
        rate = getattr(self._client.limiter, "rate", None)
        if rate is not None and spent:
            floor = spent / (rate.per_second * self.share)
        spread = 1.0 + random.uniform(-self.jitter, self.jitter)
        return max(floor, self._interval * spread)

    async def _round(self, jobs: list[VideoJob]) -> bool:
        """Read every job once; True when some status or progress moved."""
        self.stats.rounds += 1
        before = [(j.status, j.progress, len(j.video_ids)) for j in jobs]
        with_ids = [j for j in jobs if j.video_ids]
        project_only = [j for j in jobs if not j.video_ids]
        per_job_cost = sum(len(j.video_ids) for j in with_ids)
        list_cost = max(1, math.ceil(self._processing_total / _PAGE))
        if project_only or per_job_cost > list_cost:
            await self._list_round(jobs)
        else:
            await self._read(dict.fromkeys((j, v) for j in with_ids for v in j.video_ids))
        after = [(j.status, j.progress, len(j.video_ids)) for j in jobs]
        return before != after

    async def _list_round(self, jobs: list[VideoJob]) -> None:
        processing = await self._pages({"status": "processing"}, limit_pages=None)
        by_video = {v.id: v for v in processing}
        by_project: dict[str, list[Video]] = {}
        for video in processing:
            if video.project_id:
                by_project.setdefault(video.project_id, []).append(video)
        vanished: list[tuple[VideoJob, str]] = []
        for job in jobs:
            for video in by_project.get(job.project_id or "", []):
                job._apply_list_item(video)
            for video_id in job.video_ids:
                if video_id in by_video:
                    job._apply_list_item(by_video[video_id])
                elif job._states[video_id][0] not in _TERMINAL:
                    vanished.append((job, video_id))  # finished, or not started yet
        missing = [j for j in jobs if not j.video_ids]
        if missing:
            await self._find_projects(missing)
        reads = vanished + [(j, v) for j in jobs for v in j._needs_detail()]
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

    async def _find_projects(self, jobs: list[VideoJob]) -> None:
        """Look for finished projects' videos in the unfiltered list, newest first."""
        wanted = {j.project_id: j for j in jobs if j.project_id}
        found = await self._pages(
            {}, limit_pages=_SCAN_PAGES, stop=lambda seen: set(wanted) <= seen
        )
        for video in found:
            job = wanted.get(video.project_id or "")
            if job is not None:
                job._apply_list_item(video)

    async def _pages(
        self,
        params: dict[str, Any],
        *,
        limit_pages: int | None,
        stop: Callable[[Any], bool] | None = None,
    ) -> list[Video]:
        videos: list[Video] = []
        seen_projects: set[str | None] = set()
        offset = 0
        pages = 0
        while True:
            self.stats.list_requests += 1
            page = await self._client.videos.list_page(limit=_PAGE, offset=offset, **params)
            pages += 1
            videos.extend(page.items)
            seen_projects.update(v.project_id for v in page.items)
            if params.get("status") == "processing":
                self._processing_total = page.total
            if not page.items or offset + page.limit >= page.total:
                break
            if limit_pages is not None and pages >= limit_pages:
                break
            if stop is not None and stop(seen_projects):
                break
            offset += page.limit
        return videos
