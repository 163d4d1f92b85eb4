"""The synchronous client (issue "A synchronous client"): every namespace against the
emulator over loopback, run in a thread of its own; threads sharing one client; a call
from inside a running event loop's thread; nothing left running after ``close()``."""

from __future__ import annotations

import asyncio
import csv
import inspect
import io
import json
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from asyncclient import (
    AsyncClient,
    AuthenticationError,
    Client,
    NotFoundError,
    PlatformData,
    PollPolicy,
    RowOutcome,
    SyncBatch,
    SyncVideoJob,
    ValidationError,
    VideoFailedError,
)
from asyncclient.awaiting.jobs import Jobs
from asyncclient.emulator import EmulatorThread, serve_in_thread
from asyncclient.resources.integrations import Integrations
from asyncclient.resources.projects import Projects
from asyncclient.resources.schedule import Schedule
from asyncclient.resources.social import Social
from asyncclient.resources.templates import Templates
from asyncclient.resources.videos import Videos
from asyncclient.sync import faces
from asyncclient.webhooks import ClientWebhooks

FAST = PollPolicy(min_interval=0.01, max_interval=0.05)


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    with serve_in_thread(time_scale=600.0, seed=5) as served:
        yield served


@pytest.fixture
def client(emu: EmulatorThread) -> Iterator[Client]:
    key = emu.add_team("premium", 1_000_000)
    with Client(key, base_url=emu.url, polling=FAST) as made:
        yield made


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("asyncclient-")]


def talking(client: Client, emu: EmulatorThread, **options: object) -> SyncVideoJob:
    catalog = emu.emulator.catalog
    return client.projects.create_talking_avatar(
        script="Hello there", avatar_id=catalog.avatars[0], voice_id=catalog.voices[0], **options
    )


# -- every namespace ------------------------------------------------------------------------


def test_a_creation_returns_a_job_waited_for_without_await(
    client: Client, emu: EmulatorThread
) -> None:
    job = talking(client, emu, name="greeting")
    assert isinstance(job, SyncVideoJob) and job.project_id
    detail = job.wait(timeout=30)
    assert detail.status == "COMPLETED" and job.done() and job.result() == detail
    assert client.videos.get(detail.id).id == detail.id
    assert job.read().id == detail.id


def test_updates_are_a_plain_iterator(client: Client, emu: EmulatorThread) -> None:
    job = talking(client, emu)
    seen = [update.status for update in job.updates()]
    assert seen and seen[-1] == "COMPLETED" and job.done()


def test_lists_are_plain_iterators_and_pages_are_read_as_they_go(
    client: Client, emu: EmulatorThread
) -> None:
    catalog = emu.emulator.catalog
    for i in range(12):
        client.projects.create_hook_demo(
            avatar_id=catalog.avatars[0], text=f"hook {i}", name=f"h{i}"
        )
    names = [video.name for video in client.videos.list(type="hook_demo", page_size=5)]
    assert sorted(names) == sorted(f"h{i}" for i in range(12))
    pages = list(client.videos.list(type="hook_demo", page_size=5).pages())
    assert [len(page.items) for page in pages] == [5, 5, 2]
    assert len(client.videos.list(type="hook_demo").collect()) == 12
    page = client.videos.list_page(type="hook_demo", limit=10, offset=10)
    assert (page.total, len(page.items)) == (12, 2)
    iterator = iter(client.videos.list(type="hook_demo", page_size=5))
    next(iterator)
    del iterator  # left early: its async iterator is closed, nothing is left pending


def test_a_video_downloads_to_disk(client: Client, emu: EmulatorThread, tmp_path: Path) -> None:
    detail = talking(client, emu).wait(timeout=30)
    done: list[int] = []
    path = client.videos.download(detail, tmp_path / "out/", progress=lambda n, _: done.append(n))
    assert path.exists() and path.stat().st_size == detail.size and done


