"""What a batch tells: its phase as it moves, its listeners, and the report of its run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from asyncclient import AsyncClient
from asyncclient._states import BATCH_PHASE, BatchPhase, JournalEvent, RowOutcome
from asyncclient.batch import BatchUpdate
from asyncclient.emulator import Emulator
from tests.test_batch_runner import creations, finish, rows

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)

P = BatchPhase


def phases(updates: list[BatchUpdate]) -> list[BatchPhase]:
    """The phases the updates went through, each once, in order."""
    seen: list[BatchPhase] = []
    for update in updates:
        if not seen or seen[-1] is not update.phase:
            seen.append(update.phase)
    return seen


async def test_a_listener_sees_every_phase_in_order_and_each_row(
    emu: Emulator, client: AsyncClient
) -> None:
    batch = client.templates.generate_many("tpl_welcome", [*rows(3), {"title": "x"}], spacing=0)
    updates: list[BatchUpdate] = []
    batch.subscribe(updates.append)
    assert batch.phase is P.NOT_STARTED and not updates  # subscribing starts nothing
    await finish(emu, batch)
    assert phases(updates) == [P.PREPARING, P.SUBMITTING, P.AWAITING, P.DONE]
    assert batch.phase is P.DONE and batch.error is None
    rows_told = [u.row.index for u in updates if u.row is not None]
    assert sorted(rows_told) == [0, 1, 2, 3] and rows_told[0] == 3  # the rejected row first
    assert updates[-1].progress.finished == 4 and updates[-1].row is None


async def test_preparing_alone_leaves_the_batch_prepared_until_it_runs(
    emu: Emulator, client: AsyncClient
) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0)
    updates: list[BatchUpdate] = []
    unsubscribe = batch.subscribe(updates.append)
    await batch.prepare()
    assert batch.phase is P.PREPARED and phases(updates) == [P.PREPARING, P.PREPARED]
    assert repr(batch).startswith("<Batch not started: finished=0/2 ")
    await finish(emu, batch)
    assert phases(updates) == [P.PREPARING, P.PREPARED, P.SUBMITTING, P.AWAITING, P.DONE]
    unsubscribe()
    unsubscribe()  # harmless
    told = len(updates)
    assert batch.phase is P.DONE and len(updates) == told


async def test_a_refused_journal_fails_the_run_and_says_why(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_text('{"ev":"batch","batch":"0123456789abcdef","version":1}\n')
    batch = client.templates.generate_many("tpl_welcome", rows(2), journal=journal)
    updates: list[BatchUpdate] = []
    batch.subscribe(updates.append)
    with pytest.raises(ValueError, match="another batch"):
        await batch
    assert phases(updates) == [P.PREPARING, P.FAILED]
    assert isinstance(batch.error, ValueError) and "another batch" in str(batch.error)
    assert repr(batch).startswith("<Batch stopped: ") and "another batch" in repr(batch)
    assert creations(emu) == 0


async def test_a_cancelled_batch_says_so_even_cancelled_before_its_first_step(
    emu: Emulator, client: AsyncClient
) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(6), spacing=0.2)
    async for _ in batch:
        break  # cancels the run, which then winds down its rows
    assert batch._task is not None
    await asyncio.wait({batch._task})
    assert batch.phase is P.CANCELLED
    sent = creations(emu)
    early = client.templates.generate_many("tpl_welcome", rows(2))
    run = early._ensure_task()  # the run, started and cancelled before its first step
    run.cancel()
    await asyncio.wait({run})
    assert early.phase is P.CANCELLED and early.error is None
    assert creations(emu) == sent


async def test_a_listener_that_raises_never_breaks_the_batch(
    emu: Emulator, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0)

    def broken(update: BatchUpdate) -> None:
        raise RuntimeError("a listener's bug")

    batch.subscribe(broken)
    results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed"] * 2 and batch.phase is P.DONE
    assert "a batch listener raised" in caplog.text


async def test_the_report_counts_what_this_run_sent_and_what_the_service_charged(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    data = [*rows(3), {"title": "Typo", "first_nam": "Al", "product": "A", "logo": ""}]
    first = client.templates.generate_many(
        "tpl_welcome", data, spacing=0, journal=journal, read_charges=True
    )
    await finish(emu, first)
    report = first.report()
    charged = sum(emu.counters.credits_spent.values())  # the client's team alone
    assert charged == 3 * 5  # the emulator charges 5 credits a template video
    assert report.phase is P.DONE and report.rows == 4
    assert report.count(RowOutcome.COMPLETED) == 3 and report.count(RowOutcome.REJECTED) == 1
    assert (report.submitted, report.accepted, report.maybe_charged) == (3, 3, 0)
    assert report.credits_spent == charged and report.charges_known == 3
    assert report.before == {} and not report.resuming and report.done_before == 0

    again = client.templates.generate_many("tpl_welcome", data, spacing=0, journal=journal)
    await finish(emu, again)
    report = again.report()
    assert report.before == {JournalEvent.DONE: 3}  # the rejected row was never journaled
    assert report.resuming and report.done_before == report.submitted_before == 3
    assert (report.submitted, report.accepted, report.credits_spent) == (0, 0, 0)
    assert sum(emu.counters.credits_spent.values()) == charged and creations(emu) == 3


async def test_without_reading_charges_the_credits_are_not_guessed(
    emu: Emulator, client: AsyncClient
) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0)
    await finish(emu, batch)
    report = batch.report()
    reads = [r.path for r in emu.requests if r.method == "GET" and r.path.startswith("/v1/video/")]
    reads = [path for path in reads if path != "/v1/video/list"]
    # Usually no detail is read (the list's records are enough), so no charge is known;
    # on a loaded machine the poller may read one anyway: a charge is known only so.
    assert report.accepted == 2 and report.charges_known <= len(reads)
    assert (report.credits_spent is None) == (report.charges_known < 2)  # never guessed


def test_the_phase_table_refuses_a_move_it_does_not_allow() -> None:
    assert BATCH_PHASE.allows(P.AWAITING, P.DONE)
    assert not BATCH_PHASE.allows(P.SUBMITTING, P.DONE)  # every row passes its submission
    with pytest.raises(ValueError, match="batch phase: submitting cannot follow done"):
        BATCH_PHASE.check(P.DONE, P.SUBMITTING)
    assert {p for p in P if BATCH_PHASE.is_terminal(p)} == {P.DONE, P.FAILED, P.CANCELLED}
    assert all(not BATCH_PHASE.transitions[p] for p in BATCH_PHASE.terminal)
