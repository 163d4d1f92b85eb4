"""One round of the poller: every job given read once, by id or through the list pages.

A round costs either one ``GET /v1/video/{id}`` per job or the pages of ``GET
/v1/video/list`` (100 projects a page, newest first) that hold the jobs, whichever is
fewer requests. One scan of the list finds running and finished videos alike, and jobs
that only know their project by ``projectId``; it reads the page where each job lies
now, however deep (:mod:`~asyncclient.awaiting.listscan`), a few pages in flight at a
time. A job not found there is read by its id. A finished video's detail is read once, as
soon as its page shows it finished (while the round's other pages are still read),
unless the job's ``read_detail`` is off (batches): then the list's record is its result.

What a round takes into a job, it also tells the round's :class:`PollListener` (only
what moved): a fleet's lease holder tells the other processes that way.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from asyncclient._states import VIDEO, VideoState
from asyncclient.awaiting.listscan import PAGE, ListScan, list_cost
from asyncclient.awaiting.policy import HasRate, PollerStats
from asyncclient.awaiting.state import JobState
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.errors import NotFoundError
from asyncclient.http.gate import Gate
from asyncclient.models.pages import Page
from asyncclient.models.videos import Video, VideoDetail

__all__ = ["QUIET", "PollListener", "Rounds", "VideoSource", "fail"]

_READS_AT_ONCE = 32  # detail reads of one round in flight together, at most
_PAGES_AT_ONCE = 8  # list pages of one round in flight together, at most
_LEAST_AT_ONCE = 2  # ...and at least, however small the plan


class VideoSource(Protocol):
    """What the poller reads: one video, and a page of the video list."""

    async def get(self, video_id: str) -> VideoDetail: ...

    async def list_page(self, *, limit: int = ..., offset: int = ...) -> Page[Video]: ...


class PollListener(Protocol):
    """Told what a round took into the jobs it read; only what moved, right after the
    job took it. A fleet's lease holder implements it to tell the other processes."""

    def took_record(self, job: JobState, video: Video) -> None:
        """``job`` took a list record of one of its videos, and it moved."""
        ...

    def took_detail(self, job: JobState, detail: VideoDetail) -> None:
        """``job`` took a detail record, and it moved (or the job ended)."""
        ...

    def failed(self, job: JobState, error: BaseException) -> None:
        """``error`` is about to end ``job`` (it was not done)."""
        ...


class _Quiet:
    """A listener told nothing (a lone process's rounds)."""

    __slots__ = ()

    def took_record(self, job: JobState, video: Video) -> None:
        pass

    def took_detail(self, job: JobState, detail: VideoDetail) -> None:
        pass

    def failed(self, job: JobState, error: BaseException) -> None:
        pass


QUIET: PollListener = _Quiet()
"""The listener of rounds nobody listens to."""


def fail(job: JobState, error: BaseException, listener: PollListener) -> None:
    """End ``job`` with ``error`` (unless it is done), telling ``listener`` first."""
    if not job.done():
        listener.failed(job, error)
        job.fail(error)


