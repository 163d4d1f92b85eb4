"""How a batch reads: ``repr(batch)``, one summary line (the notebook's views show the
same fields, and add the table of rows)."""

from __future__ import annotations

from typing import Protocol

from asyncclient._states import BatchPhase
from asyncclient.awaiting.jobs import UNKNOWN, error_text, pairs

__all__ = ["UNDER_WAY", "Summarised", "batch_fields", "batch_line", "phase_word", "rows_known"]

_P = BatchPhase
_WORDS = {
    _P.NOT_STARTED: "not started",
    _P.PREPARING: "preparing",
    _P.PREPARED: "not started",  # checked by ``prepare()``, the run not started
    _P.SUBMITTING: "running",
    _P.AWAITING: "running",
    _P.DONE: "done",
    _P.FAILED: "stopped",
    _P.CANCELLED: "cancelled",
}
_ROWS_KNOWN = frozenset({_P.PREPARED, _P.SUBMITTING, _P.AWAITING, _P.DONE})

UNDER_WAY = ("not started", "preparing", "running")
"""The words of the phases before a batch ended: a summary only, no table of rows."""


class _Progress(Protocol):
    """A batch's counts (``BatchProgress``)."""

    @property
    def total(self) -> int: ...
    @property
    def submitted(self) -> int: ...
    @property
    def resumed(self) -> int: ...
    @property
    def completed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def unresolved(self) -> int: ...
    @property
    def finished(self) -> int: ...
    @property
    def rate(self) -> float: ...
    @property
    def eta(self) -> float | None: ...


class Summarised(Protocol):
    """What a batch's summary reads (``Batch``)."""

    @property
    def phase(self) -> BatchPhase: ...
    @property
    def error(self) -> BaseException | None: ...
    @property
    def progress(self) -> _Progress: ...


def phase_word(batch: Summarised) -> tuple[str, str | None]:
    """Where the batch is, in a person's words (``not started``, ``preparing``,
    ``running``, ``done``, ``cancelled``, ``stopped``) and, once stopped by an error,
    that error."""
    error = batch.error
    stopped = batch.phase is _P.FAILED and error is not None
    return _WORDS[batch.phase], error_text(error) if stopped and error else None


def rows_known(batch: Summarised) -> bool:
    """Whether the batch's rows were counted (checked) yet."""
    return batch.phase in _ROWS_KNOWN or batch.progress.total > 0


def batch_fields(batch: Summarised) -> list[tuple[str, str]]:
    """What a batch's text and HTML both show, as (name, value) pairs."""
    phase, error = phase_word(batch)
    p = batch.progress
    total = p.total if rows_known(batch) else UNKNOWN
    fields = [("state", phase), ("finished", f"{p.finished}/{total}")]
    counts = [("completed", p.completed), ("failed", p.failed), ("rejected", p.rejected)]
    counts += [(k, n) for k, n in (("skipped", p.skipped), ("unresolved", p.unresolved)) if n]
    fields += [(k, str(n)) for k, n in counts]
    fields.append(("submitted", str(p.submitted)))
    if p.resumed:  # sent by an earlier run (the journal): awaited, not sent again
        fields.append(("resumed", str(p.resumed)))
    if phase == "running":
        fields.append(("rate", f"{p.rate:.1f}/min"))
        fields.append(("eta", UNKNOWN if p.eta is None else _seconds(p.eta)))
    if error is not None:
        fields.append(("error", error))
    return fields


def batch_line(batch: Summarised) -> str:
    """``<Batch running: finished=3/20 completed=2 failed=1 ...>``."""
    fields = batch_fields(batch)
    return f"<Batch {fields[0][1]}: {pairs(fields[1:])}>"


def _seconds(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
