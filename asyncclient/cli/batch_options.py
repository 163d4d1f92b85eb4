"""The options of ``asyncclient batch`` (its parser; the command is ``cli.batch``)."""

from __future__ import annotations

import argparse

from asyncclient.cli.options import count, credits, positive_seconds, seconds

__all__ = ["add_batch_options"]

_BUDGET = (
    "a cap on the credits the batch may be charged, its journal's earlier runs counted: a "
    "row is sent only while what remains covers the most a row may cost (--cost-per-row, "
    "or what the journal's rows were charged), 0 sends nothing"
)
_COST = "the most one row may cost, in credits (the service does not publish it)"


def add_batch_options(p: argparse.ArgumentParser) -> None:
    """Add the batch command's own options to its parser ``p``."""
    p.add_argument("rows", metavar="ROWS", help="a .csv (header line first) or .jsonl file")
    p.add_argument("--template", required=True, metavar="ID", help="the template's id")
    p.add_argument(
        "--concurrency",
        type=count,
        default=4,
        metavar="N",
        help="creation requests in flight at once",
    )
    p.add_argument(
        "--spacing", type=seconds, default=1.0, metavar="S", help="seconds between two sends"
    )
    _add_journal_options(p)
    p.add_argument("--out", metavar="RESULTS.jsonl", help="write one result per row")
    p.add_argument("--download", metavar="DIR", help="download completed videos here")
    p.add_argument("--budget", type=credits, metavar="CREDITS", help=_BUDGET)
    p.add_argument("--cost-per-row", type=count, metavar="CREDITS", help=_COST)
    p.add_argument(
        "--settle-window",
        type=seconds,
        default=600.0,
        metavar="S",
        help="a row whose reply was lost is resent only after this long, once the service "
        "shows nothing made",
    )
    p.add_argument(
        "--unreachable-after",
        type=seconds,
        default=300.0,
        metavar="S",
        help="stop once the service has not answered for this long; rows never sent "
        "end not_sent, accepted rows stay pending in the journal (0: never stop)",
    )
    p.add_argument(
        "--wait-timeout",
        type=seconds,
        default=3600.0,
        metavar="S",
        help="wait this long for each video; one not finished by then stays pending (it "
        "may be charged) and the next run with the journal waits for it again (0: forever)",
    )
    p.add_argument(
        "--max-open",
        type=count,
        default=10_000,
        metavar="N",
        help="most rows sent and not yet finished at once; the next waits",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check every row and name the rejected ones; send nothing",
    )
    p.add_argument(
        "--title-column", default="title", metavar="NAME", help="the column of the titles"
    )
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def _add_journal_options(p: argparse.ArgumentParser) -> None:
    """The options of where the batch keeps its journal, and of the fleet it joins."""
    p.add_argument(
        "--journal",
        metavar="FILE|URL",
        help="a file (default: ROWS.journal.jsonl) or redis://[:PASSWORD@]HOST:PORT/DB/NAME: "
        "a journal in Redis, which any process can resume",
    )
    p.add_argument(
        "--accept-journal-loss",
        action="store_true",
        help="keep a Redis journal on a Redis that can lose acknowledged writes (no AOF "
        "appendfsync always, no replica): a crash may lose a submission, paid twice",
    )
    p.add_argument(
        "--journal-lease",
        type=positive_seconds,
        metavar="S",
        help="seconds a Redis journal's lease lasts without a beat: a runner that died is "
        "replaced this long after its last beat (default: 15)",
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        help="join the fleet on this Redis (default: $ASYNCCLIENT_REDIS_URL): one rate limit "
        "and one poller shared with the web workers and other runs on the same key",
    )
