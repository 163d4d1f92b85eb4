"""One poller per API key across a fleet of processes, through Redis.

With ``AsyncClient(redis=...)`` the client's poller is a :class:`FleetPoller`. While a
process awaits jobs it keeps three things going (one task group):

- a *beat* every quarter of the lease: it keeps the process's ``alive`` key fresh,
  registers the jobs it began awaiting and drops those it stopped awaiting, and takes
  or keeps the fleet's lease;
- a *listener* on the fleet's channel: what the lease holder read, and confirmed
  notifications, reach the jobs this process awaits;
- the *rounds*, in the process that holds the lease: it polls every job registered by
  a live process exactly as a lone process polls its own (list pages, reads by id, one
  detail read per finished video: :class:`~asyncclient.awaiting.poller.Poller`'s rounds), and
  publishes each change as it reads it, keeping every finished video's record for
  processes that start awaiting it later. A holder whose own jobs ended keeps polling
  for the fleet until no registered job is pending, then gives the lease back.

A holder that dies, even by SIGKILL, stops renewing its lease; the lease lapses after
:attr:`FleetPoller.lease` seconds (a few poll intervals). A process whose beat finds
another's lease with less than a beat left (a live holder renews every beat) beats
again the moment it lapses and takes it, so a job waits at most about a lease plus
one interval. A process that ended stops refreshing its ``alive`` key, and the
holder drops its registrations. Whatever is published is also kept (finished videos)
and looked up by a process when it registers a job, or when its listener reconnects,
so nothing that moved while it was not listening is lost.

If Redis cannot be reached, each process polls its own jobs (as without ``redis=``)
until it can again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable
from typing import Any

import anyio

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._convert import decode
from asyncclient._states import VIDEO, VideoState
from asyncclient.awaiting.poller import Poller, PollPolicy, VideoSource, _HasRate
from asyncclient.awaiting.state import JobState
from asyncclient.errors import (
    APIStatusError,
)
from asyncclient.fleet.registry import Registry
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import failure, kept, message, read_spec, rebuilt, take, wire
from asyncclient.http.gate import Gate
from asyncclient.models.videos import Video, VideoDetail

__all__ = [
    "LEASE_CEILING",
    "LEASE_FLOOR",
    "LEASE_INTERVALS",
    "FleetPoller",
    "FleetStats",
]

logger = logging.getLogger("asyncclient")

LEASE_INTERVALS = 3.0
"""The lease, in the policy's ``min_interval``: how long a dead holder keeps it."""
LEASE_FLOOR = 0.5
"""The shortest lease, in seconds (however short the poll interval)."""
LEASE_CEILING = 30.0
"""The longest default lease, in seconds: however long the interval (the safety net
behind notifications polls every minute or more), a dead holder is replaced soon."""
BEATS_PER_LEASE = 4
"""Beats in one lease: a holder renews it this many times before it would lapse."""
LEAVE_SECONDS = 2.0
"""How long a process that stops awaiting jobs spends telling the fleet."""
_LISTEN_TIMEOUT = 1.0
_AFTER_LAPSE = 0.005  # seconds past a lease's end at which another process tries it

_FOLLOWING, _LEADING, _ALONE = "following", "leading", "alone"



class FleetStats:
    """What this process did for the fleet (tests and benchmarks read it)."""

    __slots__ = ("leads", "published", "rounds_led", "taken")

    def __init__(self) -> None:
        self.leads = 0
        """Times this process took the lease."""
        self.rounds_led = 0
        """Rounds polled for the fleet while holding it."""
        self.published = 0
        """Changes published to the fleet."""
        self.taken = 0
        """Changes from other processes (or kept outcomes) taken in by this one."""


class _Shadow(JobState):
    """The lease holder's copy of a registered job: what it takes is told to the fleet."""

    __slots__ = ("_key", "_relay")

    def __init__(
        self, relay: FleetPoller, key: str, *, project_id: str | None, video_id: str | None
    ) -> None:
        super().__init__(project_id=project_id, video_id=video_id)
        self._relay = relay
        self._key = key

    def take_record(self, video: Video) -> bool:
        moved = super().take_record(video)
        if moved and not isinstance(video, VideoDetail):  # a detail is told by take_detail
            self._relay._tell(self._key, "r", video)
        return moved

    def take_detail(self, detail: VideoDetail) -> bool:
        moved = super().take_detail(detail)
        if moved:
            self._relay._tell(self._key, "d", detail)
        return moved

    def fail(self, error: BaseException) -> None:
        if not self.done() and isinstance(error, APIStatusError):
            self._relay._tell_failure(self._key, error)
        super().fail(error)


