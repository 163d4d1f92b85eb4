"""Submitting many: a batch's rows, its journal, budget and reconciliation.

Owns: :class:`Batch` and ``request_batch`` (``runner``), a row's settings, items and
results (``rows``), the journal file that makes a batch resumable (``journal``), the
credit budget (``budget``), settling a creation whose answer was lost (``settle``) and
template rows turned into requests (``template_rows``).

May import: ``awaiting`` (jobs), ``resources.prepared`` (a creation checked once),
``http.gate``, ``models``, ``errors``, ``validation``, ``_clock``, ``_states``. It takes a
way to submit one request (``Submitter``) and to make jobs (``JobMaker``) as protocols;
nothing here imports ``notebook`` or ``cli``.

``asyncclient.batch`` re-exports the public names of ``runner``.
"""

from asyncclient.batch.runner import (
    Batch,
    BatchOptions,
    BatchProgress,
    BatchSettings,
    JobMaker,
    RowOutcome,
    RowResult,
    Submitter,
    batch_id_of,
    request_batch,
)

__all__ = [
    "Batch",
    "BatchOptions",
    "BatchProgress",
    "BatchSettings",
    "JobMaker",
    "RowOutcome",
    "RowResult",
    "Submitter",
    "batch_id_of",
    "request_batch",
]
