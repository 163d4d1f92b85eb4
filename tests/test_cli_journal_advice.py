"""What ``asyncclient batch`` says to do when its journal could not record: by what went
wrong (another run holds the journal, Redis failed, the disk), not one advice for all."""

from __future__ import annotations

import pytest

from asyncclient._states import BatchPhase
from asyncclient.batch.report import BatchReport
from asyncclient.cli.journal import lost_record_text
from asyncclient.errors import JournalWriteError
from asyncclient.fleet.journal_lease import JournalFencedError

NOTHING_SENT = BatchReport(
    phase=BatchPhase.SUBMITTING,
    rows=10,
    outcomes={},
    before={},
    submitted=0,
    accepted=0,
    maybe_charged=0,
    credits_spent=None,
    charges_known=0,
)


@pytest.mark.parametrize(
    ("error", "said", "not_said"),
    [
        (
            JournalFencedError(
                "j: another run took the journal's lease",
                path="redis://h/0/j",
                event="submit",
                row=3,
            ),
            "Another run holds the journal now",
            "disk",
        ),
        (
            JournalWriteError(
                "j: Redis failed: ConnectionError()", path="redis://h/0/j", event="submit", row=3
            ),
            "Check that Redis is reachable",
            "disk",
        ),
        (
            JournalWriteError("j.jsonl: File too large", path="j.jsonl", event="submit", row=3),
            "Free disk space (or raise the file size limit)",
            "Redis",
        ),
    ],
    ids=["fenced", "redis", "file"],
)
def test_the_advice_fits_what_went_wrong(
    error: JournalWriteError, said: str, not_said: str
) -> None:
    text = lost_record_text(NOTHING_SENT, error)
    assert said in text and "this run sent no row, charged nothing" in text
    assert not_said not in text.split("no other row was sent.")[1]
