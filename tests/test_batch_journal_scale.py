"""A journal of many rows: its index (a checkpoint) makes reopening read only what follows
it, a stale or damaged index is never trusted, and finished rows cost a few bytes each."""

from __future__ import annotations

import gc
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import JournalEvent
from asyncclient.batch.journal import Journal, RowState, key_id
from asyncclient.batch.journal_index import read_index
from asyncclient.batch.journal_table import RowTable
from asyncclient.errors import JournalKeyError

BATCH = "b1"
AT = "2026-01-01T00:00:00+00:00"
J = JournalEvent


def header(batch: str = BATCH) -> str:
    return json.dumps({"ev": "batch", "batch": batch, "version": 1}) + "\n"


def lines_of(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def finished_row(i: int) -> str:
    """A row's three lines, as this version writes them (the done line whole)."""
    fp, project, video = f"{i:016x}", f"proj_{i:08x}", f"vid_{i:08x}"
    return lines_of(
        {"ev": "submit", "i": i, "fp": fp, "name": f"Row {i}", "at": AT},
        {"ev": "accepted", "i": i, "fp": fp, "project": project, "video": video},
        {"ev": "done", "i": i, "fp": fp, "status": "completed", "video": video, "at": AT}
        | {"project": project, "whole": True},
    )


def run(journal: Journal, first: int, rows: int, *, finish: int) -> None:
    """Record ``rows`` rows from ``first`` on: sent and accepted; the first ``finish`` done."""
    for i in range(first, first + rows):
        journal.record(J.SUBMIT, i, f"f{i}", name=f"Row {i}")
        journal.record(J.ACCEPTED, i, f"f{i}", project=f"p{i}", video=f"v{i}")
    for i in range(first, first + finish):
        journal.record(J.DONE, i, f"f{i}", status="completed", video=f"v{i}")


def snapshot(journal: Journal) -> dict[int, RowState]:
    return dict(journal.rows.items())


def full_replay(path: Path) -> dict[int, RowState]:
    """The rows as the whole file says: a copy of it, without an index, opened."""
    copy = path.parent / "whole" / path.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(path, copy)
    journal = Journal.open(copy, BATCH)
    assert not journal.indexed
    rows = snapshot(journal)
    journal.close()
    shutil.rmtree(copy.parent)
    return rows


# -- reopening reads what follows the index ---------------------------------------------


def test_reopening_reads_only_the_lines_after_the_index(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    run(journal, 0, 20, finish=12)
    journal.close()
    assert journal.index_path.exists()
    # An earlier version, which knows no index, ran on: its lines follow what it covers.
    with path.open("a") as fh:
        fh.write(
            lines_of(
                {"ev": "done", "i": 12, "fp": "f12", "status": "failed", "error": "x"},
                {"ev": "submit", "i": 20, "fp": "f20", "at": AT},
                {"ev": "accepted", "i": 20, "fp": "f20", "project": "p20"},
            )
        )
    again = Journal.open(path, BATCH)
    assert again.indexed and again.replayed == 3
    assert again.rows[12].status == "failed" and again.rows[12].project_id == "p12"
    assert again.owns("p20") and again.owns("p0") and again.event_of(20) is J.ACCEPTED
    assert again.counts() == {J.SUBMIT: 0, J.ACCEPTED: 8, J.REJECTED: 0, J.DONE: 13}
    rows = snapshot(again)
    again.close()
    assert rows == full_replay(path)
    quiet = Journal.open(path, BATCH)  # the index was written anew: nothing to replay
    assert quiet.indexed and quiet.replayed == 0 and snapshot(quiet) == rows
    quiet.close()


def test_the_index_is_written_every_so_many_records_while_the_run_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH, checkpoint_every=5)
    assert not journal.index_path.exists()
    covered, sizes = [], []
    for i in range(6):
        journal.record(J.SUBMIT, i, f"f{i}")
        sizes.append(path.stat().st_size)
        if journal.index_path.exists():
            table = RowTable("check", lambda offset: b"", lambda record, number: None)
            assert journal._reader is not None
            covered.append(read_index(journal.index_path, journal._reader, BATCH, table).covered)
    journal.close()
    assert covered == [sizes[4], sizes[4]]  # written at the 5th record, covering it


def test_an_interrupted_run_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH, checkpoint_every=10)
    run(journal, 0, 12, finish=7)  # 31 records: the index covers the first 30
    # Killed: the file and the lock go with the process, nothing else is written.
    assert journal._file is not None and journal._reader is not None and journal._lock
    journal._file.close()
    os.close(journal._reader)
    journal._lock.release()
    del journal
    gc.collect()
    again = Journal.open(path, BATCH)
    assert again.indexed and again.replayed == 1
    assert again.counts() == {J.SUBMIT: 0, J.ACCEPTED: 5, J.REJECTED: 0, J.DONE: 7}
    assert again.rows[6].event is J.DONE and again.rows[6].project_id == "p6"
    rows = snapshot(again)
    again.close()
    assert rows == full_replay(path)


