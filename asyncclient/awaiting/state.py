"""What is known of one job's videos: the state the poller writes and a VideoJob reads.

:class:`JobState` is the in-package interface between the poller (and, later,
anything else that learns of a video: a notification) and :class:`VideoJob`.
Whoever reads a video hands the record in with :meth:`JobState.take_record`
(a list view) or :meth:`JobState.take_detail`; a failure that ends the wait goes
in with :meth:`JobState.fail`. Status moves follow :data:`asyncclient._states.VIDEO`:
a finished video stays finished.

A project may hold several videos; the job is done when all are, and
fails if any fails.
"""

from __future__ import annotations

import asyncio
import logging

import attrs

from asyncclient._states import VIDEO, VideoState
from asyncclient.errors import VideoFailedError
from asyncclient.models.videos import Video, VideoDetail

__all__ = ["JobState"]

logger = logging.getLogger("asyncclient")


class JobState:
    """The videos of one project as last read, and the job's outcome once known.

    Args:
        project_id: The project followed.
        video_id: Its (first) video, when the creation response named one.
        status: The status the creation response gave.
    """

    __slots__ = (
        "_changed",
        "_created_status",
        "_details",
        "_ended",
        "_error",
        "_order",
        "_result",
        "_states",
        "list_below",
        "list_rank",
        "project_id",
        "read_detail",
    )

    def __init__(
        self, *, project_id: str | None, video_id: str | None = None, status: str | None = None
    ) -> None:
        if project_id is None and video_id is None:
            raise ValueError("a job needs a video id or a project id")
        self.project_id = project_id
        self.read_detail = True
        """Read each finished video's detail (one GET each); when False, the list's record
        is the result (batches)."""
        self._order: list[str] = []
        self._states: dict[str, tuple[VideoState, int | None]] = {}
        self._details: dict[str, VideoDetail] = _NO_DETAILS  # a dict of its own once needed
        self.list_rank = 0
        """The project's place in the video list counted from the oldest (1: the oldest),
        once a list page showed it; 0 before. It stays the same as newer projects are
        made, so the poller reads the page at ``total - list_rank`` (see ``listscan``)."""
        self.list_below = 0
        """Before a page showed it: the highest rank it can have (the pages read above it
        did not show it); 0 when nothing is known."""
        self._result: VideoDetail | None = None
        self._error: BaseException | None = None
        self._changed: list[asyncio.Future[None]] | None = None  # any change
        self._ended: list[asyncio.Future[None]] | None = None  # the outcome only
        self._created_status = VideoState.of(status)
        if video_id is not None:
            self._order.append(video_id)
            self._states[video_id] = (self._created_status, None)

    # -- reading -------------------------------------------------------------------------

    @property
    def video_ids(self) -> list[str]:
        """Every video of the project seen so far, the first named first."""
        return list(self._order)

    @property
    def video_count(self) -> int:
        """How many videos of the project are known (``len(video_ids)``, without a copy)."""
        return len(self._order)

    @property
    def status(self) -> str | None:
        """``STARTED``, ``COMPLETED`` or ``FAILED`` (the least finished video's), or None."""
        states = [s for s, _ in self._states.values()]
        if not states:
            return _text(self._created_status)
        if VideoState.FAILED in states:
            return VideoState.FAILED.value
        if all(s is VideoState.COMPLETED for s in states):
            return VideoState.COMPLETED.value
        return _text(next((s for s in states if not VIDEO.is_terminal(s)), states[0]))

    @property
    def progress(self) -> int | None:
        """0 to 100 (the least advanced video's), or None before the first read."""
        known = [p for _, p in self._states.values() if p is not None]
        return min(known) if known else None

    @property
    def videos(self) -> list[VideoDetail]:
        """The detail of every finished video read so far."""
        return [self._details[v] for v in self._order if v in self._details]

    @property
    def result(self) -> VideoDetail | None:
        return self._result

    @property
    def error(self) -> BaseException | None:
        return self._error

    def done(self) -> bool:
        """True once the job completed or failed."""
        return self._result is not None or self._error is not None

    def needs_detail(self) -> list[str]:
        """Finished videos whose detail is still to be read."""
        finished = [v for v in self._order if VIDEO.is_terminal(self._states[v][0])]
        return [v for v in finished if v not in self._details]

    async def changed(self) -> None:
        """Wait for the next change of any video's status or progress, or the outcome."""
        waiter = self._new_waiter(outcome=False)
        try:
            await waiter
        finally:
            self.forget(waiter)

    def waiter(self) -> asyncio.Future[None]:
        """A future of its own that the job's outcome resolves; :meth:`forget` it after.

        Only the outcome (completed, failed) resolves it, not each move of progress: a
        round that moves every job's progress wakes none of the tasks that await jobs
        (:meth:`changed` is for those that follow progress). A bare future per waiter:
        an ``asyncio.Event`` (or a coroutine around the wait) would cost an awaited job
        several hundred bytes more (``benchmarks/memory.py``).
        """
        return self._new_waiter(outcome=True)

    def _new_waiter(self, *, outcome: bool) -> asyncio.Future[None]:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self._ended if outcome else self._changed
        if waiting is None:
            if outcome:
                self._ended = [waiter]
            else:
                self._changed = [waiter]
        else:
            waiting.append(waiter)
        return waiter

    def forget(self, waiter: asyncio.Future[None]) -> None:
        """Drop a waiter that stopped waiting (cancelled) before it was resolved."""
        for waiting in (self._ended, self._changed):
            if waiting is not None and waiter in waiting:
                waiting.remove(waiter)

    # -- writing (the poller, a notification) ------------------------------------------------

    def take_record(self, video: Video) -> bool:
        """Take in a list-view record of one of the job's videos.

        Returns:
            Whether the video's status or progress moved (or the job ended).
        """
        known = self._states.get(video.id)
        if known is None:
            self._order.append(video.id)
        old = known[0] if known else VideoState.UNKNOWN
        new = VideoState.of(video.status)
        if not VIDEO.allows(old, new):
            logger.debug("video %s: %s after %s is a stale read; ignored", video.id, new, old)
            return False
        after = (new, video.progress)
        moved = known != after
        if moved:
            self._states[video.id] = after
            self._notify()
        if not self.read_detail and VIDEO.is_terminal(new) and video.id not in self._details:
            self._keep_detail(_as_detail(video))
            self._finish_if_done()
        return moved

    def take_detail(self, detail: VideoDetail) -> bool:
        """Take in a detail view; finish the job when every video is finished.

        Returns:
            Whether the video's status or progress moved, or the job ended.
        """
        moved = self.take_record(detail)
        state = VideoState.of(detail.status)
        if VIDEO.is_terminal(state) and self._states[detail.id][0] is state:
            self._keep_detail(detail)
        was_done = self.done()
        self._finish_if_done()
        return moved or self.done() != was_done

    def _keep_detail(self, detail: VideoDetail) -> None:
        if self._details is _NO_DETAILS:
            self._details = {}
        self._details[detail.id] = detail

    def fail(self, error: BaseException) -> None:
        """End the job with ``error`` (nothing will tell its outcome), unless it is done."""
        if not self.done():
            self._error = error
            self._notify()

    def _notify(self) -> None:
        """Resolve the waiters for any change, and once the job is done, for the outcome."""
        waiting, self._changed = self._changed, None
        if self.done():
            ended, self._ended = self._ended, None
            if ended is not None:
                waiting = ended if waiting is None else waiting + ended
        if waiting is not None:
            for waiter in waiting:
                if not waiter.done():
                    waiter.set_result(None)

    def _finish_if_done(self) -> None:
        if self.done() or not self._order or self.needs_detail():
            return
        if any(not VIDEO.is_terminal(self._states[v][0]) for v in self._order):
            return
        for vid in self._order:
            detail = self._details[vid]
            if VideoState.of(detail.status) is VideoState.FAILED:
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


_NO_DETAILS: dict[str, VideoDetail] = {}
"""Shared by every job that has read no detail yet (never written: see _keep_detail)."""


def _text(state: VideoState) -> str | None:
    return None if state is VideoState.UNKNOWN else state.value


def _as_detail(video: Video) -> VideoDetail:
    """A detail record from a list-view one; the detail-only fields stay None."""
    if isinstance(video, VideoDetail):
        return video
    values = {a.name: getattr(video, a.name) for a in attrs.fields(Video)}
    frames = video.duration_in_frames
    return VideoDetail(**values, duration_in_seconds=None if frames is None else frames / 25)
