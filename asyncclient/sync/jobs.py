"""SyncVideoJob: a video in the making, waited for without ``await``."""

from __future__ import annotations

from collections.abc import Iterator

from asyncclient.awaiting.jobs import DEFAULT_WAIT_TIMEOUT, JobUpdate, VideoJob
from asyncclient.models.videos import VideoDetail
from asyncclient.sync._loop import LoopThread

__all__ = ["SyncVideoJob"]


class SyncVideoJob:
    """A video being generated: ``job.wait()`` blocks until it is done.

    The synchronous twin of :class:`~asyncclient.VideoJob` (made by the sync client's
    creation methods and ``client.jobs``): the same state, read from any thread, and
    the same waits, each run in the client's event loop.

    Args:
        job: The async job it fronts (``job.job``).
        loop: The client's loop thread.
    """

    __slots__ = ("_loop", "job")

    def __init__(self, job: VideoJob, loop: LoopThread) -> None:
        self.job = job
        """The :class:`~asyncclient.VideoJob` this one fronts."""
        self._loop = loop

    def __repr__(self) -> str:
        return repr(self.job).replace("<VideoJob", "<SyncVideoJob", 1)

    @property
    def project_id(self) -> str | None:
        """The project followed."""
        return self.job.project_id

    @property
    def video_id(self) -> str | None:
        """The (first) video's id, once known."""
        return self.job.video_id

    @property
    def video_ids(self) -> list[str]:
        """Every video of the project seen so far."""
        return self.job.video_ids

    @property
    def status(self) -> str | None:
        """``STARTED``, ``COMPLETED`` or ``FAILED``, as last read."""
        return self.job.status

    @property
    def progress(self) -> int | None:
        """0 to 100, as last read."""
        return self.job.progress

    @property
    def videos(self) -> list[VideoDetail]:
        """The detail of every finished video read so far."""
        return self.job.videos

    def done(self) -> bool:
        """True once the job completed or failed."""
        return self.job.done()

    def result(self) -> VideoDetail:
        """The completed video's detail, without waiting (see :meth:`VideoJob.result`)."""
        return self.job.result()

    def wait(self, timeout: float | None = DEFAULT_WAIT_TIMEOUT) -> VideoDetail:
        """Block until the video is done; return its detail.

        Args:
            timeout: Seconds to wait (one hour by default; None waits for ever).

        Returns:
            The completed video's detail (the first video's, for a project of several).

        Raises:
            VideoFailedError: The service reports the video FAILED.
            JobTimeoutError: ``timeout`` passed first (the service's job goes on).
            APIError: Reading the video failed for good (e.g. a refused key).
        """
        return self._loop.call(self.job.wait, timeout)

    def updates(self) -> Iterator[JobUpdate]:
        """Each change of status or progress until the job is done, as it happens (a
        plain iterator: ``for update in job.updates(): ...``)."""
        return self._loop.iterate(self.job.updates)

    def refresh(self) -> None:
        """Read the job's videos once now, outside the poller's rounds."""
        self._loop.call(self.job.refresh)

    def read(self) -> VideoDetail:
        """Read the (first) video's detail now (one GET)."""
        return self._loop.call(self.job.read)
