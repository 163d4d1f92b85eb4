"""VideoJob: an awaitable video in the making, and ``client.jobs``.

A job follows one project: ``await job`` returns the completed video's detail,
raising :class:`VideoFailedError` when the service reports FAILED.
Jobs do not poll on their own: while at least one task waits on a job
(``await job``, ``job.wait()``, ``job.updates()``), the client's single
:class:`~asyncclient.awaiting.poller.Poller` watches it. Cancelling the waiting task stops
watching and leaves the service's job alone.

A project may hold several videos (the video list shows every video of a project).
A job tracks all of them: ``job.video_ids`` lists them, the
job is done when all are, ``await job`` returns the first one's detail (the
one the creation response named, else the oldest), and ``job.videos`` holds
every detail once done. If any fails, the job fails.

What is known of the videos lives in a :class:`~asyncclient.awaiting.state.JobState`
(``job.state``), which the poller writes; the job reads it and waits on it.

``repr(job)`` reads like the notebook's view of it (:func:`job_text`); the views
themselves (HTML, live displays) live in ``asyncclient.notebook``, which attaches to
jobs from outside: nothing here knows of it.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Generator, Sequence
from typing import Any

from attrs import frozen

from asyncclient.awaiting.deadlines import end as end_deadline
from asyncclient.awaiting.deadlines import start as start_deadline
from asyncclient.awaiting.poller import JobPoller
from asyncclient.awaiting.state import JobState
from asyncclient.errors import APIError, JobTimeoutError
from asyncclient.http.forks import forks
from asyncclient.http.tracing import mark_error as otel_mark_error
from asyncclient.http.tracing import tracer as otel_tracer
from asyncclient.models.videos import CreatedProject, VideoDetail

__all__ = [
    "DEFAULT_WAIT_TIMEOUT",
    "UNKNOWN",
    "JobUpdate",
    "Jobs",
    "VideoJob",
    "duration",
    "error_text",
    "job_fields",
    "job_text",
    "pairs",
    "percent",
]

_IN_WAIT_SPAN: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "asyncclient_in_wait_span", default=False
)
"""Set while a traced wait runs the plain one (so it opens no second span)."""

DEFAULT_WAIT_TIMEOUT = 3600.0
"""How long ``await job`` waits before :class:`JobTimeoutError` (one hour)."""


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

    Args:
        poller: The poller that reads the job while it is awaited.
        project_id: The project followed.
        video_id: Its (first) video, when known.
        status: The status the creation response gave.
        format: The creation format, when known.
    """

    __slots__ = (
        "__weakref__",
        "_counted",
        "_poller",
        "_waiters",
        "created",
        "format",
        "state",
    )

    def __init__(
        self,
        poller: JobPoller,
        *,
        project_id: str | None,
        video_id: str | None = None,
        status: str | None = None,
        format: str | None = None,
    ) -> None:
        self._poller = poller
        self.state = JobState(project_id=project_id, video_id=video_id, status=status)
        """What is known of the job's videos (the poller writes it)."""
        self.format = format
        """The creation format (``ugc_ads``, ``template``, ...), when known."""
        self.created: CreatedProject | None = None
        """What the creation request answered (None for a job rebuilt from ids)."""
        self._waiters = 0
        self._counted = 0  # the forks (os.fork) this process descends from, at the count

    def __repr__(self) -> str:
        """``<VideoJob video=... project=... status=... progress=40%>``; a value not
        read yet is ``?`` (as in the notebook's HTML), then the name and duration, or
        the message."""
        return job_text(self.state)

    # -- what a user reads --------------------------------------------------------------

    @property
    def project_id(self) -> str | None:
        """The project the job follows."""
        return self.state.project_id

    @property
    def read_detail(self) -> bool:
        """Read each finished video's detail (one GET each). When False, the record the
        video list shows is enough: the result then has the detail-only fields
        (type, script, avatarId, voiceId, musicId, videoSettings, usedCredits,
        webhook) as None; batches use this to save a request per video."""
        return self.state.read_detail

    @read_detail.setter
    def read_detail(self, value: bool) -> None:
        self.state.read_detail = value

    @property
    def video_id(self) -> str | None:
        """The job's (first) video, once known."""
        ids = self.state.video_ids
        return ids[0] if ids else None

    @property
    def video_ids(self) -> list[str]:
        """Every video of the project seen so far."""
        return self.state.video_ids

    @property
    def status(self) -> str | None:
        """``STARTED``, ``COMPLETED`` or ``FAILED`` (the least finished video's), or None.

        Template generation's ``processing`` reads as ``STARTED``.
        """
        return self.state.status

    @property
    def progress(self) -> int | None:
        """0 to 100 (the least advanced video's), or None before the first read."""
        return self.state.progress

    @property
    def videos(self) -> list[VideoDetail]:
        """The detail of every video, once the job is done."""
        return self.state.videos

    def done(self) -> bool:
        """True once the job completed or failed."""
        return self.state.done()

    def result(self) -> VideoDetail:
        """The completed video's detail.

        Raises:
            VideoFailedError: The video failed.
            RuntimeError: The job is not done (await it instead).
        """
        if self.state.error is not None:
            raise self.state.error
        if self.state.result is None:
            raise RuntimeError("the job is not done yet: await it")
        return self.state.result

    # -- waiting -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, VideoDetail]:
        return self.wait().__await__()

    # A deadline of the job's own, as asyncio.wait_for has one (on a timer shared by
    # every waiting job: asyncclient.awaiting.deadlines).
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
        if (tracer := otel_tracer()) is not None and not _IN_WAIT_SPAN.get():
            return await self._traced_wait(tracer, timeout)
        state = self.state
        self._count_waiter()
        if self._waiters == 1:
            self._poller.watch(state)
        clock = self._poller.clock  # waits time out on the client's clock
        expiry = start_deadline(timeout, clock) if timeout is not None else None
        try:
            while not self.done():
                if expiry is not None and expiry.expired:
                    raise JobTimeoutError(
                        video_id=self.video_id,
                        project_id=self.project_id,
                        status=self.status,
                        progress=self.progress,
                        timeout=float(timeout or 0),
                    )
                waiter = state.waiter()  # awaited bare: no coroutine frame per job
                if expiry is not None:
                    expiry.waiter = waiter
                try:
                    await waiter
                finally:
                    state.forget(waiter)
        finally:
            if expiry is not None:
                end_deadline(expiry, clock)
            self._waiters -= 1
            if self._waiters == 0:
                self._poller.unwatch(state)
        return self.result()

    async def _traced_wait(self, tracer: Any, timeout: float | None) -> VideoDetail:
        """:meth:`wait` in a span ``asyncclient job wait`` (the application traces)."""
        attributes = {
            "asyncclient.video_id": self.video_id or "",
            "asyncclient.project_id": self.project_id or "",
        }
        with tracer.start_as_current_span(
            "asyncclient job wait",
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            token = _IN_WAIT_SPAN.set(True)
            try:
                detail = await self.wait(timeout)
            except BaseException as exc:
                span.set_attribute("asyncclient.outcome", type(exc).__name__)
                otel_mark_error(span, exc)
                raise
            finally:
                _IN_WAIT_SPAN.reset(token)
            span.set_attribute("asyncclient.outcome", "completed")
            span.set_attribute("asyncclient.video_id", detail.id)
            return detail

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
                await self.state.changed()

    async def refresh(self) -> None:
        """Read the job's videos once now (a GET each, or a page of the list), without waiting."""
        await self._poller.refresh(self.state)

    async def read(self) -> VideoDetail:
        """Read the job's (first) video now and return its detail, finished or not.

        Raises:
            RuntimeError: The job knows no video yet (``refresh`` first).
        """
        if self.video_id is None:
            raise RuntimeError("the job knows no video yet: refresh it first")
        detail = await self._poller.source.get(self.video_id)
        self.state.take_detail(detail)
        return detail

    def _watched(self) -> _Watch:
        return _Watch(self)

    def _count_waiter(self) -> None:
        """One more waiter. Waits counted before ``os.fork()`` are the parent's (their
        tasks are not in this process, nor will they end here): not counted any more."""
        if self._counted != (now := forks()):
            self._counted, self._waiters = now, 0
        self._waiters += 1


class _Watch:
    """Registers a waiter with the poller for the span of an ``async with``."""

    __slots__ = ("_job",)

    def __init__(self, job: VideoJob) -> None:
        self._job = job

    async def __aenter__(self) -> None:
        job = self._job
        job._count_waiter()
        if job._waiters == 1:
            job._poller.watch(job.state)

    async def __aexit__(self, *exc: object) -> None:
        job = self._job
        job._waiters -= 1
        if job._waiters == 0:
            job._poller.unwatch(job.state)


class Jobs:
    """``client.jobs``: rebuild jobs from stored ids; owns the shared poller.

    Args:
        poller: The poller every job of the client is read by.
    """

    def __init__(self, poller: JobPoller) -> None:
        self.poller = poller
        """The single background poller of this client."""

    def __repr__(self) -> str:
        return f"<Jobs {self.poller!r}>"

    def from_video_id(self, video_id: str, *, project_id: str | None = None) -> VideoJob:
        """A job for a video whose id you stored (a stateless worker picks the wait up)."""
        return VideoJob(self.poller, project_id=project_id, video_id=video_id)

    def from_project_id(self, project_id: str) -> VideoJob:
        """A job for a project whose id you stored; its videos are found by project id."""
        return VideoJob(self.poller, project_id=project_id)

    def from_created(self, created: CreatedProject) -> VideoJob:
        """A job for what a creation request answered."""
        job = VideoJob(
            self.poller,
            project_id=created.project_id,
            video_id=created.video_id,
            status=created.status,
            format=created.format,
        )
        job.created = created
        return job


# -- how a job reads (its repr; the notebook's views show the same fields) ----------------


UNKNOWN = "?"
"""What a value not known yet reads as, in text and HTML alike."""


def job_fields(state: JobState) -> list[tuple[str, str]]:
    """What a job's text (and the notebook's HTML) show, as (name, value) pairs."""
    ids = state.video_ids
    fields = [
        ("video", ids[0] if ids else UNKNOWN),
        ("project", state.project_id or UNKNOWN),
        ("status", state.status or UNKNOWN),
        ("progress", percent(state.progress)),
    ]
    if len(ids) > 1:
        fields.append(("videos", str(len(ids))))
    video = state.result
    if video is not None:
        if video.name:
            fields.append(("name", video.name))
        if (seconds := duration(video)) is not None:
            fields.append(("duration", seconds))
    if state.error is not None:
        fields.append(("message", error_text(state.error)))
    return fields


def job_text(state: JobState) -> str:
    """``<VideoJob video=... project=... status=... progress=40%>`` (and name, message)."""
    return f"<VideoJob {pairs(job_fields(state))}>"


def percent(progress: int | None) -> str:
    """``40%``, or ``?`` before the first read."""
    return UNKNOWN if progress is None else f"{progress}%"


def duration(video: VideoDetail) -> str | None:
    """``12.0s`` from the detail's seconds (or its frames at 25 fps), None if unknown."""
    seconds = video.duration_in_seconds
    if seconds is None and video.duration_in_frames:
        seconds = video.duration_in_frames / 25
    return None if seconds is None else f"{seconds:.1f}s"


def error_text(error: BaseException) -> str:
    """The service's message for an API error, else the error as text."""
    return error.message if isinstance(error, APIError) else str(error) or type(error).__name__


def pairs(fields: Sequence[tuple[str, str]]) -> str:
    """``name=value`` pairs; free text (names, messages) quoted with ``repr``."""
    quoted = ("name", "message", "error")
    return " ".join(f"{k}={v!r}" if k in quoted else f"{k}={v}" for k, v in fields)
