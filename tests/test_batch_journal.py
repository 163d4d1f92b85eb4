"""The batch journal survives any crash: whole lines or none, torn tails cut, money synced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from asyncclient._states import JournalEvent
from asyncclient.batch.journal import Journal

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
    counted = len(synced)  # the header, and the new file's folder
    for event in (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE):
        journal.record(event, 0, "f0", project="p0")
    journal.close()
    assert len(synced) - counted == 2  # submit and accepted; done is flushed, not synced


def test_every_record_is_one_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    journal.record(JournalEvent.SUBMIT, 3, "f3", name="Zoë \u2603")
    journal.close()
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 2
    assert json.loads(data.splitlines()[1])["name"] == "Zoë \u2603"
