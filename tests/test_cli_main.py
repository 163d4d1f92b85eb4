"""The main job on the command line, as a user runs it: ``asyncclient demo`` and ``batch``."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from asyncclient import RowOutcome, RowResult
from asyncclient.cli.demo import failed_lines
from asyncclient.emulator import Emulator

CREATE = "/v1/project/create"


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asyncclient",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env or clean_env(),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.heavy
async def test_demo_runs_against_the_embedded_emulator(tmp_path: Path) -> None:
    code, out, err = await run_cli("demo", "--rows", "6", "--download", str(tmp_path))
    assert code == 0, err
    assert "against the embedded emulator" in out
    assert out.rstrip().endswith("This ran against the embedded emulator, not the real service.")
    summary = dict(re.findall(r"^\| ([a-z0-9 ]+?) +\| (.*)$", out, re.M))
    ok, failed = int(summary["completed"]), int(summary["failed"])
    assert ok + failed == 6 and ok >= 1
    assert summary["429s"] == "0"
    assert int(summary["credits used"]) == 5 * 6  # 5 credits a template video
    assert int(summary["requests made"]) > 6
    assert len(list(tmp_path.glob("*.mp4"))) == ok
    assert "20/20" not in err and "6/6" in err  # the progress display went to stderr


async def test_demo_real_needs_configuration() -> None:
    code, _, err = await run_cli("demo", "--real")
    assert code == 2 and "ASYNCCLIENT_API_KEY" in err


def write_rows(path: Path, n: int) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, ["title", "first_name", "product", "logo"])
        writer.writeheader()
        for i in range(n):
            writer.writerow(
                {"title": f"Row {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
            )


@pytest.mark.heavy
async def test_batch_killed_with_sigkill_resumes_without_duplicates(tmp_path: Path) -> None:
    rows, journal, out = tmp_path / "rows.csv", tmp_path / "j.jsonl", tmp_path / "out.jsonl"
    write_rows(rows, 12)
    async with Emulator(time_scale=60.0, seed=2) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = [
            "batch", str(rows), "--template", "tpl_welcome", "--spacing", "0.15",
            "--journal", str(journal), "--out", str(out),
            "--base-url", emu.url, "--api-key", key,
        ]  # fmt: skip

        def accepted() -> int:
            if not journal.exists():
                return 0
            return sum('"ev":"accepted"' in line for line in journal.read_text().splitlines())

        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncclient", *argv,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env=clean_env(),
        )  # fmt: skip
        for _ in range(600):
            if accepted() >= 4:
                break
            await asyncio.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        sent_before = sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)
        assert 4 <= sent_before < 12, "the kill should land in the middle of the batch"
        # --out is written as rows finish: whatever the killed run wrote is whole lines.
        killed = out.read_text().splitlines() if out.exists() else []
        assert all(json.loads(line)["status"] for line in killed)

        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            # A row the kill cut off before its request left is found to have made
            # nothing only after the settle window: a short one, or this waits 10 minutes.
            code, stdout, stderr = await run_cli(*argv, "--settle-window", "2")
        finally:
            mover.cancel()
        assert code == 0, stderr
        created = sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)
        team = emu.team_id(key)
        assert created == 12 and emu.counters.projects[team] == 12  # no row paid twice
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["row"] for r in results) == list(range(12))  # no row lost, none twice
    assert {r["status"] for r in results} == {"completed"}
    assert len({r["videoId"] for r in results}) == 12
    assert "12 completed, 0 failed" in stdout


@pytest.mark.heavy
async def test_ctrl_c_prints_one_line_and_the_same_command_resumes(tmp_path: Path) -> None:
    rows, journal, out = tmp_path / "rows.csv", tmp_path / "j.jsonl", tmp_path / "out.jsonl"
    write_rows(rows, 10)
    async with Emulator(time_scale=60.0, seed=2) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        argv = [
            "batch", str(rows), "--template", "tpl_welcome", "--spacing", "0.15",
            "--journal", str(journal), "--out", str(out),
            "--base-url", emu.url, "--api-key", key,
        ]  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncclient", *argv,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
        )  # fmt: skip
        for _ in range(600):
            if journal.exists() and journal.read_text().count('"ev":"accepted"') >= 3:
                break
            await asyncio.sleep(0.02)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 130
        lines = [line for line in err.decode().splitlines() if line.strip()]
        assert "Traceback" not in err.decode() and "never retrieved" not in err.decode()
        said = [line for line in lines if "interrupted" in line]
        assert len(said) == 1 and "run the same command again to resume" in said[0]
        assert all(line.endswith("}") for line in journal.read_text().splitlines())

        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code, stdout, stderr = await run_cli(*argv)
        finally:
            mover.cancel()
        assert code == 0, stderr
        team = emu.team_id(key)
        assert emu.counters.projects[team] == 10  # none paid twice
    assert "10 completed, 0 failed" in stdout


async def _advance_forever(emu: Emulator) -> None:
    while True:
        await asyncio.sleep(0.05)
        emu.advance(20)


@pytest.mark.heavy
async def test_batch_reports_bad_rows_and_exits_nonzero(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"title": "Good", "first_name": "A", "product": "P", "logo": ""})
        + "\n"
        + json.dumps({"title": "Bad", "product": "P", "logo": ""})
        + "\n"
    )
    async with Emulator(time_scale=600.0) as emu:
        key = emu.add_team(plan="premium", credits=100)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code, out, err = await run_cli(
                "batch", str(rows), "--template", "tpl_welcome", "--spacing", "0",
                "--download", str(tmp_path / "videos"),
                "--base-url", emu.url, "--api-key", key,
            )  # fmt: skip
        finally:
            mover.cancel()
    assert code == 4  # partial failure: one row did not complete
    assert f"{rows}:2: rejected: scenes[0].script: missing value for variable 'first_name'" in err
    assert "1 completed, 0 failed, 1 rejected" in out
    assert len(list((tmp_path / "videos").glob("*.mp4"))) == 1


@pytest.mark.parametrize("args", [["--version"], []])
async def test_cli_basics(args: list[str]) -> None:
    code, out, _ = await run_cli(*args)
    assert code == 0 and "asyncclient" in out


INTERRUPT_WHILE_BUSY = """
import asyncio, os, signal, sys, threading, time
import anyio
from asyncclient.cli.app import _interruptible

