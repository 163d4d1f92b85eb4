"""Bulk generation against the emulator: checking, spacing, outcomes, budget, journal."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from asyncclient import (
    AmbiguousCreationError,
    APIError,
    APIResponseValidationError,
    AsyncClient,
    BadRequestError,
    BatchProgress,
    CreatedProject,
    Page,
    Plan,
    RowChangedError,
    TalkingAvatarRequest,
    TokenBucket,
    ValidationError,
    Video,
    VideoDetail,
    VideoJob,
)
from asyncclient._convert import decode
from asyncclient._states import JournalEvent
from asyncclient.awaiting.jobs import Jobs
from asyncclient.awaiting.poller import Poller, PollPolicy
from asyncclient.batch.journal import Journal
from asyncclient.batch.runner import request_batch
from asyncclient.batch.settle import SETTLE_WINDOW
from asyncclient.emulator import Emulator
from asyncclient.http.prepared import PreparedCreation
from tests.conftest import connect
from tests.virtual_time import FastForward, VirtualTime

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


pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)


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
    emulator = Emulator(time_scale=SCALE, seed=11, failure_rate={"class": 0.5})
    async with emulator as emu, connect(emu) as client:
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


# -- a batch without a client: a fake submitter, jobs that finish at once ----------------


class _NoVideos:
    async def get(self, video_id: str) -> VideoDetail:
        raise AssertionError("a finished job reads nothing")

    async def list_page(self, *, limit: int = 100, offset: int = 0) -> Page[Video]:
        raise AssertionError("a finished job reads nothing")


class FakeSubmitter:
    """Accepts every row at once; its jobs are already COMPLETED."""

    def __init__(self, clock: FastForward) -> None:
        self.clock = clock
        self.sent: list[tuple[float, bytes]] = []
        self.jobs = Jobs(Poller(_NoVideos(), limiter=TokenBucket(Plan.PREMIUM.rate_limit)))

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        self.sent.append((self.clock.monotonic(), prepared.wire.body or b""))
        n = len(self.sent)
        job = self.jobs.from_created(CreatedProject(project_id=f"p{n}", video_id=f"v{n}"))
        done = {"id": f"v{n}", "projectId": f"p{n}", "status": "COMPLETED", "progress": 100}
        job.state.take_detail(decode(done, VideoDetail))
        return job

    async def reconcile(
        self, error: AmbiguousCreationError, *, claimed: Collection[str] = ()
    ) -> VideoJob | None:
        return None

    async def service_time(self) -> datetime | None:
        return self.clock.now()


def talking_requests(n: int) -> list[TalkingAvatarRequest]:
    return [TalkingAvatarRequest(script=f"Hi {i}", avatar_id="a", voice_id="v") for i in range(n)]


def fake_batch(requests: list[TalkingAvatarRequest], **options: Any) -> tuple[Any, FakeSubmitter]:
    clock = FastForward(100.0)
    submitter = FakeSubmitter(clock)
    jobs = submitter.jobs
    batch = request_batch(requests, submitter=submitter, jobs=jobs, clock=clock, **options)
    return batch, submitter


async def test_submissions_are_spaced() -> None:
    batch, submitter = fake_batch(talking_requests(4), spacing=1.0)
    results = await batch
    assert [r.status for r in results] == ["completed"] * 4
    # Four submissions, each one (virtual) second after the one before.
    assert [t for t, _ in submitter.sent] == [100.0, 101.0, 102.0, 103.0]
    assert submitter.clock.sleeps == [1.0, 1.0, 1.0]


async def test_a_row_is_checked_and_serialised_once() -> None:
    bad = TalkingAvatarRequest(script="", avatar_id="a", voice_id="v")
    batch, submitter = fake_batch([*talking_requests(2), bad], spacing=0)
    items = await batch.prepare()
    assert [bool(i.problems) for i in items] == [False, False, True]
    results = await batch
    assert [r.status for r in results] == ["completed", "completed", "rejected"]
    # What was sent is the very body the journal fingerprints.
    sent = [body for _, body in submitter.sent]
    assert sent == [i.prepared.wire.body for i in items[:2] if i.prepared]
    assert [i.fingerprint for i in items[:2]] == [
        hashlib.sha256(body).hexdigest()[:16] for body in sent
    ]
    assert json.loads(sent[0])["name"].startswith("batch-")


async def test_cancelling_a_batch_cancels_every_row_task() -> None:
    gate = asyncio.Event()

    class Stuck(FakeSubmitter):
        async def submit(self, prepared: PreparedCreation) -> VideoJob:
            self.sent.append((self.clock.monotonic(), b""))
            await gate.wait()  # never answers
            raise AssertionError("unreachable")

    clock = FastForward()
    submitter = Stuck(clock)
    batch = request_batch(
        talking_requests(3), submitter=submitter, jobs=submitter.jobs, clock=clock, spacing=0
    )
    task = asyncio.ensure_future(batch)
    while len(submitter.sent) < 3:  # noqa: ASYNC110 (three row tasks now wait in submit)
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # No row task outlived the batch: none is left pending on the loop.
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert all(t.done() for t in others)


async def test_an_error_in_a_row_ends_the_batch_with_that_error() -> None:
    class Broken(FakeSubmitter):
        async def submit(self, prepared: PreparedCreation) -> VideoJob:
            raise KeyError("a bug in a row")

    clock = FastForward()
    submitter = Broken(clock)
    batch = request_batch(
        talking_requests(3), submitter=submitter, jobs=submitter.jobs, clock=clock, spacing=0
    )
    with pytest.raises(KeyError, match="a bug in a row"):
        await batch


# -- against the emulator -----------------------------------------------------------------


async def test_budget_stops_submitting(emu: Emulator, client: AsyncClient) -> None:
    # A template video costs 5 credits in the emulator; nothing tells it here: refused,
    # never a first row sent "to find out" (tests/test_batch_budget.py has the rest).
    unknown = client.templates.generate_many("tpl_welcome", rows(5), spacing=0, budget=12)
    with pytest.raises(ValidationError, match="cost_per_row"):
        await finish(emu, unknown)
    assert creations(emu) == 0
    batch = client.templates.generate_many(
        "tpl_welcome", rows(5), spacing=0, budget=12, cost_per_row=5
    )
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
    emu: Emulator, tmp_path: Path
) -> None:
    journal = tmp_path / "batch.jsonl"
    key = emu.add_team(plan="premium", credits=100_000)
    # Each wait takes 20 ms here, and moves the service's clock as far as ours: a clock of
    # ours that ran ahead of the service's would record a "service time" not yet reached.
    slow = connect(emu, key, clock=FastForward(pause=0.02, on_sleep=emu.advance))
    first = slow.templates.generate_many(
        "tpl_welcome", rows(8), spacing=1.0, journal=journal, wait_timeout=None
    )  # (waits would time out at once: every sleep of this clock fast-forwards it)
    task = asyncio.ensure_future(first)
    while creations(emu) < 4:  # noqa: ASYNC110 (the emulator has no event to wait on)
        await asyncio.sleep(0.01)
    task.cancel()  # like Ctrl-C in the middle of the batch
    with pytest.raises(asyncio.CancelledError):
        await task
    await slow.aclose()
    sent = creations(emu)
    assert 4 <= sent < 8
    events = [json.loads(line)["ev"] for line in journal.read_text().splitlines()]
    assert events.count("submit") >= sent

    async with connect(emu, key) as client:  # a new process, the same team
        again = client.templates.generate_many("tpl_welcome", rows(8), spacing=0, journal=journal)
        results = await finish(emu, again)
    assert [r.status for r in results] == ["completed"] * 8
    assert creations(emu) == 8  # the rows sent before were awaited, not sent again
    assert len({r.video_id for r in results}) == 8
    # Its progress tells this run's submissions from the rows an earlier run had sent.
    progress = again.progress
    assert progress.submitted == 8 - sent and progress.resumed == sent
    assert progress.done_before == 0

    async with connect(emu, key) as client:  # once more: everything was done before
        third = client.templates.generate_many("tpl_welcome", rows(8), spacing=0, journal=journal)
        await finish(emu, third)
    progress = third.progress
    assert creations(emu) == 8
    assert (progress.submitted, progress.resumed, progress.done_before) == (0, 8, 8)
    assert progress.completed == 8 and progress.rate == 0.0  # nothing finished in this run


async def test_a_journal_of_other_rows_is_refused(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    await finish(emu, client.templates.generate_many("tpl_welcome", rows(2), journal=journal))
    changed = rows(2)
    changed[0]["first_name"] = "Other"
    with pytest.raises(RowChangedError, match=r"rows\[0\]: not the row the journal") as info:
        await client.templates.generate_many("tpl_welcome", changed, journal=journal)
    assert info.value.index == 0 and isinstance(info.value, ValidationError)
    with pytest.raises(ValueError, match="another batch"):
        await client.templates.generate_many(
            "tpl_promo", [{"title": "x", "discount": "5%"}], journal=journal
        )


async def test_a_resumed_batch_counts_what_it_spent_before(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    journal = tmp_path / "budget.jsonl"
    first = client.templates.generate_many(
        "tpl_welcome", rows(4), spacing=0, budget=10, cost_per_row=5, journal=journal
    )
    assert [r.status for r in await finish(emu, first)] == ["completed"] * 2 + ["skipped"] * 2
    again = client.templates.generate_many(  # the cost: what the journal's rows were charged
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
        flat_out = PollPolicy(min_interval=0.0, max_interval=0.0)  # only the share holds it back
        async with AsyncClient(key, base_url=emu.url, plan=rate, polling=flat_out) as client:
            batch = client.templates.generate_many("tpl_welcome", rows(60), spacing=0)
            results = await batch
    assert [r.status for r in results] == ["completed"] * 60
    polls = sum(1 for r in emu.requests if r.path == "/v1/video/list")
    api = sum(1 for r in emu.requests if r.path.startswith("/v1/"))
    assert emu.counters.rate_limited == 0
    assert polls <= 0.55 * api  # at most about half of the plan's requests went to polling
    assert creations(emu) == 60


def _reads(emu: Emulator) -> list[tuple[float, str]]:
    return [(r.time, r.path) for r in emu.requests if r.path.startswith("/v1/video/")]


@asynccontextmanager
async def _on_plan(
    plan: Plan, scale: float | None = None
) -> AsyncIterator[tuple[Emulator, AsyncClient]]:
    """The emulator and a client of a new team on ``plan`` that polls as often as its share
    of the plan lets it. With ``scale``, both run on real time sped up ``scale`` times;
    without, on a fast-forwarded clock that moves the service's clock as far as its own
    (so the test does not depend on how busy the machine is)."""
    quick = PollPolicy(min_interval=0.0, max_interval=0.0)
    async with Emulator(time_scale=scale or 1.0, seed=4, processing_seconds=60) as emu:
        key = emu.add_team(plan=plan.value, credits=100_000)
        if scale is None:
            clock = FastForward(on_sleep=emu.advance)
            options: dict[str, Any] = {"plan": plan.rate_limit, "clock": clock}
        else:
            options = {"plan": plan.rate_limit.scaled(scale)}
        async with AsyncClient(key, base_url=emu.url, polling=quick, **options) as client:
            yield emu, client


async def test_a_batch_that_needs_every_token_sends_first_and_polls_with_a_share() -> None:
    """Submissions first, not all: 40 rows on the Free plan need more tokens than the
    bucket holds, so creations take nearly every token, yet the poller keeps about one
    in ten while they are sent (completions are recorded while rows are still sent;
    before, it read nothing until the last creation), then catches up."""
    async with _on_plan(Plan.FREE, 600.0) as (emu, client):
        results = await client.templates.generate_many("tpl_welcome", rows(40), spacing=0)
    assert [r.status for r in results] == ["completed"] * 40
    last_post = max(r.time for r in emu.requests if r.path == CREATE)
    reads = _reads(emu)
    during = [t for t, _ in reads if t < last_post]
    assert during, "the poller kept no share of the tokens while creations were sent"
    # about one in ten, no more (a quarter at most: real time, scaled, on a loaded machine)
    assert len(during) <= 0.25 * (len(during) + 40)
    assert emu.counters.rate_limited == 0


async def test_a_batch_the_tokens_cover_lets_polling_go_on() -> None:
    """On a plan with tokens to spare, the poller reads while the batch still sends."""
    async with _on_plan(Plan.PREMIUM, 60.0) as (emu, client):
        batch = client.templates.generate_many("tpl_welcome", rows(4), spacing=1.0 / 60.0)
        task = asyncio.ensure_future(batch)
        mover = asyncio.ensure_future(_move(emu))
        try:
            results = await task
        finally:
            mover.cancel()
    assert [r.status for r in results] == ["completed"] * 4
    posts = [r.time for r in emu.requests if r.path == CREATE]
    assert any(posts[0] < t < posts[-1] for t, _ in _reads(emu))


# -- money: a row's outcome tells the truth about what was paid ---------------------------


class Scripted(FakeSubmitter):
    """Sends fail as scripted (an error, or None to succeed); lookups likewise."""

    def __init__(
        self,
        clock: FastForward,
        sends: list[APIError | None],
        looks: list[APIError | str | None],
    ) -> None:
        super().__init__(clock)
        self.sends = sends
        self.looks = looks  # an error, "found", or None (nothing made)
        self.lookups = 0

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        job = await super().submit(prepared)
        failure = self.sends.pop(0) if self.sends else None
        if isinstance(failure, AmbiguousCreationError) or failure is None:
            if failure is not None:
                raise failure  # the service made it (job above), the answer was lost
            return job
        self.sent.pop()  # a refusal: the service made nothing
        raise failure

    async def reconcile(
        self, error: AmbiguousCreationError, *, claimed: Collection[str] = ()
    ) -> VideoJob | None:
        self.lookups += 1
        look = self.looks.pop(0) if self.looks else None
        if isinstance(look, APIError):
            raise look
        if look == "found":
            n = len(self.sent)
            job = self.jobs.from_created(CreatedProject(project_id=f"p{n}", video_id=f"v{n}"))
            done = {"id": f"v{n}", "projectId": f"p{n}", "status": "COMPLETED"}
            job.state.take_detail(decode(done, VideoDetail))
            return job
        return None


def lost_reply(request: TalkingAvatarRequest) -> AmbiguousCreationError:
    return AmbiguousCreationError(
        "reply lost",
        request=request,
        sent_at=datetime.now(timezone.utc),
        service_sent_after=datetime.now(timezone.utc),
        cause=APIError("x"),
    )


def unreadable_page() -> APIResponseValidationError:
    return APIResponseValidationError("cannot decode the response", body=b"{", errors=["body"])


def scripted_batch(
    sends: list[APIError | None], looks: list[APIError | str | None], **options: Any
) -> tuple[Any, Scripted]:
    clock = FastForward()
    submitter = Scripted(clock, sends, looks)
    batch = request_batch(
        talking_requests(1), submitter=submitter, jobs=submitter.jobs, clock=clock, **options
    )
    return batch, submitter


async def test_a_lost_reply_then_an_unreadable_lookup_is_found_not_rejected() -> None:
    request = talking_requests(1)[0]
    batch, submitter = scripted_batch([lost_reply(request)], [unreadable_page(), "found"])
    [result] = await batch
    assert result.status == "completed"
    assert len(submitter.sent) == 1  # paid once, sent once
    assert submitter.lookups == 2


async def test_a_creation_the_service_cannot_account_for_is_unresolved_not_rejected(
    tmp_path: Path,
) -> None:
    request = talking_requests(1)[0]
    journal = tmp_path / "j.jsonl"
    looks: list[APIError | str | None] = [unreadable_page()] * 1000
    batch, submitter = scripted_batch([lost_reply(request)], looks, journal=journal)
    started = submitter.clock.monotonic()
    [result] = await batch
    assert result.status == "unresolved" and "run the batch again" in (result.error or "")
    assert len(submitter.sent) == 1 and submitter.lookups >= 2
    # Looked for again and again until the settle window had passed, never resent.
    assert submitter.clock.monotonic() - started >= SETTLE_WINDOW - 1.0  # (sent_at: just before)
    # The next run asks the service first: found, so it is awaited, never sent again.
    again, second = scripted_batch([], ["found"], journal=journal)
    [result] = await again
    assert result.status == "completed"
    assert second.sent == [] and second.lookups == 1


async def test_a_row_is_sent_again_only_after_the_settle_window(tmp_path: Path) -> None:
    """Not found is not "nothing was made" while the service may still process the
    request (issue "Money-safe, proven": a slow service made batches pay twice)."""
    request = talking_requests(1)[0]
    batch, submitter = scripted_batch([lost_reply(request)], [None, unreadable_page(), None])
    [result] = await batch
    assert result.status == "completed"
    assert len(submitter.sent) == 2  # the first sending made nothing
    assert submitter.lookups >= 3
    (first, _), (second, _) = submitter.sent
    assert second - first >= SETTLE_WINDOW - 1.0  # sent again only once the window passed


async def test_a_refusal_rejects_the_row() -> None:
    refused = BadRequestError("script: script is required", status_code=400)
    batch, submitter = scripted_batch([refused], [])
    [result] = await batch
    assert result.status == "rejected" and submitter.sent == [] and submitter.lookups == 0


async def test_resuming_survives_an_unreadable_lookup(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    # A crash right after the submit line: the journal knows it was being sent.
    batch, _ = scripted_batch([], [], journal=journal)
    items = await batch.prepare()
    record = Journal.open(journal, batch._batch_id)
    svc = datetime.now(timezone.utc).isoformat()  # the service's clock as the row left
    record.record(JournalEvent.SUBMIT, 0, items[0].fingerprint, name="n", svc=svc)
    record.close()
    again, second = scripted_batch([], [unreadable_page(), "found"], journal=journal)
    [result] = await again
    assert result.status == "completed"
    assert second.sent == [] and second.lookups == 2


async def test_a_cut_off_row_without_the_services_clock_stays_unresolved(
    tmp_path: Path,
) -> None:
    """A submit line that names no service time (no reply had told it, or a journal of
    an earlier version): no look can prove which project is the row's, so none is made
    on our clock; the row stays unresolved, says why, and is never resent."""
    journal = tmp_path / "j.jsonl"
    batch, _ = scripted_batch([], [], journal=journal)
    items = await batch.prepare()
    record = Journal.open(journal, batch._batch_id)
    record.record(JournalEvent.SUBMIT, 0, items[0].fingerprint, name="n")
    record.close()
    again, second = scripted_batch([], ["found"], journal=journal)
    [result] = await again
    assert result.status == "unresolved"
    assert "cannot be proven" in (result.error or "")
    assert second.sent == [] and second.lookups == 0


async def test_a_503_on_a_creation_is_looked_for_then_sent_again_after_the_window(
    emu: Emulator,
) -> None:
    emu.faults.add("POST /v1/project/create", "status", status=503, message="busy", times=1)
    async with connect(emu) as client:
        batch = client.templates.generate_many("tpl_welcome", rows(2), spacing=0, settle_window=1.0)
        results = await finish(emu, batch)
    assert [r.status for r in results] == ["completed", "completed"]
    assert creations(emu) == 3  # one refused before processing, then two made
    assert sum(emu.counters.projects.values()) == 2


async def test_a_lost_reply_and_an_unreadable_lookup_end_to_end(emu: Emulator) -> None:
    emu.faults.add("POST /v1/project/create", "drop_after", times=1)
    emu.faults.add("GET /v1/video/list", "malformed", times=1)
    async with connect(emu) as client:
        batch = client.templates.generate_many("tpl_welcome", rows(1), spacing=0)
        [result] = await finish(emu, batch)
    assert result.status == "completed"
    assert creations(emu) == 1  # made once, found, never sent again


async def test_rows_cut_off_by_a_crash_are_asked_about_at_once(tmp_path: Path) -> None:
    """Eight rows were being sent when the last run died. The service is asked about them
    together, not one row after another, and the ones it never made are sent again once
    the settle window has passed, still spaced."""
    journal = tmp_path / "j.jsonl"
    requests = talking_requests(8)
    first, _ = fake_batch(requests, journal=journal)
    items = await first.prepare()
    record = Journal.open(journal, first._batch_id)
    for item in items:
        svc = datetime.now(timezone.utc).isoformat()  # the service's clock as it left
        record.record(JournalEvent.SUBMIT, item.index, item.fingerprint, name="n", svc=svc)
    record.close()

    time = VirtualTime()
    clock = time.as_clock()
    submitter = FakeSubmitter(clock)  # type: ignore[arg-type]
    again = request_batch(
        requests, submitter=submitter, jobs=submitter.jobs, clock=clock,
        journal=journal, spacing=0.5,
    )  # fmt: skip
    task = asyncio.ensure_future(again)
    while not task.done():
        await time.run_until_idle()
    results = await task
    assert [r.status for r in results] == ["completed"] * 8
    sent_at = [t for t, _ in submitter.sent]
    assert len(sent_at) == 8  # nothing was made: each row sent again, once
    # The look after the settle window cleared every row at once; one row after another
    # would have sent the last one 8 windows in.
    expected = [SETTLE_WINDOW + 0.5 * k for k in range(8)]
    assert sent_at == pytest.approx(expected, abs=0.1)
