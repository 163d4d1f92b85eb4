"""How jobs and batches show themselves: the renderers (pure, without IPython) and the
live display's logic, driven through a fake IPython ``display`` (tests/test_notebook_kernel.py
runs the real thing in a kernel)."""

from __future__ import annotations

import asyncio
import contextvars
import html
import itertools
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

import asyncclient.notebook as notebook
from asyncclient import AsyncClient, VideoFailedError, VideoJob
from asyncclient._states import BatchPhase, RowOutcome
from asyncclient.awaiting.state import JobState
from asyncclient.batch.rows import BatchProgress, RowResult
from asyncclient.emulator import Emulator
from asyncclient.models import Video, VideoDetail
from asyncclient.notebook import display as shown
from asyncclient.notebook import live
from tests.virtual_time import VirtualTime

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)

URL = "https://cdn.example/v1.mp4?sig=a&expires=1"
THUMB = "https://cdn.example/v1.jpg"


def state(progress: int | None = None, **record: Any) -> JobState:
    """A job's state after one read of video ``v1`` (none when ``progress`` is None)."""
    job = JobState(project_id="p1", video_id="v1", status="STARTED")
    if progress is not None or record:
        fields = {"id": "v1", "status": "STARTED", "progress": progress, **record}
        if fields["status"] == "STARTED":
            job.take_record(Video(**fields))
        else:
            job.take_detail(VideoDetail(**fields))
    return job


def completed(**record: Any) -> JobState:
    fields = {"status": "COMPLETED", "url": URL, "thumbnail": THUMB, "name": "For Ann"}
    return state(100, **{**fields, "duration_in_seconds": 12.0, **record})


def text_of(markup: str) -> str:
    """What a reader sees of some HTML: the text, unescaped."""
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


# -- a job --------------------------------------------------------------------------------


def test_before_the_first_read_progress_is_unknown_in_text_and_html_alike() -> None:
    job = state()
    assert shown.job_text(job) == "<VideoJob video=v1 project=p1 status=STARTED progress=?>"
    markup = shown.job_html(job)
    assert '<progress max="100"></progress> ?' in markup  # indeterminate, not 0%
    assert "0%" not in markup and "None" not in markup


def test_a_running_job_shows_its_progress() -> None:
    job = state(40)
    assert shown.job_text(job).endswith("status=STARTED progress=40%>")
    assert '<progress max="100" value="40"></progress> 40%' in shown.job_html(job)


