"""VideoJob and the shared poller, end to end against the emulator (time moved by hand)."""

from __future__ import annotations

import asyncio
import gc
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from asyncclient import (
    AsyncClient,
    JobTimeoutError,
    VideoFailedError,
    VideoJob,
)
from asyncclient.emulator import Emulator
from asyncclient.models import Video, VideoDetail
from asyncclient.notebook import snapshot
from tests.conftest import connect

SCALE = 60.0


pytestmark = pytest.mark.emulator(seed=3)


@pytest_asyncio.fixture
async def client(emu: Emulator) -> AsyncIterator[AsyncClient]:
    async with connect(emu, credits=1_000_000) as c:
        yield c


async def talking(client: AsyncClient, emu: Emulator, **kw: Any) -> VideoJob:
    cat = emu.catalog
    return await client.projects.create_talking_avatar(
        script="Hello", avatar_id=cat.avatars[0], voice_id=cat.voices[0], **kw
    )


def api_requests(emu: Emulator, prefix: str) -> int:
    return sum(1 for r in emu.requests if r.path.startswith(prefix))


async def test_await_returns_the_completed_detail(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu, name="greeting")
    assert (job.status, job.done()) == ("STARTED", False)
    emu.advance(1000)
    video = await asyncio.wait_for(job, 5)
    assert isinstance(video, VideoDetail)
    assert (video.id, video.name, video.status) == (job.video_id, "greeting", "COMPLETED")
    assert job.done() and job.result() is video and job.progress == 100
    assert client.jobs.poller.watching == 0  # nobody waits: nothing is polled


async def test_failure_raises_with_the_services_message(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu)
    assert job.video_id is not None
    emu.fail_video(job.video_id, message="avatar rendering failed")
    with pytest.raises(VideoFailedError) as info:
        await asyncio.wait_for(job, 5)
    assert info.value.video_id == job.video_id
    assert info.value.message == "avatar rendering failed"
    assert job.status == "FAILED" and job.done()
    with pytest.raises(VideoFailedError):
        job.result()


async def test_timeout_carries_the_last_status(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu)
    emu.advance(30)  # a little progress, far from done
    with pytest.raises(JobTimeoutError) as info:
        await job.wait(timeout=0.3)
    err = info.value
    assert (err.video_id, err.status) == (job.video_id, "STARTED")
    assert err.progress is not None and 0 < err.progress < 100
    assert isinstance(err, TimeoutError)
    assert client.jobs.poller.watching == 0


async def test_cancelling_the_waiter_stops_polling_and_leaves_the_video(
    emu: Emulator, client: AsyncClient
) -> None:
    job = await talking(client, emu)
    task = asyncio.create_task(job.wait())
    await asyncio.sleep(0.05)
    assert client.jobs.poller.watching == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.jobs.poller.watching == 0
    await asyncio.sleep(0.1)  # the poller, if it still ran, would poll now
    polls = api_requests(emu, "/v1/video/")
    await asyncio.sleep(0.1)
    assert api_requests(emu, "/v1/video/") == polls
    emu.advance(1000)
    assert (await client.videos.get(job.video_id or "")).status == "COMPLETED"


