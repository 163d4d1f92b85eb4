"""Only the service's FAILED is ``failed``: a row whose video outlives the batch's wait, or
cannot be followed, stays pending with its ids, and the next run waits for it.

Issue "Exact to the credit", point 4: a row whose video took longer than the batch's
wait was recorded ``failed`` and finished in the journal; the service then completed
(and charged) it, and a re-run still said ``failed``; while only the video list failed,
template rows (known by their project only) ended ``failed`` too. Users regenerate
"failed" rows: paid twice. Each test runs against the emulator over loopback and
judges by its records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asyncclient import AsyncClient, Plan, RowOutcome
from asyncclient.emulator import Emulator
from tests.conftest import FAST_POLLING
from tests.test_cli_main import run_cli, write_rows

CREATE = "/v1/project/create"


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Slow {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


def creations(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)


def client_of(emu: Emulator, key: str, **options: Any) -> AsyncClient:
    options.setdefault("polling", FAST_POLLING)
    return AsyncClient(key, base_url=emu.url, plan=Plan.PREMIUM.rate_limit, **options)


def last_events(journal: Path) -> dict[int, str]:
    events: dict[int, str] = {}
    for line in journal.read_text().splitlines():
        record = json.loads(line)
        if "i" in record:
            events[record["i"]] = record["ev"]
    return events


async def test_a_wait_that_runs_out_leaves_rows_pending_and_the_next_run_waits_for_them(
    tmp_path: Path,
) -> None:
    """Videos take 100 service seconds; the batch waits 0.3 s. Its rows end
    ``submitted`` with their ids (not ``failed``), the journal keeps them ``accepted``,
    the report counts them pending; once the service finished them, the next run with
    the journal reports them ``completed``, sending nothing."""
    journal = tmp_path / "slow.jsonl"
    async with Emulator(time_scale=1.0, seed=31, processing_seconds=100.0, jitter=0.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        async with client_of(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, wait_timeout=0.3
            )
            first = await batch
            report = batch.report()
        assert [r.status for r in first] == [RowOutcome.SUBMITTED] * 3
        assert all(r.project_id and "still pending" in (r.error or "") for r in first)
        assert report.pending == 3 and report.count(RowOutcome.FAILED) == 0
        assert last_events(journal) == {0: "accepted", 1: "accepted", 2: "accepted"}
        emu.advance(200.0)  # the service finishes them, and has charged them
        async with client_of(emu, key) as client:
            again = await client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, wait_timeout=5.0
            )
    assert [r.status for r in again] == [RowOutcome.COMPLETED] * 3
    assert [r.project_id for r in again] == [r.project_id for r in first]
    assert creations(emu) == 3  # sent once each, never regenerated


async def test_rows_that_cannot_be_followed_while_the_list_fails_stay_pending(
    tmp_path: Path,
) -> None:
    """Template rows are known by their project only, found through the video list;
    while the list fails (500s), they cannot be followed: they stay ``submitted``, the
    error says why; the next run, with the list back, completes them."""
    journal = tmp_path / "blind.jsonl"
    async with Emulator(time_scale=1.0, seed=32, processing_seconds=1.0, jitter=0.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        async with client_of(emu, key) as client:
            await client.templates.get("tpl_welcome")
            emu.faults.add("GET /v1/video/list", "status", status=500, times=100_000)
            first = await client.templates.generate_many(
                "tpl_welcome", rows(2), spacing=0, journal=journal, wait_timeout=1.0
            )
        assert [r.status for r in first] == [RowOutcome.SUBMITTED] * 2
        assert all(r.project_id for r in first)
        emu.faults.clear()
        emu.advance(10.0)
        async with client_of(emu, key) as client:
            again = await client.templates.generate_many(
                "tpl_welcome", rows(2), spacing=0, journal=journal, wait_timeout=5.0
            )
    assert [r.status for r in again] == [RowOutcome.COMPLETED] * 2
    assert creations(emu) == 2


@pytest.mark.heavy
async def test_the_command_line_says_how_many_rows_are_pending_and_how_to_resume(
    tmp_path: Path,
) -> None:
    rows_file, journal = tmp_path / "rows.csv", tmp_path / "j.jsonl"
    write_rows(rows_file, 3)
    argv = ["batch", str(rows_file), "--template", "tpl_welcome", "--spacing", "0"]
    async with Emulator(time_scale=1.0, seed=33, processing_seconds=100.0, jitter=0.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        more = ["--journal", str(journal), "--base-url", emu.url, "--api-key", key]
        code, out, err = await run_cli(*argv, *more, "--wait-timeout", "0.3")
        assert code == 4, err  # not every row completed (EXIT_PARTIAL)
        assert "0 completed, 0 failed" in out and "3 still pending" in out
        assert "3 rows still pending: 3 accepted and not known finished" in err
        assert "run the same command again to resume" in err
        emu.advance(200.0)
        code, out, err = await run_cli(*argv, *more, "--json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary["completed"] == 3 and summary["failed"] == 0 and summary["submitted"] == 0
    assert creations(emu) == 3