class FleetPoller(Poller):
    """The client's poller when a fleet shares the key through Redis.

    Args:
        source: Where videos are read (``client.videos``).
        store: The fleet's shared store.
        limiter: The client's limiter; its rate sizes polling's share.
        policy: When the lease holder polls.
        clock: Sleeps between rounds and beats.
        gate: Work that polling yields to.
        lease: Seconds a lease lasts without renewal; by default ``LEASE_INTERVALS``
            times the policy's ``min_interval``, within ``LEASE_FLOOR`` and
            ``LEASE_CEILING``.
    """

    def __init__(
        self,
        source: VideoSource,
        *,
        store: FleetStore,
        limiter: _HasRate,
        policy: PollPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        gate: Gate | None = None,
        lease: float | None = None,
    ) -> None:
        super().__init__(source, limiter=limiter, policy=policy, clock=clock, gate=gate)
        self.store = store
        self.lease = (
            lease
            if lease is not None
            else min(max(LEASE_INTERVALS * self.policy.min_interval, LEASE_FLOOR), LEASE_CEILING)
        )
        """Seconds a lease lasts without renewal (a dead holder's, at most)."""
        self.fleet = FleetStats()
        self._registry = Registry()
        self._shadows: dict[str, _Shadow] = {}
        self._mode = _FOLLOWING
        self._next_round = 0.0
        self._earliest = 0.0  # no round before (the policy's first_delay)
        self._left = True  # the fleet knows this process awaits nothing
        self._others = False  # as holder: other processes' jobs are pending
        self._told: list[list[Any]] = []
        self._told_finished: list[tuple[str, str | None, bytes]] = []
        self._wake = asyncio.Event()  # the rounds: the mode changed, or no job is left
        self._pending = asyncio.Event()  # the beat: registrations to send
        self._to_publish = asyncio.Event()
        self._subscribed = asyncio.Event()

    def __repr__(self) -> str:
        return f"<FleetPoller {self._mode} watching {len(self._jobs)} jobs, lease {self.lease}s>"

    def _busy(self) -> bool:
        """Jobs to await here, or (as the holder) jobs other processes await: a holder
        keeps polling for the fleet after its own jobs ended, until none is pending."""
        return bool(self._jobs) or (self._mode == _LEADING and self._others)

    @property
    def leading(self) -> bool:
        """Whether this process holds the fleet's lease (and polls for it)."""
        return self._mode == _LEADING

    # -- watching (VideoJob calls these) ---------------------------------------------------

    def watch(self, job: JobState) -> None:
        """Await ``job`` through the fleet: register it; the lease holder polls it."""
        if not self._closed:
            self._registry.add(job)
            self._pending.set()
        super().watch(job)

    def unwatch(self, job: JobState) -> None:
        """Stop awaiting ``job``; unregistered once no local job has its key."""
        super().unwatch(job)
        if self._registry.remove(job):
            self._pending.set()
        if not self._jobs:
            self._wake.set()

    async def aclose(self) -> None:
        """Stop, give the lease back and drop this process's registrations."""
        self._registry.clear()
        await super().aclose()
        if not self._left:  # the task was stopped before it told the fleet
            await self._leave()

    async def deliver(self, detail: VideoDetail) -> int:
        """A confirmed notification's record: finish the jobs awaiting it here, keep it,
        and tell every process of the fleet (whichever awaits it finishes at once)."""
        finished = self._notified(detail)
        entry = ["", "n", wire(detail)]
        finished_now = []
        if VIDEO.is_terminal(VideoState.of(detail.status)):
            finished_now.append((detail.id, detail.project_id, kept("d", detail)))
        await self.store.publish(message(self.store.process, [entry]), finished_now)
        self.fleet.published += 1
        return finished

    def _notified(self, detail: VideoDetail) -> int:
        """A notification's record to the local jobs and to the holder's copies (which
        then need no more polling; the fleet hears of it from the notification)."""
        for shadow in self._shadows.values():
            if not shadow.done() and (
                detail.id in shadow.video_ids
                or (detail.project_id and shadow.project_id == detail.project_id)
            ):
                JobState.take_detail(shadow, detail)  # told by the notification's own message
        return self.take_notified(detail)

    # -- the fleet's tasks -----------------------------------------------------------------

    async def _run(self) -> None:
        self._earliest = self._clock.monotonic() + max(0.0, self.policy.first_delay)
        self._next_round = self._earliest
        while True:
            self._left = False
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._listen)
                    group.start_soon(self._beats)
                    group.start_soon(self._publisher)
                    await self._rounds()
                    group.cancel_scope.cancel()
            finally:
                await self._leave()
            if not self._busy():
                return

    async def _leave(self) -> None:
        """Tell what is left to tell, drop the registrations, give the lease back."""
        with anyio.move_on_after(LEAVE_SECONDS, shield=True):
            try:
                await self._publish_told()
                await self._registry.send(self.store)
                await self.store.beat(
                    alive_ms=self._ms(self.lease), lease_ms=self._ms(self.lease), lead=False
                )
                self._left = True
            except Exception as exc:  # the lease lapses, the registrations are dropped
                logger.debug("fleet: could not leave cleanly (%r)", exc)
        self._set_mode(_FOLLOWING)
        self._subscribed.clear()

    @staticmethod
    def _ms(seconds: float) -> int:
        return max(1, int(seconds * 1000))

    def _set_mode(self, mode: str) -> None:
        if mode != self._mode:
            if mode == _LEADING:  # a holder that took over polls at once
                self.fleet.leads += 1
                self._next_round = max(self._earliest, self._clock.monotonic())
                logger.debug("fleet: this process polls for the fleet")
            self._mode = mode
            if mode != _LEADING:
                self._shadows.clear()
                self._others = False
            self._wake.set()

    async def _wait(self, event: asyncio.Event, seconds: float) -> None:
        with anyio.move_on_after(max(0.0, seconds)):
            await event.wait()
        event.clear()

    async def _beats(self) -> None:
        beat = self.lease / BEATS_PER_LEASE
        while True:
            wait = beat
            try:
                # A holder renews every beat: a lease left shorter than a beat is a dead
                # holder's, taken over the moment it lapses.
                wait = min(beat, await self._beat() + _AFTER_LAPSE)
            except Exception as exc:  # Redis unreachable: poll our own jobs meanwhile
                if self._mode != _ALONE:
                    logger.warning(
                        "fleet: Redis unreachable (%r); polling this process's jobs", exc
                    )
                self._registry.again = True
                self._set_mode(_ALONE)
            await self._wait(self._pending, wait)

    async def _beat(self) -> float:
        """One beat; returns the seconds another holder's lease has left."""
        lease_ms = self._ms(self.lease)
        listening = self._subscribed.is_set()
        held, lapsed, left = await self.store.beat(
            alive_ms=lease_ms, lease_ms=lease_ms, lead=self._busy() and listening
        )
        registry = self._registry
        registry.again = registry.again or lapsed
        if not listening:
            self._set_mode(_ALONE if self._mode == _ALONE else _FOLLOWING)
            return left  # registrations wait for the listener (no change may pass it by)
        await registry.send(self.store)
        # Before a round could read again what is already known:
        self.fleet.taken += await registry.look_up(self.store)
        self._set_mode(_LEADING if held else _FOLLOWING)
        return left

    async def _listen(self) -> None:
        reconnects = 0
        while True:
            pubsub = self.store.redis.pubsub()
            try:
                await pubsub.subscribe(self.store.channel)
                if reconnects:  # what moved meanwhile is kept: look it up
                    self._registry.recheck(list(self._jobs.values()))
                self._subscribed.set()
                self._pending.set()
                while True:
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=_LISTEN_TIMEOUT
                    )
                    if message is not None and message.get("type") == "message":
                        self._take_message(message["data"])
            except Exception as exc:
                logger.warning("fleet: listening failed (%r); listening again", exc)
            finally:
                self._subscribed.clear()
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await pubsub.aclose()
            reconnects += 1
            await self._clock.sleep(self.lease / BEATS_PER_LEASE)

    def _take_message(self, data: bytes) -> None:
        """Take in another process's message; an entry this version cannot read (or a
        broken one) is logged and dropped, and the others are still taken."""
        try:
            message = json.loads(data)
            if message.get("from") == self.store.process:
                return
            entries = list(message["j"])
        except Exception as exc:  # another version's message, or a broken one
            logger.warning("fleet: a message could not be read (%r)", exc)
            return
        for entry in entries:
            try:
                self.fleet.taken += self._take_entry(*entry)
            except Exception as exc:
                logger.warning("fleet: a change could not be read (%r)", exc)

    def _take_entry(self, key: str, kind: str, payload: Any) -> int:
        """One change to the local jobs it concerns; 1 when some job took it, else 0."""
        if kind == "n":
            return int(self._notified(decode(payload, VideoDetail)) > 0)
        jobs = self._registry.local.get(key)
        if not jobs:
            return 0
        if kind == "f":
            error = rebuilt(payload)
            for job in jobs:
                job.fail(error)
        else:
            video = decode(payload, VideoDetail if kind == "d" else Video)
            for job in list(jobs):
                take(job, kind, video)
        return 1

    # -- telling the fleet (the lease holder) ----------------------------------------------

    def _tell(self, key: str, kind: str, video: Video) -> None:
        for job in list(self._registry.local.get(key, ())):
            take(job, kind, video)
        self._told.append([key, kind, wire(video)])
        if VIDEO.is_terminal(VideoState.of(video.status)):
            self._told_finished.append((video.id, video.project_id, kept(kind, video)))
        self._to_publish.set()

    def _tell_failure(self, key: str, error: APIStatusError) -> None:
        for job in list(self._registry.local.get(key, ())):
            job.fail(error)
        self._told.append([key, "f", failure(error)])
        self._to_publish.set()

    async def _publisher(self) -> None:
        while True:
            await self._to_publish.wait()
            self._to_publish.clear()
            try:
                await self._publish_told()
            except Exception as exc:  # kept for the next try
                logger.warning("fleet: could not publish (%r); trying again", exc)
                await self._clock.sleep(self.lease / BEATS_PER_LEASE)
                self._to_publish.set()

    async def _publish_told(self) -> None:
        told, finished = self._told, self._told_finished
        if not told:
            return
        self._told, self._told_finished = [], []
        try:
            await self.store.publish(message(self.store.process, told), finished)
        except BaseException:
            self._told[:0], self._told_finished[:0] = told, finished
            raise
        self.fleet.published += len(told)

    # -- the rounds ------------------------------------------------------------------------

    async def _rounds(self) -> None:
        while self._busy():
            self._wake.clear()
            if self._mode == _FOLLOWING:
                await self._wait(self._wake, self.lease)
                continue
            wait = self._next_round - self._clock.monotonic()
            if wait > 0:
                await self._wait(self._wake, wait)
                continue
            await self._one_round()

    async def _one_round(self) -> None:
        leading = self._mode == _LEADING
        jobs: list[JobState]
        if leading:
            try:
                jobs = list(await self._registered())
            except Exception as exc:
                logger.warning("fleet: registrations unreadable (%r)", exc)
                self._set_mode(_ALONE)
                return
            self.fleet.rounds_led += 1
        else:
            jobs = [j for j in self._jobs.values() if not j.done()]
        before = self.stats.requests - self.stats.result_reads
        started = self._clock.monotonic()
        moved = await self._guarded_round(jobs, bugs_end_jobs=not leading) if jobs else False
        spent = self.stats.requests - self.stats.result_reads - before
        self._next_round = started + self._next_wait(moved, spent)

    async def _registered(self) -> Iterable[_Shadow]:
        """The holder's copies of the jobs live processes await (new ones made)."""
        live: dict[str, bytes] = {}
        for registration in await self.store.registrations():
            live.setdefault(registration.job, registration.spec)
        for key in [k for k in self._shadows if k not in live]:
            del self._shadows[key]
        for key, spec in live.items():
            if key not in self._shadows:
                try:
                    project_id, video_id, read_detail = read_spec(spec)
                except ValueError as exc:  # another version's registration
                    logger.debug("fleet: %r: %s", key, exc)
                    continue
                shadow = _Shadow(self, key, project_id=project_id, video_id=video_id)
                shadow.read_detail = read_detail
                self._shadows[key] = shadow
                self._interval = self.policy.min_interval
        pending = [s for s in self._shadows.values() if not s.done()]
        self._others = bool(pending)
        return pending