seen = []

async def busy() -> None:
    end = time.monotonic() + 0.5
    while time.monotonic() < end:  # no await: a signal lands in this task's code
        pass
    await asyncio.sleep(30)

async def command() -> int:
    try:
        async with anyio.create_task_group() as tg:  # as a batch runs its rows
            tg.start_soon(busy)
    except asyncio.CancelledError:
        seen.append("cancelled")
        raise
    return 0

threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    asyncio.run(_interruptible(command()))
except KeyboardInterrupt:
    print("interrupted", seen)
"""


async def test_ctrl_c_cancels_the_command_even_while_a_task_is_busy() -> None:
    """On every Python the signal becomes one cancellation of the command, never an
    exception raised inside whichever task happened to run (3.10's default)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", INTERRUPT_WHILE_BUSY,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert out.decode().strip() == "interrupted ['cancelled']", err.decode()
    assert "Traceback" not in err.decode()


def _journal_events(journal: Path, event: str, row: int) -> int:
    if not journal.exists():
        return 0
    needle = f'"ev":"{event}","i":{row},'
    return sum(needle in line for line in journal.read_text().splitlines())


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "made_when_killed"),
    [
        # The service made row 3's project and holds the reply: the client is killed not
        # knowing. The resumed run must find that project, never send the row again.
        ({"kind": "hold_reply", "latency": 2.0}, True),
        # The service answered 429 with a long Retry-After: nothing was made for row 3
        # when the client is killed while it waits. The resumed run must learn that from
        # the service before it sends the row (once).
        ({"kind": "rate_burst", "retry_after": 30}, False),
    ],
    ids=["killed-while-the-reply-is-held", "killed-while-waiting-to-retry"],
)
async def test_sigkill_between_submit_and_its_answer(
    tmp_path: Path, fault: dict[str, object], made_when_killed: bool
) -> None:
    rows, journal, out = tmp_path / "rows.csv", tmp_path / "j.jsonl", tmp_path / "out.jsonl"
    write_rows(rows, 6)
    async with Emulator(time_scale=60.0, seed=2) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        emu.faults.add_schedule(CREATE, [None, None, None, fault])
        argv = [
            "batch", str(rows), "--template", "tpl_welcome", "--spacing", "0.05",
            "--concurrency", "1", "--journal", str(journal), "--out", str(out),
            "--base-url", emu.url, "--api-key", key,
            "--settle-window", "10",  # ten service minutes at this time scale
        ]  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncclient", *argv,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env=clean_env(),
        )  # fmt: skip
        for _ in range(1500):
            if emu.counters.faults.get(str(fault["kind"]), 0) >= 1:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # the fault is in effect: the reply held, or the retry due
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        assert _journal_events(journal, "submit", 3) == 1
        assert _journal_events(journal, "accepted", 3) == 0  # killed not knowing
        assert emu.counters.projects[team] == 4 if made_when_killed else 3
        before_resume = len(emu.requests)

        emu.faults.clear()
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code, _, stderr = await run_cli(*argv)
        finally:
            mover.cancel()
        assert code == 0, stderr
    sent_for_row_3 = [
        r for r in emu.requests if r.method == "POST" and r.path == CREATE and r.name == "Row 3"
    ]
    assert emu.counters.projects[team] == 6  # one project a row, none twice
    names = [p.videos[0].name for p in emu.store.projects.values() if p.team_id == team]
    assert sorted(names) == [f"Row {i}" for i in range(6)]
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in results] == ["completed"] * 6
    # Row 3 went to the service once when it was made then, twice (429, then the resend)
    # when it was not, and the resend came only after looks at the list found nothing
    # until the settle window had passed.
    assert len(sent_for_row_3) == (1 if made_when_killed else 2)
    resumed = emu.requests[before_resume:]
    looks = [i for i, r in enumerate(resumed) if r.method == "GET" and "list" in r.path]
    assert len(looks) >= (1 if made_when_killed else 2)
    if not made_when_killed:
        resend = resumed.index(sent_for_row_3[-1])
        assert sum(i < resend for i in looks) >= 2


