"""Confirmed outcomes kept for jobs awaited after them.

A notification may arrive, and be confirmed through the API, before any task awaits its
job (the creation's response and the notification race; a stateless worker awaits the
job later). The receiver answers it and drops the service's retries, so the outcome is
kept here: :class:`KeptOutcomes` holds the finished records a process confirmed (by
video id and by project id), and a job that starts being awaited takes them at once,
instead of waiting for the next polling round (the safety net polls a minute later).

What is kept is bounded twice: at most ``limit`` videos (the oldest kept are dropped
first) and for at most ``ttl`` seconds of the poller's clock (a finished video's signed
URL is valid for a day). A fleet also keeps them in its Redis store, for the other
processes (:mod:`asyncclient.fleet`).
"""

from __future__ import annotations

from collections import OrderedDict

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._states import VIDEO, VideoState
from asyncclient.awaiting.state import JobState
from asyncclient.models.videos import VideoDetail

__all__ = ["KEPT_LIMIT", "KEPT_SECONDS", "KeptOutcomes"]

KEPT_LIMIT = 10_000
"""How many finished videos' records a process keeps by default (as many as a receiver
remembers notifications)."""
KEPT_SECONDS = 24 * 3600.0
"""How long a kept record stays (the validity of a finished video's signed URL)."""


class KeptOutcomes:
    """The finished records confirmed in this process, bounded by count and age.

    Args:
        limit: The most videos kept; the oldest kept go first.
        ttl: Seconds a record is kept, on ``clock``.
        clock: What ages the records.
    """

    __slots__ = ("_by_project", "_clock", "_records", "limit", "ttl")

    def __init__(
        self, *, limit: int = KEPT_LIMIT, ttl: float = KEPT_SECONDS, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        if limit < 0:
            raise ValueError(f"limit: must be at least 0, got {limit}")
        if not ttl >= 0:
            raise ValueError(f"ttl: must be at least 0 seconds, got {ttl}")
        self.limit = limit
        self.ttl = ttl
        self._clock = clock
        self._records: OrderedDict[str, tuple[float, VideoDetail]] = OrderedDict()
        self._by_project: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"<KeptOutcomes {len(self._records)} of at most {self.limit}>"

    def keep(self, detail: VideoDetail) -> bool:
        """Keep a confirmed record if it is finished (COMPLETED or FAILED); whether it
        was kept."""
        if self.limit == 0 or not VIDEO.is_terminal(VideoState.of(detail.status)):
            return False
        self._drop(detail.id)
        self._records[detail.id] = (self._clock.monotonic() + self.ttl, detail)
        if detail.project_id:
            self._by_project.setdefault(detail.project_id, set()).add(detail.id)
        while len(self._records) > self.limit:
            self._drop(next(iter(self._records)))
        return True

    def hand_to(self, job: JobState) -> int:
        """Hand ``job`` the kept records of its videos and of its project's; how many it
        took (it is done once they finish all its videos)."""
        if not self._records:
            return 0
        wanted = list(job.video_ids)
        if job.project_id:
            wanted.extend(self._by_project.get(job.project_id, ()))
        now = self._clock.monotonic()
        taken = 0
        for video_id in dict.fromkeys(wanted):
            kept = self._records.get(video_id)
            if kept is None:
                continue
            if kept[0] <= now:
                self._drop(video_id)
                continue
            job.take_detail(kept[1])
            taken += 1
        return taken

    def _drop(self, video_id: str) -> None:
        kept = self._records.pop(video_id, None)
        if kept is None:
            return
        project_id = kept[1].project_id
        videos = self._by_project.get(project_id) if project_id else None
        if videos is not None:
            videos.discard(video_id)
            if not videos:
                del self._by_project[project_id]  # type: ignore[arg-type]
