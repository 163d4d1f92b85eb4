"""One lock per journal file, whatever name reaches it.

A run holding a journal (a real second process) refuses another run that comes by a
symlink, a hard link, a relative path from another directory, or a bind mount of the
file; so does a second journal of one process. The journal's index is its file's, by
whatever name. And two command-line runs through a symlink: the second is refused, the
emulator charges each row once.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import JournalEvent
from asyncclient.batch import journal as journal_module
from asyncclient.batch.journal import Journal
from asyncclient.emulator import Emulator
from asyncclient.errors import JournalLockedError
from tests.test_cli_batch_runs import batch_argv, creations
from tests.test_cli_main import _advance_forever, clean_env, run_cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no journal lock on Windows")

LINUX = sys.platform.startswith("linux")
WELCOME = Path(__file__).resolve().parents[1] / "examples" / "welcome.csv"

HOLD = """
import os, sys, time
from asyncclient.batch.journal import Journal
os.chdir(sys.argv[1])
journal = Journal.open(sys.argv[2], "b1")
print("held", flush=True)
time.sleep(120)
"""


@contextmanager
def held(path: str | Path, cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """A second Python process holding the journal at ``path`` (relative to ``cwd``)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(cwd), str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def refused(path: str | Path) -> JournalLockedError:
    with pytest.raises(JournalLockedError, match="in use by another run") as info:
        Journal.open(path, "b1")
    return info.value


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def lines_of_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def make_journal(path: Path) -> bytes:
    """A journal of one submitted row; its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    journal = Journal.open(path, "b1")
    journal.record(JournalEvent.SUBMIT, 0, "f0", name="n")
    journal.close()
    return path.read_bytes()


def reopens(alias: Path, real: Path, before: bytes) -> None:
    """The refused run wrote nothing; once the holder is gone, the alias opens the
    journal as it was."""
    assert real.read_bytes() == before
    journal = Journal.open(alias, "b1")
    assert journal.event_of(0) is JournalEvent.SUBMIT
    journal.close()
    assert real.read_bytes() == before and [r["ev"] for r in lines(real)] == ["batch", "submit"]


# -- (a) a symlink ---------------------------------------------------------------------


@pytest.mark.parametrize("holder_by", ["its name", "the symlink"])
def test_a_journal_held_is_refused_through_a_symlink(tmp_path: Path, holder_by: str) -> None:
    real, link = tmp_path / "data" / "j.jsonl", tmp_path / "links" / "alias.jsonl"
    before = make_journal(real)
    link.parent.mkdir()
    link.symlink_to(real)
    by, other = (real, link) if holder_by == "its name" else (link, real)
    with held(by, tmp_path) as holder:
        error = refused(other)
        assert error.pid == holder.pid and error.host == socket.gethostname()
        assert f"pid {holder.pid} on {socket.gethostname()}, since " in str(error)
        assert str(other) in str(error)  # the name this run was given
    assert not (tmp_path / "links" / "alias.jsonl.lock").exists()  # the file's, not the name's
    reopens(other, real, before)


# -- (b) a hard link -------------------------------------------------------------------


@pytest.mark.parametrize("holder_by", ["its name", "the hard link"])
def test_a_journal_held_is_refused_through_a_hard_link(tmp_path: Path, holder_by: str) -> None:
    real, hard = tmp_path / "j.jsonl", tmp_path / "hard.jsonl"
    before = make_journal(real)
    os.link(real, hard)
    by, other = (real, hard) if holder_by == "its name" else (hard, real)
    with held(by, tmp_path) as holder:
        error = refused(other)
        if LINUX:  # the kernel's lock table names the holder its sidecar could not
            assert error.pid == holder.pid and error.host == socket.gethostname()
        assert not other.with_name(other.name + ".lock").exists()  # refused before it
        assert by.with_name(by.name + ".lock").exists()  # the holder's names it
    reopens(other, real, before)


# -- (c) a relative path from another directory ----------------------------------------


@pytest.mark.parametrize(
    "relative", ["../data/j.jsonl", "../links/alias.jsonl"], ids=["plain", "relative symlink"]
)
def test_a_journal_held_is_refused_by_a_relative_path_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str
) -> None:
    real = tmp_path / "data" / "j.jsonl"
    before = make_journal(real)
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "alias.jsonl").symlink_to(Path("..") / "data" / "j.jsonl")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    with held("j.jsonl", tmp_path / "data") as holder:  # its own directory, relative too
        error = refused(relative)
        assert error.pid == holder.pid and error.host == socket.gethostname()
        assert error.path == relative
    reopens(Path(relative), real, before)


# -- (d) a bind mount ------------------------------------------------------------------


def _no_bind_mounts() -> str | None:
    """Why bind mounts cannot be tried here (None: they can, or CI requires them)."""
    if os.environ.get("CI") == "true":
        return None
    if not LINUX or os.geteuid() != 0:
        return "a bind mount needs root on Linux (CI runs this as root)"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "no unshare or mount here"
    return None


OPEN = """
import json, sys
from asyncclient.batch.journal import Journal
from asyncclient.errors import JournalLockedError
try:
    Journal.open(sys.argv[1], "b1").close()
