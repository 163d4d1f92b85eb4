"""Every match proven on the service's clock, and "not found" never read as "nothing made".

Issue "Exact to the credit", points 1 and 2: a row cut off by a crash or a cancel kept
only our clock in its journal, so a resumed run matched it on our clock (less five
minutes): it took another batch's video of the same name, or, with our clock ahead of
the service's, found nothing and sent the row again. And a look for a lost creation
stopped after 20 pages of the list, which counted as "nothing made" once the settle
window had passed. Each test runs against the emulator over loopback and judges by its
records (projects, creation requests, the team's balance).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from asyncclient import (
    AmbiguousCreationError,
    AsyncClient,
    Plan,
    ReconciliationError,
    TalkingAvatarRequest,
)
from asyncclient.emulator import Emulator
from tests.conftest import FAST_POLLING
from tests.test_batch_reconcile import AnHourAhead, finish, rows

CREATE = "POST /v1/project/create"
TALKING = "POST /v1/project/create/talking-avatar"


def posts(emu: Emulator, path: str = "/v1/project/create") -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == path)


def client_of(emu: Emulator, key: str, **options: Any) -> AsyncClient:
    rate = Plan.PREMIUM.rate_limit.scaled(max(1.0, emu.clock.time_scale))
    options.setdefault("polling", FAST_POLLING)
    return AsyncClient(key, base_url=emu.url, plan=rate, **options)


def submit_lines(journal: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    return [line for line in lines if line.get("ev") == "submit"]


async def cut_off(batch: Any, until: Any) -> None:
    """Run ``batch`` until ``until()`` holds, then cancel it (a deploy, a Ctrl-C): the
    rows being settled keep their ``submit`` line as their last."""
    task = asyncio.ensure_future(batch)
    for _ in range(1000):
        if until() or task.done():
            break
        await asyncio.sleep(0.01)
    assert not task.done(), "the run ended before it could be cut off"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.heavy
async def test_a_resumed_row_with_the_clock_an_hour_ahead_is_found_not_paid_twice(
    tmp_path: Path,
) -> None:
    """Each creation is made and charged, its reply lost; the run is cancelled while it
    looks. The client's wall clock is an hour ahead of the service's. The resumed run
    reconciles the rows with the service time their ``submit`` lines carry: found, and
    never sent again (our clock, less five minutes, found nothing and resent them)."""
    journal = tmp_path / "ahead.jsonl"
    async with Emulator(time_scale=1.0, seed=21, processing_seconds=1.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        emu.faults.add(CREATE, "drop_after", times=3)
        async with client_of(emu, key, clock=AnHourAhead()) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, settle_window=2.0
            )
            await cut_off(batch, lambda: emu.counters.projects.get(team, 0) >= 3)
        lines = submit_lines(journal)
        assert len(lines) == 3 and all("svc" in line for line in lines)
        # The service's time, not ours: an hour apart.
        for line in lines:
            ours, theirs = datetime.fromisoformat(line["at"]), datetime.fromisoformat(line["svc"])
            assert ours - theirs > timedelta(minutes=55)
        await asyncio.sleep(2.5)  # past the settle window: a miss would be resent now
        async with client_of(emu, key, clock=AnHourAhead()) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, settle_window=2.0
            )
            results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed"] * 3
    assert emu.counters.projects[team] == 3 and posts(emu) == 3  # made once, sent once


@pytest.mark.heavy
async def test_resumed_rows_never_take_an_earlier_batchs_videos_of_the_same_name(
    tmp_path: Path,
) -> None:
    """Two batches of the same titles seconds apart; the second one's creations are all
    lost before the service, and its run is cancelled while it looks. Resumed, its rows
    are matched on the service's clock as they left: the first batch's videos (made
    before) are not theirs; they are sent again after the settle window and get videos
    of their own (matched on our clock less five minutes, they were reported completed
    with the first batch's videos)."""
    journal = tmp_path / "second.jsonl"
    async with Emulator(time_scale=1.0, seed=22, processing_seconds=1.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        async with client_of(emu, key) as client:
            first = await finish(emu, client.templates.generate_many("tpl_welcome", rows(3)), 0)
        assert emu.counters.projects[team] == 3
        await asyncio.sleep(2.0)  # seconds later, by the service's Date too
        emu.faults.add(CREATE, "drop_before", times=3)
        async with client_of(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, settle_window=600
            )
            await cut_off(batch, lambda: posts(emu) >= 6)
        async with client_of(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, journal=journal, settle_window=2.0
            )
            second = await finish(emu, batch, 0)
    assert [r.status for r in second] == ["completed"] * 3
    assert emu.counters.projects[team] == 6  # three of its own, none taken
    assert not {r.video_id for r in first} & {r.video_id for r in second}


def seed_newer(emu: Emulator, key: str, n: int) -> None:
    """``n`` template videos of the team, made after everything before (another
    process of the user's, or the rest of a big batch)."""
    emu.advance(1.0)
    team = emu.store.teams[emu.team_id(key)]
    body = {"templateId": "tpl_welcome", "title": "x"}
    for i in range(n):
        emu.store.create_project(team, "class", body, name=f"Other {i}", cost=0, form="B")


@pytest.mark.heavy
async def test_a_lost_creation_behind_2100_newer_videos_is_found_not_paid_twice(
    tmp_path: Path,
) -> None:
    """A row's creation is made and its reply lost; the run is cancelled; then 2,100
    newer template videos are made before the run resumes. The look reads back past
    them (22 pages) to the row's send time and finds its project: sent once (a look
    that stopped after 20 pages counted as "nothing made" and sent it again)."""
    journal = tmp_path / "deep.jsonl"
    async with Emulator(time_scale=1.0, seed=23, processing_seconds=1.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        emu.faults.add(CREATE, "drop_after", times=1)
        async with client_of(emu, key) as client:
            await client.templates.get("tpl_welcome")  # the service's clock is known
            emu.faults.add("GET /v1/video/list", "status", status=500, times=10_000)
            batch = client.templates.generate_many(
                "tpl_welcome", rows(1), spacing=0, journal=journal, settle_window=2.0
            )
            await cut_off(batch, lambda: emu.counters.projects.get(team, 0) >= 1)
        emu.faults.clear()
        assert [line["ev"] for line in submit_lines(journal)] == ["submit"]
        seed_newer(emu, key, 2100)
        await asyncio.sleep(2.5)  # past the settle window: a miss would be resent now
        async with client_of(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(1), spacing=0, journal=journal, settle_window=2.0
            )
            [result] = await finish(emu, batch)
    assert result.status == "completed"
    assert posts(emu) == 1 and len(emu.store.projects) == 2101
    assert emu.credits(key) == 10_000 - emu.store.costs["class"]  # charged once


async def test_reconcile_reads_back_to_the_send_time_and_a_page_cap_is_no_answer() -> None:
    """``projects.reconcile`` scans until the list passes the request's send time (2,100
    newer videos: found); given ``max_pages`` and stopped by it first, it raises
    ``ReconciliationError``, never answers None ("nothing made")."""
    async with Emulator(time_scale=1.0, seed=24) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        cat = emu.catalog
        emu.faults.add(TALKING, "drop_after", times=1)
        async with client_of(emu, key) as client:
            with pytest.raises(AmbiguousCreationError) as info:
                await client.projects.create_talking_avatar(
                    script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="Deep"
                )
            error = info.value
            assert error.service_sent_after is not None  # read before it left
            (project,) = emu.store.projects.values()
            for i in range(2100):  # newer talking avatars (their list type: all)
                emu.store.create_project(
                    emu.store.teams[emu.team_id(key)], "talking_avatar",
                    {"script": "x"}, name=f"Other {i}", cost=0, form="A",
                )  # fmt: skip
            found = await client.projects.reconcile(error)
            assert found is not None and found.project_id == project.id
            with pytest.raises(ReconciliationError) as capped:
                await client.projects.reconcile(error, max_pages=20)
    assert capped.value.reason == "page_cap" and capped.value.pages == 20
    assert posts(emu, TALKING[5:]) == 1


@pytest.mark.heavy
async def test_without_the_services_clock_a_lost_creation_stays_unresolved(
    tmp_path: Path,
) -> None:
    """The service never answered before the row left (the clock read and the creation
    both reset): nothing tells its clock at sending, so which project is the row's
    cannot be proven. The row is ``unresolved`` and says so, never resent, not matched
    on our clock; the journal's ``submit`` line carries no ``svc``, and a resumed run
    says the same without looking."""
    journal = tmp_path / "blind.jsonl"
    async with Emulator(time_scale=1.0, seed=25) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        cat = emu.catalog
        request = TalkingAvatarRequest(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="Blind"
        )
        emu.faults.add("GET /v1/video/list", "drop_before", times=1000)
        emu.faults.add(TALKING, "drop_after", times=1)
        async with client_of(emu, key) as client:
            [result] = await client.batch([request], journal=journal, settle_window=1.0)
        assert result.status == "unresolved"
        assert "cannot be proven" in (result.error or "")
        [line] = submit_lines(journal)
        assert "svc" not in line
        emu.faults.clear()
        async with client_of(emu, key) as client:
            [again] = await client.batch([request], journal=journal, settle_window=1.0)
    assert again.status == "unresolved" and "cannot be proven" in (again.error or "")
    assert posts(emu, TALKING[5:]) == 1 and len(emu.store.projects) == 1


async def test_a_look_again_reads_only_what_was_created_since_the_last_one() -> None:
    """A lost creation that made nothing, behind 2,100 newer videos: the first look reads
    back to its send time (21 pages); the next looks read only what was made since (one
    page, and the page that shows the list is past it), and one still finds a project of
    the name made late (a queued request)."""
    async with Emulator(time_scale=1.0, seed=26) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        team = emu.store.teams[emu.team_id(key)]
        cat = emu.catalog
        emu.faults.add(TALKING, "drop_before", times=1)
        async with client_of(emu, key) as client:
            with pytest.raises(AmbiguousCreationError) as info:
                await client.projects.create_talking_avatar(
                    script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="Late"
                )
            error = info.value

            def other(n: int) -> None:
                emu.advance(1.0)
                for i in range(n):
                    emu.store.create_project(
                        team, "talking_avatar", {"script": "x"}, name=f"Other {i}",
                        cost=0, form="A",
                    )  # fmt: skip

            def pages() -> int:
                return sum(1 for r in emu.requests if r.path == "/v1/video/list")

            other(2100)
            start = pages()
            assert await client.projects.reconcile(error) is None
            first = pages() - start
            other(50)
            start = pages()
            assert await client.projects.reconcile(error) is None
            second = pages() - start
            emu.advance(1.0)
            late = emu.store.create_project(
                team, "talking_avatar", {"script": "Hi"}, name="Late", cost=8, form="A"
            )
            other(30)
            start = pages()
            found = await client.projects.reconcile(error)
            third = pages() - start
    assert first == 21  # 2,100 newer videos, then the list ends
    # What was made since, and the first page wholly older than the last look's newest
    # (videos made in the same instant as that one are read again): a few pages, not 21.
    assert 2 <= second <= 3 and 2 <= third <= 3
    assert found is not None and found.project_id == late.id
