"""``asyncclient batch`` and its journal, as real processes: one run per journal, the
journal's API key, and a journal that cannot grow (a file size limit, ``ulimit -f``)."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import sys
from collections import Counter
from pathlib import Path

import pytest

from asyncclient.emulator import Emulator
from tests.test_cli_batch_runs import batch_argv, creations
from tests.test_cli_main import _advance_forever, clean_env, run_cli, write_rows


def projects_by_title(emu: Emulator) -> Counter[str]:
    return Counter(video.name for video in emu.store.videos.values())


@pytest.mark.heavy
async def test_a_second_run_on_the_same_journal_is_refused_at_once(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 6)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = batch_argv(rows, emu, key, "--journal", str(journal))
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            first = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "asyncclient", *argv, "--spacing", "1",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
            )  # fmt: skip
            for _ in range(3000):  # the first run holds the journal and sends, 1 s apart
                if journal.exists() and '"ev":"submit"' in journal.read_text():
                    break
                await asyncio.sleep(0.01)
            code, out, err = await run_cli(*argv)
            first_out, first_err = await asyncio.wait_for(first.communicate(), 120)
        finally:
            mover.cancel()
        assert projects_by_title(emu) == {f"Row {i}": 1 for i in range(6)}
        assert creations(emu) == 6
    assert first.returncode == 0, first_err.decode()
    assert "6 completed, 0 failed" in first_out.decode()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")  # one line
    assert f"in use by another run (pid {first.pid} on {socket.gethostname()}" in err
    assert not (tmp_path / "j.jsonl.lock").exists()  # gone with the first run


@pytest.mark.heavy
async def test_a_journal_resumed_with_another_key_is_refused(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key_a = emu.add_team(plan="premium", credits=10_000)
        key_b = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code_a, _, err_a = await run_cli(
                *batch_argv(rows, emu, key_a, "--journal", str(journal))
            )
            code, out, err = await run_cli(*batch_argv(rows, emu, key_b, "--journal", str(journal)))
        finally:
            mover.cancel()
        assert creations(emu) == 3
        assert emu.counters.credits_spent[emu.team_id(key_b)] == 0
    assert code_a == 0, err_a
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "belongs to another API key" in err
    assert key_a not in err and key_b not in err
    assert key_a not in journal.read_text()  # a hash of the key, never the key


LIMIT = 100  # bytes: the journal's header fits, its first submit line does not


def _limited() -> None:  # in the child, before it runs Python
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.heavy
async def test_a_journal_that_cannot_grow_stops_the_batch_before_sending(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 3)
    env = clean_env()
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = batch_argv(rows, emu, key, "--journal", str(journal), "--concurrency", "1")
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "asyncclient", *argv,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=env, preexec_fn=_limited,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            sent = creations(emu)
            data = journal.read_bytes()
            code, _, err_again = await run_cli(*argv)  # no limit now: it resumes
        finally:
            mover.cancel()
        assert projects_by_title(emu) == {f"Row {i}": 1 for i in range(3)}  # each sent once
    text = err.decode()
    assert proc.returncode == 1, text  # not killed by SIGXFSZ, and never 0
    assert sent == 0  # the row whose submit line was not written was not sent
    assert data.endswith(b"\n") and len(data) <= LIMIT  # cut back to its last whole line
    assert [json.loads(line)["ev"] for line in data.splitlines()] == ["batch"]
    assert "could not record row 0's submission (the row was not sent)" in text
    assert "this run sent no row, charged nothing" in text and out.decode() == ""
    assert code == 0, err_again
    assert os.path.getsize(journal) > LIMIT
