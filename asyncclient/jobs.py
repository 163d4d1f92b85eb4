"""VideoJob: an awaitable video in the making, and the client's shared poller.

A job follows one project: ``await job`` returns the completed video's detail
(spec 2.3), raising :class:`VideoFailedError` when the service reports FAILED.
Jobs do not poll on their own: while at least one task waits on a job
(``await job``, ``job.wait()``, ``job.updates()``), the client's single
:class:`Poller` watches it. Cancelling the waiting task stops watching and
leaves the service's job alone.

A project may hold several videos (spec 4.10: "results include all videos of
those projects"). A job tracks all of them: ``job.video_ids`` lists them, the
job is done when all are, ``await job`` returns the first one's detail (the
one the creation response named, else the oldest), and ``job.videos`` holds
every detail once done. If any fails, the job fails.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from asyncclient.errors import JobTimeoutError, VideoFailedError
from asyncclient.models.enums import VideoStatus
from asyncclient.models.videos import CreatedProject, Video, VideoDetail
from asyncclient.poller import Poller

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient

__all__ = ["DEFAULT_WAIT_TIMEOUT", "JobUpdate", "Jobs", "VideoJob"]

DEFAULT_WAIT_TIMEOUT = 3600.0
"""How long ``await job`` waits before :class:`JobTimeoutError` (one hour)."""

_TIMEOUT: Any = getattr(asyncio, "timeout", None)

_TERMINAL = frozenset({VideoStatus.COMPLETED.value, VideoStatus.FAILED.value})


@frozen
class JobUpdate:
    """A change of a job's status or progress (what ``job.updates()`` yields)."""

    status: str | None
    progress: int | None
    video_id: str | None


