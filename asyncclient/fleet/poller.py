"""One poller per API key across a fleet of processes, through Redis.

With ``AsyncClient(redis=...)`` the client's poller is a :class:`FleetPoller`. It
composes a :class:`~asyncclient.awaiting.poller.Poller` (the rounds, the interval, the
watched jobs) and is that poller's :class:`~asyncclient.awaiting.poller.PollStrategy`.
While a process awaits jobs it keeps three things going (one task group):

- a *beat* every quarter of the lease: it keeps the process's ``alive`` key fresh,
  registers the jobs it began awaiting and drops those it stopped awaiting, and takes
  or keeps the fleet's lease;
- a *listener* on the fleet's channel: what the lease holder read, and confirmed
  notifications, reach the jobs this process awaits;
- the *rounds*, in the process that holds the lease: it polls every job registered by
  a live process exactly as a lone process polls its own (the poller's rounds), and
  publishes each change as it reads it (its rounds' listener is a
  :class:`~asyncclient.fleet.relay.Teller`), keeping every finished video's record for
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

A lease held by no live process (its holder's ``alive`` key lapsed, or a value that is
not one of ours) is taken over at the next beat; a holder fenced out (it was paused
past its lease and another took it) stops leading at its first refused write.

If Redis fails (unreachable, too slow, refusing writes when out of memory or a
read-only replica, or answering oddly), each process polls its own jobs (as without
``redis=``) until it works again; nothing of ``redis`` reaches a job's waiter. The
process's mode (:class:`~asyncclient._states.FleetMode`) moves through
:data:`~asyncclient._states.FLEET`.

Time: every wait and deadline goes through the client's clock (a timed wait races the
clock's sleep), except how long one read of the channel blocks: an I/O deadline of the
Redis client (:mod:`~asyncclient.fleet.listener`).
"""

from __future__ import annotations

import asyncio
import logging

import anyio

from asyncclient._clock import SYSTEM_CLOCK, Clock, within
from asyncclient._states import FLEET, VIDEO, FleetMode, VideoState
from asyncclient.awaiting.poller import (
    QUIET,
    HasRate,
    Poller,
    PollerStats,
    PollListener,
    PollPolicy,
    RoundDone,
    VideoSource,
)
from asyncclient.awaiting.state import JobState
from asyncclient.fleet.faults import redis_errors
from asyncclient.fleet.listener import ChannelListener
from asyncclient.fleet.registry import Registry
from asyncclient.fleet.relay import FleetStats, Relay, Teller
from asyncclient.fleet.shadows import Shadows
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import Detail, Notified
from asyncclient.http.gate import Gate
from asyncclient.lanes import set_bulk
from asyncclient.models.videos import VideoDetail

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
_AFTER_LAPSE = 0.005  # seconds past a lease's end at which another process tries it

_FOLLOWING, _LEADING, _ALONE = FleetMode.FOLLOWING, FleetMode.LEADING, FleetMode.ALONE


