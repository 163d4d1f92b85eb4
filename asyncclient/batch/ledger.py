"""A batch's bookkeeping: its phase, each row's outcome, the counts, and who listens.

The :class:`Ledger` is the one place a batch's state is written: the phase moves by
:data:`~asyncclient._states.BATCH_PHASE`, a row's outcome by
:data:`~asyncclient._states.ROW` (a move either table does not allow is a bug and
raises). Every change is told to the ``on_progress`` callback (progress reports only,
as before) and to the listeners of ``batch.subscribe`` (phase changes too). Counts are
kept as rows move, so a progress report costs the same for ten rows or a million.

A row costs the ledger two bytes (its outcome and what this run did with it, in flat
arrays indexed by row): a batch of a million rows keeps no object per row. Results are
kept for ``await batch`` (which returns them all, in input order); a batch read with
``async for`` hands each result out once and keeps only the last
:data:`RECENT` (``batch.results``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Mapping

from asyncclient._clock import Clock
from asyncclient._states import BATCH_PHASE, ROW, BatchPhase, JournalEvent, RowOutcome
from asyncclient.batch.report import BatchListener, BatchReport, BatchUpdate
from asyncclient.batch.rows import BatchProgress, RowResult

__all__ = ["RECENT", "Ledger"]

logger = logging.getLogger("asyncclient")

_R = RowOutcome
_CODES = tuple(RowOutcome)
_CODE = {outcome: code for code, outcome in enumerate(_CODES)}
_PENDING = _CODE[_R.PENDING]
_MAYBE = frozenset({_R.PENDING, _R.UNRESOLVED})  # a sent row in these may have been paid

# What this run did with a row (bits of its flag byte).
_SENT = 1  # a creation request left for it
_ACCEPTED = 2  # the service accepted it
_PASSED = 4  # past its submission (sent, refused, skipped, known from the journal)

RECENT = 1000
"""Results a batch read with ``async for`` keeps (the latest), for ``batch.results``."""

BACKLOG = 1000
"""Results waiting for an ``async for`` reader at most before no new row is read."""


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
        self.total_known = False
        self._codes = bytearray()  # each row's outcome (an index into _CODES)
        self._flags = bytearray()  # what this run did with each row (_SENT, ...)
        self._counts = dict.fromkeys(RowOutcome, 0)
        self.results: dict[int, RowResult] = {}
        self.recent: deque[RowResult] = deque(maxlen=RECENT)
        self.streaming = False  # results go out through the queue, not kept
        self.queue: asyncio.Queue[RowResult] = asyncio.Queue()
        self._drained: asyncio.Event | None = None
        self.submitted = 0  # rows this run sent that the service accepted
        self.resumed = 0  # rows an earlier run sent, awaited by this one
        self.done_before = 0  # rows an earlier run saw finished
        self.sent = 0  # rows this run sent (a request left for each)
        self.maybe_charged = 0  # of those, rows pending or unresolved
        self.passed = 0  # rows past their submission
        self._charged = 0  # credits charged for accepted rows whose charge was read
        self._charges_known = 0
        self.before: dict[JournalEvent, int] = {}  # rows by last event, as the journal was
        self.started = 0.0
        self.stopped: str | None = None  # why the run stopped before every row ended
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

    def set_total(self, total: int | None) -> None:
        """How many rows the batch has, when known before they are read."""
        if total is not None:
            self.total = max(self.total, total)
            self.total_known = True

    def add_row(self, index: int) -> None:
        """A row read from the input: pending (rows come in input order)."""
        if index >= len(self._codes):
            grow = index + 1 - len(self._codes)
            self._codes.extend(bytes([_PENDING]) * grow)
            self._flags.extend(bytes(grow))
            self._counts[_R.PENDING] += grow
        if not self.total_known:
            self.total = max(self.total, index + 1)

    def all_read(self, count: int) -> None:
        """The input ended after ``count`` rows."""
        self.total = count
        self.total_known = True

    def outcome(self, index: int) -> RowOutcome:
        return _CODES[self._codes[index]]

    def move(self, index: int, outcome: RowOutcome, *, earlier: bool = False) -> None:
        """Move a row to ``outcome``; ``earlier``: submitted by an earlier run."""
        old = _CODES[self._codes[index]]
        self._codes[index] = _CODE[ROW.check(old, outcome)]
        self._counts[old] -= 1
        self._counts[outcome] += 1
        if self._flags[index] & _SENT and (old in _MAYBE) != (outcome in _MAYBE):
            self.maybe_charged += 1 if outcome in _MAYBE else -1
        if outcome is _R.SUBMITTED:
            if earlier:
                self.resumed += 1
            else:
                self.submitted += 1
                self._flags[index] |= _ACCEPTED

    def mark_sent(self, index: int) -> None:
        """A creation request leaves for the row (this run)."""
        if not self._flags[index] & _SENT:
            self._flags[index] |= _SENT
            self.sent += 1
            self.maybe_charged += self.outcome(index) in _MAYBE

    def unmark_sent(self, index: int) -> None:
        """The row's request could not leave (no connection): it was not sent after all."""
        if self._flags[index] & _SENT:
            self._flags[index] &= ~_SENT & 0xFF
            self.sent -= 1
            self.maybe_charged -= self.outcome(index) in _MAYBE

    def was_sent(self, index: int) -> bool:
        """Whether this run sent the row (a request left for it)."""
        return bool(self._flags[index] & _SENT)

    def accepted(self, index: int) -> bool:
        """Whether this run got the row accepted (charged by this run)."""
        return bool(self._flags[index] & _ACCEPTED)

    def pass_row(self, index: int) -> bool:
        """The row is past its submission; False when it was already."""
        if self._flags[index] & _PASSED:
            return False
        self._flags[index] |= _PASSED
        self.passed += 1
        return True

    def keep(self, result: RowResult) -> None:
        """A row's result (the row moved to its outcome already): kept (or queued for
        ``async for``), and reported."""
        charge = result.video.used_credits if result.video is not None else None
        if charge is not None and self.accepted(result.index):
            self._charged += charge
            self._charges_known += 1
        if self.streaming:
            self.queue.put_nowait(result)
            self.recent.append(result)
        else:
            self.results[result.index] = result
        self.report_progress(result)

    async def room(self) -> None:
        """Wait while results wait for their reader (``async for``) in numbers: a slow
        reader slows the batch down instead of letting results pile up."""
        while self.streaming and self.queue.qsize() >= BACKLOG:
            if self._drained is None:
                self._drained = asyncio.Event()
            await self._drained.wait()

    def taken(self) -> None:
        """The reader took results from the queue."""
        if self._drained is not None and self.queue.qsize() < BACKLOG // 2:
            self._drained.set()
            self._drained = None

    def read_journal(self, counts: Mapping[JournalEvent, int]) -> None:
        """What the journal said of the rows (by last event) when this run opened it."""
        self.before = {event: n for event, n in counts.items() if n}

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
            not_sent=counts[_R.NOT_SENT],
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
        return BatchReport(
            phase=self.phase,
            rows=self.total,
            outcomes=dict(self._counts),
            before=dict(self.before),
            submitted=self.sent,
            accepted=self.submitted,
            maybe_charged=self.maybe_charged,
            credits_spent=self._charged if self._charges_known == self.submitted else None,
            charges_known=self._charges_known,
            stopped=self.stopped,
        )
