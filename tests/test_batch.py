"""Bulk generation against the emulator: checking, spacing, outcomes, budget, journal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from asyncclient import AsyncClient, BatchProgress, Plan, TalkingAvatarRequest
from asyncclient.emulator import Emulator

SCALE = 60.0
CREATE = "/v1/project/create"


def rows(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {
            "title": f"Welcome {i}",
            "first_name": f"Name{i}",
            "product": "Acme",
            "logo": "https://cdn.example/logo.png",
        }
        for i in range(start, start + n)
    ]


@pytest_asyncio.fixture
async def emu() -> AsyncIterator[Emulator]:
    async with Emulator(time_scale=SCALE, seed=5, processing_seconds=60) as emulator:
        yield emulator


@pytest_asyncio.fixture
async def client(emu: Emulator) -> AsyncIterator[AsyncClient]:
    key = emu.add_team(plan="premium", credits=100_000)
    async with AsyncClient(key, base_url=emu.url, plan=Plan.PREMIUM.rate_limit.scaled(SCALE)) as c:
        c.jobs.poller.min_interval = 0.02
        c.jobs.poller.max_interval = 0.05
        yield c


def creations(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)


async def finish(emu: Emulator, batch: Any) -> list[Any]:
    """Run the batch while moving the emulator's clock, so videos complete quickly."""
    task = asyncio.ensure_future(batch)
    while not task.done():
        await asyncio.sleep(0.02)
        emu.advance(30)
    return await task  # type: ignore[no-any-return]


async def test_bad_rows_are_rejected_before_any_credit_is_spent(
    emu: Emulator, client: AsyncClient
) -> None:
    data = rows(3)
    data.insert(1, {"title": "No name", "product": "Acme", "logo": ""})  # first_name missing
    data.append({"title": "Typo", "first_nam": "Al", "product": "A", "logo": ""})
    data.append(dict(data[0]))  # the same title twice
    batch = client.templates.generate_many("tpl_welcome", data, spacing=0)
    items = await batch.prepare()
    assert creations(emu) == 0  # checked, nothing sent
    bad = {i.index: i.problems for i in items if i.problems}
    assert set(bad) == {1, 4, 5}
    assert "scenes[0].script: missing value for variable 'first_name'" in bad[1]
    assert any(p.startswith("first_nam: not a variable of template tpl_welcome") for p in bad[4])
    assert any("also the title of row 0" in p for p in bad[5])
    results = await finish(emu, batch)
    assert [r.status for r in results] == [
        "completed", "rejected", "completed", "completed", "rejected", "rejected",
    ]  # fmt: skip
    assert creations(emu) == 3
    assert results[1].error and "first_name" in results[1].error
    assert results[0].video is not None and results[0].video.name == "Welcome 0"


async def test_failed_videos_do_not_abort_the_batch() -> None:
    async with Emulator(time_scale=SCALE, seed=11, failure_rate={"class": 0.5}) as emu:
        key = emu.add_team(plan="premium", credits=100_000)
        rate = Plan.PREMIUM.rate_limit.scaled(SCALE)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as client:
            client.jobs.poller.min_interval = 0.02
            batch = client.templates.generate_many("tpl_welcome", rows(12), spacing=0)
            results = await finish(emu, batch)
    statuses = [r.status for r in results]
    assert set(statuses) == {"completed", "failed"}
    failed = [r for r in results if r.status == "failed"]
    assert all(r.error and r.video_id for r in failed)
    assert [r.index for r in results] == list(range(12))


async def test_results_stream_as_they_finish_and_progress_is_reported(
    emu: Emulator, client: AsyncClient
) -> None:
    seen: list[BatchProgress] = []
    batch = client.templates.generate_many(
        "tpl_welcome", rows(5), spacing=0, on_progress=seen.append
    )
    streamed = []
    mover = asyncio.ensure_future(_move(emu))
    async for result in batch:
        streamed.append(result.index)
    mover.cancel()
    assert sorted(streamed) == list(range(5))
    # The poller found every outcome in list pages: not one GET per video.
    assert not [r for r in emu.requests if r.path.startswith("/v1/video/vid")]
    last = seen[-1]
    assert (last.total, last.submitted, last.completed) == (5, 5, 5)
    assert last.eta == 0.0 and last.finished == 5
    assert [p.completed for p in seen] == sorted(p.completed for p in seen)


async def _move(emu: Emulator) -> None:
    while True:
        await asyncio.sleep(0.02)
        emu.advance(30)


async def test_submissions_are_spaced(emu: Emulator, client: AsyncClient) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(4), spacing=1.0)
    now = [100.0]
    slept: list[float] = []

    async def fake_sleep(delay: float) -> None:
        slept.append(delay)
        now[0] += delay

    batch._monotonic = lambda: now[0]  # type: ignore[method-assign]
    batch._sleep = fake_sleep  # type: ignore[method-assign]
    await finish(emu, batch)
    # Four submissions, each at least one (virtual) second after the one before.
    assert slept == [1.0, 1.0, 1.0]


