"""Exact reconciliation: a lost creation is matched only to a project that came from it.

Issue "Money-safe, proven", items 1 and 5 of its "Why": a slow service made batches pay
twice ("not found twice, 2 s apart"), and a lost creation was matched to another
batch's video of the same name. Each test runs against the emulator over loopback and
judges by its records (projects per team, creation requests).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest

from asyncclient import AsyncClient, Plan, SystemClock, TalkingAvatarRequest, Timeouts
from asyncclient.emulator import Emulator
from tests.conftest import FAST_POLLING

CREATE = "POST /v1/project/create"


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Welcome {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


def posts(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path.startswith(CREATE[5:]))


def client_of(emu: Emulator, key: str, **options: Any) -> AsyncClient:
    rate = Plan.PREMIUM.rate_limit.scaled(emu.clock.time_scale)
    options.setdefault("polling", FAST_POLLING)
    return AsyncClient(key, base_url=emu.url, plan=rate, **options)


async def finish(emu: Emulator, batch: Any, step: float = 30.0) -> list[Any]:
    """Run the batch while moving the emulator's clock, so videos complete quickly."""
    task = asyncio.ensure_future(batch)
    while not task.done():
        await asyncio.sleep(0.02)
        emu.advance(step)
    return await task  # type: ignore[no-any-return]


@pytest.mark.heavy
async def test_a_slow_service_does_not_make_a_batch_pay_twice() -> None:
    """The service processes each creation 4 s after the client gave up on the reply
    (read timeout 0.5 s; two looks 2 s apart used to find nothing and send again): the
    batch finds the projects, and sends nothing again."""
    async with Emulator(time_scale=60.0, seed=5) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        emu.faults.add(CREATE, "latency", latency=4.0, times=3)
        timeouts = Timeouts(connect=1.0, read=0.5, total=1.0)
        async with client_of(emu, key, timeouts=timeouts) as client:
            batch = client.templates.generate_many("tpl_welcome", rows(3), spacing=0)
            # Nothing finishes before the late projects exist: no advance meanwhile.
            task = asyncio.ensure_future(batch)
            while emu.counters.projects.get(emu.team_id(key), 0) < 3 and not task.done():  # noqa: ASYNC110 (no event to wait on)
                await asyncio.sleep(0.05)
            results = await finish(emu, task)
    assert [r.status for r in results] == ["completed"] * 3
    assert emu.counters.projects[emu.team_id(key)] == 3  # paid once a row
    assert posts(emu) == 3  # and sent once a row
    assert len({r.video_id for r in results}) == 3


@pytest.mark.heavy
async def test_a_lost_creation_never_takes_another_batchs_video_of_the_same_name() -> None:
    """Two batches of the same titles, seconds apart; the second one's creations are all
    lost before reaching the service. Its rows are not matched to the first batch's
    videos (made before it sent, by the service's own clock): they are sent again once
    the settle window has passed, and get videos of their own."""
    async with Emulator(time_scale=1.0, seed=6, processing_seconds=1.0) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        async with client_of(emu, key) as client:
            first = await finish(emu, client.templates.generate_many("tpl_welcome", rows(3)), 0)
        assert emu.counters.projects[team] == 3
        await asyncio.sleep(3.0)  # the second batch, seconds later (real time: Date)
        emu.faults.add(CREATE, "drop_before", times=3)
        async with client_of(emu, key) as client:
            batch = client.templates.generate_many(
                "tpl_welcome", rows(3), spacing=0, settle_window=2.0
            )
            second = await finish(emu, batch, 0)
    assert [r.status for r in second] == ["completed"] * 3
    assert emu.counters.projects[team] == 6  # three videos of its own, none taken
    assert not {r.video_id for r in first} & {r.video_id for r in second}


async def test_one_project_satisfies_one_row_when_names_repeat() -> None:
    """Two rows of one batch share a name; the second's creation is lost before the
    service. The first row's project (same name, after the send) is claimed: the second
    row is sent again after the settle window and gets a project of its own."""
    async with Emulator(time_scale=60.0, seed=7) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        team = emu.team_id(key)
        avatar, voice = emu.catalog.avatars[0], emu.catalog.voices[0]
        same = [
            TalkingAvatarRequest(script=f"Hi {i}", avatar_id=avatar, voice_id=voice, name="Same")
            for i in range(2)
        ]
        emu.faults.add_schedule(CREATE, [None, "drop_before"])
        async with client_of(emu, key) as client:
            batch = client.batch(same, spacing=0, concurrency=1, settle_window=1.0)
            results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed", "completed"]
    assert emu.counters.projects[team] == 2
    assert results[0].project_id != results[1].project_id


class AnHourAhead(SystemClock):
    """Real time, but a wall clock an hour ahead of the service's."""

    def now(self) -> datetime:
        return super().now() + timedelta(hours=1)


async def test_a_clock_an_hour_off_the_services_still_finds_the_project() -> None:
    """The reply of each creation is lost after the project was made. The client's wall
    clock is an hour ahead: "made after the request left" is read on the service's clock
    (its Date), so the projects are found (they used to be left unresolved)."""
    async with Emulator(time_scale=60.0, seed=8) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        emu.faults.add(CREATE, "drop_after", times=2)
        async with client_of(emu, key, clock=AnHourAhead()) as client:
            batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0)
            results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed"] * 2
    assert emu.counters.projects[emu.team_id(key)] == 2 and posts(emu) == 2
