"""``asyncclient batch`` and ``demo`` as a user runs them: what a run says it did, its
JSON document, its exit status, its rows file checked first, the demo's folder."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import re
import signal
import struct
import sys
import termios
from pathlib import Path
from typing import Any

import pytest

from asyncclient.cli.app import main
from asyncclient.emulator import Emulator
from tests.test_cli_main import CREATE, _advance_forever, clean_env, run_cli, write_rows

ANSI = re.compile(r"\x1b\[")


def batch_argv(rows: Path, emu: Emulator, key: str, *more: str) -> list[str]:
    return [
        "batch", str(rows), "--template", "tpl_welcome", "--spacing", "0",
        "--base-url", emu.url, "--api-key", key, *more,
    ]  # fmt: skip


def creations(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)


@pytest.mark.heavy
async def test_a_rerun_of_a_finished_batch_says_nothing_was_submitted_or_charged(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 4)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            first = await run_cli(*batch_argv(rows, emu, key))
            spent = emu.counters.credits_spent[team]
            second = await run_cli(*batch_argv(rows, emu, key))
            third = await run_cli(*batch_argv(rows, emu, key, "--json"))
        finally:
            mover.cancel()
        assert creations(emu) == 4 and emu.counters.credits_spent[team] == spent == 4 * 5
    code, out, err = first
    assert code == 0, err
    assert "4 completed, 0 failed" in out and "this run: 4 rows submitted, 20 credits spent" in out
    assert "resuming" not in err
    code, out, err = second
    assert code == 0, err
    assert "4 completed, 0 failed" in out
    assert "this run: nothing submitted, nothing charged: all 4 rows were already done" in out
    assert "resuming from" in err and "4 of 4 rows already done" in err
    assert "/min" not in err  # no rate made of rows an earlier run finished
    assert "submitted 0  (4 done before)" in err.splitlines()[-1]
    code, out, err = third
    assert code == 0, err
    doc = json.loads(out)  # stdout is one JSON document, nothing else
    assert set(doc) == {"summary", "rows"}
    summary = doc["summary"]
    assert summary["rows"] == 4 and summary["completed"] == 4
    assert summary["submitted"] == 0 and summary["creditsSpent"] == 0
    assert summary["doneBefore"] == 4 and summary["submittedBefore"] == 4
    assert summary["exitCode"] == 0 and summary["interrupted"] is False
    assert [r["row"] for r in doc["rows"]] == [0, 1, 2, 3]
    assert {r["status"] for r in doc["rows"]} == {"completed"}
    assert all(r["videoId"] and r["title"] == f"Row {r['row']}" for r in doc["rows"])
    assert not ANSI.search(out + err)  # neither stream is a terminal


@pytest.mark.heavy
async def test_a_resumed_batch_counts_only_what_this_run_submitted(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 6)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = batch_argv(rows, emu, key, "--journal", str(journal), "--spacing", "1")
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "asyncclient", *argv,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                env=clean_env(),
            )  # fmt: skip
            for _ in range(1500):  # killed once two rows are done, the others not all sent
                if journal.exists() and journal.read_text().count('"ev":"done"') >= 2:
                    break
                await asyncio.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
            before = creations(emu)
            # A row the kill cut off before its request left is found to have made
            # nothing only after the settle window: a short one, or this waits 10 minutes.
            more = ("--spacing", "0", "--settle-window", "2", "--json")
            code, out, err = await run_cli(*argv, *more)
        finally:
            mover.cancel()
        sent_now = creations(emu) - before
        assert creations(emu) == 6  # no row sent twice
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary["doneBefore"] >= 2 and summary["completed"] == 6
    assert summary["submitted"] == sent_now and 1 <= sent_now <= 4
    assert summary["creditsSpent"] == 5 * sent_now
    assert "resuming from" in err and f"{summary['doneBefore']} of 6 rows already done" in err


@pytest.mark.heavy
async def test_json_with_rejected_rows_and_downloads_exits_4(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    good = {"title": "Good", "first_name": "A", "product": "P", "logo": ""}
    rows.write_text(json.dumps(good) + "\n" + json.dumps({"title": "Bad", "product": "P"}) + "\n")
    videos = tmp_path / "videos"
    async with Emulator(time_scale=600.0) as emu:
        key = emu.add_team(plan="premium", credits=100)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            argv = batch_argv(rows, emu, key, "--download", str(videos), "--json")
            code, out, err = await run_cli(*argv)
        finally:
            mover.cancel()
    assert code == 4, err  # partial failure
    doc = json.loads(out)
    assert doc["summary"]["exitCode"] == 4 and doc["summary"]["rejected"] == 1
    assert doc["summary"]["downloaded"] == 1
    done, bad = doc["rows"]
    assert done["status"] == "completed" and Path(done["path"]) == videos / f"{done['videoId']}.mp4"
    assert Path(done["path"]).stat().st_size > 0
    assert bad["status"] == "rejected" and "first_name" in bad["error"] and bad["path"] is None


async def test_ctrl_c_with_json_still_prints_the_document(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 8)
    async with Emulator(time_scale=60.0, seed=2) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = batch_argv(rows, emu, key, "--spacing", "0.2", "--journal", str(journal), "--json")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncclient", *argv,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
        )  # fmt: skip
        for _ in range(1500):
            if journal.exists() and journal.read_text().count('"ev":"accepted"') >= 2:
                break
            await asyncio.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 130, err.decode()
    doc = json.loads(out)
    assert doc["summary"]["interrupted"] is True and doc["summary"]["exitCode"] == 130
    assert doc["summary"]["rows"] == 8 and isinstance(doc["rows"], list)
    assert "run the same command again to resume" in err.decode()


async def test_the_journal_of_another_batch_is_bad_input(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 2)
    journal.write_text(
        '{"ev":"batch","batch":"0123456789abcdef","version":1}\n'
        '{"ev":"submit","i":0,"fp":"x","at":"2026-01-01T00:00:00+00:00"}\n'
    )
    async with Emulator(time_scale=600.0) as emu:
        key = emu.add_team(plan="premium", credits=100)
        code, out, err = await run_cli(*batch_argv(rows, emu, key, "--journal", str(journal)))
        assert creations(emu) == 0
    assert code == 2 and out == ""
    assert "error: " in err and "journal of another batch" in err
    assert "resuming" not in err  # said only of a journal the batch accepted


# -- bad input: exit 2 before anything is sent ------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        ("title,first_name,product,logo\n", "a header line and no row under it"),
        ("title,first_name,product,logo\nA,B,C\n", "rows.csv:2: 3 values, the header has 4"),
        ("title,first_name\nA,B,C\n", "rows.csv:2: 3 values, the header has 2"),
    ],
    ids=["empty", "header-only", "short-row", "long-row"],
)
def test_a_rows_file_without_rows_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(content)
    argv = ["batch", str(rows), "--template", "t", "--api-key", "k"]
    assert main([*argv, "--base-url", "http://127.0.0.1:9"]) == 2  # nothing listens there
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and message in captured.err
    assert not (tmp_path / "rows.journal.jsonl").exists()


def test_an_empty_jsonl_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n\n")
    argv = ["batch", str(rows), "--template", "t", "--api-key", "k"]
    assert main([*argv, "--base-url", "http://127.0.0.1:9"]) == 2
    assert "no rows in it" in capsys.readouterr().err


def test_help_shows_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "exit statuses:" in out
    assert re.search(r"^  4 +partial failure", out, re.M)
    assert re.search(r"^  130 +interrupted", out, re.M)


# -- demo ---------------------------------------------------------------------------------


@pytest.mark.heavy
async def test_demo_json_leaves_no_temporary_folder(tmp_path: Path) -> None:
    env = clean_env()
    env["TMPDIR"] = str(tmp_path)  # where tempfile makes the demo's folder
    code, out, err = await run_cli("demo", "--rows", "3", "--json", env=env)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    summary = doc["summary"]
    assert summary["emulator"] is True and summary["folder"] is None
    assert summary["completed"] + summary["failed"] == 3 == summary["rows"]
    assert summary["downloaded"] == summary["completed"]
    assert summary["creditsUsed"] == 15 and summary["rateLimited"] == 0
    assert len(doc["rows"]) == 3 and all(r["videoId"] for r in doc["rows"])
    assert list(tmp_path.iterdir()) == []  # the videos' folder is gone
    assert "against the embedded emulator" in err and not ANSI.search(err)
    assert "3/3" in err  # plain progress lines


# -- a terminal -----------------------------------------------------------------------------


@pytest.mark.heavy
async def test_on_a_terminal_the_batch_draws_a_live_bar(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code, screen = await run_in_terminal(*batch_argv(rows, emu, key))
        finally:
            mover.cancel()
    assert code == 0, screen
    assert "\r\x1b[2K[" in screen  # the line redrawn in place
    assert "[" + "#" * 24 + "]  3/3  completed 3" in screen
    assert "3 completed, 0 failed" in screen


async def run_in_terminal(*args: str, columns: int = 160) -> tuple[int, str]:
    """Run the command line with stdout and stderr on a pseudo-terminal ``columns``
    wide; what it drew."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = clean_env()
    env.pop("COLUMNS", None)
    env["TERM"] = "xterm"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncclient", *args, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    screen = await asyncio.to_thread(_read_all, leader)
    code = await asyncio.wait_for(proc.wait(), 60)
    return code, screen.decode(errors="replace")


def _read_all(fd: int) -> bytes:
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except OSError:  # EIO: the other side closed
        pass
    finally:
        os.close(fd)
    return data