async def test_budget_stops_submitting(emu: Emulator, client: AsyncClient) -> None:
    # A template video costs 5 credits in the emulator.
    batch = client.templates.generate_many("tpl_welcome", rows(5), spacing=0, budget=12)
    results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed"] * 2 + ["skipped"] * 3
    assert creations(emu) == 2
    known = client.templates.generate_many(
        "tpl_welcome", rows(3, start=10), spacing=0, budget=5, cost_per_row=5
    )
    assert [r.status for r in await finish(emu, known)] == ["completed", "skipped", "skipped"]


async def test_a_general_batch_names_its_requests(emu: Emulator, client: AsyncClient) -> None:
    cat = emu.catalog
    reqs = [
        TalkingAvatarRequest(script=f"Hi {i}", avatar_id=cat.avatars[0], voice_id=cat.voices[0])
        for i in range(3)
    ]
    reqs.append(TalkingAvatarRequest(script="", avatar_id=cat.avatars[0], voice_id="v"))
    results = await finish(emu, client.batch(reqs, spacing=0))
    assert [r.status for r in results] == ["completed"] * 3 + ["rejected"]
    names = [r.video.name for r in results[:3] if r.video]
    assert len(set(names)) == 3 and all(n.startswith("batch-") for n in names)


async def test_an_interrupted_batch_resumes_without_duplicates(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "batch.jsonl"
    first = client.templates.generate_many("tpl_welcome", rows(8), spacing=1.0, journal=journal)
    now = [0.0]

    async def slow_spacing(delay: float) -> None:  # each spacing wait takes 20 ms here
        await asyncio.sleep(0.02)
        now[0] += delay

    first._monotonic = lambda: now[0]  # type: ignore[method-assign]
    first._sleep = slow_spacing  # type: ignore[method-assign]
    task = asyncio.ensure_future(first)
    while creations(emu) < 4:  # noqa: ASYNC110 (the emulator has no event to wait on)
        await asyncio.sleep(0.01)
    task.cancel()  # like Ctrl-C in the middle of the batch
    with pytest.raises(asyncio.CancelledError):
        await task
    sent = creations(emu)
    assert 4 <= sent < 8
    events = [json.loads(line)["ev"] for line in journal.read_text().splitlines()]
    assert events.count("submit") >= sent

    again = client.templates.generate_many("tpl_welcome", rows(8), spacing=0, journal=journal)
    results = await finish(emu, again)
    assert [r.status for r in results] == ["completed"] * 8
    assert creations(emu) == 8  # the rows sent before were awaited, not sent again
    assert len({r.video_id for r in results}) == 8


async def test_a_journal_of_other_rows_is_refused(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    await finish(emu, client.templates.generate_many("tpl_welcome", rows(2), journal=journal))
    changed = rows(2)
    changed[0]["first_name"] = "Other"
    with pytest.raises(ValueError, match="changed since the journal"):
        await client.templates.generate_many("tpl_welcome", changed, journal=journal)
    with pytest.raises(ValueError, match="another batch"):
        await client.templates.generate_many(
            "tpl_promo", [{"title": "x", "discount": "5%"}], journal=journal
        )


async def test_a_resumed_batch_counts_what_it_spent_before(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "budget.jsonl"
    first = client.templates.generate_many(
        "tpl_welcome", rows(4), spacing=0, budget=10, journal=journal
    )
    assert [r.status for r in await finish(emu, first)] == ["completed"] * 2 + ["skipped"] * 2
    again = client.templates.generate_many(
        "tpl_welcome", rows(4), spacing=0, budget=10, journal=journal
    )
    assert [r.status for r in await finish(emu, again)] == ["completed"] * 2 + ["skipped"] * 2
    assert creations(emu) == 2  # the first run's rows count against the same budget


async def test_leaving_the_loop_early_cancels_the_batch(emu: Emulator, client: AsyncClient) -> None:
    batch = client.templates.generate_many("tpl_welcome", rows(6), spacing=0.2)
    mover = asyncio.ensure_future(_move(emu))
    async for _ in batch:
        break
    mover.cancel()
    sent = creations(emu)
    await asyncio.sleep(0.5)  # a batch still running would send more by now
    assert creations(emu) == sent < 6
    assert batch._task is not None and batch._task.cancelled()


async def test_polling_leaves_submissions_their_share() -> None:
    scale = 600.0  # Free: 100 requests a real second, burst 20
    async with Emulator(time_scale=scale, seed=4, processing_seconds=600) as emu:
        key = emu.add_team(plan="free", credits=100_000)
        rate = Plan.FREE.rate_limit.scaled(scale)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as client:
            client.jobs.poller.min_interval = 0.0  # it would poll flat out if it could
            client.jobs.poller.max_interval = 0.0
            batch = client.templates.generate_many("tpl_welcome", rows(60), spacing=0)
            results = await batch
    assert [r.status for r in results] == ["completed"] * 60
    polls = sum(1 for r in emu.requests if r.path == "/v1/video/list")
    api = sum(1 for r in emu.requests if r.path.startswith("/v1/"))
    assert emu.counters.rate_limited == 0
    assert polls <= 0.55 * api  # at most about half of the plan's requests went to polling
    assert creations(emu) == 60