KILLED = """
import os, signal, sys
from asyncclient._states import JournalEvent as J
from asyncclient.batch.journal import Journal
journal = Journal.open(sys.argv[1], "b1", checkpoint_every=25)
for i in range(40):
    journal.record(J.SUBMIT, i, f"f{i}")
    journal.record(J.ACCEPTED, i, f"f{i}", project=f"p{i}")
    if i < 30:
        journal.record(J.DONE, i, f"f{i}", status="completed")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_run_killed_halfway_leaves_a_recent_index(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    done = subprocess.run([sys.executable, "-c", KILLED, str(path)], check=False)
    assert done.returncode == -signal.SIGKILL
    journal = Journal.open(path, BATCH)
    assert journal.indexed and 0 < journal.replayed < 25  # 110 records, indexed every 25
    assert journal.counts() == {J.SUBMIT: 0, J.ACCEPTED: 10, J.REJECTED: 0, J.DONE: 30}
    assert journal.owns("p39") and not journal.owns("p40")
    rows = snapshot(journal)
    journal.close()
    assert rows == full_replay(path)


# -- an index not to be trusted ------------------------------------------------------------


def _appended_by_a_crash(path: Path) -> None:
    with path.open("ab") as fh:
        fh.write(b'{"ev":"submit","i":99,"fp":"f99","at":"20')  # torn


def _cut_behind_the_index(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])  # its last line gone


def _replaced_by_another_run(path: Path) -> None:
    path.write_text(header() + "".join(finished_row(i) for i in range(30)))


def _index_bytes_damaged(path: Path) -> None:
    index = path.with_name(path.name + ".index")
    data = bytearray(index.read_bytes())
    data[len(data) // 2] ^= 0xFF
    index.write_bytes(bytes(data))


def _index_cut(path: Path) -> None:
    index = path.with_name(path.name + ".index")
    index.write_bytes(index.read_bytes()[:100])


def _index_of_another_batch(path: Path) -> None:
    other = path.with_name("other.jsonl")
    journal = Journal.open(other, "b2")
    run(journal, 0, 3, finish=3)
    journal.close()
    os.replace(journal.index_path, path.with_name(path.name + ".index"))


def _index_of_another_journal_of_the_batch(path: Path) -> None:
    other = path.with_name("other.jsonl")
    journal = Journal.open(other, BATCH)
    run(journal, 0, 3, finish=3)  # shorter: what it covers is there, and other bytes
    journal.close()
    os.replace(journal.index_path, path.with_name(path.name + ".index"))


def _a_project_digest_damaged(path: Path) -> None:
    index = path.with_name(path.name + ".index")
    data = bytearray(index.read_bytes())
    data[-40] ^= 0x01  # in the last digest, before the index's own
    index.write_bytes(bytes(data))


STALE = {  # how the index was spoilt: why it is not used
    "journal cut behind it": (_cut_behind_the_index, "it was cut"),
    "journal replaced": (_replaced_by_another_run, "the journal was replaced"),
    "index bytes damaged": (_index_bytes_damaged, "it is damaged"),
    "a project digest damaged": (_a_project_digest_damaged, "it is damaged"),
    "index cut": (_index_cut, "it is damaged"),
    "index of another batch": (_index_of_another_batch, "it is of another batch"),
    "index of another journal": (_index_of_another_journal_of_the_batch, "was replaced"),
}


@pytest.mark.parametrize(("spoil", "why"), STALE.values(), ids=STALE.keys())
def test_a_stale_or_damaged_index_is_not_used_and_the_journal_is_read_whole(
    tmp_path: Path, spoil: Any, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    run(journal, 0, 10, finish=6)
    journal.close()
    spoil(path)
    lines = len(path.read_bytes().splitlines())
    with caplog.at_level(logging.WARNING, logger="asyncclient"):
        again = Journal.open(path, BATCH)
    assert not again.indexed and again.replayed == lines
    assert "its index is not used" in caplog.text and why in caplog.text
    rows = snapshot(again)
    again.close()
    assert rows == full_replay(path) and rows
    fresh = Journal.open(path, BATCH)  # a fresh index was written on that open
    assert fresh.indexed and fresh.replayed == 0 and snapshot(fresh) == rows
    fresh.close()


def test_an_index_is_not_trusted_for_a_journal_of_another_batch(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    run(journal, 0, 3, finish=1)
    journal.close()
    path.write_text(header("b2") + finished_row(0))  # another batch's journal, same name
    with pytest.raises(ValueError, match="journal of another batch"):
        Journal.open(path, BATCH)


def test_a_torn_tail_after_the_index_is_cut_and_numbered_from_the_start(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    run(journal, 0, 2, finish=2)  # 6 lines after the header
    journal.close()
    _appended_by_a_crash(path)
    again = Journal.open(path, BATCH)
    assert again.indexed and again.replayed == 0
    assert again.skipped and "line 8" in again.skipped[0]
    again.close()
    assert path.read_bytes().endswith(b"\n") and b'"i":99' not in path.read_bytes()


def test_the_index_keeps_the_journals_key(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    Journal.open(path, BATCH, key=key_id("key-a")).close()
    with pytest.raises(JournalKeyError):
        Journal.open(path, BATCH, key=key_id("key-b"))
    journal = Journal.open(path, BATCH, key=key_id("key-a"))
    assert journal.indexed and journal.recorded_key == key_id("key-a")
    journal.close()


def test_an_index_that_cannot_be_written_is_said_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH, checkpoint_every=2)

    def full(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with caplog.at_level(logging.WARNING, logger="asyncclient"):
        run(journal, 0, 2, finish=2)
        journal.close()
    assert "could not write its index" in caplog.text
    assert not journal.index_path.exists() and os.listdir(tmp_path) == ["j.jsonl"]
    monkeypatch.undo()
    again = Journal.open(path, BATCH)
    assert not again.indexed and again.counts()[J.DONE] == 2
    again.close()


def test_a_new_journal_takes_no_index_left_by_a_journal_removed(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, BATCH)
    run(journal, 0, 1, finish=0)
    journal.close()
    path.unlink()
    assert journal.index_path.exists()
    fresh = Journal.open(path, BATCH)
    assert not fresh.index_path.exists() and len(fresh.rows) == 0
    fresh.close()


# -- memory ---------------------------------------------------------------------------------

BYTES_PER_ROW = 30
"""A finished row: 1 byte (its last event) + 8 (its line's offset) + 8 (its project's
digest) = 17, and up to an eighth more while the arrays grow; 30 leaves room for the
journal object itself, and is far below a RowState's few hundred bytes."""