@pytest.mark.parametrize("mid_read", [False, True], ids=["between-polls", "mid-read"])
async def test_cancelled_waits_leave_no_task_and_no_unretrieved_error(
    emu: Emulator, client: AsyncClient, mid_read: bool
) -> None:
    """Cancelling waits in any form (``wait()``, ``wait(timeout=)``, ``wait_for(job)``),
    between polls or while the poller's read is in flight, leaves no task behind and
    nothing for the loop to report; the jobs can be awaited again afterwards."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        jobs = [await talking(client, emu) for _ in range(3)]
        before = asyncio.all_tasks()
        if mid_read:
            emu.faults.add("GET /v1/video/list", "latency", latency=0.3, times=1)
        waits = [
            asyncio.create_task(jobs[0].wait()),
            asyncio.create_task(jobs[1].wait(timeout=30)),
            asyncio.create_task(asyncio.wait_for(jobs[2], 30)),
        ]
        if mid_read:
            for _ in range(200):  # until the slow read has reached the service
                if emu.counters.faults.get("latency"):
                    break
                await asyncio.sleep(0.005)
            assert emu.counters.faults.get("latency") == 1
        else:
            await asyncio.sleep(0.05)
        for wait in waits:
            wait.cancel()
        for wait in waits:
            with pytest.raises(asyncio.CancelledError):
                await wait
        await asyncio.sleep(0.4)  # past the slow read
        assert client.jobs.poller.watching == 0
        assert asyncio.all_tasks() - before - set(waits) == set()  # nothing left running
        del waits, wait
        gc.collect()
        await asyncio.sleep(0)
        assert reported == []  # no "Task exception was never retrieved", nothing else
        emu.advance(1000)
        done = await asyncio.wait_for(asyncio.gather(*jobs), 5)
        assert [v.status for v in done] == ["COMPLETED"] * 3
    finally:
        loop.set_exception_handler(handler)


async def test_updates_yield_each_change_once(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu)
    seen: list[tuple[str | None, int | None]] = []

    async def follow() -> None:
        async for update in job.updates():
            seen.append((update.status, update.progress))

    task = asyncio.create_task(follow())
    for step in range(1, 5):
        emu.advance(20)
        for _ in range(500):  # until the poller has seen this step's progress
            if len(seen) > step:
                break
            await asyncio.sleep(0.01)
    emu.advance(1000)
    await asyncio.wait_for(task, 5)
    assert seen[-1] == ("COMPLETED", 100)
    assert all(a != b for a, b in itertools.pairwise(seen))  # never the same update twice
    progress = [p for _, p in seen if p is not None]
    assert progress == sorted(progress) and len(progress) >= 3


async def test_jobs_rebuilt_from_stored_ids(emu: Emulator, client: AsyncClient) -> None:
    first = await talking(client, emu)
    template = await client.projects.create_from_template(
        template_id="tpl_thanks",
        title="For Bo",
        scenes=[_thanks_scene("Bo")],
    )
    emu.advance(1000)
    by_video = client.jobs.from_video_id(first.video_id or "")
    by_project = client.jobs.from_project_id(template.project_id or "")
    a, b = await asyncio.wait_for(asyncio.gather(by_video, by_project), 5)
    assert a.id == first.video_id
    assert b.project_id == template.project_id and b.name == "For Bo"
    assert by_project.video_ids == [b.id]


async def test_hook_demo_is_complete_at_once(emu: Emulator, client: AsyncClient) -> None:
    job = await client.projects.create_hook_demo(avatar_id=emu.catalog.avatars[0], text="Hey")
    assert job.status == "COMPLETED"
    video = await asyncio.wait_for(job, 5)  # one read of the detail, no waiting
    assert video.url


async def test_a_project_with_two_videos_is_done_when_both_are(emu: Emulator) -> None:
    client = AsyncClient("k", base_url=emu.url)
    job = client.jobs.from_project_id("p1")

    def video(vid: str, status: str, progress: int) -> dict[str, Any]:
        return {"id": vid, "status": status, "progress": progress, "projectId": "p1"}

    from asyncclient._convert import decode

    job.state.take_record(decode(video("a", "STARTED", 40), Video))
    job.state.take_record(decode(video("b", "STARTED", 10), Video))
    assert (job.video_ids, job.progress, job.status) == (["a", "b"], 10, "STARTED")
    job.state.take_detail(decode(video("a", "COMPLETED", 100), VideoDetail))
    assert not job.done() and job.status == "STARTED"
    job.state.take_detail(decode(video("b", "COMPLETED", 100), VideoDetail))
    assert job.done() and job.result().id == "a" and [v.id for v in job.videos] == ["a", "b"]
    await client.aclose()


def _thanks_scene(name: str) -> Any:
    from asyncclient import TemplateScene, TemplateVariable

    return TemplateScene(
        script="Thank you {{first_name}}",
        variables=[TemplateVariable(key="first_name", value=name)],
    )


async def test_closing_the_client_ends_the_waits(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu)
    waiting = asyncio.ensure_future(job.wait())
    await asyncio.sleep(0.05)
    await client.aclose()
    with pytest.raises(RuntimeError, match="client was closed"):
        await asyncio.wait_for(waiting, 5)


async def test_a_notebook_shows_progress_then_the_video(emu: Emulator, client: AsyncClient) -> None:
    job = await talking(client, emu)
    emu.advance(30)
    await job.refresh()
    shown = snapshot(job)["text/html"]
    assert f"{job.video_id}: STARTED" in shown and "<progress" in shown
    emu.advance(1000)
    video = await asyncio.wait_for(job, 5)
    shown = snapshot(job)["text/html"]
    assert "<video" in shown and "<progress" not in shown
    assert (video.url or "").split("?")[0] in shown


async def test_a_job_awaited_after_the_client_closed_fails_at_once(
    emu: Emulator, client: AsyncClient
) -> None:
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id=emu.catalog.avatars[0], voice_id=emu.catalog.voices[0]
    )
    await client.aclose()
    with pytest.raises(RuntimeError, match="the client is closed"):
        await asyncio.wait_for(job.wait(), 5)
    assert client.jobs.poller.stats.requests == 0 and client.jobs.poller.watching == 0
