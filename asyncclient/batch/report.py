"""What a batch tells about itself: a change as it happens, and the report of its run.

Listeners of ``batch.subscribe`` receive a :class:`BatchUpdate` at each change of the
batch's phase and each progress report; ``batch.report()`` gives a :class:`BatchReport`
of the run so far: what the journal said of earlier runs, what this run sent, what the
service charged for it as far as the SDK read it. The command line prints from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from attrs import frozen

from asyncclient._states import BatchPhase, JournalEvent, RowOutcome
from asyncclient.batch.rows import BatchProgress, RowResult

__all__ = ["BatchListener", "BatchReport", "BatchUpdate"]


@frozen(kw_only=True)
class BatchUpdate:
    """A change of a batch (what ``batch.subscribe`` listeners receive)."""

    phase: BatchPhase
    """The batch's phase now (a change of phase is reported on its own)."""
    progress: BatchProgress
    """Where the rows stand now."""
    row: RowResult | None = None
    """The row whose outcome this update reports, if it reports one."""


BatchListener = Callable[[BatchUpdate], object]
"""A listener of ``batch.subscribe``: called with each :class:`BatchUpdate`."""

_SENT_BEFORE = (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE)
_LEFT_UNSENT = (RowOutcome.UNRESOLVED, RowOutcome.NOT_SENT)


@frozen(kw_only=True)
class BatchReport:
    """What one run of a batch did, and what its journal said of earlier runs.

    Credits: the service charges a row when it accepts its creation; what it charged
    is the ``usedCredits`` of the row's video, which only the video's detail shows (the
    list view a batch reads its rows from leaves it out). The batch reads that detail
    for each row this run got accepted when its ``read_charges`` setting is on (one
    GET per row, once its video ended); otherwise a charge is known only for a row
    whose detail was read anyway. :attr:`credits_spent` is the sum of the charges of
    the rows this run got accepted once every one of them is known, 0 when this run
    got none accepted, and None otherwise (:attr:`charges_known` tells how many are).
    Rows an earlier run sent were charged then, not by this run.
    """

    phase: BatchPhase
    """The batch's phase when the report was made."""
    rows: int
    """Rows of the batch (0 before they were checked)."""
    outcomes: Mapping[RowOutcome, int]
    """Rows by outcome now (every outcome named, ``pending`` and ``submitted`` too)."""
    before: Mapping[JournalEvent, int]
    """Rows by the last event the journal held when this run opened it (empty without
    a journal, or before the run read it)."""
    submitted: int
    """Rows this run sent to the service (a creation request left for each)."""
    accepted: int
    """Of those, rows the service accepted: charged by this run."""
    maybe_charged: int
    """Of those, rows without an answer (``unresolved``, or cut off by the end of the
    run): the service may have charged them."""
    credits_spent: int | None
    """Credits the service charged this run's accepted rows (see above), or None."""
    charges_known: int
    """Of the accepted rows, those whose charge the SDK read."""
    stopped: str | None = None
    """Why the run stopped before every row ended (the service could not be reached
    for ``unreachable_after``), or None. Rows never sent are then ``not_sent``, and
    rows the service accepted stay ``submitted``: their ids are in the journal, and
    running the batch again awaits them."""

    def count(self, outcome: RowOutcome) -> int:
        """Rows with ``outcome`` now."""
        return self.outcomes.get(outcome, 0)

    @property
    def pending(self) -> int:
        """Rows left for a next run with the journal: accepted and not known finished
        (``submitted``: it waits for them), ``unresolved`` (it asks the service again
        before it would ever send them) and ``not_sent`` (it sends them)."""
        return sum(self.count(o) for o in (RowOutcome.SUBMITTED, *_LEFT_UNSENT))

    @property
    def done_before(self) -> int:
        """Rows an earlier run saw finished (completed or failed), by the journal."""
        return self.before.get(JournalEvent.DONE, 0)

    @property
    def submitted_before(self) -> int:
        """Rows an earlier run sent (finished, accepted, or cut off before its answer)."""
        return sum(self.before.get(event, 0) for event in _SENT_BEFORE)

    @property
    def resuming(self) -> bool:
        """True when the journal knew rows of earlier runs."""
        return any(self.before.values())