def test_templates_and_a_template_batch_waited_for(client: Client) -> None:
    assert "tpl_welcome" in {template.id for template in client.templates.list()}
    assert client.templates.get("tpl_welcome").id == "tpl_welcome"
    assert client.templates.list_page().total >= 1
    logo = "https://example.com/logo.png"
    rows = [
        {"title": f"For {name}", "first_name": name, "product": "Tea", "logo": logo}
        for name in ("Ann", "Bo", "Cy")
    ]
    batch = client.templates.generate_many("tpl_welcome", rows, spacing=0)
    assert isinstance(batch, SyncBatch)
    results = batch.wait()
    assert [r.status for r in results] == [RowOutcome.COMPLETED] * 3
    report = batch.report()
    assert report.outcomes[RowOutcome.COMPLETED] == 3 and batch.phase == "done"
    assert report.accepted == 3 and batch.results == results


def test_a_batch_is_iterated_as_rows_finish(client: Client, emu: EmulatorThread) -> None:
    from asyncclient.models import HookDemoRequest

    catalog = emu.emulator.catalog
    requests = (
        HookDemoRequest(avatar_id=catalog.avatars[0], text=f"row {i}", name=f"row-{i}")
        for i in range(5)
    )
    batch = client.batch(requests, spacing=0, concurrency=2)
    finished = [result.index for result in batch]
    assert sorted(finished) == [0, 1, 2, 3, 4]
    assert batch.progress.completed == 5


def test_a_template_batch_from_a_csv_file_checks_its_rows_first(client: Client) -> None:
    text = "title,first_name,product,logo\nFor Ann,Ann,Tea,https://example.com/l.png\n,Bo,,\n"
    batch = client.templates.generate_many("tpl_welcome", list(csv.DictReader(io.StringIO(text))))
    checked = batch.check()
    assert (checked.rows, checked.rejected) == (2, 1)


def test_schedule_social_integrations_and_any_endpoint(client: Client, emu: EmulatorThread) -> None:
    job = client.projects.create_hook_demo(avatar_id=emu.emulator.catalog.avatars[0], text="Go")
    assert job.video_id is not None
    videosite = next(i for i in client.integrations.list() if i.type == "videosite")
    when = datetime.now(timezone.utc) + timedelta(hours=2)
    post = client.schedule.create(job.video_id, videosite.id, when, PlatformData(title="Launch"))
    assert post.status == "pending"
    assert [p.id for p in client.schedule.list()] == [post.schedule_id]
    assert client.schedule.list_page().total == 1
    account = emu.emulator.catalog.accounts["clipsite"][0]
    assert client.social.analyze_account("@" + account, "clipsite").username == account
    created = client.social.create_search("home workout", "clipsite", limit=7)
    assert client.social.get_search(created.search.id).id == created.search.id
    assert len(list(client.social.search_videos(created.search.id, page_size=3))) == 7
    assert len(client.social.niche_videos_page("fitness", limit=2).items) == 2
    assert len(list(client.social.niche_videos("fitness", page_size=50))) >= 2
    assert len(client.request("GET", "/v1/integration/list")["integrations"]) == 3


def test_jobs_are_rebuilt_from_stored_ids(client: Client, emu: EmulatorThread) -> None:
    made = talking(client, emu)
    assert made.video_id is not None and made.project_id is not None
    by_video = client.jobs.from_video_id(made.video_id)
    by_project = client.jobs.from_project_id(made.project_id)
    assert by_video.wait(timeout=30).id == by_project.wait(timeout=30).id == made.video_id
    assert client.jobs.poller is client.async_client.jobs.poller


def test_the_same_typed_errors(client: Client, emu: EmulatorThread) -> None:
    with pytest.raises(NotFoundError):
        client.videos.get("vid_doesnotexist")
    with pytest.raises(ValidationError, match="script"):
        client.projects.create_talking_avatar(script="", avatar_id="a", voice_id="v")
    job = talking(client, emu)
    assert job.video_id is not None
    emu.call(emu.emulator.fail_video, job.video_id, "no luck")
    with pytest.raises(VideoFailedError):
        job.wait(timeout=30)
    with Client("emu_wrong", base_url=emu.url) as stranger, pytest.raises(AuthenticationError):
        stranger.integrations.list()
    with pytest.raises(ValueError, match="no API key"):
        Client("", base_url=emu.url)


