"""``asyncclient batch`` on big inputs: read as sent, checked first on demand, a file
that is not UTF-8 named, and a run that ends when the service goes away."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from asyncclient.cli.rowsfile import RowsFile
from asyncclient.emulator import Emulator
from tests.test_cli_batch_runs import batch_argv, creations
from tests.test_cli_main import clean_env, run_cli, write_rows


def test_a_rows_file_is_scanned_for_its_shape_and_then_read_lazily(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 1000)
    scanned = RowsFile(rows).scan()
    assert len(scanned) == 1000
    reading = iter(scanned)
    assert next(reading)["title"] == "Row 0"  # one row read, not the file
    assert sum(1 for _ in reading) == 999
    assert [r["title"] for r in scanned][:2] == ["Row 0", "Row 1"]  # read again, anew


def test_the_shape_scan_counts_the_rows_the_run_reads(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        'title,first_name,product,logo\n\nA,"Ann, Jr",Lamp,\n\n"B\nsecond line",Bo,Lamp,\n,,,\n\n',
        encoding="utf-8",
    )
    scanned = RowsFile(rows).scan()
    read = list(scanned)
    assert len(scanned) == len(read) == 3  # blank lines are no rows; ",,," is one
    assert read[0]["first_name"] == "Ann, Jr" and read[1]["title"] == "B\nsecond line"
    rows.write_text('title,first_name\nA,B\n"C\nD",E,F\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"rows\.csv:4: 3 values, the header has 2"):
        RowsFile(rows).scan()  # the line the bad row ends on, as the reader counts


async def test_check_names_the_rows_that_would_be_rejected_and_sends_nothing(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "title,first_name,product,logo\nA,Ann,Lamp,\nB,,Lamp,\nA,Bob,Lamp,\n", encoding="utf-8"
    )
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        code, out, err = await run_cli(*batch_argv(rows, emu, key, "--check"))
        assert creations(emu) == 0
    assert code == 2, err
    assert "3 rows checked" in out and "1 would be rejected" in out  # ("" is a value)
    assert f"{rows}:4: would be rejected: title: 'A' is also the title of line 2" in err


async def test_a_rows_file_that_is_not_utf8_is_refused_naming_it(tmp_path: Path) -> None:
    rows = tmp_path / "latin.csv"
    rows.write_bytes("title,first_name,product,logo\nCaf\xe9,Ann,Lamp,\n".encode("latin-1"))
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        code, _, err = await run_cli(*batch_argv(rows, emu, key))
        assert creations(emu) == 0
    assert code == 2
    assert "latin.csv: not UTF-8 text" in err


@pytest.mark.heavy
async def test_a_run_against_a_service_that_goes_away_ends_and_says_how_to_resume(
    tmp_path: Path,
) -> None:
    rows, journal, out = tmp_path / "rows.csv", tmp_path / "j.jsonl", tmp_path / "out.jsonl"
    write_rows(rows, 40)
    emu = Emulator(time_scale=60.0, seed=2, processing_seconds=3600)
    await emu.start()
    key = emu.add_team(plan="premium", credits=10_000)
    argv = [
        *batch_argv(rows, emu, key, "--spacing", "0.05", "--unreachable-after", "1.5"),
        "--journal", str(journal), "--out", str(out),
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncclient", *argv,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
    )  # fmt: skip
    try:
        for _ in range(1000):
            if creations(emu) >= 5:
                break
            await asyncio.sleep(0.01)
    finally:
        await emu.stop()  # gone: every connection from now on is refused
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    err = stderr.decode()
    assert proc.returncode == 4, err
    assert "the batch stopped: the service could not be reached" in err
    assert "run the same command again to resume" in err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["row"] for r in records) == list(range(40))  # every row has an outcome
    statuses = {r["status"] for r in records}
    assert "not_sent" in statuses and "rejected" not in statuses
    pending = [r for r in records if r["status"] == "submitted"]
    assert pending and all(r["projectId"] for r in pending)
    assert "still pending" in stdout.decode()
