"""The client's one background poller: it reads every watched job, cheaply.

One task per client polls every job that some task is waiting on. A round
costs either one ``GET /v1/video/{id}`` per job or the pages of ``GET /v1/video/list``
(100 projects a page, newest first) down to where the deepest watched job was last
seen, whichever is fewer requests (a few jobs left deep in the list are read by id).
One scan of the list finds running and finished videos alike, and jobs that only know
their project (multi-scene, template generation) by ``projectId``; it reads as deep as
the oldest watched job was last seen, plus two pages, with a few pages in flight at a
time. A job not found there is read by its id. A finished video's detail is read
once, as soon as its page shows it finished (while the round's other pages are still
read), unless the job's ``read_detail`` is off (batches): then the list's record is its
result.

The interval follows a :class:`PollPolicy`: it starts at ``min_interval``, grows
by ``backoff`` each round in which no progress moved, up to ``max_interval``, and
drops back when progress moves; it is jittered, and never shorter than what keeps
the rounds within ``share`` of the plan's rate, so polling leaves submissions their
share (both go through the same first-come-first-served limiter, and reads wait
while a creation waits for a token). Rounds start an interval apart: the time a
round takes is part of the wait, so a video is seen within about one interval of
finishing. The one detail read of each finished video is paced by the limiter alone.

The poller reads through a :class:`VideoSource` (``client.videos`` is one) and
writes what it reads into each job's :class:`~asyncclient.awaiting.state.JobState`;
it knows nothing else of the client.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Callable
from typing import Protocol

import attrs
from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._states import VIDEO, VideoState
from asyncclient.awaiting.state import JobState
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.errors import (
    APIError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
)
from asyncclient.http.gate import Gate
from asyncclient.models.pages import Page
from asyncclient.models.videos import Video, VideoDetail
from asyncclient.ratelimit import RateLimit

__all__ = ["PollPolicy", "Poller", "PollerStats", "VideoSource"]

logger = logging.getLogger("asyncclient")

_PAGE = 100
_EXTRA_PAGES = 2  # pages read beyond what the watched jobs fill, before reading one by one
_READS_AT_ONCE = 32  # detail reads of one round in flight together, at most
_PAGES_AT_ONCE = 8  # list pages of one round in flight together, at most
_LEAST_AT_ONCE = 2  # ...and at least, however small the plan


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
        share: The largest part of the plan's rate that polling's rounds may use. The
            one detail read of each finished video is not paced by it (every way of
            waiting for a video pays it once); like every request it waits for a token
            of the client's limiter, so it never exceeds the plan.
        first_delay: Seconds from the poller's start (its first watched job, when
            none was watched) to its first round: 0 reads at once.
        notified_first: A video a list page shows finished for the first time is not
            read yet: its notification, usually on its way, finishes the job without a
            request. A later round that still finds the job unfinished reads it (its
            notification is late or lost). For polling behind notifications.
    """

    min_interval: float = 2.0
    max_interval: float = 30.0
    backoff: float = 1.5
    jitter: float = 0.1
    share: float = 0.5
    first_delay: float = 0.0
    notified_first: bool = False

    @classmethod
    def safety_net(cls) -> PollPolicy:
        """Polling as a safety net behind notifications (a client with ``webhook_url``).

        The first round a minute after the poller starts, then every one to five
        minutes; a finished video is read only if a later round still finds its job
        unfinished (``notified_first``): a job whose notification never comes still
        ends, a few minutes late, and one whose notification comes costs no read.
        """
        return cls(min_interval=60.0, max_interval=300.0, first_delay=60.0, notified_first=True)

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
            spent: Requests it made that recur while jobs are pending (list pages,
                reads by id), not the one read of each finished video's detail.
            per_second: The plan's rate.
            spread: ``uniform(a, b)`` for the jitter.
        """
        base = self.min_interval if moved else min(self.max_interval, current * self.backoff)
        floor = spent / (per_second * self.share) if spent else 0.0
        return base, max(floor, base * (1.0 + spread(-self.jitter, self.jitter)))


class PollerStats:
    """Counters of what the poller did (tests and benchmarks read them)."""

    __slots__ = ("detail_requests", "job_rounds", "list_requests", "result_reads", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.list_requests = 0
        self.detail_requests = 0
        self.result_reads = 0
        """Of ``detail_requests``: reads of a video that a list page showed finished."""
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
        self._closed = False
        self._list_total: int | None = None  # the list's length at the last round
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
        """Poll ``job`` until it is done or unwatched; starts the task if needed.

        After :meth:`aclose` the job fails at once (``RuntimeError``): nothing would read it.
        """
        if self._closed:
            job.fail(RuntimeError("the client is closed: nothing polls this job"))
            return
        self._jobs[id(job)] = job
        self._interval = self.policy.min_interval
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def unwatch(self, job: JobState) -> None:
        """Stop polling ``job`` (nobody waits on it any more)."""
        self._jobs.pop(id(job), None)

    async def aclose(self) -> None:
        """Stop the background task (the client does this when it closes).

        Jobs still awaited then raise ``RuntimeError``: nothing would read them, nor
        jobs awaited later.
        """
        self._closed = True
        for job in list(self._jobs.values()):
            job.fail(RuntimeError("the client was closed while this job was awaited"))
        self._jobs.clear()
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})  # a cancel aimed at our caller still reaches it
            if not task.cancelled() and task.exception() is not None:
                logger.warning("the poller had stopped on an error", exc_info=task.exception())

    def take_notified(self, detail: VideoDetail) -> int:
        """Hand a confirmed record (a notification's) to every watched job of its video
        or project; return how many it finished. The next round drops them."""
        finished = 0
        for job in list(self._jobs.values()):
            if job.done():
                continue
            if (detail.project_id and job.project_id == detail.project_id) or (
                detail.id in job.video_ids
            ):
                job.take_detail(detail)
                finished += job.done()
        return finished

    async def deliver(self, detail: VideoDetail) -> int:
        """A confirmed notification's record: :meth:`take_notified` (a fleet's poller
        also tells the other processes)."""
        return self.take_notified(detail)

    async def refresh(self, job: JobState) -> None:
        """Read one job once, outside the rounds."""
        await self._round([job])

    # -- the loop ------------------------------------------------------------------------

    async def _run(self) -> None:
        if self.policy.first_delay > 0:
            await self._clock.sleep(self.policy.first_delay)
        while self._jobs:
            jobs = [j for j in self._jobs.values() if not j.done()]
            before = self.stats.requests - self.stats.result_reads
            started = self._clock.monotonic()
            moved = await self._guarded_round(jobs)
            for key in [k for k, j in self._jobs.items() if j.done()]:
                del self._jobs[key]
            if not self._jobs:
                break
            wait = self._next_wait(moved, self.stats.requests - self.stats.result_reads - before)
            # Rounds start an interval apart: the time a round took is part of the wait.
            await self._clock.sleep(max(0.0, wait - (self._clock.monotonic() - started)))

    async def _guarded_round(self, jobs: list[JobState], *, bugs_end_jobs: bool = True) -> bool:
        """:meth:`_round`, where an error ends only what it must: a refused key ends every
        job, a failed request waits for the next round, and a bug (logged) ends the
        jobs too unless ``bugs_end_jobs`` is off (a fleet's holder, whose next round
        tries again). True when some status or progress moved."""
        try:
            return await self._round(jobs)
        except (AuthenticationError, PermissionDeniedError) as exc:
            for job in jobs:
                job.fail(exc)
        except APIError as exc:
            logger.warning("polling failed (%s); trying again later", exc)
        except Exception as exc:  # a bug must not leave the waiters hanging
            logger.exception("polling stopped")
            if bugs_end_jobs:
                for job in jobs:
                    job.fail(exc)
        return False

    def _next_wait(self, moved: bool, spent: int) -> float:
        """The policy's next interval (kept) and the seconds from this round's start to
        the next one's."""
        self._interval, wait = self.policy.next_interval(
            self._interval, moved=moved, spent=spent, per_second=self._limiter.rate.per_second
        )
        return wait

    async def _round(self, jobs: list[JobState]) -> bool:
        """Read every job once; True when some status or progress moved.

        What moved is counted as the reads are taken in (O(changed jobs)), not by
        comparing every job before and after.
        """
        self.stats.rounds += 1
        reads = 0  # one GET a video, or a job that knows none yet
        project_only = False
        deepest = 0
        for job in jobs:
            ids = job.video_count
            reads += ids or 1
            project_only = project_only or not ids
            deepest = max(deepest, job.poll_depth)
        self.stats.job_rounds += reads
        # The list costs the pages down to the deepest job (new jobs are the newest).
        pages = max(deepest // _PAGE + 1, math.ceil(len(jobs) / _PAGE))
        if project_only or reads > pages:
            return await self._list_round(jobs, pages)
        async with TaskScope() as scope:
            reader = _Reader(self, scope)
            for job in jobs:
                for video_id in job.video_ids:
                    reader.want(job, video_id)
        return reader.moved

    async def _list_round(self, jobs: list[JobState], pages: int) -> bool:
        """Find every job in the video list, newest first; read the rest one by one.

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
        found: set[int] = set()
        moved = False
        wait_for_notice = self.policy.notified_first

        async with TaskScope() as scope:
            reader = _Reader(self, scope)

            def take(videos: list[Video], offset: int) -> int:
                nonlocal moved
                for video in videos:
                    job = by_video.get(video.id) or by_project.get(video.project_id or "")
                    if job is None:
                        continue
                    taken = job.take_record(video)
                    moved = moved or taken
                    found.add(id(job))
                    job.poll_depth = offset
                    if not job.done() and VIDEO.is_terminal(VideoState.of(video.status)):
                        if taken and wait_for_notice:  # first seen finished: not read yet
                            continue
                        for video_id in job.needs_detail():
                            reader.want(job, video_id, result=True)
                return len(jobs) - len(found)

            # New jobs are the newest projects; older ones lie where they were last seen.
            most = pages + _EXTRA_PAGES
            await self._pages(most, take)
            for job in jobs:
                if id(job) not in found:
                    for video_id in job.video_ids:
                        reader.want(job, video_id)
        return moved or reader.moved

    def _at_once(self, most: int) -> int:
        """Reads of a kind in flight together: up to ``most``, but no more than the plan
        serves in about a second. A read past the gate may wait for its token in the
        limiter, ahead of a creation that comes later; on a small plan only a couple do.
        """
        return max(_LEAST_AT_ONCE, min(most, int(self._limiter.rate.per_second)))

    async def _pages(self, most: int, take: Callable[[list[Video], int], int]) -> None:
        """Read up to ``most`` pages of the unfiltered list until ``take`` (which returns
        how many jobs are still unseen) says none is left.

        The first page is read alone (it tells the list's length). Then up to
        ``_PAGES_AT_ONCE`` pages (see :meth:`_at_once`) are in flight at any time, each
        taken in as it comes and replaced at once by the next (a slow page holds up no
        other), but only while the unseen jobs outnumber what the pages in flight can
        hold: the round never reads a page that reading one by one would have spared.
        """
        await self.gate.turn()
        self.stats.list_requests += 1
        first = await self.source.list_page(limit=_PAGE, offset=0)
        # Projects made since the last round (by anyone: a fleet's other processes)
        # pushed every watched job down by as many places: look that much deeper.
        grown = first.total - self._list_total if self._list_total is not None else 0
        self._list_total = first.total
        unseen = take(first.items, 0)
        if not unseen or not first.items or first.limit >= first.total:
            return
        step = first.limit or _PAGE
        most += math.ceil(max(0, grown) / step)
        last = min(most, math.ceil(first.total / step))
        arrived: asyncio.Queue[tuple[int, Page[Video]]] = asyncio.Queue()

        async def read(offset: int) -> None:
            await self.gate.turn()
            self.stats.list_requests += 1
            arrived.put_nowait((offset, await self.source.list_page(limit=_PAGE, offset=offset)))

        following = 1
        in_flight = 0
        at_once = self._at_once(_PAGES_AT_ONCE)
        ended = False
        async with TaskScope() as scope:
            while True:
                while (
                    not ended
                    and following < last
                    and in_flight < at_once
                    and unseen > in_flight * step
                ):
                    scope.start(read, following * step)
                    following += 1
                    in_flight += 1
                if not in_flight:
                    return
                offset, page = await arrived.get()
                in_flight -= 1
                unseen = take(page.items, offset)
                ended = ended or not unseen or not page.items


class _Reader:
    """The detail reads of one round: each (job, video) once, a few at a time, each
    started as soon as it is wanted; ``moved`` tells whether one moved a status or
    progress."""

    __slots__ = ("_poller", "_scope", "_slots", "_wanted", "moved")

    def __init__(self, poller: Poller, scope: TaskScope) -> None:
        self._poller = poller
        self._scope = scope
        self._slots = asyncio.Semaphore(poller._at_once(_READS_AT_ONCE))
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
        poller = self._poller
        async with self._slots:
            await poller.gate.turn()
            if job.done():
                return
            poller.stats.detail_requests += 1
            poller.stats.result_reads += result
            try:
                detail = await poller.source.get(video_id)
            except NotFoundError as exc:
                job.fail(exc)
                self.moved = True
                return
        if job.take_detail(detail):
            self.moved = True
