"""What a batch's journal says about earlier runs and about this one, for the reports.

The batch owns its journal (:mod:`asyncclient.batch.journal`); the command line only reads
it, before the run (rows done or submitted by earlier runs) and after it (the records
this run appended: what it submitted, and so paid for). Only whole, readable lines
count, as the journal itself counts them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from asyncclient.cli.progress import Earlier

__all__ = ["JournalView", "ThisRun", "this_run_text"]

_SENT = frozenset({"submit", "accepted", "done"})


def _records(path: Path) -> list[dict[str, Any]]:
    """The readable row records of the file (none when it is missing)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    records = []
    for line in data.split(b"\n")[:-1]:  # what follows the last newline is torn
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "ev" in record:
            records.append(record)
    return records


@frozen
class ThisRun:
    """What one run of a batch did, by the records it appended to the journal."""

    submitted: frozenset[int]
    """Rows this run sent to the service (a ``submit`` record)."""
    accepted: frozenset[int]
    """Of those, rows the service accepted: charged by this run."""
    unanswered: frozenset[int]
    """Of those, rows still without an answer (unresolved): maybe charged."""


@frozen
class JournalView:
    """The journal's records, read once: ``JournalView.read(path)``."""

    records: Sequence[dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> JournalView:
        """Read the journal at ``path`` (empty when it does not exist).

        Raises:
            OSError: The file exists but cannot be read (a directory, say).
        """
        return cls(tuple(_records(path)))

    def last_events(self) -> dict[int, str]:
        """Each row's last event."""
        last: dict[int, str] = {}
        for record in self.records:
            if "i" in record:
                last[int(record["i"])] = str(record["ev"])
        return last

    def earlier(self) -> Earlier:
        """What the runs that wrote these records did."""
        last = self.last_events().values()
        return Earlier(
            finished=sum(ev == "done" for ev in last),
            sent=sum(ev in _SENT for ev in last),
        )

    def since(self, before: JournalView) -> ThisRun:
        """What was appended after ``before`` was read (this run, read after it)."""
        new = [r for r in self.records[len(before.records) :] if "i" in r]
        submitted = {int(r["i"]) for r in new if r["ev"] == "submit"}
        accepted = {int(r["i"]) for r in new if r["ev"] == "accepted"} & submitted
        last = self.last_events()
        return ThisRun(
            submitted=frozenset(submitted),
            accepted=frozenset(accepted),
            unanswered=frozenset(i for i in submitted if last.get(i) == "submit"),
        )


def this_run_text(total: int, earlier: Earlier, run: ThisRun, credits: int | None) -> str:
    """One line on what this run submitted and spent, and what earlier runs had done.

    Args:
        total: Rows of the batch.
        earlier: What the journal said before this run.
        run: What this run appended to the journal.
        credits: Credits this run spent, None when unknown.

    Returns:
        The line, e.g. ``this run: nothing submitted, nothing charged: all 4 rows were
        already done (journal)``.
    """
    if not run.submitted and earlier.finished == total:
        return (
            f"this run: nothing submitted, nothing charged: all {total} rows were already "
            "done (journal)"
        )
    if run.submitted:
        spent = f"{credits} credits spent" if credits is not None else "credits spent unknown"
        head = f"this run: {len(run.submitted)} rows submitted, {spent}"
        if run.unanswered:
            head += f" (and {len(run.unanswered)} unresolved rows may have been charged)"
    else:
        head = "this run: nothing submitted, nothing charged"
    before = []
    if earlier.finished:
        before.append(f"{earlier.finished} rows were already done")
    if earlier.sent > earlier.finished:
        before.append(f"{earlier.sent - earlier.finished} submitted earlier were awaited")
    return head + (f"; {', '.join(before)} (journal)" if before else "")
