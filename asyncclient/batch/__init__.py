"""Submitting many: a batch's rows, its journal, budget and reconciliation.

``asyncclient.batch`` re-exports the public names of ``runner``: the batch, its phase,
its listeners' updates and its report.
"""

# Owns: :class:`Batch` and ``request_batch`` (``runner``), the run of its rows
# (``rowrun``: the scheduling), the one owner of a row's life (``book``: each event
# moves the row's outcome, journal record, budget and claims together), its phase,
# outcomes, counts and listeners (``ledger``), what it tells
# (``report``: :class:`BatchUpdate`, :class:`BatchReport`) and how it reads (``text``,
# its ``repr``), a row's settings, items and results (``rows``), where rows come from,
# read as they are sent (``source``; template rows turned into requests:
# ``template_rows``), the protocol a batch writes its journal through and the opening
# of the store its setting names (``store``), the journal file that makes a batch
# resumable (``journal``), its
# compact table of rows (``journal_table``), its checkpoint (``journal_index``) and its
# lock, one runner per journal (``journal_lock``), what a row's journal record tells and
# the seams a batch submits through (``pickup``), rows an earlier run finished
# (``earlier``), the credit budget (``budget``), what a journal says of its batch, read by
# any process (``status``), settling a creation whose answer was
# lost, within the settle window (``settle``), the stop when the service cannot be
# reached (``stop``) and strings kept as digests (``digests``). Faces attach through
# ``batch.phase``, ``batch.subscribe`` and ``batch.report()``.
# May import: ``awaiting`` (jobs), ``http.prepared`` (a creation checked once),
# ``http.gate``, ``http.reach``, ``models``, ``errors``, ``validation``, ``_clock``,
# ``_states``. It takes a way to submit one request (``Submitter``) and to make jobs
# (``JobMaker``) as protocols; nothing here imports ``notebook`` or ``cli``.

from asyncclient.batch.runner import (
    Batch,
    BatchCheck,
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
from asyncclient.batch.status import BatchStatus

__all__ = [
    "Batch",
    "BatchCheck",
    "BatchListener",
    "BatchOptions",
    "BatchPhase",
    "BatchProgress",
    "BatchReport",
    "BatchSettings",
    "BatchStatus",
    "BatchUpdate",
    "JobMaker",
    "RowOutcome",
    "RowResult",
    "Submitter",
    "batch_id_of",
    "request_batch",
]
