"""What a batch needs of the client, and what it knows of a row from its journal.

:class:`Submitter` and :class:`JobMaker` are the two seams a batch submits and awaits
through (``client.projects`` and ``client.jobs``). :class:`Claims` tells which projects
a row of the batch owns already (one project satisfies one row, never two). The
functions read a row's journal record: whether an earlier run was cut off while sending
it, the job of a row it saw accepted, and whether the row changed since.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator
from datetime import datetime
from typing import Any, Protocol

from asyncclient._states import JournalEvent
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.digests import DigestSet
from asyncclient.batch.journal_table import RowState
from asyncclient.batch.rows import Item
from asyncclient.batch.store import JournalStore
from asyncclient.errors import JournalWriteError, RowChangedError
from asyncclient.http.prepared import PreparedCreation
from asyncclient.models.videos import CreatedProject, SentCreation

__all__ = [
    "Claims",
    "JobMaker",
    "Notes",
    "OpenRows",
    "Submitter",
    "check_fingerprint",
    "cut_off",
    "job_of",
]


class Submitter(Protocol):
    """A way to submit one prepared creation, to find an ambiguous one's project, and to
    know the service's clock before a creation leaves."""

    async def submit(self, prepared: PreparedCreation) -> VideoJob: ...

    async def service_time(self) -> datetime | None:
        """A lower bound of the service's own clock now (None: it cannot be known)."""
        ...

    async def reconcile(
        self, error: SentCreation, *, claimed: Collection[str] = ()
    ) -> VideoJob | None: ...


class JobMaker(Protocol):
    """Makes a job for a project a journal knows."""

    def from_created(self, created: CreatedProject) -> VideoJob: ...


class Claims:
    """Projects a row of this batch owns (one project satisfies one row, never two): the
    journal's, and without a journal this run's, as digests."""

    def __init__(self, journal: JournalStore | None) -> None:
        self._journal = journal
        self._mine = DigestSet()

    def add(self, project_id: str | None) -> None:
        if project_id and self._journal is None:
            self._mine.add(project_id)

    def __contains__(self, project_id: object) -> bool:
        if not isinstance(project_id, str):
            return False
        if self._journal is not None and self._journal.owns(project_id):
            return True
        return project_id in self._mine

    def __len__(self) -> int:
        return len(self._mine)

    def __iter__(self) -> Iterator[str]:
        return iter(())


def job_of(jobs: JobMaker, state: RowState) -> VideoJob | None:
    """A job for a row the journal saw accepted, or None (refused or never sent)."""
    known = state.video_id or state.project_id
    if state.event is JournalEvent.ACCEPTED and known:
        created = CreatedProject(project_id=state.project_id, video_id=state.video_id)
        return jobs.from_created(created)
    return None


def cut_off(item: Item, state: RowState) -> bool:
    """Whether an earlier run sent the row and ended before recording the answer."""
    return (
        state.event is JournalEvent.SUBMIT
        and item.request is not None
        and state.sent_at is not None
    )


def check_fingerprint(item: Item, state: RowState) -> None:
    """Refuse a row that changed since the journal recorded its submission."""
    sent = (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE)
    if state.event in sent and state.fingerprint != item.fingerprint:
        raise RowChangedError(item.index)


class Notes:
    """The batch's journal as a run writes it (nothing is written without a journal).

    Args:
        journal: The batch's journal, or None.
    """

    def __init__(self, journal: JournalStore | None) -> None:
        self._journal = journal

    async def submit(self, item: Item, service_at: datetime | None) -> None:
        """Record that the row is about to be sent, durable before it is, with the
        service's clock as known then (``service_at``: the line's ``svc``), so that a
        later run reconciles the row on the service's clock as a live one would. Stopped
        (cancelled) while the line was being made durable, the request never left: the
        journal says so, so that the next run sends the row without first waiting out a
        settle window."""
        svc = service_at.isoformat() if service_at is not None else None
        try:
            name = getattr(item.request, "name", None)
            await self.money(JournalEvent.SUBMIT, item, name=name, svc=svc)
        except asyncio.CancelledError:
            journal = self._journal
            if journal is not None and journal.event_of(item.index) is JournalEvent.SUBMIT:
                with contextlib.suppress(JournalWriteError):  # then the next run asks first
                    journal.record(
                        JournalEvent.REJECTED,
                        item.index,
                        item.fingerprint,
                        error="not sent: the batch stopped before the request left",
                    )
            raise

    async def money(self, event: JournalEvent, item: Item, **data: Any) -> None:
        """Record an event of money, durable before the batch goes on (group commit)."""
        if self._journal is not None:
            await self._journal.arecord(event, item.index, item.fingerprint, **data)

    def record(self, event: JournalEvent, item: Item, **data: Any) -> None:
        """Record an event (a ``done``: flushed, not synced)."""
        if self._journal is not None:
            self._journal.record(event, item.index, item.fingerprint, **data)


class OpenRows:
    """Rows open at once (sent, or picked up, and not finished), at most ``most``."""

    def __init__(self, most: int) -> None:
        self._slots = asyncio.Semaphore(most)
        self.taken = False

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[OpenRows]:
        """Wait for a free slot; it is given back on leaving unless ``taken`` was set
        (a row's task took it: :meth:`launch`)."""
        await self._slots.acquire()
        self.taken = False
        try:
            yield self
        finally:
            if not self.taken:
                self._slots.release()

    def launch(self, rows: TaskScope, func: Callable[..., Awaitable[None]], *args: Any) -> bool:
        """Run a row's work in ``rows``, holding the slot until it ends; returns True."""

        async def held() -> None:
            try:
                await func(*args)
            finally:
                self._slots.release()

        rows.start(held)
        return True