def large(folder: Path, rows: int) -> Path:
    """A journal of ``rows`` finished rows, written fast (this version's lines)."""
    path = folder / "j.jsonl"
    line = (
        '{{"ev":"submit","i":{i},"fp":"{i:016x}","name":"Row {i}","at":"' + AT + '"}}\n'
        '{{"ev":"accepted","i":{i},"fp":"{i:016x}","project":"proj_{i:08x}",'
        '"video":"vid_{i:08x}"}}\n'
        '{{"ev":"done","i":{i},"fp":"{i:016x}","status":"completed","video":"vid_{i:08x}",'
        '"at":"' + AT + '","project":"proj_{i:08x}","whole":true}}\n'
    )
    with path.open("w") as fh:
        fh.write(header())
        fh.writelines(line.format(i=i) for i in range(rows))
    return path


def traced_open(path: Path) -> tuple[Journal, int]:
    """The journal opened, and the bytes its opening left allocated."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        journal = Journal.open(path, BATCH)
        gc.collect()
        return journal, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


# Read whole, a journal is traced with fewer rows: tracing makes its many small
# allocations slow (the bound is per row all the same).
@pytest.mark.heavy
@pytest.mark.parametrize(("opening", "rows"), [("the index", 200_000), ("the whole file", 50_000)])
def test_finished_rows_cost_a_few_bytes_each(tmp_path: Path, opening: str, rows: int) -> None:
    (tmp_path / "two").mkdir()
    assert large(tmp_path / "two", 2).read_text() == header() + finished_row(0) + finished_row(1)
    path = large(tmp_path, rows)
    if opening == "the index":
        Journal.open(path, BATCH).close()
    journal, used = traced_open(path)
    assert journal.indexed is (opening == "the index")
    assert len(journal.rows) == rows and not list(journal.open_rows())
    assert used < BYTES_PER_ROW * rows, f"{opening}: {used / rows:.1f} bytes a row"
    assert journal.rows[rows - 1].project_id == f"proj_{rows - 1:08x}"
    assert journal.owns(f"proj_{rows // 2:08x}") and not journal.owns("proj_x")
    journal.close()


def test_the_journal_s_project_digests_merge_without_a_list_of_every_digest() -> None:
    """The owned projects' digests: a sorted array and a bounded set of recent ones. A
    merge streams the two into a new array: correct across many merges, and while it
    runs it holds about the array again, not a list of every digest (36 bytes each)."""
    from asyncclient.batch.digests import RECENT as RECENT_DIGESTS
    from asyncclient.batch.digests import DigestSet, digest_of

    n = 3 * RECENT_DIGESTS + 123
    digests = DigestSet(rows=False)
    for i in range(n):
        digests.add_key(digest_of(f"p{i}"))
        digests.add_key(digest_of(f"p{i // 2}"))  # every one again: kept once
    assert len(digests) == n
    assert all(digest_of(f"p{i}") in digests for i in range(0, n, 97))
    assert digest_of("never") not in digests
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n, n + RECENT_DIGESTS):  # the next add merges
            digests.add_key(digest_of(f"p{i}"))
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    whole = digests.sorted()
    assert len(whole) == n + RECENT_DIGESTS
    assert all(a < b for a, b in itertools.pairwise(whole))  # sorted, each once
    # The recent entries (~100 bytes each in their dict) and the array grown in place:
    # no second array, and far below a list of every digest (36-plus bytes each).
    assert peak < 8 * RECENT_DIGESTS * 2 + 130 * RECENT_DIGESTS


@pytest.mark.heavy
def test_writing_the_index_copies_none_of_the_table_s_arrays(tmp_path: Path) -> None:
    """A checkpoint of 200,000 rows writes views of the table's arrays (17 bytes a row,
    3.4 MB): it allocates a small part of that, not a copy of each array and of their
    sum (43 bytes a row, 43 MB at a million rows, at every checkpoint). The arrays can
    still grow afterwards: no view of them is left alive."""
    rows = 200_000
    path = large(tmp_path, rows)
    journal = Journal.open(path, BATCH)  # read whole, then indexed on close
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        journal._checkpoint()  # what a run does every so many records
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 2 * rows, f"{peak / rows:.1f} bytes a row"
    journal.record(J.SUBMIT, rows, "fnew", name="one more")  # the arrays grow
    journal.close()
    reopened = Journal.open(path, BATCH)
    assert reopened.indexed and len(reopened.rows) == rows + 1
    reopened.close()
