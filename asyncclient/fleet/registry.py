"""The jobs one process of a fleet awaits, by their key in the fleet, and what the fleet
has still to be told of them.

:class:`Registry` is the bookkeeping half of :class:`~asyncclient.fleet.poller.FleetPoller`:
watching a job adds it under its key (:func:`~asyncclient.fleet.wire.job_key`; several
local jobs may share one), unwatching the last job of a key drops the key, and
:meth:`Registry.send` tells the fleet's store what was added and dropped since the last
send (everything again after the store lost track of this process). Each job registered
is looked up once among the kept outcomes (:meth:`Registry.look_up`), since it may have
finished before this process listened.
"""

from __future__ import annotations

from asyncclient.awaiting.state import JobState
from asyncclient.fleet.store import FleetStore
from asyncclient.fleet.wire import Record, apply, job_key, spec_of, unkept

__all__ = ["Registry"]


class Registry:
    """The jobs this process awaits, by key, and the registrations not yet sent."""

    __slots__ = ("_added", "_fresh", "_keys", "_removed", "_specs", "again", "local")

    def __init__(self) -> None:
        self._keys: dict[int, str] = {}  # id(local job) -> its key
        self.local: dict[str, list[JobState]] = {}
        """Key -> the local jobs awaited under it."""
        self._specs: dict[str, bytes] = {}  # key -> what it follows (to register again)
        self._added: dict[str, bytes] = {}
        self._removed: set[str] = set()
        self._fresh: list[JobState] = []
        self.again = True
        """Send every registration again (the store may have dropped this process's)."""

    def add(self, job: JobState) -> None:
        """Await ``job`` here: registered (its key, once) at the next send."""
        key = job_key(job)
        self._keys[id(job)] = key
        local = self.local.setdefault(key, [])
        if not local:
            spec = self._specs[key] = spec_of(job)
            self._added[key] = spec
            self._removed.discard(key)
        local.append(job)
        self._fresh.append(job)

    def remove(self, job: JobState) -> bool:
        """Stop awaiting ``job``; True when its key is to be unregistered."""
        key = self._keys.pop(id(job), None)
        if key is None:
            return False
        local = self.local.get(key, [])
        if job in local:
            local.remove(job)
        if local:
            return False
        self.local.pop(key, None)
        self._specs.pop(key, None)
        if self._added.pop(key, None) is None:
            self._removed.add(key)
        return True

    def clear(self) -> None:
        """Await nothing: every key is to be unregistered."""
        self._removed.update(self.local)
        self._added.clear()
        self._keys.clear()
        self.local.clear()
        self._specs.clear()

    def recheck(self, jobs: list[JobState]) -> None:
        """Look ``jobs`` up again among the kept outcomes (changes may have passed by)."""
        self._fresh.extend(jobs)

    async def send(self, store: FleetStore) -> None:
        """Tell ``store`` what was registered and unregistered since the last send."""
        if self.again:
            added, removed = dict(self._specs), set(self._removed)
        else:
            added, removed = self._added, self._removed
        self._added, self._removed = {}, set()
        try:
            await store.register(added, removed)
        except BaseException:
            self.again = True
            self._removed |= {k for k in removed if k not in self.local}
            raise
        self.again = False

    async def look_up(self, store: FleetStore) -> int:
        """Hand the kept outcomes of the jobs registered since the last look to them;
        how many records were taken in."""
        fresh, self._fresh = [j for j in self._fresh if not j.done()], []
        if not fresh:
            return 0
        videos = sorted({v for job in fresh for v in job.video_ids})
        projects = sorted({job.project_id for job in fresh if job.project_id})
        try:
            records = await store.finished(videos, projects)
        except BaseException:
            self._fresh.extend(fresh)
            raise
        taken = 0
        for raw in dict.fromkeys(records):  # a video's record is kept by video and project
            change = unkept(raw)
            if change is None:
                continue
            video = change.video if isinstance(change, Record) else change.detail
            for job in fresh:
                if video.id in job.video_ids or (
                    video.project_id and job.project_id == video.project_id
                ):
                    taken += 1
                    apply(job, change)
        return taken
