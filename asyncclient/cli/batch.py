"""``asyncclient batch``: one template video per row of a CSV or JSON Lines file.

A run says what earlier runs had done (from the journal, as the batch read it) and
what it submitted and spent itself, from the batch's report; ``--json`` prints one
document: the summary and a record per row. Rows are read as they are sent and each
result is written to ``--out`` as its row finishes: a million rows run in flat memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import IO, Any

from asyncclient._states import BatchPhase
from asyncclient._states import RowOutcome as _R
from asyncclient.batch.budget import HOW, CreditBudget, cost_source
from asyncclient.batch.report import BatchReport, BatchUpdate
from asyncclient.batch.runner import Batch, BatchCheck, RowResult
from asyncclient.batch.store import is_store_url
from asyncclient.cli.batch_options import add_batch_options
from asyncclient.cli.exits import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
)
from asyncclient.cli.journal import (
    Where,
    earlier_of,
    lost_record_text,
    pending_text,
    resuming_text,
    shown_journal,
    stopped_text,
    this_run_text,
)
from asyncclient.cli.output import error, note, print_json
from asyncclient.cli.progress import ProgressDisplay
from asyncclient.cli.resources import add_connection_args
from asyncclient.cli.results import (
    Downloaded,
    counts,
    download_results,
    row_record,
    row_records,
)
from asyncclient.cli.rowsfile import RowsFile, header_problem
from asyncclient.client import AsyncClient
from asyncclient.errors import JournalError, JournalWriteError, RowChangedError

__all__ = ["batch_command", "interrupt_reported", "read_rows", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``batch`` command.

    Args:
        subparsers: What ``parser.add_subparsers()`` returned.
    """
    p = subparsers.add_parser(
        "batch",
        help="generate one template video per row of a CSV or JSON Lines file",
        description=(
            "Generate one video per row: the 'title' column is the video's title, every "
            "other column a template variable. Progress is journaled: run the same command "
            "again after an interruption and it resumes without paying twice. "
            "`asyncclient batch status JOURNAL` shows a batch's progress from any process."
        ),
    )
    add_batch_options(p)
    add_connection_args(p)
    p.set_defaults(func=batch_command)


