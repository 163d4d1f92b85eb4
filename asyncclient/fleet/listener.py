"""What a process of a fleet hears: the fleet's channel, read into the jobs it awaits.

:class:`ChannelListener` subscribes to the fleet's channel (again after a failure,
then looking up the kept outcomes of every job it awaits, since changes may have passed
by) and takes each message in: read once (:func:`~asyncclient.fleet.wire.read_message`),
its changes handed to the local jobs of their key; a notification's record to whichever
job awaits its video or project. What cannot be read is logged, counted and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import anyio

from asyncclient._clock import Clock
from asyncclient.awaiting.state import JobState
from asyncclient.fleet.registry import Registry
from asyncclient.fleet.relay import FleetStats
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import Change, Failure, Notified, apply, read_message
from asyncclient.models.videos import VideoDetail

__all__ = ["ChannelListener"]

logger = logging.getLogger("asyncclient")

_LISTEN_TIMEOUT = 1.0  # an I/O deadline: how long one read of the channel blocks


class ChannelListener:
    """Listens on the fleet's channel for one process.

    Args:
        store: The fleet's store.
        registry: The jobs this process awaits, by key.
        stats: Counts what is taken in and what is dropped.
        clock: Waits between tries to listen again.
        retry: Seconds between those tries.
        notified: Hands a notification's record to the jobs that await it here; returns
            how many it finished.
        awaited: The jobs this process awaits (looked up again after a reconnection).
        subscribed_now: Set each time the listener subscribed (the beat then sends the
            registrations: no change may pass it by).
    """

    __slots__ = (
        "_awaited",
        "_clock",
        "_notified",
        "_registry",
        "_retry",
        "_stats",
        "_store",
        "_subscribed_now",
        "subscribed",
    )

    def __init__(
        self,
        store: FleetStore,
        registry: Registry,
        stats: FleetStats,
        *,
        clock: Clock,
        retry: float,
        notified: Callable[[VideoDetail], int],
        awaited: Callable[[], list[JobState]],
        subscribed_now: asyncio.Event,
    ) -> None:
        self._store = store
        self._registry = registry
        self._stats = stats
        self._clock = clock
        self._retry = retry
        self._notified = notified
        self._awaited = awaited
        self._subscribed_now = subscribed_now
        self.subscribed = asyncio.Event()
        """Set while the channel is listened to."""

    async def run(self) -> None:
        """Listen until cancelled; after a failure, subscribe again a little later."""
        reconnects = 0
        while True:
            pubsub = self._store.redis.pubsub()
            try:
                await pubsub.subscribe(self._store.channel)
                if reconnects:  # what moved meanwhile is kept: look it up
                    self._registry.recheck(self._awaited())
                self.subscribed.set()
                self._subscribed_now.set()
                while True:
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=_LISTEN_TIMEOUT
                    )
                    if message is not None and message.get("type") == "message":
                        self.take(message["data"])
            except Exception as exc:
                logger.warning("fleet: listening failed (%r); listening again", exc)
            finally:
                self.subscribed.clear()
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await pubsub.aclose()
            reconnects += 1
            await self._clock.sleep(self._retry)

    def take(self, data: bytes) -> None:
        """Take in another process's message; what it cannot read is logged, counted in
        ``dropped`` and skipped, and the rest of the message is still taken."""
        local = self._registry.local
        message = read_message(data, wanted=local.__contains__, ignore_from=self._store.process)
        if message is None:
            self._stats.dropped += 1
            return
        self._stats.dropped += message.dropped
        for change in message.changes:
            try:
                self._stats.taken += self._take(change)
            except Exception as exc:
                logger.warning("fleet: a change could not be taken (%r)", exc)

    def _take(self, change: Change) -> int:
        """One change to the local jobs it concerns; 1 when some job took it, else 0."""
        if isinstance(change, Notified):
            return int(self._notified(change.detail) > 0)
        jobs = self._registry.local.get(change.job)
        if not jobs:
            return 0
        if isinstance(change, Failure):
            error = change.rebuilt()
            for job in jobs:
                job.fail(error)
        else:
            for job in list(jobs):
                apply(job, change)
        return 1
