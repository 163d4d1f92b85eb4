"""The credit budget is a hard cap (issue 28, point 5), against the emulator: ``budget=0``
sends nothing; a budget whose row cost nothing tells is refused before anything is sent;
a journal's earlier rows teach the cost (their videos' charges) and count against the
budget before any row is sent, ambiguous ones too; a row charged more than counted stops
the rows that no longer fit; ``check()`` gives the estimate and where the cost came from.
A template video costs 5 credits in the emulator."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from asyncclient import AsyncClient, ValidationError
from asyncclient.emulator import Emulator
from tests.conftest import connect
from tests.test_batch_runner import CREATE, creations, finish, rows

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)


def detail_reads(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "GET" and r.path.startswith("/v1/video/v"))


async def test_a_budget_of_0_sends_nothing(emu: Emulator) -> None:
    key = emu.add_team(plan="premium", credits=1000)
    async with connect(emu, key) as client:
        batch = client.templates.generate_many("tpl_welcome", rows(3), spacing=0, budget=0)
        results = await finish(emu, batch)
    assert [r.status for r in results] == ["skipped"] * 3
    assert creations(emu) == 0 and emu.credits(key) == 1000


async def test_a_budget_whose_row_cost_is_unknown_is_refused_before_anything_is_sent(
    emu: Emulator, tmp_path: Path
) -> None:
    key = emu.add_team(plan="premium", credits=1000)
    async with connect(emu, key) as client:
        for journal in (None, tmp_path / "new.jsonl"):
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, budget=3, journal=journal
            )
            with pytest.raises(ValidationError) as info:
                await finish(emu, batch)
            message = str(info.value)
            assert message.startswith("cost_per_row: a budget of 3 credits is a cap")
            assert "cost_per_row=N" in message and "--cost-per-row N" in message
            assert "journal" in message  # or resume one whose rows show the cost
            assert batch.phase == "failed"
    assert creations(emu) == 0 and emu.credits(key) == 1000


@pytest.mark.parametrize(
    ("option", "value"),
    [("budget", -1), ("budget", 2.5), ("cost_per_row", 0), ("cost_per_row", True)],
)
def test_bad_credit_settings_are_refused_with_a_typed_error(
    client: AsyncClient, option: str, value: object
) -> None:
    with pytest.raises(ValidationError, match=f"^{option}: must be a whole number of credits"):
        client.templates.generate_many("tpl_welcome", rows(1), **{option: value})  # type: ignore[arg-type]


async def _first_run(emu: Emulator, key: str, journal: Path, *faults: object) -> list[str]:
    """Rows 0 to 3, one at a time, under a budget of 10 at 5 a row: the service refuses
    row 0 (nothing made, nothing charged), then ``faults`` (one creation each), then
    rows are made until the budget is reached; 10 credits charged."""
    emu.faults.add_schedule(f"POST {CREATE}", [{"kind": "status", "status": 400}, *faults])  # type: ignore[list-item]
    async with connect(emu, key) as client:
        first = client.templates.generate_many(
            "tpl_welcome", rows(4), spacing=0, concurrency=1, journal=journal,
            budget=10, cost_per_row=5, settle_window=0,
        )  # fmt: skip
        results = await finish(emu, first)
    assert emu.credits(key) == 1000 - 10
    return [r.status for r in results]


async def test_a_resumed_journal_teaches_the_cost_without_a_send(
    emu: Emulator, tmp_path: Path
) -> None:
    key, journal = emu.add_team(plan="premium", credits=1000), tmp_path / "j.jsonl"
    first = await _first_run(emu, key, journal)
    assert first == ["rejected", "completed", "completed", "skipped"]
    sent, reads = creations(emu), detail_reads(emu)
    async with connect(emu, key) as client:
        again = client.templates.generate_many(
            "tpl_welcome", rows(4), spacing=0, journal=journal, budget=12
        )
        results = await finish(emu, again)
        # The cost came from the details of the videos of rows 1 and 2 (5 each): the 10
        # credits they were charged count, and 2 remain, less than a row: nothing sent.
        assert [r.status for r in results] == ["skipped", "completed", "completed", "skipped"]
        assert creations(emu) == sent and emu.credits(key) == 1000 - 10
        assert detail_reads(emu) >= reads + 2
        assert again.budget.cost == 5 and again.budget.committed == 10
        assert "journal's rows 1, 2" in again.budget.cost_from
        # With room for two more rows, the same learning lets exactly two through.
        third = client.templates.generate_many(
            "tpl_welcome", rows(4), spacing=0, journal=journal, budget=20
        )
        results = await finish(emu, third)
    assert [r.status for r in results] == ["completed"] * 4
    assert creations(emu) == sent + 2 and emu.credits(key) == 1000 - 20


async def test_rows_an_earlier_run_sent_count_before_any_row_is_sent(
    emu: Emulator, tmp_path: Path
) -> None:
    """Row 0 comes before the rows an earlier run sent: it is not sent on the credits
    they took (the old budget counted them only as it read them)."""
    key, journal = emu.add_team(plan="premium", credits=1000), tmp_path / "j.jsonl"
    await _first_run(emu, key, journal)
    sent = creations(emu)
    async with connect(emu, key) as client:
        again = client.templates.generate_many(
            "tpl_welcome", rows(4), spacing=0, journal=journal, budget=10, cost_per_row=5
        )
        results = await finish(emu, again)
    assert [r.status for r in results] == ["skipped", "completed", "completed", "skipped"]
    assert creations(emu) == sent and emu.credits(key) == 1000 - 10


async def test_rows_that_may_have_been_charged_count_against_the_budget(
    emu: Emulator, tmp_path: Path
) -> None:
    """Row 1's reply is lost and the look for it fails: unresolved, it may have been
    charged (it was), so it counts; the next run counts it too, before sending, and only
    then finds out what the service made of it."""
    key, journal = emu.add_team(plan="premium", credits=1000), tmp_path / "j.jsonl"
    emu.faults.add("GET /v1/video/list", "malformed", times=1)  # the one look of row 1
    first = await _first_run(emu, key, journal, "drop_after")
    assert first == ["rejected", "unresolved", "completed", "skipped"]
    sent = creations(emu)
    for budget in (10, 14):  # row 0 does not fit: 10 (or 14) less 2 rows of 5
        async with connect(emu, key) as client:
            again = client.templates.generate_many(
                "tpl_welcome", rows(4), spacing=0, journal=journal, budget=budget
            )
            results = await finish(emu, again)
        assert results[0].status == "skipped" and results[3].status == "skipped"
        assert creations(emu) == sent and emu.credits(key) == 1000 - 10 >= 1000 - budget
    assert results[1].status == "completed"  # found: made once, by the first run


async def test_a_row_charged_more_than_counted_stops_the_rows_that_no_longer_fit(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    """A cost per row given too low (3; a row costs 5): once a charge is read, rows count
    at 5, and no row is sent that 5 more would not fit; the log says so."""
    key = emu.add_team(plan="premium", credits=1000)
    async with connect(emu, key) as client:
        batch = client.templates.generate_many(
            "tpl_welcome", rows(6), spacing=0, concurrency=1, max_open=1,
            budget=14, cost_per_row=3, read_charges=True,
        )  # fmt: skip
        with caplog.at_level(logging.WARNING, logger="asyncclient"):
            results = await finish(emu, batch)
    statuses = [r.status for r in results]
    # Row 0 counted at 3, charged 5; rows 1 and 2 then count at 5 each: 15 > 14 for row 2.
    assert statuses == ["completed", "completed", "skipped", "skipped", "skipped", "skipped"]
    assert emu.credits(key) == 1000 - 10
    assert batch.budget.cost == 5 and batch.budget.overcharged is not None
    assert "row 0 was charged 5 credits, more than the 3" in batch.budget.overcharged
    assert any("more than the 3" in r.getMessage() for r in caplog.records)


async def test_check_gives_the_estimate_and_where_the_cost_came_from(
    emu: Emulator, tmp_path: Path
) -> None:
    key, journal = emu.add_team(plan="premium", credits=1000), tmp_path / "j.jsonl"
    async with connect(emu, key) as client:
        unknown = await client.templates.generate_many("tpl_welcome", rows(5), budget=0).check()
        assert (unknown.cost_per_row, unknown.estimate, unknown.fits(0)) == (None, None, 0)
        assert unknown.fits(12) is None
        given = await client.templates.generate_many(
            "tpl_welcome", rows(5), budget=12, cost_per_row=5
        ).check()
        assert (given.to_send, given.cost_per_row, given.estimate) == (5, 5, 25)
        assert given.cost_given == 5 and given.cost_rows == () and given.fits(12) == 2
    await _first_run(emu, key, journal)
    sent = creations(emu)
    async with connect(emu, key) as client:
        learnt = await client.templates.generate_many(
            "tpl_welcome", rows(4), journal=journal, budget=20
        ).check()
    assert learnt.cost_rows == ((1, 5), (2, 5)) and learnt.cost_per_row == 5
    assert (learnt.sent_before, learnt.to_send, learnt.estimate) == (2, 2, 10)
    assert learnt.charged_before == 10 and learnt.fits(20) == 2 and learnt.fits(12) == 0
    assert creations(emu) == sent  # nothing sent by any check
