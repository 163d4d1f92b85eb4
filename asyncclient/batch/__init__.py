"""Submitting many: a batch's rows, its journal, budget and reconciliation.

Owns: :class:`Batch` and ``request_batch`` (``runner``), the run of its rows
(``rowrun``), its phase, outcomes, counts and listeners (``ledger``), what it tells
(``report``: :class:`BatchUpdate`, :class:`BatchReport`) and how it reads (``text``,
its ``repr``), a row's settings, items and results (``rows``), the journal file that
makes a batch resumable (``journal``) and its lock, one runner per journal
(``journal_lock``), the credit budget (``budget``), settling a creation whose answer
was lost, within the settle window (``settle``) and template rows turned into requests
(``template_rows``). Faces attach through ``batch.phase``, ``batch.subscribe`` and
``batch.report()``.

May import: ``awaiting`` (jobs), ``http.prepared`` (a creation checked once),
``http.gate``, ``models``, ``errors``, ``validation``, ``_clock``, ``_states``. It takes a
way to submit one request (``Submitter``) and to make jobs (``JobMaker``) as protocols;
nothing here imports ``notebook`` or ``cli``.

``asyncclient.batch`` re-exports the public names of ``runner``: the batch, its phase,
its listeners' updates and its report.
"""

from asyncclient.batch.runner import (
    Batch,
    BatchListener,
    BatchOptions,
    BatchPhase,
    BatchProgress,
    BatchReport,
    BatchSettings,
    BatchUpdate,
    JobMaker,
    RowOutcome,
    RowResult,
    Submitter,
    batch_id_of,
    request_batch,
)

__all__ = [
    "Batch",
    "BatchListener",
    "BatchOptions",
    "BatchPhase",
    "BatchProgress",
    "BatchReport",
    "BatchSettings",
    "BatchUpdate",
    "JobMaker",
    "RowOutcome",
    "RowResult",
    "Submitter",
    "batch_id_of",
    "request_batch",
]