class VideoJob:
    """A video being generated; await it for the finished video's detail.

    Built by every ``client.projects.create_*`` method, by
    ``client.jobs.from_video_id`` and ``client.jobs.from_project_id``.
    """

    __slots__ = (
        "_changed",
        "_client",
        "_created_status",
        "_details",
        "_error",
        "_order",
        "_result",
        "_states",
        "_waiters",
        "created",
        "format",
        "project_id",
        "read_detail",
    )

    def __init__(
        self,
        client: AsyncClient,
        *,
        project_id: str | None,
        video_id: str | None = None,
        status: str | None = None,
        format: str | None = None,
    ) -> None:
        if project_id is None and video_id is None:
            raise ValueError("a job needs a video id or a project id")
        self._client = client
        self.project_id = project_id
        """The project the job follows."""
        self.format = format
        """The creation format (``ugc_ads``, ``template``, ...), when known."""
        self.created: CreatedProject | None = None
        """What the creation request answered (None for a job rebuilt from ids)."""
        self.read_detail = True
        """Read each finished video's detail (one GET each). When False, the record the
        video list shows is enough: the result then has the detail-only fields
        (type, script, avatarId, voiceId, musicId, videoSettings, usedCredits,
        webhook) as None; batches use this to save a request per video."""
        self._order: list[str] = []
        self._states: dict[str, tuple[str | None, int | None]] = {}
        self._details: dict[str, VideoDetail] = {}
        self._result: VideoDetail | None = None
        self._error: BaseException | None = None
        self._changed: asyncio.Event | None = None
        self._waiters = 0
        self._created_status = _upper(status)
        if video_id is not None:
            self._order.append(video_id)
            self._states[video_id] = (_upper(status), None)

    @classmethod
    def _from_created(cls, client: AsyncClient, created: CreatedProject) -> VideoJob:
        job = cls(
            client,
            project_id=created.project_id,
            video_id=created.video_id,
            status=created.status,
            format=created.format,
        )
        job.created = created
        return job

    def __repr__(self) -> str:
        return (
            f"<VideoJob video={self.video_id} project={self.project_id} "
            f"status={self.status} progress={self.progress}>"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: status, a progress bar, and the video once completed."""
        status = html.escape(str(self.status or "unknown"))
        who = html.escape(self.video_id or f"project {self.project_id}")
        parts = [f"<b>VideoJob</b> {who}: {status}"]
        if not self.done():
            parts.append(f' <progress max="100" value="{self.progress or 0}"></progress>')
            parts.append(f" {self.progress or 0}%")
        elif self._result is not None and self._result.url:
            url = html.escape(self._result.url, quote=True)
            parts.append(f'<br><video src="{url}" controls width="320"></video>')
        elif self._error is not None:
            parts.append(f"<br>{html.escape(str(self._error))}")
        return "".join(parts)

    # -- what a user reads --------------------------------------------------------------

    @property
    def video_id(self) -> str | None:
        """The job's (first) video, once known."""
        return self._order[0] if self._order else None

    @property
    def video_ids(self) -> list[str]:
        """Every video of the project seen so far."""
        return list(self._order)

    @property
    def status(self) -> str | None:
        """``STARTED``, ``COMPLETED`` or ``FAILED`` (the least finished video's), or None.

        Template generation's ``processing`` reads as ``STARTED``.
        """
        states = [s for s, _ in self._states.values()]
        if not states:
            return self._created_status
        if VideoStatus.FAILED.value in states:
            return VideoStatus.FAILED.value
        if all(s == VideoStatus.COMPLETED.value for s in states):
            return VideoStatus.COMPLETED.value
        return next((s for s in states if s not in _TERMINAL), states[0])

    @property
    def progress(self) -> int | None:
        """0 to 100 (the least advanced video's), or None before the first read."""
        known = [p for _, p in self._states.values() if p is not None]
        return min(known) if known else None

    @property
    def videos(self) -> list[VideoDetail]:
        """The detail of every video, once the job is done."""
        return [self._details[v] for v in self._order if v in self._details]

    def done(self) -> bool:
        """True once the job completed or failed."""
        return self._result is not None or self._error is not None

    def result(self) -> VideoDetail:
        """The completed video's detail.

        Raises:
            VideoFailedError: The video failed.
            RuntimeError: The job is not done (await it instead).
        """
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise RuntimeError("the job is not done yet: await it")
        return self._result

    # -- waiting -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, VideoDetail]:
        return self.wait().__await__()

    async def wait(self, timeout: float | None = DEFAULT_WAIT_TIMEOUT) -> VideoDetail:
        """Wait until the job is done and return the (first) video's detail.

        Args:
            timeout: Seconds to wait (one hour by default; ``None`` waits forever).

        Raises:
            VideoFailedError: The service reports the video FAILED.
            JobTimeoutError: Still unfinished after ``timeout``; carries the last status.
        """
        if self.done():
            return self.result()
        async with self._watched():
            try:
                if _TIMEOUT is not None:  # Python 3.11+: no extra task per waiting job
                    async with _TIMEOUT(timeout):
                        await self._until_done()
                else:
                    await asyncio.wait_for(self._until_done(), timeout)
            except asyncio.TimeoutError:
                raise JobTimeoutError(
                    video_id=self.video_id,
                    project_id=self.project_id,
                    status=self.status,
                    progress=self.progress,
                    timeout=float(timeout or 0),
                ) from None
        return self.result()

    async def _until_done(self) -> None:
        while not self.done():
            await self._next_change()

    async def updates(self) -> AsyncIterator[JobUpdate]:
        """Yield each change of status or progress once, until the job is done.

        The last update is the final state; a failed job raises nothing here
        (await the job for the error).
        """
        last: tuple[str | None, int | None, str | None] | None = None
        async with self._watched():
            while True:
                now = (self.status, self.progress, self.video_id)
                if now != last and (now[0] is not None or now[1] is not None):
                    last = now
                    yield JobUpdate(status=now[0], progress=now[1], video_id=now[2])
                if self.done():
                    return
                await self._next_change()

    async def refresh(self) -> None:
        """Read the job's videos once now (a GET each), without waiting."""
        await self._client.jobs.poller.refresh(self)

    # -- used by the poller ------------------------------------------------------------

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def _next_change(self) -> None:
        event = self._event()
        await event.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _watched(self) -> _Watch:
        return _Watch(self)

    def _needs_detail(self) -> list[str]:
        """Videos known to be finished whose detail has not been read."""
        return [
            v for v in self._order if self._states[v][0] in _TERMINAL and v not in self._details
        ]

    def _apply_list_item(self, video: Video) -> None:
        """Take in a list-view record of one of the job's videos."""
        if video.id not in self._states:
            self._order.append(video.id)
        before = self._states.get(video.id)
        after = (_upper(video.status), video.progress)
        if before != after:
            self._states[video.id] = after
            self._notify()
        if not self.read_detail and after[0] in _TERMINAL and video.id not in self._details:
            self._details[video.id] = _as_detail(video)
            self._finish_if_done()

    def _apply_detail(self, detail: VideoDetail) -> None:
        """Take in a detail view; finish the job when every video is terminal."""
        self._apply_list_item(detail)
        if self._states[detail.id][0] in _TERMINAL:
            self._details[detail.id] = detail
        self._finish_if_done()

    def _finish_if_done(self) -> None:
        if self.done() or not self._order or self._needs_detail():
            return
        if any(self._states[v][0] not in _TERMINAL for v in self._order):
            return
        for vid in self._order:
            detail = self._details[vid]
            if _upper(detail.status) == VideoStatus.FAILED.value:
                self._error = VideoFailedError(
                    detail.message or "video generation failed",
                    video_id=vid,
                    project_id=self.project_id,
                    video=detail,
                )
                break
        else:
            self._result = self._details[self._order[0]]
        self._notify()

    def _fail(self, error: BaseException) -> None:
        if not self.done():
            self._error = error
            self._notify()


class _Watch:
    """Registers a waiter with the poller for the span of an ``async with``."""

    def __init__(self, job: VideoJob) -> None:
        self._job = job

    async def __aenter__(self) -> None:
        job = self._job
        job._waiters += 1
        if job._waiters == 1:
            job._client.jobs.poller.watch(job)

    async def __aexit__(self, *exc: object) -> None:
        job = self._job
        job._waiters -= 1
        if job._waiters == 0:
            job._client.jobs.poller.unwatch(job)


def _as_detail(video: Video) -> VideoDetail:
    """A detail record from a list-view one; the detail-only fields stay None."""
    if isinstance(video, VideoDetail):
        return video
    values = {a.name: getattr(video, a.name) for a in attrs.fields(Video)}
    frames = video.duration_in_frames
    return VideoDetail(**values, duration_in_seconds=None if frames is None else frames / 25)


def _upper(status: object) -> str | None:
    """Normalise a status: the list filter's lower-case words to the record's words."""
    if status is None:
        return None
    text = str(getattr(status, "value", status))
    return {"processing": "STARTED", "completed": "COMPLETED", "failed": "FAILED"}.get(text, text)


class Jobs:
    """``client.jobs``: rebuild jobs from stored ids; owns the shared poller."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self.poller = Poller(client)
        """The single background poller of this client."""

    def from_video_id(self, video_id: str, *, project_id: str | None = None) -> VideoJob:
        """A job for a video whose id you stored (a stateless worker picks the wait up)."""
        return VideoJob(self._client, project_id=project_id, video_id=video_id)

    def from_project_id(self, project_id: str) -> VideoJob:
        """A job for a project whose id you stored; its videos are found by project id."""
        return VideoJob(self._client, project_id=project_id)

    def from_created(self, created: CreatedProject) -> VideoJob:
        """A job for what a creation request answered."""
        return VideoJob._from_created(self._client, created)