class Rounds:
    """Reads a set of jobs once per :meth:`read`, through ``source``; counts in ``stats``.

    Args:
        source: Where videos are read.
        gate: Work that polling yields to: each read waits its turn.
        stats: The poller's counters.
        limiter: Its rate bounds the reads in flight together.
    """

    __slots__ = ("_lead", "_limiter", "_list_total", "gate", "source", "stats")

    def __init__(
        self, source: VideoSource, *, gate: Gate, stats: PollerStats, limiter: HasRate
    ) -> None:
        self.source = source
        self.gate = gate
        self.stats = stats
        self._limiter = limiter
        self._list_total: int | None = None  # the list's length at the last round
        self._lead = 0  # projects made while a page of the last round was in flight

    async def read(
        self, jobs: list[JobState], *, notified_first: bool, listener: PollListener
    ) -> bool:
        """Read every job once; True when some status or progress moved.

        What moved is counted as the reads are taken in (O(changed jobs)), not by
        comparing every job before and after. ``notified_first``: a video a page shows
        finished for the first time is not read yet (its notification is on its way).
        """
        self.stats.rounds += 1
        reads = 0  # one GET a video, or a job that knows none yet
        project_only = False
        for job in jobs:
            ids = job.video_count
            reads += ids or 1
            project_only = project_only or not ids
        self.stats.job_rounds += reads
        if project_only or reads > list_cost(jobs, self._list_total):
            return await self._list_round(jobs, notified_first, listener)
        async with TaskScope() as scope:
            reader = _Reader(self, scope, listener)
            for job in jobs:
                for video_id in job.video_ids:
                    reader.want(job, video_id)
        return reader.moved

    async def _list_round(
        self, jobs: list[JobState], wait_for_notice: bool, listener: PollListener
    ) -> bool:
        """Find the jobs in the video list (see :mod:`~asyncclient.awaiting.listscan`);
        read the rest one by one.

        A finished video's detail read starts as soon as its page shows it finished,
        while the other pages are still being read.
        """
        by_video: dict[str, JobState] = {}
        by_project: dict[str, JobState] = {}
        for job in jobs:
            for video_id in job.video_ids:
                by_video[video_id] = job
            if job.project_id:
                by_project[job.project_id] = job
        moved = False

        async with TaskScope() as scope:
            reader = _Reader(self, scope, listener)

            def take(page: Page[Video], offset: int) -> set[int]:
                nonlocal moved
                shown: set[int] = set()
                place, last = offset - 1, None
                for video in page.items:
                    if video.project_id is None or video.project_id != last:
                        place += 1  # offsets count projects; a project's videos come together
                    last = video.project_id
                    job = by_video.get(video.id) or by_project.get(video.project_id or "")
                    if job is None:
                        continue
                    shown.add(id(job))
                    job.list_rank, job.list_below = page.total - place, 0
                    taken = job.take_record(video)
                    if taken:
                        listener.took_record(job, video)
                    moved = moved or taken
                    if not job.done() and VIDEO.is_terminal(VideoState.of(video.status)):
                        if taken and wait_for_notice:  # first seen finished: not read yet
                            continue
                        for video_id in job.needs_detail():
                            reader.want(job, video_id, result=True)
                return shown

            at_once = self.at_once(_PAGES_AT_ONCE)
            scan = ListScan(self._read_page, take, at_once=at_once, lead=self._lead)
            missing = await scan.run(jobs, grown_since=self._list_total)
            self._list_total, self._lead = scan.total, scan.lead
            for job in missing:  # not in the pages read: by id (a template job knows none)
                for video_id in job.video_ids:
                    reader.want(job, video_id)
        return moved or reader.moved

    async def _read_page(self, offset: int) -> Page[Video]:
        await self.gate.turn()
        self.stats.list_requests += 1
        return await self.source.list_page(limit=PAGE, offset=offset)

    def at_once(self, most: int) -> int:
        """Reads of a kind in flight together: up to ``most``, but no more than the plan
        serves in about a second. A read past the gate may wait for its token in the
        limiter, ahead of a creation that comes later; on a small plan only a couple do.
        """
        return max(_LEAST_AT_ONCE, min(most, int(self._limiter.rate.per_second)))


class _Reader:
    """The detail reads of one round: each (job, video) once, a few at a time, each
    started as soon as it is wanted; ``moved`` tells whether one moved a status or
    progress."""

    __slots__ = ("_listener", "_rounds", "_scope", "_slots", "_wanted", "moved")

    def __init__(self, rounds: Rounds, scope: TaskScope, listener: PollListener) -> None:
        self._rounds = rounds
        self._scope = scope
        self._listener = listener
        self._slots = asyncio.Semaphore(rounds.at_once(_READS_AT_ONCE))
        self._wanted: set[tuple[int, str]] = set()
        self.moved = False

    def want(self, job: JobState, video_id: str, *, result: bool = False) -> None:
        """Read ``video_id`` of ``job`` (unless this round already does); ``result``: a
        page showed it finished (the read that takes its outcome in)."""
        key = (id(job), video_id)
        if key not in self._wanted:
            self._wanted.add(key)
            self._scope.start(self._read, job, video_id, result)

    async def _read(self, job: JobState, video_id: str, result: bool) -> None:
        if job.done():
            return
        rounds = self._rounds
        async with self._slots:
            await rounds.gate.turn()
            if job.done():
                return
            rounds.stats.detail_requests += 1
            rounds.stats.result_reads += result
            try:
                detail = await rounds.source.get(video_id)
            except NotFoundError as exc:
                fail(job, exc, self._listener)
                self.moved = True
                return
        if job.take_detail(detail):
            self._listener.took_detail(job, detail)
            self.moved = True