except JournalLockedError as exc:
    print(json.dumps({"refused": True, "pid": exc.pid, "host": exc.host}))
else:
    print(json.dumps({"refused": False}))
"""

# In a mount namespace of its own (private: nothing reaches the host's), the journal file
# is bound over another file in another directory, and opened there.
BIND = 'mount --make-rprivate / && mount --bind "$1" "$2" && exec "$3" -c "$4" "$2"'


@pytest.mark.skipif(_no_bind_mounts() is not None, reason=str(_no_bind_mounts()))
def test_a_journal_held_is_refused_through_a_bind_mount(tmp_path: Path) -> None:
    real, bound = tmp_path / "data" / "j.jsonl", tmp_path / "mnt" / "j.jsonl"
    before = make_journal(real)
    bound.parent.mkdir()
    bound.touch()  # what the journal is bound over
    with held(real, tmp_path) as holder:
        opened = subprocess.run(
            ["unshare", "-m", "sh", "-c", BIND, "sh", str(real), str(bound), sys.executable, OPEN],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert opened.returncode == 0, opened.stderr
        said = json.loads(opened.stdout)
        assert said == {"refused": True, "pid": holder.pid, "host": socket.gethostname()}
    assert real.read_bytes() == before and bound.read_bytes() == b""  # bound no more
    assert not (tmp_path / "mnt" / "j.jsonl.lock").exists()


# -- one process, two journals on one file --------------------------------------------


@pytest.mark.parametrize("alias", ["symlink", "hard link"])
def test_a_second_journal_of_this_process_on_the_same_file_is_refused(
    tmp_path: Path, alias: str
) -> None:
    real, other = tmp_path / "j.jsonl", tmp_path / "other.jsonl"
    first = Journal.open(real, "b1")
    if alias == "symlink":
        other.symlink_to(real)
    else:
        os.link(real, other)
    error = refused(other)
    assert error.pid == os.getpid()
    first.close()
    Journal.open(other, "b1").close()  # free again
    assert [r["ev"] for r in lines(real)] == ["batch"]


# -- the index and a new journal's folder, by the file the path names -----------------


def test_a_journal_opened_through_a_symlink_keeps_the_index_of_its_file(tmp_path: Path) -> None:
    real, link = tmp_path / "data" / "j.jsonl", tmp_path / "alias.jsonl"
    real.parent.mkdir()
    link.symlink_to(real)
    journal = Journal.open(link, "b1")
    journal.record(JournalEvent.SUBMIT, 0, "f0", name="n")
    journal.close()
    assert journal.index_path == tmp_path / "data" / "j.jsonl.index"
    assert journal.index_path.exists() and not (tmp_path / "alias.jsonl.index").exists()
    again = Journal.open(real, "b1")  # by its name: the same index
    assert again.indexed and again.replayed == 0 and again.event_of(0) is JournalEvent.SUBMIT
    again.close()
    assert sorted(os.listdir(tmp_path / "data")) == ["j.jsonl", "j.jsonl.index"]


def test_a_new_journal_through_a_symlink_syncs_the_folder_of_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, link = tmp_path / "data" / "j.jsonl", tmp_path / "alias.jsonl"
    real.parent.mkdir()
    link.symlink_to(real)  # dangling: the journal is made through it
    synced: list[Path] = []
    monkeypatch.setattr(journal_module, "sync_directory", synced.append)
    Journal.open(link, "b1").close()
    assert synced == [tmp_path / "data"]
    assert [r["ev"] for r in lines(real)] == ["batch"]


def test_an_empty_journal_is_a_new_one_whose_stale_index_goes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "j.jsonl"
    make_journal(path)
    path.write_bytes(b"")  # the lock made it, and its run died before the header
    journal = Journal.open(path, "b1")
    assert not journal.index_path.exists()  # the index of other bytes: gone at once
    journal.close()
    assert [r["ev"] for r in lines(path)] == ["batch"]
    assert "index is not used" not in caplog.text


# -- end to end: two command-line runs through a symlink -------------------------------


@pytest.mark.heavy
async def test_two_cli_runs_through_a_symlink_the_second_is_refused_each_row_paid_once(
    tmp_path: Path,
) -> None:
    journal, link = tmp_path / "j.jsonl", tmp_path / "alias.jsonl"
    link.symlink_to(journal)
    titles = [row["title"] for row in lines_of_csv(WELCOME)]
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            first = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "asyncclient",
                *batch_argv(WELCOME, emu, key, "--journal", str(journal)), "--spacing", "1",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
            )  # fmt: skip
            for _ in range(3000):  # the first run holds the journal and sends, 1 s apart
                if journal.exists() and '"ev":"submit"' in journal.read_text():
                    break
                await asyncio.sleep(0.01)
            code, out, err = await run_cli(*batch_argv(WELCOME, emu, key, "--journal", str(link)))
            first_out, first_err = await asyncio.wait_for(first.communicate(), 120)
        finally:
            mover.cancel()
        made = [video.name for video in emu.store.videos.values()]
        charged = emu.counters.credits_spent[emu.team_id(key)]
        sent = creations(emu)
    assert first.returncode == 0, first_err.decode()
    assert f"{len(titles)} completed, 0 failed" in first_out.decode()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")  # one line
    assert f"{link} is in use by another run (pid {first.pid} on {socket.gethostname()}" in err
    assert sorted(made) == sorted(titles) and sent == len(titles)  # each row once
    assert charged == 5 * len(titles)  # a template video: 5 credits
    assert sorted(os.listdir(tmp_path)) == ["alias.jsonl", "j.jsonl", "j.jsonl.index"]


# -- found on the way: a journal resumed from its index was headed again ---------------


@pytest.mark.parametrize("key", [None, "k" * 16])
def test_a_journal_resumed_from_its_index_is_not_headed_again(
    tmp_path: Path, key: str | None
) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, "b1", key=key)
    journal.record(JournalEvent.SUBMIT, 0, "f0", name="n")
    journal.close()
    before = path.read_bytes()
    again = Journal.open(path, "b1", key=key)
    assert again.indexed and again.recorded_key == key
    again.close()
    assert path.read_bytes() == before  # one header, as before


# -- a relative path, and a run that changes directory ---------------------------------


def test_a_run_that_changes_directory_leaves_another_runs_lock_file_and_index_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    make_journal(there / "j.jsonl")
    index_there = (there / "j.jsonl.index").read_bytes()
    with held("j.jsonl", there) as holder:  # another run, on the journal over there
        monkeypatch.chdir(here)
        mine = Journal.open("j.jsonl", "b1")  # this run's: the one here
        mine.record(JournalEvent.SUBMIT, 0, "f0", name="n")
        monkeypatch.chdir(there)
        mine.close()  # its lock file and its index are the ones here
        assert (there / "j.jsonl.lock").exists()  # the other run's, still naming it
        assert (there / "j.jsonl.index").read_bytes() == index_there
        assert sorted(os.listdir(here)) == ["j.jsonl", "j.jsonl.index"]
        error = refused("j.jsonl")  # a third run, over there: refused still
        assert error.pid == holder.pid
