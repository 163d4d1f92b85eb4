"""Every state machine of the client, as tables: what may follow what, and where it ends.

The machines, each a :class:`Table` of allowed transitions and a terminal set
(everything that decides them lives here):

- :data:`VIDEO`: a video's status as we read it (spec 3.1: STARTED -> COMPLETED |
  FAILED). A terminal status sticks: a record that says otherwise afterwards is a
  stale read (the list shifted, a replica lagged) and is not taken.
- :data:`ROW`: a batch row's outcome (:class:`RowOutcome`). Only the batch moves
  it; a move the table does not allow is a bug and raises.
- :data:`JOURNAL`: the events a batch journal records for a row
  (:class:`JournalEvent`); replaying a journal checks them, so a damaged file is
  refused instead of resumed wrongly.
- :data:`BATCH_PHASE`: a batch's run (:class:`BatchPhase`), which the batch names
  and its listeners (``batch.subscribe``) follow.
- :data:`FLEET`: what a process of a fleet does for the fleet's polling
  (:class:`FleetMode`: following, leading, alone while Redis is out of reach).
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

from attrs import frozen

__all__ = [
    "BATCH_PHASE",
    "FLEET",
    "JOURNAL",
    "ROW",
    "VIDEO",
    "BatchPhase",
    "FleetMode",
    "JournalEvent",
    "RowOutcome",
    "Table",
    "VideoState",
]

S = TypeVar("S", bound=Hashable)


@frozen
class Table(Generic[S]):
    """A state machine: ``transitions[state]`` is what may follow ``state``."""

    name: str
    transitions: Mapping[S, frozenset[S]]
    terminal: frozenset[S]

    def allows(self, old: S, new: S) -> bool:
        """True when ``new`` may follow ``old``."""
        return new in self.transitions.get(old, frozenset())

    def check(self, old: S, new: S) -> S:
        """Return ``new``, or raise ``ValueError`` naming the machine and both states."""
        if not self.allows(old, new):
            raise ValueError(f"{self.name}: {_name(new)} cannot follow {_name(old)}")
        return new

    def is_terminal(self, state: S) -> bool:
        return state in self.terminal


def _name(state: object) -> str:
    return str(getattr(state, "value", state))


class _StrEnum(str, enum.Enum):
    """An enum whose members are their wire strings (``RowOutcome.COMPLETED == "completed"``)."""

    def __str__(self) -> str:
        return str(self.value)


# -- a video's status (spec 3.1) ----------------------------------------------------------


class VideoState(_StrEnum):
    """A video's status as a job tracks it; ``UNKNOWN`` before the first read."""

    UNKNOWN = "UNKNOWN"
    STARTED = "STARTED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    @classmethod
    def of(cls, status: object) -> VideoState:
        """Read a record's status: the list filter's words too; anything unknown is running.

        ``processing`` (template generation) and statuses the spec does not name
        read as ``STARTED``: not finished.
        """
        if status is None:
            return cls.UNKNOWN
        text = str(getattr(status, "value", status))
        return _VIDEO_WORDS.get(text, cls.STARTED)


_VIDEO_WORDS = {
    "STARTED": VideoState.STARTED,
    "COMPLETED": VideoState.COMPLETED,
    "FAILED": VideoState.FAILED,
    "processing": VideoState.STARTED,
    "completed": VideoState.COMPLETED,
    "failed": VideoState.FAILED,
}

_V = VideoState
VIDEO: Table[VideoState] = Table(
    "video status",
    {
        _V.UNKNOWN: frozenset({_V.UNKNOWN, _V.STARTED, _V.COMPLETED, _V.FAILED}),
        _V.STARTED: frozenset({_V.STARTED, _V.COMPLETED, _V.FAILED}),
        _V.COMPLETED: frozenset({_V.COMPLETED}),
        _V.FAILED: frozenset({_V.FAILED}),
    },
    frozenset({_V.COMPLETED, _V.FAILED}),
)


# -- a batch row's outcome ----------------------------------------------------------------


class RowOutcome(_StrEnum):
    """Where a batch row stands; a :class:`RowResult` carries a terminal one, or
    ``submitted`` for a row whose video was not known finished when the run ended."""

    PENDING = "pending"
    """Not submitted yet."""
    SUBMITTED = "submitted"
    """The service accepted it (or an earlier run did); its video is awaited. A row's
    result carries it when the run ended before the video was known finished (the
    batch's wait ran out, the video could not be followed, the batch stopped): it may
    be charged, its ids are kept, and the next run with the journal waits for it."""
    COMPLETED = "completed"
    """The video completed."""
    FAILED = "failed"
    """The service reports the video FAILED (nothing else is ``failed``)."""
    REJECTED = "rejected"
    """Bad input, or refused by the service: provably no video was made (nothing paid)."""
    SKIPPED = "skipped"
    """Not submitted: the credit budget was reached."""
    UNRESOLVED = "unresolved"
    """Submitted, and the service could not yet say whether it made the project: it may
    have been paid for. The next run with the same journal asks again before it would
    ever submit the row."""
    NOT_SENT = "not_sent"
    """Never sent: the batch stopped first (the service could not be reached for its
    ``unreachable_after``). Nothing was made, nothing paid; the next run sends it."""


