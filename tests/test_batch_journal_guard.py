"""One run per journal, the journal's API key, and records that could not be written.

A journal is locked for its run (a second run is refused at once, naming the holder; the
lock goes with its process, even by SIGKILL), names the key it belongs to (a hash) and
refuses another, and a record that is not written whole stops the batch before the row's
request leaves, the file cut back to its last whole line.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import JournalEvent
from asyncclient.batch import BatchPhase
from asyncclient.batch.journal import Journal, key_id
from asyncclient.emulator import Emulator
from asyncclient.errors import JournalKeyError, JournalLockedError, JournalWriteError
from tests.conftest import connect

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)

CREATE = "/v1/project/create"


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Welcome {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


def creations(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)


def projects_by_title(emu: Emulator) -> Counter[str]:
    return Counter(video.name for video in emu.store.videos.values())


async def finish(emu: Emulator, batch: Any) -> list[Any]:
    """Run the batch while moving the emulator's clock, so videos complete quickly."""
    task = asyncio.ensure_future(batch)
    while not task.done():
        await asyncio.sleep(0.02)
        emu.advance(30)
    return await task  # type: ignore[no-any-return]


def whole_lines(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert data.endswith(b"\n")  # the file ends at a whole line
    return [json.loads(line) for line in data.splitlines()]


# -- one run per journal ---------------------------------------------------------------


def test_a_second_opening_is_refused_at_once_naming_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    first = Journal.open(path, "b1")
    before = path.read_bytes()
    with pytest.raises(JournalLockedError) as info:
        Journal.open(path, "b1")
    assert info.value.pid == os.getpid() and info.value.host == socket.gethostname()
    assert f"pid {os.getpid()} on {socket.gethostname()}" in str(info.value)
    assert path.read_bytes() == before  # the refused one read and wrote nothing
    first.close()
    assert not (tmp_path / "j.jsonl.lock").exists()  # the lock file goes with its run
    Journal.open(path, "b1").close()  # and the journal is free again


HOLD = """
import sys, time
from asyncclient.batch.journal import Journal
journal = Journal.open(sys.argv[1], "b1")
print("held", flush=True)
time.sleep(120)
"""


def test_the_lock_goes_with_its_process_even_by_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(JournalLockedError) as info:
            Journal.open(path, "b1")
        assert info.value.pid == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert (tmp_path / "j.jsonl.lock").exists()  # left by the dead holder: taken over
    journal = Journal.open(path, "b1")
    journal.close()


async def test_two_batches_on_one_journal_the_second_is_refused(
    emu: Emulator, tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    async with connect(emu) as client:
        first = client.templates.generate_many("tpl_welcome", rows(4), spacing=0, journal=journal)
        held = asyncio.Event()  # every row sent, the journal held (no video ends yet)
        first.subscribe(lambda update: held.set() if update.phase is BatchPhase.AWAITING else None)
        running = asyncio.ensure_future(first)
        await held.wait()
        second = client.templates.generate_many("tpl_welcome", rows(4), spacing=0, journal=journal)
        with pytest.raises(JournalLockedError, match="in use by another run"):
            await second
        assert second.phase is BatchPhase.FAILED and second.report().submitted == 0
        results = await finish(emu, running)
    assert [r.status for r in results] == ["completed"] * 4
    assert creations(emu) == 4
    assert projects_by_title(emu) == {f"Welcome {i}": 1 for i in range(4)}


# -- the journal's key -----------------------------------------------------------------


async def test_a_journal_of_another_key_is_refused(emu: Emulator, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    key_a = emu.add_team(plan="premium", credits=1000)
    key_b = emu.add_team(plan="premium", credits=1000)
    async with connect(emu, key_a) as client:
        await finish(emu, client.templates.generate_many("tpl_welcome", rows(2), journal=journal))
    header = whole_lines(journal)[0]
    assert header["key"] == key_id(key_a) and key_a not in journal.read_text()
    made = creations(emu)
    async with connect(emu, key_b) as other:
        batch = other.templates.generate_many("tpl_welcome", rows(2), journal=journal)
        with pytest.raises(JournalKeyError, match="belongs to another API key"):
            await batch
    assert creations(emu) == made and batch.report().submitted == 0


def test_a_journal_without_a_key_takes_the_key_of_its_first_run(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"ev":"batch","batch":"b1","version":1}\n'  # written by the previous version
        '{"ev":"submit","i":0,"fp":"f0","at":"2026-01-01T00:00:00+00:00"}\n'
    )
    journal = Journal.open(path, "b1", key=key_id("key-a"))
    journal.close()
    assert journal.rows[0].event is JournalEvent.SUBMIT
    last = whole_lines(path)[-1]
    assert last == {"ev": "batch", "batch": "b1", "version": 1, "key": key_id("key-a")}
    with pytest.raises(JournalKeyError):
        Journal.open(path, "b1", key=key_id("key-b"))
    Journal.open(path, "b1", key=key_id("key-a")).close()
    assert len(whole_lines(path)) == 3  # the key is added once
    assert key_id("key-a") != key_id("key-b") and len(key_id("key-a")) == 16


# -- a record not written -------------------------------------------------------------


class Failing:
    """The journal's file, whose write of the first line holding ``match`` comes up short
    (half of it reaches the file) or raises ``error``."""

    def __init__(self, real: Any, match: bytes, error: OSError | None = None) -> None:
        self.real, self.match, self.error, self.hit = real, match, error, False

    def write(self, data: bytes) -> int:
        if self.match in data and not self.hit:
            self.hit = True
            if self.error is not None:
                raise self.error
            return int(self.real.write(data[: len(data) // 2]))
        return int(self.real.write(data))

    def fileno(self) -> int:
        return int(self.real.fileno())

    def close(self) -> None:
        self.real.close()


def fail_on(monkeypatch: pytest.MonkeyPatch, match: bytes, error: OSError | None = None) -> None:
    real = Journal.open.__func__  # type: ignore[attr-defined]

    def opened(cls: type[Journal], *args: Any, **kwargs: Any) -> Journal:
        journal: Journal = real(cls, *args, **kwargs)
        journal._file = Failing(journal._file, match, error)  # type: ignore[assignment]
        return journal

    monkeypatch.setattr(Journal, "open", classmethod(opened))


async def test_a_short_write_stops_the_row_before_it_is_sent(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "j.jsonl"
    fail_on(monkeypatch, b'"ev":"submit","i":2,')
    async with connect(emu) as client:
        options: dict[str, Any] = {"spacing": 0, "concurrency": 1, "journal": journal}
        batch = client.templates.generate_many("tpl_welcome", rows(4), **options)
        with pytest.raises(JournalWriteError) as info:
            await finish(emu, batch)
        assert (info.value.event, info.value.row) == ("submit", 2)
        assert "the row was not sent" in str(info.value)
        assert batch.phase is BatchPhase.FAILED and batch.report().submitted == 2
        assert projects_by_title(emu) == {"Welcome 0": 1, "Welcome 1": 1}  # row 2 not sent
        lines = whole_lines(journal)  # cut back to its last whole line
        assert [(r["ev"], r.get("i")) for r in lines if r["ev"] == "submit"] == [
            ("submit", 0),
            ("submit", 1),
        ]
        monkeypatch.undo()
        again = client.templates.generate_many("tpl_welcome", rows(4), **options)
        results = await finish(emu, again)
    assert [r.status for r in results] == ["completed"] * 4
    assert projects_by_title(emu) == {f"Welcome {i}": 1 for i in range(4)}  # each once


async def test_a_lost_done_line_fails_the_batch(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "j.jsonl"
    fail_on(monkeypatch, b'"ev":"done"', OSError(errno.ENOSPC, "No space left on device"))
    async with connect(emu) as client:
        batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0, journal=journal)
        with pytest.raises(JournalWriteError, match="No space left on device") as info:
            await finish(emu, batch)
    assert info.value.event == "done" and batch.phase is BatchPhase.FAILED
    assert not any(r["ev"] == "done" for r in whole_lines(journal))
    assert creations(emu) == 2


def test_a_failed_fsync_cuts_the_line_back_and_stops_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, "b1")
    journal.record(JournalEvent.SUBMIT, 0, "f0", name="zero")
    before = path.read_bytes()

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(JournalWriteError, match="row 1's submission"):
        journal.record(JournalEvent.SUBMIT, 1, "f1", name="one")
    monkeypatch.undo()
    assert path.read_bytes() == before and 1 not in journal.rows
    with pytest.raises(JournalWriteError, match="an earlier record was lost"):
        journal.record(JournalEvent.ACCEPTED, 0, "f0", project="p0")  # nothing more
    journal.close()
    assert path.read_bytes() == before