@pytest.mark.parametrize("blank", [" ", "\t", " \n "], ids=repr)
def test_a_blank_key_is_refused_like_an_empty_one_before_a_thread_starts(
    monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    threads = threading.active_count()
    with pytest.raises(ValueError, match=r"^no API key: api_key is blank; pass api_key="):
        Client(blank, base_url="http://127.0.0.1:9")
    monkeypatch.setenv("ASYNCCLIENT_API_KEY", blank)
    with pytest.raises(ValueError, match=r"^no API key: ASYNCCLIENT_API_KEY is blank; pass"):
        Client(base_url="http://127.0.0.1:9")
    assert threading.active_count() == threads


def test_the_webhook_receiver_answers_a_synchronous_view(emu: EmulatorThread) -> None:
    key = emu.add_team("premium", 10_000)
    hook = "https://127.0.0.1:9/video-hook"  # loopback: the emulator's deliveries are refused
    with Client(key, base_url=emu.url, webhook_url=hook, polling=FAST) as client:
        token = client.webhooks.url.split("token=")[1] if client.webhooks.url else ""
        seen: list[str | None] = []
        client.webhooks.on_event(lambda event: seen.append(event.video_id))
        job = talking(client, emu)
        detail = job.wait(timeout=30)
        data = {"videoId": detail.id, "status": "COMPLETED", "url": detail.url}
        body = json.dumps({"status": "COMPLETED", "data": data, "message": "done"}).encode()
        assert client.webhooks.respond(body, query={}).status == 401
        assert client.webhooks.respond(body, query={"token": ["wrong"]}).status == 403
        reply = client.webhooks.respond(body, query={"token": [token]}, headers={})
        assert (reply.status, reply.content_type) == (200, "application/json")
        assert seen == [detail.id]
        assert client.webhooks.respond(body, query={"token": token}).status == 200  # a copy
        assert client.webhooks.receiver.duplicates == 1
        assert client.webhooks.respond(b"{}", query={"token": token}).status == 400


# -- the face is the async one's ------------------------------------------------------------

FACES = [
    (Videos, faces.SyncVideos),
    (Projects, faces.SyncProjects),
    (Templates, faces.SyncTemplates),
    (Integrations, faces.SyncIntegrations),
    (Schedule, faces.SyncSchedule),
    (Social, faces.SyncSocial),
    (Jobs, faces.SyncJobs),
    (ClientWebhooks, faces.SyncWebhooks),
]
NOT_IN_THE_SYNC_FACE = {
    (ClientWebhooks, "handle"): "an aiohttp handler: the sync face has respond()",
    (ClientWebhooks, "app"): "an aiohttp application: the sync face has respond()",
}


@pytest.mark.parametrize(("async_class", "face"), FACES, ids=[f.__name__ for _, f in FACES])
def test_every_public_method_of_an_async_namespace_has_its_twin(
    async_class: type, face: type
) -> None:
    for name, member in inspect.getmembers(async_class):
        if name.startswith("_") or not callable(member) or inspect.isclass(member):
            continue
        if (async_class, name) in NOT_IN_THE_SYNC_FACE:
            continue
        assert hasattr(face, name), f"{face.__name__} lacks {name}"


def test_help_shows_the_async_method_s_text_and_arguments(client: Client) -> None:
    method = client.projects.create_talking_avatar
    assert method.__doc__ == Projects.create_talking_avatar.__doc__
    signature = inspect.signature(method)
    assert "self" not in signature.parameters and "script" in signature.parameters
    assert signature.return_annotation == "SyncVideoJob"
    assert method.__qualname__ == "SyncProjects.create_talking_avatar"


# -- threads, loops and closing --------------------------------------------------------------


def test_eight_threads_share_one_client(client: Client, emu: EmulatorThread) -> None:
    job = talking(client, emu)
    video_id = job.wait(timeout=30).id
    errors: list[BaseException] = []
    got: list[str] = []

    def work() -> None:
        try:
            for _ in range(20):
                got.append(client.videos.get(video_id).id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and got == [video_id] * 160
    assert len(loop_threads()) == 1  # one loop for all of them


def test_a_call_from_inside_a_running_event_loop_s_thread(
    client: Client, emu: EmulatorThread
) -> None:
    """A notebook cell or an async framework's thread: its loop runs; the call blocks it
    for the call's time and never re-enters it."""

    async def inside() -> str:
        asyncio.get_running_loop()  # a loop runs in this thread
        return talking(client, emu).wait(timeout=30).status or ""

    assert asyncio.run(inside()) == "COMPLETED"


def test_calling_the_sync_client_from_its_own_loop_says_why_it_cannot(
    client: Client, emu: EmulatorThread
) -> None:
    outcome: list[BaseException] = []

    def callback(update: object) -> None:
        try:
            client.integrations.list()
        except RuntimeError as exc:
            outcome.append(exc)

    catalog = emu.emulator.catalog
    from asyncclient.models import HookDemoRequest

    requests = [HookDemoRequest(avatar_id=catalog.avatars[0], text="x", name="cb")]
    client.batch(requests, spacing=0, on_progress=callback).wait()
    assert outcome and "own event loop" in str(outcome[0])


def test_close_leaves_no_thread_and_no_session(emu: EmulatorThread) -> None:
    key = emu.add_team("premium", 10_000)
    before = len(loop_threads())
    client = Client(key, base_url=emu.url, polling=FAST)
    assert len(loop_threads()) == before  # started lazily, on the first call
    client.integrations.list()
    assert len(loop_threads()) == before + 1
    session = client.async_client._transport._session
    client.close()
    client.close()  # again: nothing
    assert len(loop_threads()) == before and client.closed
    assert session is not None and session.closed
    with pytest.raises(RuntimeError, match="closed"):
        client.integrations.list()


def test_close_fails_a_job_still_waited_for_in_another_thread(
    emu: EmulatorThread,
) -> None:
    key = emu.add_team("premium", 10_000)
    client = Client(key, base_url=emu.url, polling=PollPolicy(min_interval=60, max_interval=60))
    catalog = emu.emulator.catalog
    job = client.projects.create_talking_avatar(
        script="slow", avatar_id=catalog.avatars[0], voice_id=catalog.voices[0]
    )
    caught: list[BaseException] = []
    waiter = threading.Thread(target=lambda: _wait_into(job, caught))
    waiter.start()
    while not client.async_client.jobs.poller.watching:
        threading.Event().wait(0.01)
    client.close()
    waiter.join(10)
    assert not waiter.is_alive() and caught and isinstance(caught[0], RuntimeError)


def _wait_into(job: SyncVideoJob, caught: list[BaseException]) -> None:
    try:
        job.wait(timeout=30)
    except BaseException as exc:
        caught.append(exc)


def test_the_async_client_behind_it_is_the_one_that_runs(client: Client) -> None:
    assert isinstance(client.async_client, AsyncClient)
    assert client.base_url == client.async_client.base_url
    assert repr(client).startswith("<Client http://127.0.0.1:")


def test_an_iteration_left_early_closes_its_async_iterator_in_the_loop() -> None:
    """``break`` out of a sync iteration: the async generator behind it is closed (its
    ``finally`` runs) at once, in the loop, not left to the garbage collector."""
    from asyncclient.sync._loop import LoopThread

    closed: list[bool] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            for n in range(10):
                yield n
        finally:
            closed.append(True)

    loop = LoopThread("test-iterate")
    try:
        for n in loop.iterate(numbers):
            if n == 2:
                break
        assert closed == [True]
    finally:
        loop.close()
