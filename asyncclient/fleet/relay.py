"""What the lease holder tells the fleet: the changes its rounds read, published in order.

:class:`Relay` keeps the changes told since the last publication (each also handed at
once to this process's own jobs of that key), and publishes them in one message, with
the record of every video they finished kept for processes that await it later. A
publication is fenced (see :class:`~asyncclient.fleet.store.FleetStore`): when this
process no longer holds the lease, what it told is dropped (the holder reads it
again) and ``lost`` is called.
:class:`Teller` is the :class:`~asyncclient.awaiting.poller.PollListener` of one of the
holder's rounds: what the round takes into its copy of a registered job is told.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Callable
from typing import Any

from asyncclient._clock import Clock
from asyncclient._states import VIDEO, VideoState
from asyncclient.awaiting.state import JobState
from asyncclient.errors import APIStatusError
from asyncclient.fleet.registry import Registry
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import (
    Change,
    Detail,
    Failure,
    Message,
    Record,
    apply,
    encode_message,
    kept,
)
from asyncclient.http.forks import keep, track
from asyncclient.models.videos import Video, VideoDetail

__all__ = ["FleetStats", "Relay", "Teller"]

logger = logging.getLogger("asyncclient")


class FleetStats:
    """What this process did for the fleet (tests and benchmarks read it)."""

    __slots__ = ("dropped", "leads", "published", "rounds_led", "taken")

    def __init__(self) -> None:
        self.leads = 0
        """Times this process took the lease."""
        self.rounds_led = 0
        """Rounds polled for the fleet while holding it."""
        self.published = 0
        """Changes published to the fleet."""
        self.taken = 0
        """Changes from other processes (or kept outcomes) taken in by this one."""
        self.dropped = 0
        """Messages, and changes in them, that this version could not read (skipped)."""


class Relay:
    """The changes this process tells the fleet, until published.

    Args:
        store: The fleet's store.
        registry: This process's jobs (told changes reach them at once).
        stats: Counts what is published.
        clock: Waits between tries to publish.
        retry: Seconds between tries when publishing failed.
        lost: Called when a publication finds that this process no longer holds the
            lease (what it told was dropped).
    """

    __slots__ = (
        "__weakref__",
        "_clock",
        "_finished",
        "_lost",
        "_registry",
        "_retry",
        "_stats",
        "_store",
        "_to_publish",
        "_told",
    )

    def __init__(
        self,
        store: FleetStore,
        registry: Registry,
        stats: FleetStats,
        *,
        clock: Clock,
        retry: float,
        lost: Callable[[], None] = lambda: None,
    ) -> None:
        self._store = store
        self._lost = lost
        self._stats = stats
        self._registry = registry
        self._clock = clock
        self._retry = retry
        self._told: list[Change] = []
        self._finished: list[tuple[str, str | None, bytes]] = []
        self._to_publish = asyncio.Event()
        track(self)  # a forked child opens Redis connections of its own (_after_fork)

    def _after_fork(self) -> None:
        """In a forked child: the pooled Redis connections (the limiter's, the store's)
        are the parent's sockets: left alone, never used or closed here; the pool opens
        new ones on first use. The child takes a fleet id of its own."""
        self._to_publish = asyncio.Event()
        forget_connections(self._store.redis)
        # The child is a process of the fleet of its own: not the parent, nor its lease.
        self._store.process = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._store.holding = None
        self._registry.again = True

    def tell(self, change: Record | Detail) -> None:
        """Tell the fleet a record read for a registered job."""
        for job in list(self._registry.local.get(change.job, ())):
            apply(job, change)
        self._told.append(change)
        video = change.detail if isinstance(change, Detail) else change.video
        if VIDEO.is_terminal(VideoState.of(video.status)):
            self._finished.append((video.id, video.project_id, kept(change)))
        self._to_publish.set()

    def tell_failure(self, key: str, error: APIStatusError) -> None:
        """Tell the fleet an error that ends the registered job ``key`` everywhere."""
        for job in list(self._registry.local.get(key, ())):
            job.fail(error)
        self._told.append(Failure.of(key, error))
        self._to_publish.set()

    async def publish_now(self, change: Change, finished: Detail | None = None) -> None:
        """Publish ``change`` at once (a notification's), keeping ``finished``'s record."""
        outcome = []
        if finished is not None:
            detail = finished.detail
            outcome.append((detail.id, detail.project_id, kept(finished)))
        message = Message(sender=self._store.process, changes=(change,))
        await self._store.publish(encode_message(message), outcome, fenced=False)
        self._stats.published += 1

    async def run(self) -> None:
        """Publish what is told, as it is told (a task while the process polls); a
        publication that failed is tried again later."""
        while True:
            await self._to_publish.wait()
            self._to_publish.clear()
            try:
                await self.publish()
            except Exception as exc:  # kept for the next try
                logger.warning("fleet: could not publish (%r); trying again", exc)
                await self._clock.sleep(self._retry)
                self._to_publish.set()

    async def publish(self) -> None:
        """Publish what was told since the last publication (kept on failure; dropped
        when this process no longer holds the lease)."""
        told, finished = self._told, self._finished
        if not told:
            return
        self._told, self._finished = [], []
        message = Message(sender=self._store.process, changes=tuple(told))
        try:
            published = await self._store.publish(encode_message(message), finished)
        except BaseException:
            self._told[:0], self._finished[:0] = told, finished
            raise
        if not published:  # fenced out: another process holds the lease now
            logger.info("fleet: the lease was lost; %d changes left to its holder", len(told))
            self._lost()
            return
        self._stats.published += len(told)


def forget_connections(redis: Any) -> None:
    """Empty the connection pool of a ``redis.asyncio.Redis`` (in a forked child) without
    closing its connections (the parent's), which are kept unfinalized."""
    pool = getattr(redis, "connection_pool", None)
    if pool is None:
        return
    held = [*getattr(pool, "_available_connections", ()), *getattr(pool, "_in_use_connections", ())]
    keep(redis, pool, held, getattr(redis, "connection", None))
    pool.reset()  # redis-py's own: forgets the connections, no I/O
    if getattr(redis, "connection", None) is not None:  # a single-connection client's
        redis.connection = None
    if isinstance(getattr(pool, "_lock", None), asyncio.Lock):
        pool._lock = asyncio.Lock()  # it may be bound to the parent's loop


class Teller:
    """The listener of one of the lease holder's rounds: what it takes into its copy of
    a registered job (``keys``: the copy's id to the job's key) is told to the fleet."""

    __slots__ = ("_keys", "_relay")

    def __init__(self, relay: Relay, keys: dict[int, str]) -> None:
        self._relay = relay
        self._keys = keys

    def took_record(self, job: JobState, video: Video) -> None:
        key = self._keys.get(id(job))
        if key is not None:
            self._relay.tell(Record(key, video))

    def took_detail(self, job: JobState, detail: VideoDetail) -> None:
        key = self._keys.get(id(job))
        if key is not None:
            self._relay.tell(Detail(key, detail))

    def failed(self, job: JobState, error: BaseException) -> None:
        key = self._keys.get(id(job))
        if key is not None and isinstance(error, APIStatusError):
            self._relay.tell_failure(key, error)
