"""``asyncclient batch --budget`` is a hard cap (issue 28, point 5): ``--budget 0`` sends
nothing, a budget whose row cost nothing tells sends nothing and exits 2 saying how to
give it, ``--cost-per-row`` lets exactly what fits through, a resumed journal teaches the
cost, and ``--check`` prints the estimate and where the cost came from. A template video
costs 5 credits in the emulator; the team's balance is read before and after."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from asyncclient.emulator import Emulator
from tests.test_cli_batch_runs import batch_argv, creations
from tests.test_cli_main import _advance_forever, run_cli, write_rows


async def test_budget_0_sends_nothing(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        code, out, err = await run_cli(*batch_argv(rows, emu, key, "--budget", "0"))
        assert creations(emu) == 0 and emu.credits(key) == 1000
    assert code == 4, err  # not every row completed: they were skipped
    assert "0 completed, 0 failed, 0 rejected, 3 skipped" in out
    assert "budget 0 credits: 0 counted" in out and "3 rows skipped" in out


async def test_a_budget_whose_row_cost_is_unknown_sends_nothing_and_says_how(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        code, out, err = await run_cli(*batch_argv(rows, emu, key, "--budget", "3"))
        assert creations(emu) == 0 and emu.credits(key) == 1000
    assert code == 2, (out, err)
    assert "a budget of 3 credits is a cap" in err and "nothing was sent" in err
    assert "--cost-per-row N" in err and "resume with a journal" in err


@pytest.mark.heavy
async def test_budget_12_at_5_a_row_sends_exactly_2_rows(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 5)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            argv = batch_argv(rows, emu, key, "--budget", "12", "--cost-per-row", "5", "--json")
            code, out, err = await run_cli(*argv)
        finally:
            mover.cancel()
        assert creations(emu) == 2 and emu.credits(key) == 1000 - 10
    assert code == 4, err
    doc = json.loads(out)
    assert doc["summary"]["completed"] == 2 and doc["summary"]["skipped"] == 3
    skipped = [r for r in doc["rows"] if r["status"] == "skipped"]
    assert [r["row"] for r in skipped] == [2, 3, 4]
    assert all(r["error"] == "credit budget reached" for r in skipped)


@pytest.mark.heavy
async def test_a_resumed_journal_teaches_the_cost_and_check_says_so(tmp_path: Path) -> None:
    rows, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows, 4)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        more = ("--journal", str(journal))
        try:
            first = await run_cli(
                *batch_argv(rows, emu, key, *more, "--budget", "10", "--cost-per-row", "5")
            )
            check = await run_cli(*batch_argv(rows, emu, key, *more, "--budget", "15", "--check"))
            second = await run_cli(*batch_argv(rows, emu, key, *more, "--budget", "15"))
        finally:
            mover.cancel()
        assert creations(emu) == 3 and emu.credits(key) == 1000 - 15
    code, out, err = first
    assert code == 4 and "2 completed, 0 failed, 0 rejected, 2 skipped" in out, err
    code, out, err = check
    assert code == 0, err
    assert "4 rows checked" in out
    assert (
        "estimate: 2 rows x 5 credits = 10 credits at most (a row's cost: what the service "
        "charged the journal's rows 0, 1 (their videos' usedCredits)); 2 rows an earlier "
        "run sent are not sent again"
    ) in out
    assert "budget 15 credits: 10 counted for rows sent before; 1 rows fit, 1 would be" in out
    code, out, err = second
    assert code == 4 and "3 completed, 0 failed, 0 rejected, 1 skipped" in out, err
    assert "budget 15 credits: 15 counted" in out and "journal's rows 0, 1" in out


@pytest.mark.heavy
async def test_check_prints_the_estimate_and_sends_nothing(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        given = await run_cli(*batch_argv(rows, emu, key, "--cost-per-row", "5", "--check"))
        zero = await run_cli(*batch_argv(rows, emu, key, "--budget", "0", "--check"))
        unknown = await run_cli(*batch_argv(rows, emu, key, "--budget", "7", "--check"))
        assert creations(emu) == 0 and emu.credits(key) == 1000
    code, out, err = given
    assert code == 0, err
    assert "estimate: 3 rows x 5 credits = 15 credits at most (a row's cost: --cost-per-row)" in out
    code, out, err = zero
    assert code == 0, err
    assert "estimate: unknown: what a row may cost is not known" in out
    assert "budget 0 credits: 0 rows fit, 3 would be skipped" in out
    code, out, err = unknown
    assert code == 2, err
    assert "--cost-per-row N" in out and "budget 7 credits: a run would send nothing" in out
