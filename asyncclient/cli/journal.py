"""What a batch's report says of earlier runs and of this one, in words.

The batch owns its journal (:mod:`asyncclient.batch.journal`) and says what it read
there and what this run did in its report (:class:`~asyncclient.batch.report.BatchReport`);
the command line words it: the note that a run resumes, the line on what this run
submitted and spent, and what a run that lost a journal record had sent when it stopped.
"""

from __future__ import annotations

from pathlib import Path

from asyncclient._states import JournalEvent, RowOutcome
from asyncclient.batch.report import BatchReport
from asyncclient.cli.progress import Earlier
from asyncclient.errors import JournalWriteError, ValidationError
from asyncclient.fleet.journal_lease import JournalFencedError, parse_url

Where = Path | str
"""A journal: a file, or a store's URL (``redis://...``)."""

__all__ = [
    "Where",
    "earlier_of",
    "lost_record_text",
    "pending_text",
    "resuming_text",
    "stopped_text",
    "this_run_text",
]


def earlier_of(report: BatchReport) -> Earlier:
    """What earlier runs did, by the journal as this run found it."""
    return Earlier(finished=report.done_before, sent=report.submitted_before)


def resuming_text(report: BatchReport, journal: Where) -> str:
    """The note that a run picks up from its journal.

    Returns:
        E.g. ``resuming from j.jsonl: 2 of 6 rows already done, 1 submitted earlier
        (awaited, not sent again)``.
    """
    before = report.before
    done, accepted = report.done_before, before.get(JournalEvent.ACCEPTED, 0)
    cut = before.get(JournalEvent.SUBMIT, 0)
    text = f"resuming from {journal}: {done} of {report.rows} rows already done"
    if accepted:
        text += f", {accepted} submitted earlier (awaited, not sent again)"
    if cut:
        text += f", {cut} cut off while submitting (looked for with the service first)"
    return text


def this_run_text(report: BatchReport) -> str:
    """One line on what this run submitted and spent, and what earlier runs had done.

    Args:
        report: The batch's report, after its run.

    Returns:
        The line, e.g. ``this run: nothing submitted, nothing charged: all 4 rows were
        already done (journal)``.
    """
    total, done_before, sent_before = report.rows, report.done_before, report.submitted_before
    if not report.submitted and done_before == total:
        return (
            f"this run: nothing submitted, nothing charged: all {total} rows were already "
            "done (journal)"
        )
    if report.submitted:
        credits = report.credits_spent
        spent = f"{credits} credits spent" if credits is not None else "credits spent unknown"
        head = f"this run: {report.submitted} rows submitted, {spent}"
        if report.maybe_charged:
            head += f" (and {report.maybe_charged} unresolved rows may have been charged)"
    else:
        head = "this run: nothing submitted, nothing charged"
    before = []
    if done_before:
        before.append(f"{done_before} rows were already done")
    if sent_before > done_before:
        before.append(f"{sent_before - done_before} submitted earlier were awaited")
    return head + (f"; {', '.join(before)} (journal)" if before else "")


def lost_record_text(report: BatchReport, lost: JournalWriteError) -> str:
    """Why a run stopped when its journal could not record, and what it had sent.

    Returns:
        E.g. ``j.jsonl: could not record row 3's submission (the row was not sent): File
        too large; ...; the batch stopped: this run sent 3 rows: 2 accepted by the service
        (charged), 1 may have been charged (...); no other row was sent. ...``.
    """
    if not report.submitted:
        sent = "this run sent no row, charged nothing"
    else:
        charged = "charged" if report.credits_spent is None else f"{report.credits_spent} credits"
        parts = [f"{report.accepted} accepted by the service ({charged})"]
        refused = report.submitted - report.accepted - report.maybe_charged
        if refused > 0:
            parts.append(f"{refused} refused (not charged)")
        if report.maybe_charged:
            parts.append(
                f"{report.maybe_charged} may have been charged (the service's answer was not "
                "recorded, or not yet given: the next run asks the service about them before "
                "sending any again)"
            )
        sent = f"this run sent {report.submitted} rows: {', '.join(parts)}"
    return f"{lost}; the batch stopped: {sent}; no other row was sent. {_what_to_do(lost)}"


def _what_to_do(lost: JournalWriteError) -> str:
    """What to do about a record that could not be written, by where the journal is."""
    if isinstance(lost, JournalFencedError):
        return (
            "Another run holds the journal now and goes on with the batch; to see it: "
            "asyncclient batch status JOURNAL"
        )
    if lost.path.startswith(("redis://", "rediss://")):
        return (
            "Check that Redis is reachable and keeps its writes, then run the same command "
            "again to resume"
        )
    return "Free disk space (or raise the file size limit) and run the same command again to resume"


def pending_text(report: BatchReport, journal: Where) -> str:
    """What a run that ended with rows still pending left, and how to finish them.

    Returns:
        E.g. ``3 rows still pending: 2 accepted and not finished within the wait (they
        may be charged; their ids are in j.jsonl), 1 sent and not answered (never
        resent blindly); run the same command again to resume: it waits for them``.
    """
    parts = []
    waiting = report.count(RowOutcome.SUBMITTED)
    if waiting:
        parts.append(
            f"{waiting} accepted and not known finished (they may be charged; their ids "
            f"are in {journal})"
        )
    unresolved = report.count(RowOutcome.UNRESOLVED)
    if unresolved:
        parts.append(
            f"{unresolved} sent, and the service could not yet say whether it made them "
            "(never resent blindly)"
        )
    unsent = report.count(RowOutcome.NOT_SENT)
    if unsent:
        parts.append(f"{unsent} not sent (nothing charged)")
    return (
        f"{report.pending} rows still pending: {', '.join(parts)}; run the same command "
        "again to resume: it waits for them and asks the service before sending any again"
    )


def stopped_text(report: BatchReport, journal: Where) -> str:
    """Why a run stopped before every row ended, and how to go on.

    Returns:
        E.g. ``the batch stopped: the service could not be reached for 300 s (...): 40
        rows not sent (nothing charged), 12 accepted and still pending (their ids are in
        j.jsonl); run the same command again to resume``.
    """
    parts = [f"{report.count(RowOutcome.NOT_SENT)} rows not sent (nothing charged)"]
    pending = report.count(RowOutcome.SUBMITTED)
    if pending:
        parts.append(f"{pending} accepted and still pending (their ids are in {journal})")
    unresolved = report.count(RowOutcome.UNRESOLVED)
    if unresolved:
        parts.append(f"{unresolved} sent and not answered (never resent blindly)")
    return (
        f"the batch stopped: {report.stopped}: {', '.join(parts)}; run the same command "
        "again to resume"
    )


def shown_journal(journal: Path | str) -> Path | str:
    """The journal as messages name it: a Redis journal's URL without its password."""
    if isinstance(journal, str):
        try:
            return parse_url(journal).shown
        except ValidationError:
            return journal  # opening it says what is wrong, its password hidden
    return journal
