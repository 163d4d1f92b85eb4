"""``asyncclient batch``: one template video per row of a CSV or JSON Lines file.

A run says what earlier runs had done (from the journal, as the batch read it) and
what it submitted and spent itself, from the batch's report; ``--json`` prints one
document: the summary and a record per row.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from asyncclient._states import BatchPhase
from asyncclient._states import RowOutcome as _R
from asyncclient.batch.report import BatchReport, BatchUpdate
from asyncclient.batch.runner import Batch, RowResult
from asyncclient.cli.exits import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
)
from asyncclient.cli.journal import earlier_of, lost_record_text, resuming_text, this_run_text
from asyncclient.cli.output import error, note, print_json
from asyncclient.cli.progress import ProgressDisplay
from asyncclient.cli.resources import add_connection_args
from asyncclient.cli.results import Downloaded, counts, download_results, row_records, run_batch
from asyncclient.client import AsyncClient
from asyncclient.errors import JournalError, JournalWriteError

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
            "again after an interruption and it resumes without paying twice."
        ),
    )
    p.add_argument("rows", metavar="ROWS", help="a .csv (header line first) or .jsonl file")
    p.add_argument("--template", required=True, metavar="ID", help="the template's id")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="in flight (4)")
    p.add_argument("--spacing", type=float, default=1.0, metavar="S", help="between sends (1)")
    p.add_argument("--journal", metavar="FILE", help="default: ROWS.journal.jsonl")
    p.add_argument("--out", metavar="RESULTS.jsonl", help="write one result per row")
    p.add_argument("--download", metavar="DIR", help="download completed videos here")
    p.add_argument("--budget", type=int, metavar="CREDITS", help="stop submitting past it")
    p.add_argument(
        "--settle-window",
        type=float,
        default=600.0,
        metavar="S",
        help="a row whose reply was lost is resent only after this long, once the service "
        "shows nothing made (600)",
    )
    p.add_argument("--title-column", default="title", metavar="NAME", help="(title)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    add_connection_args(p)
    p.set_defaults(func=batch_command)


# -- rows --------------------------------------------------------------------------------


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV file (header line first) or a JSON Lines file (one object a line).

    Args:
        path: A ``.csv``, ``.jsonl``, ``.ndjson`` or ``.json`` file.

    Returns:
        One mapping per row, column to value; at least one.

    Raises:
        OSError: The file cannot be read.
        ValueError: Another kind of file, a line that is not a JSON object, a CSV line
            with more or fewer values than the header, or no row at all.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _csv_rows(path)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        rows = _json_rows(path)
    else:
        raise ValueError(f"{path}: rows must be a .csv or .jsonl file")
    if not rows:
        raise ValueError(f"{path}: no rows in it: nothing to generate")
    return rows


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames:
            raise ValueError(f"{path}: the file is empty: a header line, then a row a line")
        columns = len(reader.fieldnames)
        rows = []
        for row in reader:
            extra = len(row.pop(None, None) or ())
            values = sum(v is not None for v in row.values()) + extra
            if values != columns:
                raise ValueError(
                    f"{path}:{reader.line_num}: {values} values, the header has {columns} "
                    "columns (quote a value that holds a comma)"
                )
            rows.append(dict(row))
    if not rows:
        raise ValueError(f"{path}: a header line and no row under it: nothing to generate")
    return rows


def _json_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{number}: expected a JSON object")
                rows.append(row)
    return rows


# -- the command -------------------------------------------------------------------------


async def batch_command(args: argparse.Namespace, client: AsyncClient) -> int:
    """``asyncclient batch ROWS --template ID ...``.

    Args:
        args: The parsed options of ``batch``.
        client: The configured client.

    Returns:
        0 every row completed, 4 not every row did, 2 a bad rows file or journal (of
        other rows, of another API key, or held by another run), 1 a journal record that
        could not be written (the batch stopped there), 130 interrupted (running the same
        command again resumes it).
    """
    path = Path(args.rows)
    journal = Path(args.journal) if args.journal else path.with_suffix(".journal.jsonl")
    try:
        rows = read_rows(path)
    except (OSError, ValueError) as exc:
        error(str(exc))
        return EXIT_USAGE
    display = ProgressDisplay()
    batch = client.templates.generate_many(
        args.template,
        rows,
        title_key=args.title_column,
        spacing=args.spacing,
        settle_window=args.settle_window,
        concurrency=args.concurrency,
        journal=journal,
        on_progress=display,
        budget=args.budget,
        read_charges=True,  # credits spent: what the service charged each row
    )
    opened = _JournalRead(batch, display, journal)
    batch.subscribe(opened)
    try:
        results = await run_batch(batch)
    except asyncio.CancelledError:  # Ctrl-C: the batch and its journal are closed by now
        display.close()
        return _interrupted(args, batch, rows, journal)
    except JournalWriteError as exc:  # a record lost: stopped before sending more
        display.close()
        return _record_lost(args, batch, rows, journal, exc)
    except (JournalError, OSError, ValueError) as exc:  # the journal of other rows or
        display.close()  # of another key, held by another run, damaged; a changed row;
        if isinstance(exc, OSError) and opened.read:  # a journal that cannot be read
            raise
        error(str(exc))
        return EXIT_USAGE
    return await _finish(args, client, _Report(rows, results, batch.report(), journal))


class _JournalRead:
    """Tells the progress display what the journal said of earlier runs, once the batch
    read it (it then submits: before its first progress report)."""

    def __init__(self, batch: Batch, display: ProgressDisplay, journal: Path) -> None:
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


@frozen
class _Report:
    """What one run of ``batch`` did, for the summary and ``--json``."""

    rows: Sequence[Any]
    results: Sequence[RowResult]
    report: BatchReport
    journal: Path


async def _finish(args: argparse.Namespace, client: AsyncClient, report: _Report) -> int:
    """Write ``--out``, download, print the summary; the exit status."""
    results = report.results
    downloaded = Downloaded({}, 0)
    if args.download:
        downloaded = await download_results(client, results, Path(args.download))
    records = row_records(results, report.rows, downloaded.paths)
    if args.out:
        text = "".join(json.dumps(record) + "\n" for record in records)
        await asyncio.to_thread(Path(args.out).write_text, text, encoding="utf-8")
    tally = counts(report.report)
    code = EXIT_OK if tally[_R.COMPLETED] == len(results) else EXIT_PARTIAL
    if args.json:
        summary = _summary_of(report, tally, downloaded, code)
        print_json({"summary": summary, "rows": records})
    else:
        _print_summary(report, tally, downloaded, args.download)
    if tally[_R.UNRESOLVED]:
        note(
            f"{tally[_R.UNRESOLVED]} rows were sent but the service could not yet say whether "
            "it made them: run the same command again to find out (they are never resent "
            "blindly)"
        )
    return code


def _print_summary(
    report: _Report, tally: dict[str, int], downloaded: Downloaded, folder: str | None
) -> None:
    unresolved = f", {tally[_R.UNRESOLVED]} unresolved" if tally[_R.UNRESOLVED] else ""
    print(
        f"{tally[_R.COMPLETED]} completed, {tally[_R.FAILED]} failed, "
        f"{tally[_R.REJECTED]} rejected, {tally[_R.SKIPPED]} skipped{unresolved} "
        f"(journal: {report.journal})"
    )
    print(this_run_text(report.report))
    if folder is not None:
        print(downloaded.text(folder))


def _summary_of(
    report: _Report, tally: dict[str, int], downloaded: Downloaded, code: int
) -> dict[str, Any]:
    run = report.report
    return {
        "rows": len(report.results),
        **tally,
        "doneBefore": run.done_before,
        "submittedBefore": run.submitted_before,
        "submitted": run.submitted,
        "creditsSpent": run.credits_spent,
        "maybeCharged": run.maybe_charged,
        "downloaded": downloaded.fetched,
        "journal": str(report.journal),
        "interrupted": False,
        "exitCode": code,
    }


interrupt_reported = False
"""Set once the one line about an interruption was printed (``cli.main`` reads it)."""


def _interrupted(args: argparse.Namespace, batch: Batch, rows: Sequence[Any], journal: Path) -> int:
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
        _print_stopped(batch, rows, journal, EXIT_INTERRUPTED, interrupted=True)
    return EXIT_INTERRUPTED


def _record_lost(
    args: argparse.Namespace,
    batch: Batch,
    rows: Sequence[Any],
    journal: Path,
    lost: JournalWriteError,
) -> int:
    """Say what a run that could not write its journal had sent (exit 1: never 0)."""
    report = batch.report()
    error(lost_record_text(report, lost))
    if args.json:
        _print_stopped(batch, rows, journal, EXIT_ERROR, journalError=str(lost))
    return EXIT_ERROR


def _print_stopped(
    batch: Batch, rows: Sequence[Any], journal: Path, code: int, **more: Any
) -> None:
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
    print_json({"summary": summary, "rows": row_records(batch.results, rows, {})})
