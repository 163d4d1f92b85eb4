"""The client's one background poller: it reads every watched job, cheaply.

One task per client polls every job that some task is waiting on; a round reads each
of them once, by id or through the pages of the video list, whichever costs fewer
requests (:class:`~asyncclient.awaiting.rounds.Rounds`).

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
it knows nothing else of the client. It is extended through two protocols it
declares, never by subclassing:

- a :class:`PollStrategy` decides who polls, and when: the background task runs its
  ``run``. :class:`OwnJobs` (the default) polls the jobs this process watches; a
  fleet's poller polls the fleet's registered jobs while it holds the lease, and only
  listens otherwise.
- a :class:`PollListener`, handed to :meth:`Poller.poll`, is told what that round took
  into its jobs (a fleet's lease holder tells the other processes).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

import attrs
from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.awaiting.outcomes import KeptOutcomes
from asyncclient.awaiting.policy import HasRate, PollerStats, PollPolicy
from asyncclient.awaiting.rounds import QUIET, PollListener, Rounds, VideoSource, fail
from asyncclient.awaiting.state import JobState
from asyncclient.errors import APIError, AuthenticationError, PermissionDeniedError
from asyncclient.http.forks import keep, track
from asyncclient.http.gate import Gate
from asyncclient.lanes import in_bulk
from asyncclient.models.videos import VideoDetail

__all__ = [
    "QUIET",
    "HasRate",
    "JobPoller",
    "OwnJobs",
    "PollListener",
    "PollPolicy",
    "PollStrategy",
    "Poller",
    "PollerStats",
    "RoundDone",
    "VideoSource",
]

logger = logging.getLogger("asyncclient")


@frozen
class RoundDone:
    """What one round did: whether some status or progress moved, and the requests it
    made that recur while jobs are pending (what paces the next round)."""

    moved: bool
    spent: int


class PollStrategy(Protocol):
    """Who polls, and when: the poller's background task is :meth:`run`.

    It starts when a job is watched and none runs; it may return once nothing is
    left to poll (the next watched job starts it again).
    """

    async def run(self, poller: Poller) -> None:
        """Poll through ``poller`` (:meth:`Poller.poll`, :meth:`Poller.next_wait`)."""
        ...


class OwnJobs:
    """A lone process: poll the jobs this poller watches, an interval apart, until none
    is left."""

    __slots__ = ()

    async def run(self, poller: Poller) -> None:
        clock = poller.clock
        if poller.policy.first_delay > 0:
            await clock.sleep(poller.policy.first_delay)
        while poller.watching:
            started = clock.monotonic()
            done = await poller.poll(poller.pending())
            poller.sweep()
            if not poller.watching:
                break
            # Rounds start an interval apart: the time a round took is part of the wait.
            wait = poller.next_wait(done)
            await clock.sleep(max(0.0, wait - (clock.monotonic() - started)))


class JobPoller(Protocol):
    """What jobs, the client, its notifications and its faces need of a poller: a
    :class:`Poller`, or a fleet's poller that composes one."""

    policy: PollPolicy
    min_interval: float
    max_interval: float

    @property
    def source(self) -> VideoSource: ...

    @property
    def gate(self) -> Gate: ...

    @property
    def clock(self) -> Clock:
        """The clock it polls by; jobs time their waits out on it."""
        ...

    @property
    def stats(self) -> PollerStats: ...

    @property
    def watching(self) -> int: ...

    def watch(self, job: JobState) -> None: ...

    def unwatch(self, job: JobState) -> None: ...

    async def refresh(self, job: JobState) -> None: ...

    async def deliver(self, detail: VideoDetail) -> int: ...

    async def aclose(self) -> None: ...


