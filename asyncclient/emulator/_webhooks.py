"""Webhook deliveries (spec 6): one scheduler task, retries after 1, 5 and 15 minutes."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from asyncclient.emulator._attempts import Attempt, AttemptLog
from asyncclient.emulator._clock import ServiceClock, iso
from asyncclient.emulator._records import Video
from asyncclient.emulator._state import Store

__all__ = ["RETRY_DELAYS", "Attempt", "AttemptLog", "Dispatcher"]

JSON = dict[str, Any]
RETRY_DELAYS = (60.0, 300.0, 900.0)  # spec 6: service seconds after the previous attempt
"""Service seconds from a failed notification attempt to the next: 1, 5 and 15 minutes."""
_RESOLUTION = {"ratio_9_16": "1080x1920", "ratio_16_9": "1920x1080", "ratio_1_1": "1080x1080"}


@dataclass(order=True, slots=True)
class _Job:
    due: float
    seq: int
    row: int = field(compare=False)
    attempt: int = field(compare=False, default=1)
    made: float | None = field(compare=False, default=None)
    """When its payload was made (by the first attempt); its retries send the same."""


class Dispatcher:
    """Schedules notifications at completion times and delivers them."""

    def __init__(
        self,
        store: Store,
        clock: ServiceClock,
        payload: Callable[[Video, float], JSON],
        *,
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._store = store
        self._clock = clock
        self._payload = payload
        self._ssl = ssl_context
        self._timeout = timeout
        self._heap: list[_Job] = []
        self._seq = 0
        self._wake = asyncio.Event()
        self._inflight: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self.attempts = AttemptLog(store.table, payload)
        clock.on_advance(self._wake.set)

    def watch(self, video: Video) -> None:
        """Deliver a notification when ``video`` finishes (if it has a webhook)."""
        if video.webhook:
            self._push(video.done_at, video.row)

    def _push(self, due: float, row: int, attempt: int = 1, made: float | None = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, _Job(due, self._seq, row, attempt, made))
        self._wake.set()

    async def start(self) -> None:
        """Open the outgoing session and start the scheduler task."""
        # One connection per delivery (no keep-alive): deliveries are rare, and a kept
        # TLS connection outlives the session's close on Python 3.10.
        connector = aiohttp.TCPConnector(
            ssl=self._ssl if self._ssl is not None else True, force_close=True
        )
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=self._timeout)
        )
        self._loop_task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop the scheduler, cancel deliveries in flight and close the session."""
        tasks = [t for t in [self._loop_task, *self._inflight] if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loop_task = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            self.fire_due()
            timeout = None
            if self._heap:
                timeout = min(
                    3600.0, max(0.0, self._clock.to_real(self._heap[0].due - self._clock.now()))
                )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    def fire_due(self) -> int:
        """Start a delivery for every job due now; return how many started."""
        now = self._clock.now()
        started = 0
        while self._heap and self._heap[0].due <= now:
            job = heapq.heappop(self._heap)
            made = job.made
            video = Video(self._store.table, job.row)
            if video.webhook is None:
                continue
            if made is None:
                if video.notified or video.status(now) == "STARTED":
                    continue
                video.notified = True
                made = now
            task = asyncio.create_task(self._deliver(video, job.attempt, made))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)
            started += 1
        return started

    async def settle(self) -> None:
        """Deliver everything due now and wait for the deliveries in flight."""
        for _ in range(1000):
            self.fire_due()
            if not self._inflight:
                return
            await asyncio.gather(*list(self._inflight), return_exceptions=True)

    async def _deliver(self, video: Video, attempt: int, made: float) -> None:
        assert video.webhook is not None
        payload = self._payload(video, made)
        status: int | None = None
        error: str | None = None
        if self._session is None:
            error = "emulator stopped"
        else:
            try:
                async with self._session.post(
                    video.webhook,
                    json=payload,
                    headers={
                        "User-Agent": "asyncclient-emulator",
                        "X-Emulator-Attempt": str(attempt),
                    },
                ) as resp:
                    status = resp.status
                    await resp.read()
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
                error = f"{type(exc).__name__}: {exc}"
        now = self._clock.now()
        self.attempts.add(now, video, attempt, status, error, made)
        if status != 200 and attempt <= len(RETRY_DELAYS):
            self._push(now + RETRY_DELAYS[attempt - 1], video.row, attempt + 1, made)


def payload_a(video: Video, url: str, now: float) -> JSON:
    """Form A (spec 6.1); the failure form is the emulator's choice (documented)."""
    metadata = {"projectId": video.project_id, **video.metadata}
    if video.error is not None:
        return {
            "status": "FAILED",
            "data": {
                "videoId": video.id,
                "status": "FAILED",
                "error": video.error,
                "metadata": metadata,
            },
            "message": "Video failed",
        }
    return {
        "status": "COMPLETED",
        "data": {
            "videoId": video.id,
            "status": "COMPLETED",
            "url": url,
            "shareUrl": url.split("?")[0].replace("/_files/", "/_share/"),
            "metadata": metadata,
        },
        "message": "Video completed",
    }


def payload_b(video: Video, url: str, now: float) -> JSON:
    """Form B (spec 6.2), with the request metadata added as ``metadata``."""
    out: JSON = {
        "event": "project.failed" if video.error is not None else "project.completed",
        "projectId": video.project_id,
        "status": "failed" if video.error is not None else "completed",
        "createdAt": iso(video.created_at),
        "metadata": {"projectId": video.project_id, **video.metadata},
    }
    if video.error is not None:
        out["message"] = video.error
        return out
    ratio = str(video.profile.aspect_ratio)
    out["video"] = {
        "id": video.id,
        "url": url,
        "duration": video.duration_s,
        "thumbnail": url.split(".mp4")[0] + ".jpg",
        "aspectRatio": ratio,
        "resolution": _RESOLUTION.get(ratio, "1080x1920"),
    }
    out["completedAt"] = iso(video.done_at)
    return out
