"""The batch journal survives any crash: whole lines or none, torn tails cut, money synced;
its finished rows, kept compact, read back as they were."""

from __future__ import annotations

import json
import os
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import JOURNAL, JournalEvent
from asyncclient.batch.journal import Journal, RowState

BATCH = "b1"


def written(path: Path, *records: dict[str, object], tail: bytes = b"") -> None:
    lines = [json.dumps({"ev": "batch", "batch": BATCH, "version": 1})]
    lines += [json.dumps(r) for r in records]
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)


SUBMIT = {"ev": "submit", "i": 0, "fp": "f0", "at": "2026-01-01T00:00:00+00:00"}
ACCEPTED = {"ev": "accepted", "i": 0, "fp": "f0", "project": "p0"}


def test_a_torn_last_line_is_cut_off_and_never_glued_onto(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written(path, SUBMIT, tail=b'{"ev":"accepted","i":0,"fp":"f0","proj')  # a crash mid-write
    journal = Journal.open(path, BATCH)
    assert journal.rows[0].event is JournalEvent.SUBMIT  # the torn record never happened
    assert journal.skipped and "torn tail" in journal.skipped[0]
    journal.record(JournalEvent.ACCEPTED, 0, "f0", project="p0")
    journal.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["ev"] for line in lines] == ["batch", "submit", "accepted"]
    again = Journal.open(path, BATCH)
    assert again.rows[0].project_id == "p0" and again.skipped == []
    again.close()


def test_an_unreadable_tail_line_is_cut_off_too(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written(path, SUBMIT, ACCEPTED, tail=b"\x00\x00garbage\n")
    journal = Journal.open(path, BATCH)
    assert journal.rows[0].event is JournalEvent.ACCEPTED
    assert "line 4" in journal.skipped[0]
    journal.close()
    assert b"garbage" not in path.read_bytes()


def test_an_unreadable_line_before_readable_ones_refuses_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written(path, SUBMIT)
    with path.open("ab") as fh:
        fh.write(b"not json\n" + json.dumps(ACCEPTED).encode() + b"\n")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="line 3 is not a journal record"):
        Journal.open(path, BATCH)
    assert path.read_bytes() == before  # a damaged file is left as it was


def test_money_records_are_synced_before_the_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    journal = Journal.open(tmp_path / "j.jsonl", BATCH)
    assert journal._file is not None
    fd = journal._file.fileno()
    counted = synced.count(fd)  # the header
    for event in (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE):
        journal.record(event, 0, "f0", project="p0")
    journal.close()  # (the index, another file, is synced too)
    assert synced.count(fd) - counted == 2  # submit and accepted; done is flushed, not synced


def test_every_record_is_one_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    journal.record(JournalEvent.SUBMIT, 3, "f3", name="Zoë \u2603")
    journal.close()
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 2
    assert json.loads(data.splitlines()[1])["name"] == "Zoë \u2603"


# -- finished rows in little memory, read back from their last line ----------------------

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
AT = NOW.isoformat()


def earlier_state(lines: list[dict[str, Any]]) -> RowState:
    """What the journal kept of a row before finished rows were compact: every line of
    it applied in turn (the fingerprint is the last line's: it was the first's)."""
    state = RowState(lines[0]["i"], lines[0]["fp"])
    for line in lines:
        state.fingerprint = line["fp"]
        state.event = JournalEvent(line["ev"])
        if line["ev"] == "submit":
            state.sent_at = datetime.fromisoformat(line["at"])
        for key, attr in (("project", "project_id"), ("video", "video_id")):
            if line.get(key):
                setattr(state, attr, line[key])
        state.status = line.get("status", state.status)
        state.error = line.get("error", state.error)
        state.api_rejection = bool(line.get("api", state.api_rejection))
    return state


def ev(event: str, **data: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"ev": event, "i": 0, "fp": data.pop("fp", "f0"), **data}
    if event == "submit":
        line.setdefault("at", AT)
    return line


