"""The group commit of a Redis journal: the records rows write while one group is being
written go to Redis together, in the next one (one fenced script, one ``WAIT``).

A record of money (``submit``, ``accepted``, ``rejected``) is waited for: its row goes on
once Redis has it, durable. A ``done`` record (a row's end) is not: it joins the next
group and the row goes on at once, as the file journal's ``done`` is flushed, not
synced. A failed write fails every record of its group and stops the journal
(``Lease.broken``: later records are refused), waited for or not. Closing writes what is
still queued, blocking, before the lease is given up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from attrs import define

from asyncclient._states import JournalEvent
from asyncclient.batch.journal_table import RowState
from asyncclient.errors import JournalWriteError
from asyncclient.fleet.journal_lease import JournalFencedError, Lease

__all__ = ["GROUP", "GroupWriter", "Queued", "running_loop"]

logger = logging.getLogger("asyncclient")

GROUP = 1000
"""Records written together at most (one script, one ``WAIT``)."""

_MONEY = frozenset(
    event.value for event in (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.REJECTED)
)


@define
class Queued:
    """A record waiting for its group's write: the row's new state, packed."""

    event: str
    row: int
    state: RowState
    earlier: list[str]
    fields: dict[str, bytes]
    future: asyncio.Future[None] | None = None


class GroupWriter:
    """Writes a journal's records a group at a time, under its lease.

    Args:
        lease: The run's lease, whose fenced writes these are.
        url: The journal's URL (without its password), for messages.
        applied: Called with each record's row, state and earlier projects once it is
            in Redis (the journal's memory follows Redis).
    """

    def __init__(
        self, lease: Lease, url: str, applied: Callable[[int, RowState, list[str]], object]
    ) -> None:
        self._lease = lease
        self._url = url
        self._applied = applied
        self._queue: list[Queued] = []  # records waiting for the next group
        self._writing: list[Queued] = []  # the group being written
        self._flusher: asyncio.Task[None] | None = None

    def add(self, queued: Queued, *, wait: bool = True) -> asyncio.Future[None]:
        """Queue a record for the next group; the future tells when it is in Redis
        (``wait=False``: nobody will await it, its failure is the journal's)."""
        loop = asyncio.get_running_loop()
        queued.future = future = loop.create_future()
        if not wait:
            future.add_done_callback(_seen)
        self._queue.append(queued)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        """Write the records queued meanwhile, a group at a time, and tell their rows."""
        lease = self._lease
        while self._queue:
            group, self._queue = self._queue[:GROUP], self._queue[GROUP:]
            self._writing = group
            first = group[0]
            durable = any(q.event in _MONEY for q in group)
            try:
                await lease.awrite("rows", _fields(group), first.event, first.row, durable=durable)
            except JournalWriteError as exc:
                fenced = isinstance(exc, JournalFencedError)
                reason = lease.broken or str(exc)
                for queued in group:
                    if queued.future is not None and not queued.future.done():
                        error = lease.error(queued.event, queued.row, reason, fenced=fenced)
                        error.__cause__ = exc.__cause__
                        queued.future.set_exception(error)
                continue
            except BaseException as exc:  # cancelled, or a bug: no row waits for ever
                for queued in group + self._queue:
                    if queued.future is not None and not queued.future.done():
                        queued.future.set_exception(exc)
                self._queue = []
                raise
            self._wrote(group)
        self._writing = []

    def write_now(self) -> None:
        """Write what is queued or being written, blocking (a group in flight is written
        again: the same states); for closing, before the lease is given up."""
        pending = self._writing + self._queue
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None
        self._writing, self._queue = [], []
        if not pending or self._lease.broken:
            return
        first = pending[0]
        try:
            self._lease.write("rows", _fields(pending), first.event, first.row, durable=False)
        except JournalWriteError as exc:  # the ends of rows: the next run awaits them again
            logger.warning("journal %s: the last records were not written: %s", self._url, exc)
            return
        self._wrote(pending)

    def _wrote(self, group: list[Queued]) -> None:
        for queued in group:  # in Redis: the journal's memory follows
            self._applied(queued.row, queued.state, queued.earlier)
            if queued.future is not None and not queued.future.done():
                queued.future.set_result(None)


def _fields(group: list[Queued]) -> dict[str, bytes]:
    fields: dict[str, bytes] = {}
    for queued in group:
        fields.update(queued.fields)
    return fields


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _seen(future: asyncio.Future[None]) -> None:
    """A record nobody waits for: its failure is the journal's (``Lease.broken``)."""
    if not future.cancelled():
        future.exception()
