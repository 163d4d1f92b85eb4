"""A batch's bookkeeping: its phase, each row's outcome, the counts, and who listens.

The :class:`Ledger` is the one place a batch's state is written: the phase moves by
:data:`~asyncclient._states.BATCH_PHASE`, a row's outcome by
:data:`~asyncclient._states.ROW` (a move either table does not allow is a bug and
raises). Every change is told to the ``on_progress`` callback (progress reports only,
as before) and to the listeners of ``batch.subscribe`` (phase changes too). Counts are
kept as rows move, so a progress report costs the same for ten rows or a million.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping

from asyncclient._clock import Clock
from asyncclient._states import BATCH_PHASE, ROW, BatchPhase, JournalEvent, RowOutcome
from asyncclient.batch.report import BatchListener, BatchReport, BatchUpdate
from asyncclient.batch.rows import BatchProgress, RowResult

__all__ = ["Ledger"]

logger = logging.getLogger("asyncclient")

_R = RowOutcome


class Ledger:
    """The state of one batch and its run.

    Args:
        clock: Times the run (``progress.elapsed``).
        on_progress: Called with each progress report (the batch's setting).
    """

    def __init__(
        self, clock: Clock, on_progress: Callable[[BatchProgress], None] | None = None
    ) -> None:
        self._clock = clock
        self._on_progress = on_progress
        self.phase = BatchPhase.NOT_STARTED
        self.error: BaseException | None = None
        self.total = 0
        self._rows: dict[int, RowOutcome] = {}
        self._counts = dict.fromkeys(RowOutcome, 0)
        self.results: dict[int, RowResult] = {}
        self.queue: asyncio.Queue[RowResult] = asyncio.Queue()
        self.submitted = 0  # rows this run sent that the service accepted
        self.resumed = 0  # rows an earlier run sent, awaited by this one
        self.done_before = 0  # rows an earlier run saw finished
        self.sent: set[int] = set()  # rows this run sent (a request left for each)
        self.accepted: set[int] = set()  # of those, rows the service accepted
        self.before: dict[JournalEvent, int] = {}  # rows by last event, as the journal was
        self.started = 0.0
        self._listeners: list[BatchListener] = []

    # -- the phase -----------------------------------------------------------------------

    def to(self, phase: BatchPhase, error: BaseException | None = None) -> None:
        """Move to ``phase`` (``error``: what stopped the run) and tell the listeners.

        Raises:
            ValueError: The move is not in :data:`BATCH_PHASE` (a bug).
        """
        self.phase = BATCH_PHASE.check(self.phase, phase)
        if error is not None:
            self.error = error
        self._tell(BatchUpdate(phase=phase, progress=self.progress))

    def end(self, phase: BatchPhase, error: BaseException | None = None) -> None:
        """Move to a terminal phase unless the batch is in one already."""
        if not BATCH_PHASE.is_terminal(self.phase):
            self.to(phase, error)

    # -- rows ----------------------------------------------------------------------------

    def set_rows(self, indexes: Iterable[int]) -> None:
        """The batch's rows, every one pending."""
        self._rows = dict.fromkeys(indexes, _R.PENDING)
        self._counts = dict.fromkeys(RowOutcome, 0)
        self._counts[_R.PENDING] = len(self._rows)
        self.total = len(self._rows)

    def outcome(self, index: int) -> RowOutcome:
        return self._rows[index]

    def move(self, index: int, outcome: RowOutcome, *, earlier: bool = False) -> None:
        """Move a row to ``outcome``; ``earlier``: submitted by an earlier run."""
        old = self._rows[index]
        self._rows[index] = ROW.check(old, outcome)
        self._counts[old] -= 1
        self._counts[outcome] += 1
        if outcome is _R.SUBMITTED:
            if earlier:
                self.resumed += 1
            else:
                self.submitted += 1
                self.accepted.add(index)

    def keep(self, result: RowResult) -> None:
        """A row's result (the row moved to its outcome already): kept, queued for
        ``async for``, and reported."""
        self.results[result.index] = result
        self.queue.put_nowait(result)
        self.report_progress(result)

    def read_journal(self, rows: Mapping[int, JournalEvent]) -> None:
        """What the journal said of each row when this run opened it."""
        before: dict[JournalEvent, int] = {}
        for event in rows.values():
            before[event] = before.get(event, 0) + 1
        self.before = before

    # -- telling -------------------------------------------------------------------------

    @property
    def progress(self) -> BatchProgress:
        """Where the batch stands now."""
        counts = self._counts
        return BatchProgress(
            total=self.total,
            submitted=self.submitted,
            resumed=self.resumed,
            done_before=self.done_before,
            completed=counts[_R.COMPLETED],
            failed=counts[_R.FAILED],
            rejected=counts[_R.REJECTED],
            skipped=counts[_R.SKIPPED],
            unresolved=counts[_R.UNRESOLVED],
            elapsed=self._clock.monotonic() - self.started if self.started else 0.0,
        )

    def report_progress(self, row: RowResult | None = None) -> None:
        """Tell ``on_progress`` and the listeners where the rows stand."""
        progress = self.progress
        if self._on_progress is not None:
            self._on_progress(progress)
        self._tell(BatchUpdate(phase=self.phase, progress=progress, row=row))

    def subscribe(self, listener: BatchListener) -> Callable[[], None]:
        """Call ``listener`` at each change; returns the function that stops it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _tell(self, update: BatchUpdate) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(update)
            except Exception:  # a listener never breaks the batch it listens to
                logger.warning("a batch listener raised; the batch goes on", exc_info=True)

    # -- the report ------------------------------------------------------------------------

    def report(self) -> BatchReport:
        """What this run did so far (see :class:`BatchReport`)."""
        maybe = [i for i in self.sent if self._rows[i] in (_R.PENDING, _R.UNRESOLVED)]
        charges = [self._charge(i) for i in self.accepted]
        known = [c for c in charges if c is not None]
        return BatchReport(
            phase=self.phase,
            rows=self.total,
            outcomes=dict(self._counts),
            before=dict(self.before),
            submitted=len(self.sent),
            accepted=len(self.accepted),
            maybe_charged=len(maybe),
            credits_spent=sum(known) if len(known) == len(charges) else None,
            charges_known=len(known),
        )

    def _charge(self, index: int) -> int | None:
        """What the service charged for a row, when its video's detail was read."""
        result = self.results.get(index)
        video = result.video if result is not None else None
        return video.used_credits if video is not None else None