class Poller:
    """Polls every watched job of one client in one background task.

    In a child made by ``os.fork()`` the poller starts afresh: the parent's task and the
    waits it served stay behind (they belong to the parent's event loop), and a job
    awaited in the child gets a new task on the child's loop. A fleet's poller that ran
    in the parent cannot (its shared state is bound to the parent's loop): a job awaited
    through it in the child fails at once with ``RuntimeError``.

    Args:
        source: Where videos are read (``client.videos``).
        limiter: The client's limiter; its rate sizes polling's share.
        policy: When to poll.
        clock: Sleeps between rounds.
        gate: Work that polling yields to: each read waits its :meth:`~Gate.turn` (the
            client's creations hold it while they wait for a token).
        strategy: Who polls, and when (:class:`OwnJobs` by default).
        kept: The confirmed outcomes kept for jobs awaited after them
            (:class:`~asyncclient.awaiting.outcomes.KeptOutcomes` by default).
    """

    def __init__(
        self,
        source: VideoSource,
        *,
        limiter: HasRate,
        policy: PollPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        gate: Gate | None = None,
        strategy: PollStrategy | None = None,
        kept: KeptOutcomes | None = None,
    ) -> None:
        self.policy = policy or PollPolicy()
        self.stats = PollerStats()
        self._rounds = Rounds(source, gate=gate or Gate(), stats=self.stats, limiter=limiter)
        self._limiter = limiter
        self._clock = clock
        self._strategy: PollStrategy = strategy or OwnJobs()
        self._jobs: dict[int, JobState] = {}
        self._task: asyncio.Task[None] | None = None
        self._interval = self.policy.min_interval
        self._closed = False
        self.kept = kept if kept is not None else KeptOutcomes(clock=clock)
        """Confirmed outcomes (notifications') kept for jobs awaited after them."""
        track(self)  # a forked child starts afresh (_after_fork)

    _forked: str | None = None  # set in a forked child when this poller cannot serve it

    def __repr__(self) -> str:
        return f"<Poller watching {len(self._jobs)} jobs every ~{self._interval:.1f} s>"

    @property
    def source(self) -> VideoSource:
        """Where videos are read."""
        return self._rounds.source

    @property
    def gate(self) -> Gate:
        """Work that polling yields to."""
        return self._rounds.gate

    @property
    def clock(self) -> Clock:
        """The clock rounds are paced by."""
        return self._clock

    @property
    def interval(self) -> float:
        """The base interval of the last round (before jitter and the share's floor)."""
        return self._interval

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

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called (nothing is polled any more)."""
        return self._closed

    def watch(self, job: JobState) -> None:
        """Poll ``job`` until it is done or unwatched; starts the task if needed.

        A job whose outcome a confirmed notification already told (:attr:`kept`) is
        finished at once, unwatched. After :meth:`aclose` the job fails at once
        (``RuntimeError``): nothing would read it.
        """
        if self._closed:
            job.fail(RuntimeError("the client is closed: nothing polls this job"))
            return
        if self.kept.hand_to(job) and job.done():
            return
        if self._forked is not None:
            job.fail(RuntimeError(self._forked))
            return
        self._jobs[id(job)] = job
        self._interval = self.policy.min_interval
        if self._task is None or self._task.done():
            # Polling is background work, whichever call started it: the bulk lane.
            work = in_bulk(self._strategy.run(self))
            self._task = asyncio.get_running_loop().create_task(work)

    def unwatch(self, job: JobState) -> None:
        """Stop polling ``job`` (nobody waits on it any more)."""
        self._jobs.pop(id(job), None)

    def pending(self) -> list[JobState]:
        """The watched jobs not done yet."""
        return [j for j in self._jobs.values() if not j.done()]

    def sweep(self) -> None:
        """Stop watching the jobs that are done."""
        for key in [k for k, j in self._jobs.items() if j.done()]:
            del self._jobs[key]

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
        or project; return how many it finished. The next round drops them. A finished
        record is also kept (:attr:`kept`) for jobs awaited after it."""
        self.kept.keep(detail)
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
        await self._rounds.read([job], notified_first=self.policy.notified_first, listener=QUIET)

    # -- what a strategy polls with ------------------------------------------------------

    async def poll(
        self,
        jobs: list[JobState],
        *,
        listener: PollListener = QUIET,
        bugs_end_jobs: bool = True,
    ) -> RoundDone:
        """One round over ``jobs``, where an error ends only what it must.

        A refused key ends every job, a failed request waits for the next round, and a
        bug (logged) ends the jobs too unless ``bugs_end_jobs`` is off (a fleet's
        holder, whose next round tries again).

        Args:
            jobs: What to read.
            listener: Told what the round took into the jobs.
            bugs_end_jobs: Whether an unexpected error ends the jobs.
        """
        before = self.stats.requests - self.stats.result_reads
        moved = False
        try:
            moved = await self._rounds.read(
                jobs, notified_first=self.policy.notified_first, listener=listener
            )
        except (AuthenticationError, PermissionDeniedError) as exc:
            for job in jobs:
                fail(job, exc, listener)
        except APIError as exc:
            logger.warning("polling failed (%s); trying again later", exc)
        except Exception as exc:  # a bug must not leave the waiters hanging
            logger.exception("polling stopped")
            if bugs_end_jobs:
                for job in jobs:
                    fail(job, exc, listener)
        return RoundDone(moved, self.stats.requests - self.stats.result_reads - before)

    def next_wait(self, done: RoundDone) -> float:
        """The policy's next interval (kept) and the seconds from the start of the round
        ``done`` describes to the next one's."""
        self._interval, wait = self.policy.next_interval(
            self._interval,
            moved=done.moved,
            spent=done.spent,
            per_second=self._limiter.rate.per_second,
        )
        return wait

    def hurry(self) -> None:
        """Start the interval again from ``min_interval`` (new jobs to poll)."""
        self._interval = self.policy.min_interval

    def _after_fork(self) -> None:
        """In a forked child: leave the parent's task and waits behind (kept alive, never
        finalized here: a finalizer could touch the parent's event loop)."""
        task, self._task = self._task, None
        keep(task, self._jobs)
        self._jobs = {}
        if task is not None and not isinstance(self._strategy, OwnJobs):
            self._forked = _FLEET_FORKED


_FLEET_FORKED = (
    "this job's client shares a fleet through Redis (redis=) and awaited jobs before "
    "os.fork(): its fleet state belongs to the parent's event loop. In the child, await "
    "jobs through a client made there (a synchronous Client makes one itself after a "
    "fork: rebuild the job with client.jobs.from_video_id)"
)
