"""Where a batch's journal lives: the :class:`JournalStore` protocol the batch writes
through, and :func:`open_journal`, which opens the store a batch's ``journal`` setting
names.

The batch (its :class:`~asyncclient.batch.book.RowBook`, budget, runner and the rows an
earlier run finished) reads and writes its journal only through this protocol, so a
store kept elsewhere than a local file is one more implementation, and the batch does
not know which it has. Every store keeps the journal's promises (see
:mod:`asyncclient.batch.journal`): a ``submit`` durable before the request leaves, a
write that fails stops the row before it is sent, one runner at a time, bound to its
API key (a hash of it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Protocol

from asyncclient._states import JournalEvent
from asyncclient.batch.journal import Journal
from asyncclient.batch.journal_table import RowState

__all__ = ["JournalStore", "open_journal"]


class JournalStore(Protocol):
    """A batch's journal, held by one run: what it knows of each row, and the records
    of a row's events (the file :class:`~asyncclient.batch.journal.Journal` is one)."""

    @property
    def rows(self) -> Mapping[int, RowState]:
        """What the journal knows of each row, by row number (read-only)."""
        ...

    def event_of(self, index: int) -> JournalEvent:
        """The row's last event (``none``: the journal has no record of it)."""
        ...

    def counts(self) -> dict[JournalEvent, int]:
        """How many rows have each last event."""
        ...

    def owns(self, project_id: str) -> bool:
        """Whether a record names this project (a row of the batch owns it)."""
        ...

    def open_rows(self) -> Iterator[RowState]:
        """The rows whose last event is ``submit`` or ``accepted``, by row number."""
        ...

    def record(self, event: JournalEvent, index: int, fingerprint: str, **data: Any) -> RowState:
        """Record an event of a row (the events of money durable before it returns)."""
        ...

    async def arecord(
        self, event: JournalEvent, index: int, fingerprint: str, **data: Any
    ) -> RowState:
        """:meth:`record` for a running batch: durable before it returns, sharing the
        work of making it so with the records other rows wrote meanwhile."""
        ...

    def close(self) -> None:
        """Give the journal up (its lock too)."""
        ...


def open_journal(
    where: str | os.PathLike[str],
    batch_id: str,
    *,
    now: Callable[[], datetime],
    key: str | None,
) -> JournalStore:
    """Take the journal a batch's ``journal`` setting names, for one run.

    Raises:
        JournalLockedError: Another run holds it.
        JournalKeyError: It belongs to another API key.
        JournalWriteError: Its header could not be written.
        ValueError: It is the journal of another batch, or damaged.
    """
    return Journal.open(where, batch_id, now=now, key=key)
