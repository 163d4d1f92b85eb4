"""``with_options``: a client with other timeouts or retries that shares everything else.

Against the emulator over loopback: a held reply times out on the derived client only;
the original keeps its options; closing the derived client leaves the original (its
session, its poller) working. The same on the synchronous client.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from asyncclient import AsyncClient, Client, RetryPolicy, ValidationError
from asyncclient.emulator import Emulator, EmulatorThread, serve_in_thread
from asyncclient.errors import APITimeoutError, InternalServerError
from asyncclient.http.transport import Timeouts
from tests.conftest import FAST_POLLING, connect

VIDEO = "GET /v1/video/*"
QUICK_RETRIES = RetryPolicy(base=0.001, cap=0.001)


async def a_video(client: AsyncClient) -> str:
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert job.video_id is not None
    return job.video_id


async def test_a_shorter_timeout_times_out_on_the_derived_client_only(emu: Emulator) -> None:
    async with connect(emu) as client:
        video_id = await a_video(client)
        quick = client.with_options(timeout=0.1, max_retries=0)
        emu.faults.add(VIDEO, "latency", latency=0.6, times=1)
        with pytest.raises(APITimeoutError) as caught:
            await quick.videos.get(video_id)
        assert caught.value.request_id is not None
        emu.faults.add(VIDEO, "latency", latency=0.6, times=1)
        video = await client.videos.get(video_id)  # the same hold: the original waits it out
        assert video.id == video_id
        assert client._caller.timeouts is None and client._caller.retry.attempts == 5


async def test_the_derived_client_shares_the_session_limiter_poller_and_counts(
    emu: Emulator,
) -> None:
    async with connect(emu) as client:
        derived = client.with_options(retry=RetryPolicy(attempts=2))
        assert derived is not client and isinstance(derived, AsyncClient)
        assert derived.limiter is client.limiter and derived.jobs is client.jobs
        assert derived.stats is client.stats and derived._transport is client._transport
        assert derived.projects is not client.projects  # it sends through the new options
        video_id = await a_video(derived)
        before = client.stats.requests
        await derived.videos.get(video_id)
        assert client.stats.requests == before + 1
        assert "with options" in repr(derived)


async def test_closing_the_derived_client_leaves_the_original_working(emu: Emulator) -> None:
    async with connect(emu) as client:
        video_id = await a_video(client)
        async with client.with_options(timeout=30) as derived:
            await derived.videos.get(video_id)
        await derived.aclose()  # again: still nothing closed
        assert not client._transport._closed
        assert (await client.videos.get(video_id)).id == video_id
        assert (await client.jobs.from_video_id(video_id).wait(timeout=60)).id == video_id


async def test_max_retries_zero_does_not_retry_where_the_original_does(emu: Emulator) -> None:
    async with connect(emu, retry=QUICK_RETRIES) as client:
        video_id = await a_video(client)
        once = client.with_options(max_retries=0)
        emu.faults.add(VIDEO, "status", status=503, times=1)
        with pytest.raises(InternalServerError):
            await once.videos.get(video_id)
        emu.faults.add(VIDEO, "status", status=503, times=1)
        assert (await client.videos.get(video_id)).id == video_id  # retried once


async def test_options_stack_and_timeouts_are_taken_whole(emu: Emulator) -> None:
    async with connect(emu) as client:
        first = client.with_options(max_retries=1)
        second = first.with_options(timeouts=Timeouts(connect=1.0, read=2.0, total=3.0))
        assert second._caller.retry.attempts == 2
        assert second._caller.timeouts == Timeouts(connect=1.0, read=2.0, total=3.0)
        assert first._caller.timeouts is None


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"timeout": 0}, "timeout: must be a number of seconds above 0"),
        ({"timeout": "5"}, "timeout: must be a number of seconds above 0"),
        ({"timeout": 1, "timeouts": Timeouts()}, "timeout: give timeout or timeouts"),
        ({"timeouts": 5}, "timeouts: must be a Timeouts"),
        ({"max_retries": -1}, "max_retries: must be an integer of 0 or more"),
        ({"max_retries": True}, "max_retries: must be an integer of 0 or more"),
    ],
)
async def test_a_bad_option_is_named(emu: Emulator, options: dict[str, object], named: str) -> None:
    async with connect(emu) as client:
        with pytest.raises(ValidationError) as caught:
            client.with_options(**options)  # type: ignore[arg-type]
    assert named in str(caught.value)


# -- the synchronous client -------------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[EmulatorThread]:
    with serve_in_thread(time_scale=600.0, seed=5) as emu:
        yield emu


def test_the_sync_client_with_options(served: EmulatorThread) -> None:
    key = served.add_team("premium", 1_000_000)
    catalog = served.emulator.catalog
    with Client(key, base_url=served.url, polling=FAST_POLLING) as client:
        job = client.projects.create_talking_avatar(
            script="Hi", avatar_id=catalog.avatars[0], voice_id=catalog.voices[0]
        )
        assert job.video_id is not None
        quick = client.with_options(timeout=0.1, max_retries=0)
        assert isinstance(quick, Client) and quick.limiter is client.limiter
        served.call(served.emulator.faults.add, VIDEO, "latency", latency=0.6, times=1)
        with pytest.raises(APITimeoutError):
            quick.videos.get(job.video_id)
        served.call(served.emulator.faults.add, VIDEO, "latency", latency=0.6, times=1)
        assert client.videos.get(job.video_id).id == job.video_id  # the original waits
        with quick:
            assert quick.videos.get(job.video_id).id == job.video_id
        assert not client.closed  # closing the derived client closed nothing
        assert client.videos.get(job.video_id).id == job.video_id
