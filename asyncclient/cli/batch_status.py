"""``asyncclient batch status JOURNAL``: what a batch's journal (a file, or
``redis://.../NAME``) says of it, from any process, while it runs or after; no API key.

Rows per outcome, credits charged, the run holding it and its last beat; ``--json`` for
scripts (:meth:`~asyncclient.batch.status.BatchStatus.to_json`). Exit 0 when read, 2
for no such journal or a bad URL, 1 when Redis cannot be read or the journal is damaged.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from asyncclient.batch.status import BatchStatus
from asyncclient.cli.exits import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from asyncclient.cli.options import Parser
from asyncclient.cli.output import error, print_json
from asyncclient.client import batch_status
from asyncclient.errors import FleetError, ValidationError

__all__ = ["main", "status_lines"]

ORDER = ("completed", "failed", "rejected", "skipped", "unresolved", "not_sent")


def _parser() -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = Parser(
        prog="asyncclient batch status",
        description=(
            "What a batch's journal says of it, read from any process while the batch runs "
            "or after (no lock taken, nothing written, no API key needed): rows per "
            "outcome, credits charged, the run holding it and its last beat."
        ),
    )
    p.add_argument(
        "journal",
        metavar="JOURNAL",
        help="the journal: a file (ROWS.journal.jsonl) or redis://[:PASSWORD@]HOST:PORT/DB/NAME",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``asyncclient batch status`` with ``argv`` (the arguments after ``status``)."""
    args = _parser().parse_args(list(argv))
    try:
        status = asyncio.run(batch_status(args.journal))
    except ValidationError as exc:
        error(str(exc))
        return EXIT_USAGE
    except (FleetError, ValueError, OSError) as exc:
        error(str(exc))
        return EXIT_ERROR
    if args.json:
        print_json(status.to_json())
    else:
        for line in status_lines(status):
            print(line)
    return EXIT_OK


def status_lines(status: BatchStatus) -> list[str]:
    """The status in words, a line each: the journal, the rows, the credits, the run."""
    counts = dict(status.outcomes)
    named = [name for name in ORDER if counts.get(name)]
    named += sorted(name for name in counts if name not in ORDER)
    parts = ", ".join(f"{counts[name]:,} {name.replace('_', ' ')}" for name in named)
    lines = [
        f"journal  {status.journal}" + (f" (batch {status.batch_id})" if status.batch_id else ""),
        f"rows     {status.rows:,} recorded" + (f": {parts}" if parts else ""),
    ]
    if status.pending:
        lines.append(
            f"pending  {status.pending:,} sent and not known finished: the run holding the "
            "journal, or the next one, finishes them"
        )
    credits = f"credits  {status.credits:,} charged for {status.charged_rows:,} rows made"
    if status.credits_unknown:
        credits += f" ({status.credits_unknown:,} of them with no charge recorded)"
    lines.append(credits)
    if not status.running:
        lines.append("runner   none: no run holds the journal (run the batch again to resume)")
        return lines
    runner = f"runner   {status.holder or 'a run'}"
    if status.fence is not None:
        runner += f", fence {status.fence}"
    if status.beat_age is not None:
        runner += f"; last beat {status.beat_age:.1f} s ago"
    if status.lease_left is not None:
        runner += f", lease {status.lease_left:.1f} s left"
    lines.append(runner)
    return lines
