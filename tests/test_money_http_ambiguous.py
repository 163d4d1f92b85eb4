"""Money first, over loopback to the emulator: a creation whose fate the reply leaves open
is an AmbiguousCreationError, sent once, never a rejection (issue "Money-safe, proven", 5).

A success that names no id, a proxy's 503 after the service made the project, and any
5xx (501 and 503 included) are ambiguous; only the service's own 429 is resent. GETs are
still retried on 503.
"""

from __future__ import annotations

import pytest

from asyncclient import AmbiguousCreationError, AsyncClient, RetryPolicy
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.emulator import Emulator
from asyncclient.errors import APIResponseValidationError, InternalServerError
from tests.conftest import connect

CREATE = "/v1/project/create/talking-avatar"


def no_wait(low: float, high: float) -> float:
    return 0.0  # retries at once: nothing here measures time


def posts(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)


async def create(emu: Emulator, client: AsyncClient, name: str = "ad-1") -> VideoJob:
    cat = emu.catalog
    return await client.projects.create_talking_avatar(
        script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name=name
    )


async def test_a_success_without_ids_is_ambiguous_and_its_project_is_found(
    emu: Emulator,
) -> None:
    key = emu.add_team(plan="premium", credits=1000)
    emu.faults.add(f"POST {CREATE}", "ok_without_ids", times=1)
    async with connect(emu, key) as client:
        with pytest.raises(AmbiguousCreationError) as info:
            await create(emu, client)
        error = info.value
        assert isinstance(error.cause, APIResponseValidationError)
        assert "names no usable project or video id" in str(error.cause)
        (project,) = emu.store.projects.values()  # made and charged, once
        assert emu.credits(key) < 1000 and posts(emu) == 1
        found = await client.projects.reconcile(error)  # the batch's way to settle it
    assert found is not None and found.project_id == project.id


@pytest.mark.parametrize(
    "rule",
    [{"kind": "proxy_503"}, {"kind": "status_after", "status": 503}],
    ids=["proxy-page", "service-envelope"],
)
async def test_a_503_after_the_project_was_made_is_not_resent(
    emu: Emulator, rule: dict[str, object]
) -> None:
    key = emu.add_team(plan="premium", credits=1000)
    emu.faults.add_schedule(f"POST {CREATE}", [rule])
    async with connect(emu, key, retry=RetryPolicy(random=no_wait)) as client:
        with pytest.raises(AmbiguousCreationError) as info:
            await create(emu, client)
    assert isinstance(info.value.cause, InternalServerError)
    assert info.value.cause.status_code == 503
    assert posts(emu) == 1 and len(emu.store.projects) == 1  # one project, never two


@pytest.mark.parametrize("status", [501, 503])
async def test_a_5xx_before_processing_is_not_resent_a_429_and_a_get_are(
    emu: Emulator, status: int
) -> None:
    key = emu.add_team(plan="premium", credits=1000)
    emu.faults.add(f"POST {CREATE}", "status", status=status, times=1)
    async with connect(emu, key, retry=RetryPolicy(random=no_wait)) as client:
        with pytest.raises(AmbiguousCreationError) as info:
            await create(emu, client)
        assert posts(emu) == 1 and emu.store.projects == {}
        # Nothing was made: reconciliation (not a guess) says so; then a resend is safe.
        assert await client.projects.reconcile(info.value) is None
        assert emu.credits(key) == 1000
        # The service's own limiter refused it: resent at once, made once.
        emu.faults.add(f"POST {CREATE}", "rate_burst", retry_after=0, times=1)
        job = await create(emu, client, name="ad-2")
        assert posts(emu) == 3 and list(emu.store.projects) == [job.project_id]
        # A read is still retried on 503.
        emu.faults.add("GET /v1/integration/list", "status", status=503, times=2)
        await client.integrations.list()
    gets = [r.status for r in emu.requests if r.path == "/v1/integration/list"]
    assert gets == [503, 503, 200]