# -- rows --------------------------------------------------------------------------------


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a CSV file (header line first) or a JSON Lines file, in a list (the
    command itself reads them as it sends: :class:`~asyncclient.cli.rowsfile.RowsFile`).

    Raises:
        OSError: The file cannot be read.
        ValueError: A bad file (see :meth:`RowsFile.scan`); the message names it.
    """
    return list(RowsFile(path).scan())


# -- the command -------------------------------------------------------------------------


async def batch_command(args: argparse.Namespace, client: AsyncClient) -> int:
    """``asyncclient batch ROWS --template ID ...``.

    The rows are read as they are sent, and each result is written to ``--out`` as its
    row finishes: memory stays flat however many rows there are (``--json`` and
    ``--download`` keep a record per row).

    Args:
        args: The parsed options of ``batch``.
        client: The configured client.

    Returns:
        0 every row completed, 4 not every row did (or the service could not be reached
        for ``--unreachable-after`` seconds: the batch stopped), 2 a bad rows file or
        journal (of other rows, of another API key, or held by another run), 1 a
        journal record that could not be written (the batch stopped there), 130
        interrupted (running the same command again resumes it).
    """
    path = Path(args.rows)
    journal: Where = path.with_suffix(".journal.jsonl")
    if args.journal:
        journal = args.journal if is_store_url(args.journal) else Path(args.journal)
    try:
        rows = await asyncio.to_thread(RowsFile(path).scan)
    except (OSError, ValueError) as exc:
        error(str(exc))
        return EXIT_USAGE
    if await _header_refused(client, args, rows):
        return EXIT_USAGE
    display = ProgressDisplay()
    batch = _batch_of(args, client, rows, journal, display)
    shown = shown_journal(journal)  # in messages: a Redis URL without its password
    if args.check:
        display.close()
        return await _check_only(batch, rows, args.budget)
    opened = _JournalRead(batch, display, shown)
    batch.subscribe(opened)
    out = _Results(args, rows)
    try:
        await out.consume(batch)
    except asyncio.CancelledError:  # Ctrl-C: the batch and its journal are closed by now
        display.close()
        out.close()
        return _interrupted(args, batch, out, shown)
    except JournalWriteError as exc:  # a record lost: stopped before sending more
        display.close()
        out.close()
        return _record_lost(args, batch, out, shown, exc)
    except (JournalError, OSError, ValueError, RuntimeError) as exc:  # the journal of other
        display.close()  # rows or of another key, held by another run, damaged; a changed
        out.close()  # row; a journal that cannot be read
        if isinstance(exc, OSError) and opened.read:
            raise
        if isinstance(exc, RowChangedError):
            error(_changed_text(rows, exc.index, shown))
        else:
            error(str(exc).replace("accept_journal_loss=True", "--accept-journal-loss"))
        return EXIT_USAGE
    display.close()
    out.close()
    code = await _finish(args, client, out, batch.report(), shown)
    if args.budget is not None:
        _say_budget(batch.budget, batch.report().count(_R.SKIPPED), json_out=args.json)
    return code


def _batch_of(
    args: argparse.Namespace,
    client: AsyncClient,
    rows: RowsFile,
    journal: Where,
    display: ProgressDisplay,
) -> Batch:
    """The batch the options describe (not started)."""
    return client.templates.generate_many(
        args.template,
        rows,
        title_key=args.title_column,
        spacing=args.spacing,
        settle_window=args.settle_window,
        unreachable_after=args.unreachable_after or None,
        wait_timeout=args.wait_timeout or None,
        concurrency=args.concurrency,
        max_open=max(args.max_open, args.concurrency),
        journal=journal,
        on_progress=display,
        budget=args.budget,
        accept_journal_loss=args.accept_journal_loss,
        journal_lease=args.journal_lease,
        cost_per_row=args.cost_per_row,
        read_charges=True,  # credits spent: what the service charged each row
    )


async def _header_refused(client: AsyncClient, args: argparse.Namespace, rows: RowsFile) -> bool:
    """A CSV file's columns checked against the template's variables (said, if not)."""
    if rows.header is None:
        return False
    template = await client.templates.get(args.template)
    problem = header_problem(rows, template.variable_names(), args.title_column, template.id)
    if problem is not None:
        error(problem)
    return problem is not None


async def _check_only(batch: Batch, rows: RowsFile, budget: int | None) -> int:
    """``--check``: rows checked, rejected ones named, what the rest may cost; none sent."""
    try:
        found = await batch.check()
    except (JournalError, OSError, ValueError) as exc:
        error(str(exc))
        return EXIT_USAGE
    for index, problems in found.problems:
        said = rows.named("; ".join(problems))
        note(f"{rows.path}:{rows.line_of(index)}: would be rejected: {said}")
    if found.rejected > len(found.problems):
        note(f"... and {found.rejected - len(found.problems)} more rows")
    print(f"{found.rows} rows checked in {rows.path}: {found.rejected} would be rejected")
    print(estimate_text(found))
    unknown = budget is not None and found.fits(budget) is None
    if budget is not None:
        print(budget_fit_text(found, budget))
    return EXIT_OK if found.ok and not unknown else EXIT_USAGE


def _changed_text(rows: RowsFile, index: int, journal: Where) -> str:
    """A row that is not the one the journal recorded as sent: what to do."""
    return (
        f"{rows.path}:{rows.line_of(index)}: not the row the journal {journal} recorded as "
        "sent: the rows changed since its run, or it is the journal of another batch of "
        "this template. Nothing was sent. To resume that batch, run it with its own rows, "
        "unchanged; to start a new batch with these rows, give it a journal of its own "
        "(--journal NEW.journal.jsonl)."
    )


def estimate_text(found: BatchCheck) -> str:
    """``estimate: 3 rows x 5 credits = 15 credits at most (a row's cost: given ...)``."""
    sent = found.sent_before
    before = f"; {sent} rows an earlier run sent are not sent again" if sent else ""
    if found.cost_per_row is None and found.to_send:
        return f"estimate: unknown: what a row may cost is not known: {HOW}{before}"
    where = cost_source(found.cost_given, found.cost_rows).replace("given", "--cost-per-row")
    return (
        f"estimate: {found.to_send} rows x {found.cost_per_row or 0} credits = "
        f"{found.estimate} credits at most (a row's cost: {where}){before}"
    )


def budget_fit_text(found: BatchCheck, budget: int) -> str:
    """What a budget lets through of the rows to send."""
    fits = found.fits(budget)
    if fits is None:
        return f"budget {budget} credits: a run would send nothing and exit 2 ({HOW})"
    counted = f"{found.charged_before} counted for rows sent before; " if found.sent_before else ""
    left = found.to_send - fits
    return f"budget {budget} credits: {counted}{fits} rows fit, {left} would be skipped"


def _say_budget(budget: CreditBudget, skipped: int, *, json_out: bool) -> None:
    """What the budget counted, and a row charged more than it was counted at."""
    if budget.overcharged is not None:
        note(f"budget: {budget.overcharged}")
    if not json_out:
        print(
            f"budget {budget.limit} credits: {budget.committed} counted (every row that may "
            f"have been charged, a row at most {budget.cost} credits: {budget.cost_from}); "
            f"{skipped} rows skipped"
        )


class _Results:
    """Where a run's results go as rows finish: ``--out`` (one JSON line each), the
    rejections said at once, and the records ``--json`` and ``--download`` need."""

    def __init__(self, args: argparse.Namespace, rows: RowsFile) -> None:
        self._rows = rows
        self._file: IO[str] | None = None
        if args.out:
            self._file = Path(args.out).open("w", encoding="utf-8")  # noqa: SIM115
        self._keep = bool(args.json or args.download)
        self.kept: list[RowResult] = []
        self.count = 0

    async def consume(self, batch: Batch) -> None:
        async for result in batch:
            self.count += 1
            line = self._rows.line_of(result.index)
            if result.status is _R.REJECTED:
                note(f"{self._rows.path}:{line}: rejected: {self._rows.named(str(result.error))}")
            if self._file is not None:
                self._file.write(json.dumps(row_record(result, None, line)) + "\n")
            if self._keep:
                self.kept.append(result)

    def line_of(self, index: int) -> int:
        """The line of the rows file where row ``index`` starts."""
        return self._rows.line_of(index)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _JournalRead:
    """Tells the progress display what the journal said of earlier runs, once the batch
    read it (it then submits: before its first progress report)."""

    def __init__(self, batch: Batch, display: ProgressDisplay, journal: Where) -> None:
        self._batch = batch
        self._display = display
        self._journal = journal
        self.read = False
        """Whether the batch read (and accepted) its journal."""

    def __call__(self, update: BatchUpdate) -> None:
        if update.phase is BatchPhase.SUBMITTING and not self.read:
            self.read = True
            report = self._batch.report()
            intro = resuming_text(report, self._journal) if report.resuming else None
            self._display.resume(earlier_of(report), intro)


async def _finish(
    args: argparse.Namespace,
    client: AsyncClient,
    out: _Results,
    report: BatchReport,
    journal: Where,
) -> int:
    """Download, print the summary; the exit status."""
    results = sorted(out.kept, key=lambda r: r.index)
    downloaded = Downloaded({}, 0)
    if args.download:
        downloaded = await download_results(client, results, Path(args.download))
    tally = counts(report)
    code = EXIT_OK if tally[_R.COMPLETED] == report.rows else EXIT_PARTIAL
    if args.json:
        summary = _summary_of(report, journal, tally, downloaded, code)
        records = row_records(results, downloaded.paths, out.line_of)
        print_json({"summary": summary, "rows": records})
    else:
        _print_summary(report, journal, tally, downloaded, args.download)
    if report.stopped is not None:
        note(stopped_text(report, journal))
    elif report.pending:
        note(pending_text(report, journal))
    return code


def _print_summary(
    report: BatchReport,
    journal: Where,
    tally: dict[str, int],
    downloaded: Downloaded,
    folder: str | None,
) -> None:
    more = "".join(
        f", {tally[outcome]} {outcome.replace('_', ' ')}"
        for outcome in (_R.UNRESOLVED, _R.NOT_SENT)
        if tally[outcome]
    )
    pending = report.count(_R.SUBMITTED)
    if pending:
        more += f", {pending} still pending"
    print(
        f"{tally[_R.COMPLETED]} completed, {tally[_R.FAILED]} failed, "
        f"{tally[_R.REJECTED]} rejected, {tally[_R.SKIPPED]} skipped{more} "
        f"(journal: {journal})"
    )
    print(this_run_text(report))
    if folder is not None:
        print(downloaded.text(folder))


def _summary_of(
    run: BatchReport, journal: Where, tally: dict[str, int], downloaded: Downloaded, code: int
) -> dict[str, Any]:
    return {
        "rows": run.rows,
        **tally,
        "pending": run.count(_R.SUBMITTED),
        "doneBefore": run.done_before,
        "submittedBefore": run.submitted_before,
        "submitted": run.submitted,
        "creditsSpent": run.credits_spent,
        "maybeCharged": run.maybe_charged,
        "downloaded": downloaded.fetched,
        "journal": str(journal),
        "interrupted": False,
        "stopped": run.stopped,
        "exitCode": code,
    }


interrupt_reported = False
"""Set once the one line about an interruption was printed (``cli.main`` reads it)."""


def _interrupted(args: argparse.Namespace, batch: Batch, out: _Results, journal: Where) -> int:
    """Say once what an interrupted run did (and print its document with ``--json``)."""
    global interrupt_reported
    interrupt_reported = True
    report = batch.report()
    tally = counts(report)
    note(
        f"interrupted: {sum(tally.values())} of {report.rows} rows finished, "
        f"{report.submitted} submitted by this run, every submission recorded in {journal}; "
        "run the same command again to resume"
    )
    if args.json:
        _print_stopped(batch, out, journal, EXIT_INTERRUPTED, interrupted=True)
    return EXIT_INTERRUPTED


def _record_lost(
    args: argparse.Namespace,
    batch: Batch,
    out: _Results,
    journal: Where,
    lost: JournalWriteError,
) -> int:
    """Say what a run that could not write its journal had sent (exit 1: never 0)."""
    report = batch.report()
    error(lost_record_text(report, lost))
    if args.json:
        _print_stopped(batch, out, journal, EXIT_ERROR, journalError=str(lost))
    return EXIT_ERROR


def _print_stopped(batch: Batch, out: _Results, journal: Where, code: int, **more: Any) -> None:
    """The ``--json`` document of a run that stopped before its end."""
    report = batch.report()
    summary: dict[str, Any] = {"rows": report.rows, **counts(report)}
    summary.update(
        doneBefore=report.done_before,
        submittedBefore=report.submitted_before,
        submitted=report.submitted,
        maybeCharged=report.maybe_charged,
        journal=str(journal),
        interrupted=False,
        exitCode=code,
    )
    summary.update(more)
    results = sorted(out.kept, key=lambda r: r.index)
    print_json({"summary": summary, "rows": row_records(results, {}, out.line_of)})