SEQUENCES = {
    "refused": [ev("submit"), ev("rejected", error="bad script", api=True)],
    "completed": [
        ev("submit", name="n"),
        ev("accepted", project="p0", video="v0"),
        ev("done", status="completed", video="v0"),
    ],
    "failed": [
        ev("submit"),
        ev("accepted", project="p0"),
        ev("done", status="failed", error="render failed"),
    ],
    "refused-then-completed": [
        ev("submit"),
        ev("rejected", error="busy", api=True),
        ev("submit"),
        ev("accepted", project="p0", video="v0"),
        ev("done", status="completed"),
    ],
    "sent-twice-read-twice": [
        ev("submit"),
        ev("submit"),
        ev("accepted", project="p0", video="v0"),
        ev("done", status="failed", error="timeout"),
        ev("done", status="completed", video="v9"),
    ],
    "refused-changed-sent-again": [
        ev("submit"),
        ev("rejected", error="bad", api=True),
        ev("submit", fp="f1"),
        ev("accepted", fp="f1", project="p0"),
        ev("done", fp="f1", status="completed"),
    ],
    "open-submit": [ev("submit")],
    "open-accepted": [ev("submit"), ev("accepted", project="p0", video="v0")],
    "open-after-refusal": [ev("submit"), ev("rejected", error="no", api=True), ev("submit")],
}


