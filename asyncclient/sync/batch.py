"""SyncBatch: many creations, iterated or waited for without ``await``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING

from asyncclient._states import BatchPhase
from asyncclient.sync._loop import LoopThread

if TYPE_CHECKING:
    from asyncclient.batch.report import BatchReport, BatchUpdate
    from asyncclient.batch.rows import BatchProgress, RowResult
    from asyncclient.batch.runner import Batch
    from asyncclient.batch.source import BatchCheck

__all__ = ["SyncBatch"]


class SyncBatch:
    """A batch run in the client's event loop: ``batch.wait()`` for every result, or
    ``for result in batch`` for results as rows finish (not both).

    The synchronous twin of :class:`~asyncclient.Batch`: same rows, journal, spacing,
    budget and report. Leaving the ``for`` early cancels the batch (its journal lets a
    later run resume it).

    Args:
        batch: The async batch it fronts (``batch.batch``).
        loop: The client's loop thread.
    """

    __slots__ = ("_loop", "batch")

    def __init__(self, batch: Batch, loop: LoopThread) -> None:
        self.batch = batch
        """The :class:`~asyncclient.Batch` this one fronts."""
        self._loop = loop

    def __repr__(self) -> str:
        return repr(self.batch).replace("<Batch", "<SyncBatch", 1)

    def wait(self) -> list[RowResult]:
        """Run the batch to its end; every row's result, in input order."""
        return self._loop.call(self._awaited)

    async def _awaited(self) -> list[RowResult]:
        return await self.batch

    def __iter__(self) -> Iterator[RowResult]:
        return self._loop.iterate(self._rows)

    def _rows(self) -> AsyncIterator[RowResult]:
        return aiter(self.batch)

    def check(self, *, keep: int = 100) -> BatchCheck:
        """Check every row and send nothing (see :meth:`Batch.check`)."""
        return self._loop.call(self.batch.check, keep=keep)

    def report(self) -> BatchReport:
        """What this run did so far (see :meth:`Batch.report`)."""
        return self._loop.call(self.batch.report)

    @property
    def progress(self) -> BatchProgress:
        """Where the batch stands now."""
        return self.batch.progress

    @property
    def results(self) -> list[RowResult]:
        """The results so far, in input order (see :attr:`Batch.results`)."""
        return self._loop.call(lambda: self.batch.results)

    @property
    def phase(self) -> BatchPhase:
        """Where the run stands (see :attr:`Batch.phase`)."""
        return self.batch.phase

    @property
    def error(self) -> BaseException | None:
        """What stopped the run, else None."""
        return self.batch.error

    def subscribe(self, listener: Callable[[BatchUpdate], object]) -> Callable[[], None]:
        """Call ``listener`` at each change (from the client's loop thread: it must not
        block, nor call the synchronous client); returns the unsubscriber."""
        return self._loop.call(self.batch.subscribe, listener)
