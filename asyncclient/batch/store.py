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
from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Protocol

from asyncclient._states import JournalEvent
from asyncclient.batch.journal import Journal
from asyncclient.batch.journal_table import RowState
from asyncclient.errors import ValidationError

__all__ = ["STORE_SCHEMES", "JournalOpener", "JournalStore", "is_store_url", "open_journal"]


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


JournalOpener = Callable[..., Awaitable[JournalStore]]
"""Opens a journal kept elsewhere than a file, named by a URL: called as
``opener(url, batch_id, now=..., key=..., accept_journal_loss=...)``. The client gives
the batch the Redis one (``asyncclient.fleet.journal.open_redis_journal``): the batch
never imports the fleet."""

STORE_SCHEMES = ("redis://", "rediss://")
"""The URLs a batch's ``journal`` may be besides a file's path."""


def is_store_url(where: object) -> bool:
    """Whether a ``journal`` setting names a store by URL (not a file)."""
    return isinstance(where, str) and where.startswith(STORE_SCHEMES)


async def open_journal(
    where: str | os.PathLike[str],
    batch_id: str,
    *,
    now: Callable[[], datetime],
    key: str | None,
    opener: JournalOpener | None = None,
    accept_journal_loss: bool = False,
    lease: float | None = None,
) -> JournalStore:
    """Take the journal a batch's ``journal`` setting names, for one run: a file's path,
    or a ``redis://`` / ``rediss://`` URL (opened by ``opener``).

    Raises:
        ValidationError: A URL, and no way to open it (a batch built without a client).
        JournalLockedError: Another run holds it.
        JournalKeyError: It belongs to another API key.
        JournalWriteError: Its header could not be written.
        ValueError: It is the journal of another batch, or damaged.
    """
    if is_store_url(where):
        if opener is None:
            raise ValidationError(
                [
                    f"journal: {str(where).split('://')[0]}:// journals are opened by the "
                    "batches of a client (client.batch, templates.generate_many)"
                ]
            )
        options: dict[str, Any] = {"accept_journal_loss": accept_journal_loss}
        if lease is not None:
            options["lease_seconds"] = lease
        return await opener(str(where), batch_id, now=now, key=key, **options)
    return Journal.open(where, batch_id, now=now, key=key)