@pytest.mark.heavy
async def test_the_demo_lists_the_videos_that_failed_with_their_reasons() -> None:
    code, out, err = await run_cli("demo", "--rows", "100")
    assert code == 0, err
    summary = dict(re.findall(r"^\| ([a-z0-9 ]+?) +\| (.*)$", out, re.M))
    failed = int(summary["failed"])
    assert failed >= 1, out  # (the emulator fails about one video in twenty)
    assert f"{failed} rows did not complete:" in out
    listed = re.findall(r"^(\d+) +failed +Welcome .+ (vid_\w+) +(.+)$", out, re.M)
    assert len(listed) == failed, out
    assert all(reason.strip() == "generation failed (simulated)" for *_, reason in listed)


def test_the_demo_lists_twenty_rows_that_did_not_complete_at_most() -> None:
    results = [
        RowResult(
            index=i, status=RowOutcome.FAILED, error=f"reason {i}", video_id=f"v{i}", title="T"
        )
        for i in range(25)
    ] + [
        RowResult(index=25, status=RowOutcome.COMPLETED),
        RowResult(index=26, status=RowOutcome.SUBMITTED),
    ]
    lines = failed_lines(results)
    assert lines[1] == "26 rows did not complete:"
    assert sum(line.startswith(("1 ", "19 ")) for line in lines) == 2
    assert "reason 19" in "\n".join(lines) and "reason 20" not in "\n".join(lines)
    assert "... and 6 more (--json lists every row)" in lines
    assert failed_lines(results[25:26]) == []
