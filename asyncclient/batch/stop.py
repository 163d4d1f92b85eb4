"""A batch always ends: it stops when the service has not answered for long enough.

A service that goes away mid-batch (a network cut, a long outage) used to leave a
batch polling and retrying until someone pressed Ctrl-C. The client's
:class:`~asyncclient.http.reach.Reach` tells how long every attempt (a creation, a
poll, a look for a lost creation) has gone unanswered; while the batch runs,
:class:`Stop` looks at it every few seconds, and once the silence reaches
``BatchSettings.unreachable_after`` (5 minutes by default) it cancels the batch's rows
and says why. The runner then gives each open row its outcome: ``not_sent`` for rows
no request left for (nothing made, nothing paid), ``unresolved`` for rows sent and not
answered, ``submitted`` for rows the service accepted (their ids are in the journal:
the next run awaits them). Nothing is resent on a guess.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, MutableMapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from asyncclient._clock import Clock
from asyncclient._states import JournalEvent, RowOutcome
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.rows import UNREACHABLE_AFTER, RowResult
from asyncclient.http.reach import Reach

if TYPE_CHECKING:
    from asyncclient.awaiting.jobs import VideoJob
    from asyncclient.batch.ledger import Ledger
    from asyncclient.batch.source import RowSource
    from asyncclient.batch.store import JournalStore

__all__ = ["UNREACHABLE_AFTER", "Stop", "end_open_rows"]

_R = RowOutcome


class Stop:
    """Watches the service's answers while a batch runs, and stops it on a long silence.

    Args:
        clock: Paces the looks.
        reach: The client's record of answers (None: never stops).
        after: Seconds of silence that stop the batch (None: never).
    """

    def __init__(self, clock: Clock, reach: Reach | None, after: float | None) -> None:
        self._clock = clock
        self._reach = reach
        self._after = after
        self.scope: TaskScope | None = None
        """The rows' task scope, cancelled on a stop."""
        self.reason: str | None = None
        """Why the batch stopped, once it did."""

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[Stop]:
        """Watch for as long as the block runs."""
        watcher = asyncio.ensure_future(self._watch())
        try:
            yield self
        finally:
            watcher.cancel()

    async def _watch(self) -> None:
        reach, after = self._reach, self._after
        if reach is None or after is None:
            return
        period = min(5.0, max(0.1, after / 10))
        while True:
            await self._clock.sleep(period)
            silent = reach.silent_for()
            if silent >= after and self.scope is not None:
                self.reason = (
                    f"the service could not be reached for {silent:.0f} s "
                    f"({reach.missed_count} attempts missed)"
                )
                self.scope.cancel()
                return


def end_open_rows(
    reason: str,
    ledger: Ledger,
    journal: JournalStore | None,
    jobs: MutableMapping[int, VideoJob],
    titles: MutableMapping[int, str | None],
    *,
    read: int,
    unread: Iterator[tuple[int, Any]],
    source: RowSource,
) -> int:
    """Give every row of a stopped run without an outcome one; returns the rows in all.

    Rows read and never sent are ``not_sent``; rows sent (by this run, or by an earlier
    one cut off) and not answered ``unresolved``; rows the service accepted keep
    ``submitted``, with their ids (``jobs``: the rows being awaited); rows never read
    (``unread``: the rest of the input) are ``not_sent``.
    """
    ledger.stopped = reason

    def end(index: int, status: RowOutcome, error: str) -> None:
        ledger.move(index, status)
        title = titles.pop(index, None)
        ledger.keep(RowResult(index=index, status=status, error=error, title=title))

    for index in range(read):
        outcome = ledger.outcome(index)
        if outcome is _R.SUBMITTED:  # accepted: its ids are in the journal
            job = jobs.pop(index, None)
            result = RowResult(
                index=index,
                status=_R.SUBMITTED,
                error=f"still pending: {reason}",
                project_id=job.project_id if job else None,
                video_id=job.video_id if job else None,
                title=titles.pop(index, None),
            )
            ledger.keep(result)
        elif outcome is _R.PENDING:
            cut_off = journal is not None and journal.event_of(index) is JournalEvent.SUBMIT
            if ledger.was_sent(index) or cut_off:
                end(index, _R.UNRESOLVED, f"sent, and not answered: {reason}")
            else:
                end(index, _R.NOT_SENT, f"not sent: {reason}")
    total = read
    for index, raw in unread:  # rows never read: never sent
        ledger.add_row(index)
        titles[index] = source.title(raw)
        end(index, _R.NOT_SENT, f"not sent: {reason}")
        total = index + 1
    ledger.all_read(total)
    return total