_R = RowOutcome
ROW: Table[RowOutcome] = Table(
    "batch row",
    {
        _R.PENDING: frozenset({_R.SUBMITTED, _R.REJECTED, _R.SKIPPED, _R.UNRESOLVED, _R.NOT_SENT}),
        _R.SUBMITTED: frozenset({_R.COMPLETED, _R.FAILED}),
        _R.COMPLETED: frozenset(),
        _R.FAILED: frozenset(),
        _R.REJECTED: frozenset(),
        _R.SKIPPED: frozenset(),
        _R.UNRESOLVED: frozenset(),
        _R.NOT_SENT: frozenset(),
    },
    frozenset({_R.COMPLETED, _R.FAILED, _R.REJECTED, _R.SKIPPED, _R.UNRESOLVED, _R.NOT_SENT}),
)


# -- a batch journal's events -------------------------------------------------------------


class JournalEvent(_StrEnum):
    """What a journal line records of a row (``none``: nothing yet)."""

    NONE = "none"
    SUBMIT = "submit"
    """Written before the creation request leaves."""
    ACCEPTED = "accepted"
    """The service answered with the project's ids (or reconciliation found it)."""
    REJECTED = "rejected"
    """The service refused it: nothing was made."""
    DONE = "done"
    """The video finished (completed or failed)."""


_J = JournalEvent
JOURNAL: Table[JournalEvent] = Table(
    "journal",
    {
        _J.NONE: frozenset({_J.SUBMIT}),
        # SUBMIT again: reconciliation found nothing, so the row is sent once more.
        _J.SUBMIT: frozenset({_J.SUBMIT, _J.ACCEPTED, _J.REJECTED}),
        _J.ACCEPTED: frozenset({_J.DONE}),
        _J.REJECTED: frozenset({_J.SUBMIT}),  # a later run sends a refused row again
        _J.DONE: frozenset({_J.DONE}),  # a later run reads a finished row again
    },
    frozenset({_J.DONE}),
)


# -- a batch's phase ------------------------------------------------------------------------


class BatchPhase(_StrEnum):
    """Where a batch's run stands (``batch.phase``); only the batch moves it."""

    NOT_STARTED = "not started"
    """Nothing done yet (neither awaited, iterated nor prepared)."""
    PREPARING = "preparing"
    """Checking the rows (a template is fetched once); nothing is sent."""
    PREPARED = "prepared"
    """Rows checked by ``batch.prepare()``; the run has not started."""
    SUBMITTING = "submitting"
    """The run reads its journal, then sends rows (and awaits those sent)."""
    AWAITING = "awaiting"
    """Every row is past its submission: only videos are awaited."""
    DONE = "done"
    """Every row has its result."""
    FAILED = "failed"
    """The run stopped on an error (``batch.error``): a refused journal, a failed
    template read, a journal that cannot be written, ..."""
    CANCELLED = "cancelled"
    """The run was cancelled (its journal lets a later run resume it)."""


_P = BatchPhase
_ENDS = frozenset({_P.FAILED, _P.CANCELLED})
BATCH_PHASE: Table[BatchPhase] = Table(
    "batch phase",
    {
        _P.NOT_STARTED: frozenset({_P.PREPARING, _P.CANCELLED}),
        # NOT_STARTED again: a ``prepare()`` outside a run failed (it may be tried again);
        # SUBMITTING straight away: a run prepares its rows itself.
        _P.PREPARING: frozenset({_P.PREPARED, _P.SUBMITTING, _P.NOT_STARTED}) | _ENDS,
        _P.PREPARED: frozenset({_P.SUBMITTING}) | _ENDS,
        _P.SUBMITTING: frozenset({_P.AWAITING}) | _ENDS,
        _P.AWAITING: frozenset({_P.DONE}) | _ENDS,
        _P.DONE: frozenset(),
        _P.FAILED: frozenset(),
        _P.CANCELLED: frozenset(),
    },
    frozenset({_P.DONE, _P.FAILED, _P.CANCELLED}),
)


# -- a fleet poller's mode ------------------------------------------------------------------


class FleetMode(_StrEnum):
    """What a process of a fleet does for the fleet's polling (``AsyncClient(redis=...)``)."""

    FOLLOWING = "following"
    """Another process holds the lease (or none does yet): this one only listens."""
    LEADING = "leading"
    """This process holds the lease: it polls every registered job and tells the fleet."""
    ALONE = "alone"
    """Redis cannot be reached: this process polls its own jobs, as without ``redis=``."""


_F = FleetMode
FLEET: Table[FleetMode] = Table(
    "fleet mode",
    {
        # Any mode may follow any other: the lease is taken or lost at a beat, and Redis
        # may fail at any time. The table is the one place a move is decided on.
        _F.FOLLOWING: frozenset({_F.FOLLOWING, _F.LEADING, _F.ALONE}),
        _F.LEADING: frozenset({_F.LEADING, _F.FOLLOWING, _F.ALONE}),
        _F.ALONE: frozenset({_F.ALONE, _F.FOLLOWING, _F.LEADING}),
    },
    frozenset(),
)