class FleetPoller:
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
        limiter: HasRate,
        policy: PollPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        gate: Gate | None = None,
        lease: float | None = None,
    ) -> None:
        self.poller = Poller(
            source, limiter=limiter, policy=policy, clock=clock, gate=gate, strategy=self
        )
        """The poller this one composes: its rounds, its interval, the watched jobs."""
        self.store = store
        self.lease = (
            lease
            if lease is not None
            else min(max(LEASE_INTERVALS * self.policy.min_interval, LEASE_FLOOR), LEASE_CEILING)
        )
        """Seconds a lease lasts without renewal (a dead holder's, at most)."""
        self.fleet = FleetStats()
        self._clock = clock
        self._registry = Registry()
        self._relay = Relay(
            store,
            self._registry,
            self.fleet,
            clock=clock,
            retry=self.lease / BEATS_PER_LEASE,
            lost=self._lease_lost,
        )
        self._shadows = Shadows()  # the holder's copies of registered jobs
        self._mode = _FOLLOWING
        self._next_round = 0.0
        self._earliest = 0.0  # no round before (the policy's first_delay)
        self._left = True  # the fleet knows this process awaits nothing
        self._wake = asyncio.Event()  # the rounds: the mode changed, or no job is left
        self._pending = asyncio.Event()  # the beat: registrations to send
        self._listener = ChannelListener(
            store,
            self._registry,
            self.fleet,
            clock=clock,
            retry=self.lease / BEATS_PER_LEASE,
            notified=self._notified,
            awaited=self.poller.pending,
            subscribed_now=self._pending,
        )

    def __repr__(self) -> str:
        return f"<FleetPoller {self._mode} watching {self.watching} jobs, lease {self.lease}s>"

    # -- what a poller offers (the composed poller's) ---------------------------------------

    @property
    def source(self) -> VideoSource:
        """Where videos are read."""
        return self.poller.source

    @property
    def clock(self) -> Clock:
        """The clock it polls and waits by (the client's)."""
        return self._clock

    @property
    def gate(self) -> Gate:
        """Work that polling yields to."""
        return self.poller.gate

    @property
    def policy(self) -> PollPolicy:
        """When the lease holder polls."""
        return self.poller.policy

    @policy.setter
    def policy(self, value: PollPolicy) -> None:
        self.poller.policy = value

    @property
    def min_interval(self) -> float:
        """The policy's ``min_interval``."""
        return self.poller.min_interval

    @min_interval.setter
    def min_interval(self, value: float) -> None:
        self.poller.min_interval = value

    @property
    def max_interval(self) -> float:
        """The policy's ``max_interval``."""
        return self.poller.max_interval

    @max_interval.setter
    def max_interval(self, value: float) -> None:
        self.poller.max_interval = value

    @property
    def stats(self) -> PollerStats:
        """What this process's rounds read."""
        return self.poller.stats

    @property
    def watching(self) -> int:
        """How many jobs this process awaits now."""
        return self.poller.watching

    @property
    def mode(self) -> FleetMode:
        """What this process does for the fleet's polling now."""
        return self._mode

    @property
    def leading(self) -> bool:
        """Whether this process holds the fleet's lease (and polls for it)."""
        return self._mode is _LEADING

    def _busy(self) -> bool:
        """Jobs to await here, or (as the holder) jobs other processes await: a holder
        keeps polling for the fleet after its own jobs ended, until none is pending."""
        return bool(self.poller.watching) or (self._mode is _LEADING and self._shadows.others)

    # -- watching (VideoJob calls these) ---------------------------------------------------

    def watch(self, job: JobState) -> None:
        """Await ``job`` through the fleet: register it; the lease holder polls it."""
        if not self.poller.closed:
            self._registry.add(job)
            self._pending.set()
        self.poller.watch(job)

    def unwatch(self, job: JobState) -> None:
        """Stop awaiting ``job``; unregistered once no local job has its key."""
        self.poller.unwatch(job)
        if self._registry.remove(job):
            self._pending.set()
        if not self.poller.watching:
            self._wake.set()

    async def refresh(self, job: JobState) -> None:
        """Read one job once, outside the rounds."""
        await self.poller.refresh(job)

    async def aclose(self) -> None:
        """Stop, give the lease back and drop this process's registrations."""
        self._registry.clear()
        await self.poller.aclose()
        if not self._left:  # the task was stopped before it told the fleet
            await self._leave()

    def take_notified(self, detail: VideoDetail) -> int:
        """Hand a confirmed record to the jobs this process awaits (see :class:`Poller`)."""
        return self.poller.take_notified(detail)

    async def deliver(self, detail: VideoDetail) -> int:
        """A confirmed notification's record: finish the jobs awaiting it here, keep it,
        and tell every process of the fleet (whichever awaits it finishes at once)."""
        finished = self._notified(detail)
        finished_now = VIDEO.is_terminal(VideoState.of(detail.status))
        outcome = Detail("", detail) if finished_now else None
        try:
            await self._relay.publish_now(Notified(detail), outcome)
        except redis_errors() as exc:  # the holder's rounds, or each process's, read it
            logger.warning("fleet: a notification's record not shared (%r)", exc)
        return finished

    def _notified(self, detail: VideoDetail) -> int:
        """A notification's record to the local jobs and to the holder's copies (which
        then need no more polling; the fleet hears of it from the notification)."""
        self._shadows.notified(detail)
        return self.poller.take_notified(detail)

    # -- the fleet's tasks (the composed poller's strategy) -----------------------------------

    async def run(self, poller: Poller) -> None:
        """The background task of ``poller`` (this one's): beats, listening, publishing
        and rounds, until nothing is left to await here or for the fleet. Its reads are
        bulk work (:mod:`asyncclient.lanes`)."""
        set_bulk()
        self._earliest = self._clock.monotonic() + max(0.0, self.policy.first_delay)
        self._next_round = self._earliest
        while True:
            self._left = False
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._listener.run)
                    group.start_soon(self._beats)
                    group.start_soon(self._relay.run)
                    await self._rounds(poller)
                    group.cancel_scope.cancel()
            finally:
                await self._leave()
            if not self._busy():
                return

    async def _leave(self) -> None:
        """Tell what is left to tell, drop the registrations, give the lease back (at
        most ``LEAVE_SECONDS``, even when cancelled)."""
        with anyio.CancelScope(shield=True):
            await within(self._clock, LEAVE_SECONDS, self._tell_leaving)
        self._set_mode(_FOLLOWING)
        self._listener.subscribed.clear()

    async def _tell_leaving(self) -> None:
        try:
            await self._relay.publish()
            await self._registry.send(self.store)
            await self.store.beat(
                alive_ms=self._ms(self.lease), lease_ms=self._ms(self.lease), lead=False
            )
            self._left = True
        except Exception as exc:  # the lease lapses, the registrations are dropped
            logger.debug("fleet: could not leave cleanly (%r)", exc)

    @staticmethod
    def _ms(seconds: float) -> int:
        return max(1, int(seconds * 1000))

    def _set_mode(self, mode: FleetMode) -> None:
        if mode is self._mode:
            return
        self._mode = FLEET.check(self._mode, mode)
        if mode is _LEADING:  # a holder that took over polls at once
            self.fleet.leads += 1
            self._next_round = max(self._earliest, self._clock.monotonic())
            logger.debug("fleet: this process polls for the fleet")
        else:
            self._shadows.clear()
        self._wake.set()

    def _lease_lost(self) -> None:
        """A write as holder was refused (another holds the lease): follow, and beat
        at once to learn who leads."""
        if self._mode is _LEADING:
            logger.warning("fleet: the lease was taken over; following")
            self._set_mode(_FOLLOWING)
        self._pending.set()

    async def _wait(self, event: asyncio.Event, seconds: float) -> None:
        """Wait until ``event`` is set or ``seconds`` pass on the clock; clear it."""
        if not event.is_set():
            await within(self._clock, seconds, event.wait)
        event.clear()

    async def _beats(self) -> None:
        beat = self.lease / BEATS_PER_LEASE
        while True:
            wait = beat
            try:
                # A holder renews every beat: a lease left shorter than a beat is a dead
                # holder's, taken over the moment it lapses.
                wait = min(beat, await self._beat() + _AFTER_LAPSE)
            except Exception as exc:  # Redis failed: poll our own jobs meanwhile
                if self._mode is not _ALONE:
                    logger.warning("fleet: Redis failed (%r); polling this process's jobs", exc)
                self._registry.again = True
                self._set_mode(_ALONE)
            await self._wait(self._pending, wait)

    async def _beat(self) -> float:
        """One beat; returns the seconds another holder's lease has left."""
        lease_ms = self._ms(self.lease)
        listening = self._listener.subscribed.is_set()
        held, lapsed, left = await self.store.beat(
            alive_ms=lease_ms, lease_ms=lease_ms, lead=self._busy() and listening
        )
        registry = self._registry
        registry.again = registry.again or lapsed
        if not listening:
            self._set_mode(_ALONE if self._mode is _ALONE else _FOLLOWING)
            return left  # registrations wait for the listener (no change may pass it by)
        await registry.send(self.store)
        # Before a round could read again what is already known:
        self.fleet.taken += await registry.look_up(self.store)
        self._set_mode(_LEADING if held else _FOLLOWING)
        return left

    # -- the rounds ------------------------------------------------------------------------

    async def _rounds(self, poller: Poller) -> None:
        while self._busy():
            self._wake.clear()
            if self._mode is _FOLLOWING:
                await self._wait(self._wake, self.lease)
                continue
            wait = self._next_round - self._clock.monotonic()
            if wait > 0:
                await self._wait(self._wake, wait)
                continue
            await self._one_round(poller)

    async def _one_round(self, poller: Poller) -> None:
        """As the holder, one round over the registered jobs, told to the fleet; alone,
        one round over this process's jobs."""
        leading = self._mode is _LEADING
        listener: PollListener = QUIET
        if leading:
            try:
                shadows = await self._registered()
            except Exception as exc:
                logger.warning("fleet: registrations unreadable (%r)", exc)
                self._set_mode(_ALONE)
                return
            self.fleet.rounds_led += 1
            jobs = list(shadows.values())
            listener = Teller(self._relay, {id(s): k for k, s in shadows.items()})
        else:
            jobs = poller.pending()
        started = self._clock.monotonic()
        done = RoundDone(False, 0)
        if jobs:
            done = await poller.poll(jobs, listener=listener, bugs_end_jobs=not leading)
        self._next_round = started + poller.next_wait(done)

    async def _registered(self) -> dict[str, JobState]:
        """The holder's copies of the pending jobs live processes await, by key (new
        ones made)."""
        pending, new = self._shadows.update(await self.store.registrations())
        if new:
            self.poller.hurry()
        return pending
