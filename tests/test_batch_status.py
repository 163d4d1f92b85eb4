"""A batch's status read from its journal by any process, while it runs and after:
``asyncclient.batch_status(journal)`` and ``asyncclient batch status JOURNAL [--json]``,
for a file journal and a Redis one. Judged against the emulator's own records (what it
made and charged) and the process that holds the journal."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncclient import AsyncClient, BatchStatus, Client, ValidationError, batch_status
from asyncclient.cli.batch_status import status_lines
from asyncclient.emulator import Emulator
from tests.conftest import connect
from tests.test_batch_redis_journal import rows
from tests.test_cli_main import clean_env

_names = iter(range(1_000_000))


async def _finish(emu: Emulator, batch: Any) -> list[Any]:
    task = asyncio.ensure_future(batch)
    while not task.done():
        await asyncio.sleep(0.02)
        emu.advance(30.0)
    return await task  # type: ignore[no-any-return]


async def _status_while_running(
    emu: Emulator, client: AsyncClient, journal: str, n: int
) -> tuple[BatchStatus, list[Any]]:
    """Run an ``n``-row batch on ``journal``; read its status once some rows are
    finished and others not, then let it finish."""
    batch = client.templates.generate_many(
        "tpl_welcome", rows(n), spacing=0.02, journal=journal, read_charges=True
    )
    task = asyncio.ensure_future(batch)
    seen: BatchStatus | None = None
    try:
        for _ in range(2000):
            await asyncio.sleep(0.02)
            emu.advance(1.0)
            status = await batch_status(journal)
            if 3 <= status.outcomes.get("completed", 0) < n:
                seen = status
                break
        assert seen is not None, "never seen part done"
    finally:
        while not task.done():
            await asyncio.sleep(0.02)
            emu.advance(30.0)
    return seen, await task


def _made(emu: Emulator, team: str) -> tuple[int, int]:
    return emu.counters.projects.get(team, 0), emu.counters.credits_spent.get(team, 0)


@pytest.mark.parametrize("store", ["file", "redis"])
async def test_status_while_a_batch_runs_and_after_it_ended(
    store: str, tmp_path: Path, aof_url: str
) -> None:
    """While the batch runs: running, held by this process, rows part done; after: every
    row completed, the credits the service charged, nobody holding it."""
    journal = (
        str(tmp_path / "rows.journal.jsonl") if store == "file" else f"{aof_url}/st-{next(_names)}"
    )
    async with Emulator(time_scale=60.0, seed=51) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        async with connect(emu, key) as client:
            seen, results = await _status_while_running(emu, client, journal, 20)
        made, charged = _made(emu, emu.team_id(key))
    assert seen.running and seen.holder is not None and f"pid {os.getpid()}" in seen.holder
    assert 3 <= seen.outcomes["completed"] < 20
    assert seen.credits == seen.outcomes["completed"] * emu.store.costs["class"]
    if store == "redis":
        assert seen.fence is not None and seen.fence >= 1
        assert seen.beat_age is not None and 0 <= seen.beat_age <= 15
        assert seen.lease_left is not None and 0 < seen.lease_left <= 15
        assert seen.last_beat is not None
    after = await batch_status(journal)
    assert [r.status for r in results] == ["completed"] * 20
    assert not after.running and after.holder is None
    assert after.rows == 20 and dict(after.outcomes) == {"completed": 20}
    assert after.charged_rows == made == 20 and after.credits == charged
    assert after.credits_unknown == 0 and after.pending == 0
    document = after.to_json()
    assert document["outcomes"] == {"completed": 20} and document["credits"] == charged


async def test_a_cut_off_batch_shows_its_pending_rows_and_unknown_charges(aof_url: str) -> None:
    """Cancelled part-way without reading charges: the rows sent and not finished are
    pending, the charged rows whose charge was not read are counted as unknown."""
    journal = f"{aof_url}/st-{next(_names)}"
    async with Emulator(time_scale=60.0, seed=52) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        async with connect(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(30), spacing=0.02, journal=journal
            )
            task = asyncio.ensure_future(batch)
            while emu.counters.projects.get(emu.team_id(key), 0) < 6:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        made, _ = _made(emu, emu.team_id(key))
    status = await batch_status(journal)
    assert not status.running
    assert status.pending >= 1 and status.pending == status.rows - status.outcomes.get(
        "completed", 0
    )
    assert status.charged_rows <= made and status.credits == 0
    assert status.credits_unknown == status.charged_rows
    text = "\n".join(status_lines(status))
    assert "pending" in text and "runner   none" in text


async def test_the_sync_client_reads_a_status_too(tmp_path: Path) -> None:
    journal = tmp_path / "none.journal.jsonl"
    journal.write_text('{"ev":"batch","batch":"b","version":1}\n')
    with Client("key", base_url="http://127.0.0.1:9") as client:
        status = await asyncio.to_thread(client.batch_status, journal)
    assert status.rows == 0 and status.batch_id == "b" and not status.running


async def test_no_journal_and_a_url_not_of_a_journal_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="no journal file"):
        await batch_status(tmp_path / "missing.jsonl")
    with pytest.raises(ValidationError, match="NAME"):
        await batch_status("redis://127.0.0.1:6379/0")


async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncclient", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**clean_env(), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.heavy
async def test_the_command_line_reads_a_redis_journal_while_another_process_runs_it(
    aof_url: str,
) -> None:
    """``asyncclient batch status URL --json`` from another process, no API key: the
    run's holder is this process, its counts are the journal's; the text form says the
    same in words; a missing journal is exit 2."""
    journal = f"{aof_url}/st-{next(_names)}"
    async with Emulator(time_scale=60.0, seed=53) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        async with connect(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(40), spacing=0.25, journal=journal, read_charges=True
            )  # 10 s of sending: both commands run while it runs
            task = asyncio.ensure_future(batch)
            try:
                while emu.counters.projects.get(emu.team_id(key), 0) < 4:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
                code, out, err = await _cli("batch", "status", journal, "--json")
                code_text, text, _ = await _cli("batch", "status", journal)
            finally:
                await _finish(emu, task)
    assert code == 0, err
    document = json.loads(out)
    assert document["running"] is True and f"pid {os.getpid()}" in document["holder"]
    assert document["rows"] >= 4 and document["fence"] >= 1
    assert 0 <= document["beatAge"] <= 15 and document["leaseLeft"] > 0
    assert code_text == 0 and "runner   pid" in text and "last beat" in text
    code, _, err = await _cli("batch", "status", f"{aof_url}/never-run", "--json")
    assert code == 0  # a name nobody used: an empty journal, not an error
    code, _, err = await _cli("batch", "status", "/nonexistent/rows.journal.jsonl")
    assert code == 2 and "no journal file" in err


async def test_a_charge_is_recorded_with_each_row_and_read_back(
    tmp_path: Path, aof_url: str
) -> None:
    """The ``done`` record carries the video's charge (``read_charges``): read back
    from either store after a restart."""
    from asyncclient.batch.store import open_journal
    from asyncclient.client import _open_redis_journal

    async with Emulator(time_scale=60.0, seed=54) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        for journal in (str(tmp_path / "j.jsonl"), f"{aof_url}/st-{next(_names)}"):
            async with connect(emu, key) as client:
                batch = client.templates.generate_many(
                    "tpl_welcome", rows(3), spacing=0, journal=journal, read_charges=True
                )
                await _finish(emu, batch)
                store = await open_journal(
                    journal,
                    batch._batch_id,
                    now=client.clock.now,
                    key=client._journal_key,
                    opener=_open_redis_journal,
                )
                try:
                    assert [store.rows[i].credits for i in range(3)] == [
                        emu.store.costs["class"]
                    ] * 3
                finally:
                    store.close()
