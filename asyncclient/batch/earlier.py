"""Rows an earlier run finished: told from the journal, after sending has begun.

A resumed batch of a million rows may have half of them done. Those rows are neither
built nor sent nor read from the service again: the runner notes their numbers as it
reads past them (8 bytes a row), and :class:`Earlier` tells each one's result from its
journal record (``RowResult.before`` is True; ``video`` is None) once this run has sent
its first row, or once every row was read, so that telling them never delays the first
submission of a resumed run.
"""

from __future__ import annotations

import asyncio
from array import array

from asyncclient._clock import pause
from asyncclient._states import RowOutcome
from asyncclient.batch.ledger import Ledger
from asyncclient.batch.rows import RowResult
from asyncclient.batch.store import JournalStore

__all__ = ["Earlier"]

_CHUNK = 256  # results told between two turns given to the loop's other tasks


class Earlier:
    """Rows the journal saw finished, told from it.

    Args:
        journal: The batch's journal (None: no row was finished before).
        ledger: Where the results go.
    """

    def __init__(self, journal: JournalStore | None, ledger: Ledger) -> None:
        self._journal = journal
        self._ledger = ledger
        self._found = array("q")
        self._told = 0
        self._more = asyncio.Event()
        self._begun = False
        self._all = False

    def found(self, index: int) -> None:
        """The runner read past a row the journal saw finished."""
        self._found.append(index)
        self._ledger.done_before += 1
        if self._begun:
            self._more.set()

    def begin(self) -> None:
        """This run sent its first row: the rows found may be told now."""
        if not self._begun:
            self._begun = True
            self._more.set()

    def all_found(self) -> None:
        """Every row was read."""
        self._all = True
        self.begin()
        self._more.set()

    async def tell(self) -> None:
        """Tell every row found, a chunk at a time; returns once all rows were read and
        every one found was told."""
        while True:
            await self._more.wait()
            self._more.clear()
            while self._told < len(self._found):
                end = min(len(self._found), self._told + _CHUNK)
                for index in self._found[self._told : end]:
                    self._tell(index)
                self._told = end
                await pause()
                await self._ledger.room()  # a slow reader slows the telling down too
            if self._all:
                self._found = array("q")
                return

    def _tell(self, index: int) -> None:
        assert self._journal is not None
        state = self._journal.rows.get(index)
        ledger = self._ledger
        ledger.move(index, RowOutcome.SUBMITTED, earlier=True)
        failed = state is None or state.status == RowOutcome.FAILED.value
        status = RowOutcome.FAILED if failed else RowOutcome.COMPLETED
        ledger.move(index, status)
        ledger.keep(
            RowResult(
                index=index,
                status=status,
                error=state.error if state else "not in the journal",
                project_id=state.project_id if state else None,
                video_id=state.video_id if state else None,
                title=state.title if state else None,
                before=True,
            )
        )
