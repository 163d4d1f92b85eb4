"""The lease holder's copies of the jobs that live processes of the fleet registered.

:class:`Shadows` is what the holder polls: one :class:`~asyncclient.awaiting.state.JobState`
per registered key (made from what the registration follows, dropped when no live
process registers it any more). A notification's record reaches them too, so a copy it
finished needs no more polling.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from asyncclient.awaiting.state import JobState
from asyncclient.fleet.store import Registration
from asyncclient.fleet.wire import read_spec
from asyncclient.models.videos import VideoDetail

__all__ = ["Shadows"]

logger = logging.getLogger("asyncclient")


class Shadows:
    """The holder's copies of registered jobs, by key."""

    __slots__ = ("_copies", "others")

    def __init__(self) -> None:
        self._copies: dict[str, JobState] = {}
        self.others = False
        """Whether other processes' jobs were pending at the last update."""

    def clear(self) -> None:
        """Forget every copy (this process no longer holds the lease)."""
        self._copies.clear()
        self.others = False

    def update(self, registrations: Iterable[Registration]) -> tuple[dict[str, JobState], bool]:
        """The copies of the pending registered jobs, by key, and whether some are new."""
        live: dict[str, bytes] = {}
        for registration in registrations:
            live.setdefault(registration.job, registration.spec)
        for key in [k for k in self._copies if k not in live]:
            del self._copies[key]
        new = False
        for key, spec in live.items():
            if key in self._copies:
                continue
            try:
                project_id, video_id, read_detail = read_spec(spec)
            except ValueError as exc:  # another version's registration
                logger.debug("fleet: %r: %s", key, exc)
                continue
            shadow = JobState(project_id=project_id, video_id=video_id)
            shadow.read_detail = read_detail
            self._copies[key] = shadow
            new = True
        pending = {k: s for k, s in self._copies.items() if not s.done()}
        self.others = bool(pending)
        return pending, new

    def notified(self, detail: VideoDetail) -> None:
        """A notification's record to the copies of its video or project (not told:
        the notification's own message tells the fleet)."""
        for shadow in self._copies.values():
            if not shadow.done() and (
                detail.id in shadow.video_ids
                or (detail.project_id and shadow.project_id == detail.project_id)
            ):
                shadow.take_detail(detail)