CASES = {
    "unread": state(),
    "running": state(40),
    "completed": completed(),
    "failed": state(40, status="FAILED", message="renderer crashed"),
    "template": JobState(project_id="p9", status="processing"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_and_html_show_the_same_values(name: str) -> None:
    job = CASES[name]
    text, markup = shown.job_text(job), shown.job_html(job)
    for key, value in shown.job_fields(job):
        assert (f"{key}={value!r}" if key in ("name", "message") else f"{key}={value}") in text
        assert value in text_of(markup), (key, value, markup)
    assert shown.job_bundle(job) == {"text/plain": text, "text/html": markup}


def test_a_template_job_without_a_video_yet_names_its_project() -> None:
    job = CASES["template"]
    assert shown.job_text(job) == "<VideoJob video=? project=p9 status=STARTED progress=?>"
    assert "project p9: STARTED" in shown.job_html(job)


def test_a_completed_job_is_a_player() -> None:
    markup = shown.job_html(completed())
    video = re.search(r"<video [^>]*>", markup)
    assert video is not None
    assert f'src="{html.escape(URL)}"' in video[0] and f'poster="{THUMB}"' in video[0]
    assert "controls" in video[0]
    assert "For Ann · 12.0s" in text_of(markup) and "COMPLETED" in markup
    assert f'<a href="{html.escape(URL)}" target="_blank">' in markup
    assert "<progress" not in markup
    text = shown.job_text(completed())
    assert text.endswith("status=COMPLETED progress=100% name='For Ann' duration=12.0s>")


def test_a_duration_is_read_from_frames_when_the_list_gave_no_seconds() -> None:
    job = completed(duration_in_seconds=None, duration_in_frames=250)
    assert "duration=10.0s" in shown.job_text(job)


def test_a_failed_job_shows_the_services_message() -> None:
    job = CASES["failed"]
    assert isinstance(job.error, VideoFailedError)
    assert shown.job_text(job).endswith("status=FAILED progress=40% message='renderer crashed'>")
    markup = shown.job_html(job)
    assert "renderer crashed" in markup and "<video" not in markup
    assert "video v1 failed" not in markup  # the message, not the exception's sentence


def test_names_messages_and_urls_are_escaped() -> None:
    evil = '<script>alert("x")</script>'
    markup = shown.job_html(completed(name=evil, url=URL + '"><b>x'))
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert '"><b>x' not in markup
    failed = shown.job_html(state(1, status="FAILED", message=evil))
    assert "<script>" not in failed and "&lt;script&gt;alert(&quot;x&quot;)" in failed
    assert shown.job_text(state(1, status="FAILED", message=evil)).endswith(f"message={evil!r}>")


def test_only_http_urls_become_links_or_sources() -> None:
    markup = shown.job_html(completed(url="javascript:alert(1)", thumbnail="data:x"))
    assert "<video" not in markup and "href" not in markup and "javascript" not in markup
    assert "poster" not in markup


async def test_a_job_renders_itself_with_the_same_renderers(client: AsyncClient) -> None:
    job = client.jobs.from_video_id("v1", project_id="p1")
    bundle = shown.job_bundle(job.state)
    assert repr(job) == bundle["text/plain"] and notebook._job_html(job) == bundle["text/html"]
    assert notebook.snapshot(job) == bundle
    assert live.showing(job) is None  # none unless displayed live


def test_rendering_never_imports_ipython_and_importing_renders_nothing() -> None:
    code = (
        "import sys, asyncclient\n"
        "assert not any(m.startswith('asyncclient.notebook.display') for m in sys.modules)\n"
        "from asyncclient.awaiting.state import JobState\n"
        "from asyncclient.notebook.display import job_bundle\n"
        "job_bundle(JobState(project_id='p', video_id='v'))\n"
        "assert 'IPython' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- a batch ------------------------------------------------------------------------------


class FakeBatch:
    """What a batch's display reads, set by hand (the phase and error as a batch whose
    run is ``task`` would name them)."""

    def __init__(self, results: list[RowResult], *, task: Any = None, total: int = 0) -> None:
        self._task = task
        self.results = results
        counts = {o: sum(r.status is o for r in results) for o in RowOutcome}
        self.progress = BatchProgress(
            total=total,
            submitted=counts[RowOutcome.COMPLETED] + counts[RowOutcome.FAILED],
            completed=counts[RowOutcome.COMPLETED],
            failed=counts[RowOutcome.FAILED],
            rejected=counts[RowOutcome.REJECTED],
            skipped=counts[RowOutcome.SKIPPED],
            elapsed=30.0,
        )

    @property
    def phase(self) -> BatchPhase:
        task = self._task
        if task is None:
            return BatchPhase.NOT_STARTED
        if not task.done():
            return BatchPhase.AWAITING
        if task.cancelled():
            return BatchPhase.CANCELLED
        return BatchPhase.DONE if task.exception() is None else BatchPhase.FAILED

    @property
    def error(self) -> BaseException | None:
        task = self._task
        done = task is not None and task.done() and not task.cancelled()
        return task.exception() if done else None


def row(index: int, status: str, error: str | None = None, **video: Any) -> RowResult:
    detail = VideoDetail(id=f"v{index}", status=video.pop("vstatus", "COMPLETED"), **video)
    outcome = RowOutcome(status)
    with_video = outcome in (RowOutcome.COMPLETED, RowOutcome.FAILED)
    return RowResult(
        index=index,
        status=outcome,
        video=detail if with_video else None,
        error=error,
        video_id=detail.id if with_video else None,
    )


def ended(result: Any = None) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    future.set_result(result)
    return future


def test_a_batch_not_started_says_so() -> None:
    batch = FakeBatch([])
    assert shown.batch_text(batch) == (
        "<Batch not started: finished=0/? completed=0 failed=0 rejected=0 submitted=0>"
    )
    assert "<table" not in shown.batch_html(batch)


async def test_a_running_batch_shows_a_progress_summary() -> None:
    running = asyncio.get_running_loop().create_future()
    batch = FakeBatch([row(0, "completed", url=URL), row(1, "rejected", "bad")], task=running,
                      total=4)  # fmt: skip
    text, markup = shown.batch_text(batch), shown.batch_html(batch)
    assert text == (
        "<Batch running: finished=2/4 completed=1 failed=0 rejected=1 submitted=1 "
        "rate=2.0/min eta=1m00s>"
    )
    assert '<progress max="4" value="2"></progress>' in markup and "<table" not in markup
    assert shown.batch_bundle(batch)["text/plain"] == text  # no rows either
    for _, value in shown.batch_fields(batch):
        assert value in text_of(markup)
    running.cancel()


async def test_an_ended_batch_is_a_table_of_its_rows() -> None:
    rows = [
        row(0, "completed", url=URL, name="For Ann", duration_in_seconds=8.0),
        row(1, "failed", vstatus="FAILED", message="renderer <crashed>"),
        row(2, "rejected", "first_nam: not a variable"),
        row(3, "skipped", "credit budget reached"),
    ]
    batch = FakeBatch(rows, task=ended(), total=4)
    markup = shown.batch_html(batch)
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", markup)
    assert [(i, o) for i, o, _ in cells] == [
        ("0", "completed"), ("1", "failed"), ("2", "rejected"), ("3", "skipped"),
    ]  # fmt: skip
    assert cells[0][2] == f'<a href="{html.escape(URL)}" target="_blank">v0</a>'
    assert cells[1][2] == "v1"  # no URL, no link
    assert "renderer &lt;crashed&gt;" in markup and "For Ann" in markup and "8.0s" in markup
    text = shown.batch_text(batch, rows=True).splitlines()
    assert text[0] == (
        "<Batch done: finished=4/4 completed=1 failed=1 rejected=1 skipped=1 submitted=2>"
    )
    assert text[1:] == [
        "  #0  completed  v0  'For Ann'  8.0s",
        "  #1  failed  v1  'renderer <crashed>'",
        "  #2  rejected  'first_nam: not a variable'",
        "  #3  skipped  'credit budget reached'",
    ]


async def test_a_batch_stopped_by_an_error_says_which() -> None:
    failed = asyncio.get_running_loop().create_future()
    failed.set_exception(RuntimeError("journal <damaged>"))
    batch = FakeBatch([row(0, "completed", url=URL)], task=failed, total=3)
    assert shown.batch_text(batch).startswith("<Batch stopped: finished=1/3")
    assert "error='journal <damaged>'" in shown.batch_text(batch)
    assert "journal &lt;damaged&gt;" in shown.batch_html(batch)


async def test_a_long_table_keeps_the_rows_that_did_not_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shown, "MAX_ROWS", 3)
    rows = [row(i, "completed", url=URL) for i in range(6)]
    rows[4] = row(4, "rejected", "no")
    markup = shown.batch_html(FakeBatch(rows, task=ended(), total=6))
    assert re.findall(r"<tr><td>(\d+)</td>", markup) == ["0", "1", "4"]
    assert "3 more rows (batch.results has them all)" in markup


# -- live, through a fake IPython -------------------------------------------------------------


CELL: contextvars.ContextVar[str] = contextvars.ContextVar("cell")


class FakeIPython:
    """Records what would be displayed, and in which cell's context each update ran."""

    def __init__(self) -> None:
        self.shown: list[tuple[str | None, dict[str, str]]] = []
        self.updates: list[tuple[str, dict[str, str], float, str | None]] = []
        self.fail_updates = False

    def display(self, bundle: dict[str, str], *, raw: bool, display_id: Any = None) -> Any:
        assert raw
        name = f"d{len(self.shown)}" if display_id is True else display_id
        self.shown.append((name, bundle))
        return None if name is None else FakeHandle(self, name)

    def html_updates(self) -> list[str]:
        return [bundle["text/html"] for _, bundle, _, _ in self.updates]


class FakeHandle:
    def __init__(self, ipython: FakeIPython, name: str) -> None:
        self.ipython, self.name = ipython, name

    def display(self, bundle: dict[str, str], *, raw: bool) -> None:
        self.ipython.display(bundle, raw=raw, display_id=self.name)

    def update(self, bundle: dict[str, str], *, raw: bool) -> None:
        if self.ipython.fail_updates:
            raise OSError("the frontend went away")
        when = asyncio.get_running_loop().time()
        self.ipython.updates.append((self.name, bundle, when, CELL.get(None)))


@pytest.fixture
def ipython(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeIPython]:
    fake = FakeIPython()
    monkeypatch.setattr(live, "_frontend", lambda: (fake.display, True))
    monkeypatch.setattr(live, "MIN_INTERVAL", 0.1)
    yield fake
    assert not live._FOLLOWERS  # every follower ended


@pytest.fixture
async def moving(emu: Emulator) -> AsyncIterator[None]:
    """The service's clock runs on, one second more every 20 ms."""

    async def move() -> None:
        while True:
            await asyncio.sleep(0.02)
            emu.advance(1)

    mover = asyncio.ensure_future(move())
    yield
    mover.cancel()
    await asyncio.wait({mover})


async def talking(client: AsyncClient, emu: Emulator) -> VideoJob:
    cat = emu.catalog
    return await client.projects.create_talking_avatar(
        script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="Hi there"
    )


async def test_a_displayed_job_is_followed_until_it_ends(
    emu: Emulator, client: AsyncClient, ipython: FakeIPython, moving: None
) -> None:
    job = await talking(client, emu)
    CELL.set("the displaying cell")
    changes = 0
    original = live.Live.changed

    def counted(self: live.Live) -> None:
        nonlocal changes
        changes += 1
        original(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(live.Live, "changed", counted)
        live.display_job(job)
        (follower,) = live._FOLLOWERS
        await asyncio.wait_for(follower, 10)  # nobody awaits the job: the display polls it
    assert job.done() and live.showing(job) is None and client.jobs.poller.watching == 0
    assert [name for name, _ in ipython.shown] == ["d0"]
    assert ipython.shown[0][1]["text/plain"].startswith(f"<VideoJob video={job.video_id} ")
    html_updates = ipython.html_updates()
    assert "<video" in html_updates[-1] and "<progress" not in html_updates[-1]
    assert any("<progress" in h for h in html_updates[:-1])
    assert {name for name, _, _, _ in ipython.updates} == {"d0"}
    assert {cell for _, _, _, cell in ipython.updates} == {None}  # outside the cell's context
    times = [when for _, _, when, _ in ipython.updates[:-1]]
    assert all(b - a >= 0.1 - 1e-3 for a, b in itertools.pairwise(times))  # throttled
    assert changes > len(ipython.updates)  # more changes than updates: some were merged


async def test_a_job_displayed_twice_updates_both_outputs_with_one_follower(
    emu: Emulator, client: AsyncClient, ipython: FakeIPython, moving: None
) -> None:
    job = await talking(client, emu)
    live.display_job(job)
    live.display_job(job)
    assert [name for name, _ in ipython.shown] == ["d0", "d0"] and len(live._FOLLOWERS) == 1
    await asyncio.wait_for(job, 10)
    await asyncio.wait_for(asyncio.gather(*live._FOLLOWERS), 5)
    assert "<video" in ipython.html_updates()[-1]


async def test_a_done_job_is_shown_once_without_a_follower(
    emu: Emulator, client: AsyncClient, ipython: FakeIPython, moving: None
) -> None:
    job = await talking(client, emu)
    await asyncio.wait_for(job, 10)
    live.display_job(job)
    assert len(ipython.shown) == 1 and ipython.shown[0][0] is None  # no display id
    assert "<video" in ipython.shown[0][1]["text/html"] and not live._FOLLOWERS


async def test_outside_a_kernel_the_display_is_a_snapshot(
    emu: Emulator, client: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeIPython()
    monkeypatch.setattr(live, "_frontend", lambda: (fake.display, False))  # terminal IPython
    job = await talking(client, emu)
    live.display_job(job)
    assert [name for name, _ in fake.shown] == [None] and not live._FOLLOWERS
    assert live.showing(job) is None and client.jobs.poller.watching == 0


async def test_without_ipython_loaded_it_prints_the_text(
    emu: Emulator, client: AsyncClient, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    job = await talking(client, emu)
    live.display_job(job)
    assert capsys.readouterr().out == repr(job) + "\n" and not live._FOLLOWERS


async def test_closing_the_client_ends_the_follower(emu: Emulator, ipython: FakeIPython) -> None:
    from tests.conftest import connect

    client = connect(emu)
    job = await talking(client, emu)
    live.display_job(job)
    await asyncio.sleep(0.05)  # the follower watches the job
    assert client.jobs.poller.watching == 1
    await client.aclose()
    await asyncio.wait_for(asyncio.gather(*live._FOLLOWERS), 5)
    assert "the client was closed" in ipython.html_updates()[-1]


async def test_a_displayed_batch_is_followed_from_its_start_to_its_table(
    emu: Emulator, client: AsyncClient, ipython: FakeIPython, moving: None
) -> None:
    rows = [{"title": f"For {n}", "first_name": n} for n in ("Ann", "Bob")]
    batch = client.templates.generate_many("tpl_thanks", [*rows, {"title": "x"}], spacing=0)
    live.display_batch(batch)
    assert "not started" in ipython.shown[0][1]["text/html"] and not ipython.updates
    await asyncio.sleep(0.05)
    assert not ipython.updates and batch._task is None  # displaying starts nothing
    results = await asyncio.wait_for(batch, 10)
    assert [r.status for r in results] == ["completed", "completed", "rejected"]
    final = ipython.html_updates()[-1]
    assert final.count("<tr><td>") == 3 and final.count('<a href="http') == 2
    assert live.showing(batch) is None
    assert repr(batch) == shown.batch_text(batch) and repr(batch).startswith("<Batch done:")
    assert notebook.snapshot(batch) == shown.batch_bundle(batch)


async def test_a_failing_frontend_never_breaks_the_batch(
    emu: Emulator, client: AsyncClient, ipython: FakeIPython, moving: None
) -> None:
    batch = client.templates.generate_many(
        "tpl_thanks", [{"title": "For Ann", "first_name": "Ann"}], spacing=0
    )
    live.display_batch(batch)
    ipython.fail_updates = True
    results = await asyncio.wait_for(batch, 10)
    assert [r.status for r in results] == ["completed"] and live.showing(batch) is None


# -- the throttle never holds back the last update (virtual time) ---------------------------


class ReportingBatch(FakeBatch):
    """A batch that tells its listeners of each change, as ``batch.subscribe`` does."""

    def __init__(self, total: int) -> None:
        super().__init__([], total=total)
        self.total = total
        self.now = BatchPhase.NOT_STARTED
        self.listeners: list[Any] = []

    @property
    def phase(self) -> BatchPhase:
        return self.now

    @property
    def error(self) -> BaseException | None:
        return None

    def subscribe(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def tell(self, phase: BatchPhase, results: list[RowResult], elapsed: float) -> None:
        self.now, self.results = phase, results
        figures = FakeBatch(results, total=self.total).progress
        self.progress = BatchProgress(**{**attrs.asdict(figures), "elapsed": elapsed})
        for listener in list(self.listeners):
            listener(SimpleNamespace(phase=phase, progress=self.progress))


ORIGINAL_FOLLOW = live._follow_batch


def plain_updates(ipython: FakeIPython) -> list[str]:
    return [bundle["text/plain"] for _, bundle, _, _ in ipython.updates]


async def test_a_live_display_sends_the_last_of_a_burst_of_changes() -> None:
    time, ipython = VirtualTime(), FakeIPython()
    figures = {"n": 0}
    shown_live = live.Live(
        ipython.display, lambda: {"text/plain": str(figures["n"])}, clock=time.as_clock()
    )
    shown_live.show()
    for n in range(1, 11):  # ten changes at once: held back, merged into one update...
        figures["n"] = n
        shown_live.changed()
    assert ipython.updates == []
    await time.advance(live.MIN_INTERVAL)  # ... the last, once the interval passed
    assert plain_updates(ipython) == ["10"]
    await time.advance(60)
    assert plain_updates(ipython) == ["10"]


async def test_a_displayed_batch_shows_rate_and_eta_then_its_end_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    time, ipython = VirtualTime(), FakeIPython()
    monkeypatch.setattr(live, "_frontend", lambda: (ipython.display, True))
    batch = ReportingBatch(total=3)
    monkeypatch.setattr(
        live, "_follow_batch", lambda b, d: ORIGINAL_FOLLOW(b, d, clock=time.as_clock())
    )
    live.display_batch(batch)
    done = [row(0, "completed", url=URL)]
    batch.tell(BatchPhase.AWAITING, done, elapsed=30.0)
    await time.advance(live.MIN_INTERVAL)
    assert plain_updates(ipython) == [
        "<Batch running: finished=1/3 completed=1 failed=0 rejected=0 submitted=1 "
        "rate=2.0/min eta=1m00s>"
    ]
    batch.tell(BatchPhase.AWAITING, [*done, row(1, "completed", url=URL)], elapsed=40.0)
    everything = [*done, row(1, "completed", url=URL), row(2, "rejected", "bad")]
    batch.tell(BatchPhase.DONE, everything, elapsed=41.0)  # within the interval: sent at once
    assert len(ipython.updates) == 2 and ipython.updates[-1][1] == shown.batch_bundle(batch)
    assert ipython.updates[-1][1]["text/html"].count("<tr><td>") == 3
    assert live.showing(batch) is None and not batch.listeners
    await time.advance(60)
    assert len(ipython.updates) == 2  # nothing held back was sent after the end


class BrokenJob:
    """A job whose updates fail after one change (its follower ends there)."""

    def __init__(self) -> None:
        self.state = state(10)

    def done(self) -> bool:
        return False

    async def updates(self) -> AsyncIterator[object]:
        self.state.take_record(Video(id="v1", status="STARTED", progress=60))
        yield self.state
        raise RuntimeError("the updates broke")


async def test_a_job_whose_updates_fail_still_shows_what_the_throttle_held_back(
    ipython: FakeIPython, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "MIN_INTERVAL", 3600.0)  # every change after the first held
    job = BrokenJob()
    live.display_job(job)
    (follower,) = live._FOLLOWERS
    await asyncio.wait_for(follower, 5)
    assert plain_updates(ipython) == [shown.job_bundle(job.state)["text/plain"]]
    assert "60%" in plain_updates(ipython)[0] and live.showing(job) is None