@pytest.mark.parametrize("lines", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_a_row_of_an_earlier_versions_journal_reads_as_it_did(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    path = tmp_path / "j.jsonl"
    written(path, *lines)  # no "whole" lines: written by an earlier version
    expected = earlier_state(lines)
    for opening in ("the whole file", "the index"):
        journal = Journal.open(path, BATCH, now=lambda: NOW)
        assert journal.indexed is (opening == "the index")
        assert journal.rows.get(0) == journal.rows[0] == expected, opening
        assert journal.event_of(0) is expected.event
        journal.close()
    assert journal.rows[0] == expected  # read back after close too


@pytest.mark.parametrize("lines", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_a_row_recorded_now_reads_back_as_its_lines_say(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH, now=lambda: NOW)
    for line in lines:
        data = {k: v for k, v in line.items() if k not in ("ev", "i", "fp", "at")}
        journal.record(JournalEvent(line["ev"]), 0, line["fp"], **data)
    expected = earlier_state(lines)
    assert journal.rows[0] == expected
    journal.close()
    assert journal.rows[0] == expected
    written_lines = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    if expected.event in (JournalEvent.DONE, JournalEvent.REJECTED):
        assert written_lines[-1]["whole"] is True  # the last line tells the row alone
    # An earlier version reads the lines written now to the same state.
    assert earlier_state(written_lines) == expected
    for opening in ("index", "whole file"):
        if opening == "whole file":
            journal.index_path.unlink()
        again = Journal.open(path, BATCH, now=lambda: NOW)
        assert again.rows[0] == expected, opening
        again.close()


def test_a_refused_row_changed_and_sent_again_is_checked_against_what_was_sent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    written(path, *SEQUENCES["refused-changed-sent-again"][:3])
    journal = Journal.open(path, BATCH)
    assert journal.rows[0].fingerprint == "f1"  # the first line's "f0" made it unresumable
    journal.close()


# -- answers from memory -------------------------------------------------------------------


def mixed(path: Path) -> None:
    """Rows 0 and 5 done, 1 accepted, 2 submitted, 3 refused; no row 4; 9 first."""

    def row(i: int, *events: str) -> list[dict[str, Any]]:
        lines = {
            "submit": {"ev": "submit", "i": i, "fp": f"f{i}", "at": AT},
            "accepted": {"ev": "accepted", "i": i, "fp": f"f{i}", "project": f"p{i}"},
            "rejected": {"ev": "rejected", "i": i, "fp": f"f{i}", "error": "no", "api": True},
            "done": {"ev": "done", "i": i, "fp": f"f{i}", "status": "completed"},
        }
        return [lines[e] for e in events]

    written(
        path,
        *row(9, "submit", "accepted", "done"),
        *row(0, "submit", "accepted"),
        *row(1, "submit", "accepted"),
        *row(2, "submit"),
        *row(0, "done"),
        *row(3, "submit", "rejected"),
        *row(5, "submit", "accepted", "done"),
    )


def test_event_of_counts_owns_and_open_rows_answer_from_memory(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    mixed(path)
    for opening in ("the whole file", "the index"):
        journal = Journal.open(path, BATCH)
        assert journal.indexed is (opening == "the index")
        j = JournalEvent
        events = {i: journal.event_of(i) for i in range(11)}
        assert events == {
            **dict.fromkeys(range(11), j.NONE),
            **{0: j.DONE, 1: j.ACCEPTED, 2: j.SUBMIT, 3: j.REJECTED, 5: j.DONE, 9: j.DONE},
        }
        assert journal.event_of(-1) is journal.event_of(10**12) is j.NONE
        assert journal.counts() == {j.SUBMIT: 1, j.ACCEPTED: 1, j.REJECTED: 1, j.DONE: 3}
        assert [journal.owns(f"p{i}") for i in range(10)] == [i in (0, 1, 5, 9) for i in range(10)]
        assert [(r.index, r.event, r.project_id) for r in journal.open_rows()] == [
            (1, j.ACCEPTED, "p1"),
            (2, j.SUBMIT, None),
        ]
        rows = journal.rows
        assert list(rows) == [0, 1, 2, 3, 5, 9] and len(rows) == 6
        assert 4 not in rows and rows.get(4) is None and "0" not in rows
        assert {i: r.event for i, r in rows.items()} == {
            i: e for i, e in events.items() if e is not j.NONE
        }
        with pytest.raises(KeyError):
            rows[4]
        journal.close()


def test_a_project_accepted_during_the_run_is_owned_at_once(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path / "j.jsonl", BATCH)
    journal.record(JournalEvent.SUBMIT, 7, "f7")
    assert not journal.owns("p7")
    journal.record(JournalEvent.ACCEPTED, 7, "f7", project="p7", video="v7")
    assert journal.owns("p7") and not journal.owns("p8")
    assert journal.counts()[JournalEvent.ACCEPTED] == 1
    journal.close()


def test_a_row_number_that_is_none_is_refused_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="is not a row number"):
        journal.record(JournalEvent.SUBMIT, -1, "f")
    journal.close()
    assert path.read_bytes() == before
    written(path, {"ev": "submit", "i": -3, "fp": "f", "at": AT})
    with pytest.raises(ValueError, match="line 2: row -3 is out of range"):
        Journal.open(path, BATCH)


def random_lines(seed: int, rows: int, lines: int) -> list[dict[str, Any]]:
    """Lines of ``rows`` rows interleaved, each row walking the journal's state table."""
    rng = random.Random(seed)
    last = dict.fromkeys(range(rows), JournalEvent.NONE)
    out: list[dict[str, Any]] = []
    for _ in range(lines):
        i = rng.randrange(rows)
        nxt = rng.choice(sorted(JOURNAL.transitions[last[i]]))
        line: dict[str, Any] = {"ev": nxt.value, "i": i, "fp": f"f{i}.{rng.randrange(2)}"}
        if nxt is JournalEvent.SUBMIT:
            line["at"] = f"2026-01-01T00:00:{rng.randrange(60):02d}+00:00"
        for key, values in (("project", ["p", ""]), ("video", ["v"]), ("status", ["ok"])):
            if rng.random() < 0.4:
                line[key] = f"{rng.choice(values)}{i}" if values[0] else ""
        if rng.random() < 0.3:
            line["error"] = rng.choice(["e1", "e2"])
        if rng.random() < 0.3:
            line["api"] = rng.random() < 0.5
        out.append(line)
        last[i] = nxt
    return out


@pytest.mark.parametrize("seed", range(6))
def test_interleaved_rows_read_back_as_their_lines_say(tmp_path: Path, seed: int) -> None:
    lines = random_lines(seed, rows=12, lines=150)
    expected = {
        i: earlier_state(mine) for i in range(12) if (mine := [x for x in lines if x["i"] == i])
    }
    path = tmp_path / "j.jsonl"
    written(path, *lines)
    for opening in ("an earlier version's lines", "their index"):
        journal = Journal.open(path, BATCH, now=lambda: NOW)
        assert dict(journal.rows.items()) == expected, opening
        journal.close()
    recorded = tmp_path / "r.jsonl"  # the same lines recorded now (their ``at`` is now's)
    journal = Journal.open(recorded, BATCH, now=lambda: NOW)
    for line in lines:
        data = {k: v for k, v in line.items() if k not in ("ev", "i", "fp", "at")}
        journal.record(JournalEvent(line["ev"]), line["i"], line["fp"], **data)
    now = [x | {"at": AT} if x["ev"] == "submit" else x for x in lines]
    expected = {i: earlier_state([x for x in now if x["i"] == i]) for i in expected}
    assert dict(journal.rows.items()) == expected
    journal.close()
    for opening in ("index", "whole file"):
        if opening == "whole file":
            journal.index_path.unlink()
        again = Journal.open(recorded, BATCH)
        assert dict(again.rows.items()) == expected, opening
        assert {r.index for r in again.open_rows()} == {
            i
            for i, s in expected.items()
            if s.event in (JournalEvent.SUBMIT, JournalEvent.ACCEPTED)
        }
        again.close()
