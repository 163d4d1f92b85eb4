"""A batch reads its rows as it sends them, keeps no result when streamed, and always ends."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import tracemalloc
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

from asyncclient import (
    AmbiguousCreationError,
    APIConnectionError,
    AsyncClient,
    CreatedProject,
    Page,
    Plan,
    TalkingAvatarRequest,
    TokenBucket,
    Video,
    VideoDetail,
    VideoJob,
)
from asyncclient._convert import decode
from asyncclient._states import JournalEvent, RowOutcome
from asyncclient.awaiting.jobs import Jobs
from asyncclient.awaiting.poller import Poller
from asyncclient.batch.digests import DigestSet
from asyncclient.batch.journal import Journal
from asyncclient.batch.ledger import RECENT
from asyncclient.batch.runner import request_batch
from asyncclient.batch.source import RequestSource
from asyncclient.emulator import Emulator
from asyncclient.http.prepared import PreparedCreation
from asyncclient.http.reach import Reach
from tests.conftest import connect
from tests.test_batch_runner import FakeSubmitter, _on_plan, creations, rows
from tests.virtual_time import FastForward

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)


def talking(n: int, counter: list[int] | None = None) -> Iterator[TalkingAvatarRequest]:
    """A generator of requests that counts how many were read."""
    for i in range(n):
        if counter is not None:
            counter[0] += 1
        yield TalkingAvatarRequest(script=f"Hi {i}", avatar_id="a", voice_id="v")


class CountingSubmitter(FakeSubmitter):
    """Records, at each submission, how many rows the batch had read by then."""

    def __init__(self, clock: FastForward, counter: list[int]) -> None:
        super().__init__(clock)
        self.counter = counter
        self.read_at_send: list[tuple[int, int]] = []

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        self.read_at_send.append((len(self.sent) + 1, self.counter[0]))
        await asyncio.sleep(0)
        return await super().submit(prepared)


async def test_rows_of_a_generator_are_read_as_they_are_sent() -> None:
    counter = [0]
    clock = FastForward(100.0)
    submitter = CountingSubmitter(clock, counter)
    batch = request_batch(
        talking(500, counter),
        submitter=submitter,
        jobs=submitter.jobs,
        clock=clock,
        spacing=0.5,
        concurrency=4,
    )
    results = [r async for r in batch]
    assert len(results) == 500 and all(r.ok for r in results)
    window = 4 + 1  # the rows in flight, and the one waiting for its turn
    worst = max(read - sent for sent, read in submitter.read_at_send)
    assert worst <= window, f"read {worst} rows ahead of what was sent"
    assert batch.progress.total == 500  # learnt at the end of the input


async def test_a_generator_cannot_be_checked_first_but_a_list_can(
    emu: Emulator, client: AsyncClient
) -> None:
    once = client.templates.generate_many("tpl_welcome", iter(rows(3)), spacing=0)
    with pytest.raises(RuntimeError, match="read once"):
        await once.check()
    data = rows(4)
    data[2] = {"title": "No name", "product": "Acme", "logo": ""}
    data[3] = dict(data[0])
    twice = client.templates.generate_many("tpl_welcome", data, spacing=0)
    found = await twice.check()
    assert (found.rows, found.rejected, found.ok) == (4, 2, False)
    assert [index for index, _ in found.problems] == [2, 3]
    assert any("also the title of row 0" in p for p in found.problems[1][1])
    assert creations(emu) == 0  # checked, nothing sent


async def test_a_streamed_batch_keeps_no_results() -> None:
    clock = FastForward(100.0)
    submitter = FakeSubmitter(clock)
    n = RECENT + 500
    batch = request_batch(
        talking(n), submitter=submitter, jobs=submitter.jobs, clock=clock, spacing=0
    )
    seen = 0
    async for _ in batch:
        seen += 1
    assert seen == n
    assert len(batch.results) == RECENT  # the latest only
    assert batch._ledger.results == {}
    assert batch.report().outcomes[RowOutcome.COMPLETED] == n


class LeanSubmitter(FakeSubmitter):
    """Keeps no record of what it sent (the memory measured is the batch's)."""

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        job = await super().submit(prepared)
        self.sent[-1] = (0.0, b"")
        return job


async def _streamed_peak(n: int) -> int:
    clock = FastForward(100.0)
    submitter = LeanSubmitter(clock)
    batch = request_batch(
        talking(n), submitter=submitter, jobs=submitter.jobs, clock=clock, spacing=0
    )
    tracemalloc.start()
    try:
        async for _ in batch:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.heavy
async def test_memory_of_a_streamed_batch_does_not_grow_with_its_rows() -> None:
    small = await _streamed_peak(2_000)
    large = await _streamed_peak(20_000)
    # Two bytes of ledger a row, 16 to 32 of digests of the projects owned (no journal
    # here), the list slot of the fake's record: far below the kilobyte a row of before,
    # and the results never pile up for a reader (``async for``) slower than the batch.
    assert (large - small) / 18_000 < 100, (small, large)


@pytest.mark.heavy
def test_a_digest_set_tells_strings_apart_in_12_bytes_a_slot() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        seen = DigestSet()
        for i in range(50_000):
            assert seen.add(f"title {i}", i) is None
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert seen.add("title 7", 99) == 7
    assert "title 49999" in seen and "title 50000" not in seen
    assert len(seen) == 50_000
    assert seen.row_of("title 123") == 123 and seen.row_of("title 50000") is None
    assert held < 131_072 * 12 + 131_072  # 2**17 slots (at most half full) of 8 + 4 bytes


# -- a batch always ends ------------------------------------------------------------------


class GoneSubmitter(FakeSubmitter):
    """Accepts the first ``up`` rows; then the service is gone: no connection."""

    def __init__(self, clock: FastForward, reach: Reach, up: int) -> None:
        super().__init__(clock)
        self.reach = reach
        self.up = up
        self.tries = 0

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        if len(self.sent) < self.up:
            self.reach.heard()
            return await super().submit(prepared)
        self.tries += 1
        self.reach.missed()
        raise APIConnectionError("cannot connect: refused", request_sent=False)

    async def reconcile(
        self, error: AmbiguousCreationError, *, claimed: Collection[str] = ()
    ) -> VideoJob | None:
        raise AssertionError("nothing was ambiguous")


async def test_a_batch_against_a_vanished_service_ends_and_a_rerun_sends_the_rest(
    tmp_path: Path,
) -> None:
    clock = FastForward(100.0)
    reach = Reach(clock)
    submitter = GoneSubmitter(clock, reach, up=5)
    journal = tmp_path / "j.jsonl"
    options: dict[str, Any] = {"spacing": 0, "journal": journal, "unreachable_after": 60.0}
    requests = list(talking(12))
    batch = request_batch(
        requests, submitter=submitter, jobs=submitter.jobs, clock=clock, reach=reach, **options
    )
    results = await asyncio.wait_for(batch, 30)
    statuses = [str(r.status) for r in results]
    assert statuses == ["completed"] * 5 + ["not_sent"] * 7
    report = batch.report()
    assert report.stopped is not None and "could not be reached" in report.stopped
    assert report.submitted == 5 and report.maybe_charged == 0  # nothing was sent after
    assert submitter.tries >= 2  # the row was tried again before the batch stopped
    # The journal says the rows were not sent: a run against a service that is back
    # sends them, and only them.
    state = Journal.open(journal, batch._batch_id)
    try:
        assert {state.rows[i].event for i in range(5, 6)} == {JournalEvent.REJECTED}
    finally:
        state.close()
    back = FakeSubmitter(clock)
    again = request_batch(requests, submitter=back, jobs=back.jobs, clock=clock, **options)
    results = await asyncio.wait_for(again, 30)
    assert all(r.ok for r in results)
    assert len(back.sent) == 7
    assert sum(r.before for r in results) == 5


async def test_a_batch_stops_with_accepted_rows_pending_when_the_emulator_goes_away(
    tmp_path: Path,
) -> None:
    emulator = Emulator(time_scale=60.0, seed=3, processing_seconds=3600)
    clock = FastForward(100.0, pause=0.001)
    async with emulator as emu:
        client = connect(emu, clock=clock)
        async with client:
            batch = client.templates.generate_many(
                "tpl_welcome",
                rows(6),
                spacing=0,
                journal=tmp_path / "j.jsonl",
                unreachable_after=120.0,
                wait_timeout=None,  # (on this clock, a wait's deadline passes at once)
            )
            task = asyncio.ensure_future(batch)
            for _ in range(1000):
                if creations(emu) >= 3:
                    break
                await asyncio.sleep(0.01)
            await emu.stop()  # the service is gone: every connection is refused
            results = await asyncio.wait_for(task, 60)
    statuses = [str(r.status) for r in results]
    assert "completed" not in statuses
    pending = [r for r in results if r.status is RowOutcome.SUBMITTED]
    assert len(pending) >= 3 and all(r.project_id for r in pending)
    assert set(statuses) <= {"submitted", "not_sent", "unresolved"}
    assert "could not be reached" in (batch.report().stopped or "")
    lines = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
    accepted = {line["i"] for line in lines if line["ev"] == "accepted"}
    assert {r.index for r in pending} <= accepted  # a re-run finds their ids


async def test_completions_are_recorded_while_the_batch_still_submits() -> None:
    """On a plan the submissions saturate, rows complete (and are handed out) before the
    last creation is sent: polling keeps its share of the tokens."""
    async with _on_plan(Plan.FREE) as (emu, client):
        batch = client.templates.generate_many(
            "tpl_welcome", rows(60), spacing=0, wait_timeout=None
        )  # (a fast-forwarded clock would time a wait out at once)
        sent_when_done: list[int] = []
        async for result in batch:
            assert result.ok
            sent_when_done.append(creations(emu))
    assert len(sent_when_done) == 60
    assert sent_when_done[0] < 60, "nothing completed before the last creation was sent"
    assert sum(1 for sent in sent_when_done if sent < 60) >= 5


class DurableCheck(FakeSubmitter):
    """At each submission, checks that the row's ``submit`` line is already durable."""

    def __init__(self, clock: FastForward, journal: Path) -> None:
        super().__init__(clock)
        self.journal = journal
        self.batch: Any = None
        self.checked = 0

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        live = self.batch._rows._journal
        data = self.journal.read_bytes()
        fp = prepared.fingerprint
        end = data.rfind(b'"ev":"submit"')
        while end != -1 and f'"fp":"{fp}"'.encode() not in data[end : data.find(b"\n", end)]:
            end = data.rfind(b'"ev":"submit"', 0, end)
        assert end != -1, "no submit line for this row"
        assert live._synced >= data.find(b"\n", end) + 1, "sent before its line was durable"
        self.checked += 1
        return await super().submit(prepared)


async def test_rows_in_flight_share_fsyncs_and_each_is_durable_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs = [0]
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.__setitem__(0, fsyncs[0] + 1), real(fd)))
    journal = tmp_path / "j.jsonl"
    clock = FastForward(100.0)
    submitter = DurableCheck(clock, journal)
    n = 200
    batch = request_batch(
        list(talking(n)),
        submitter=submitter,
        jobs=submitter.jobs,
        clock=clock,
        spacing=0,
        concurrency=16,
        journal=journal,
    )
    submitter.batch = batch
    results = await batch
    assert all(r.ok for r in results) and submitter.checked == n
    # Two records of money a row (submit, accepted): one fsync each before; now rows
    # written meanwhile share one.
    assert fsyncs[0] < n / 2, fsyncs[0]  # (29 for 200 rows here)


class _Unfinished:
    """A service whose list shows nothing yet (the test finishes the jobs itself)."""

    async def get(self, video_id: str) -> VideoDetail:
        return decode({"id": video_id, "status": "STARTED", "progress": 0}, VideoDetail)

    async def list_page(self, *, limit: int = 100, offset: int = 0) -> Page[Video]:
        return Page(items=[], total=0, limit=limit, offset=offset)


class SlowSubmitter(FakeSubmitter):
    """Accepts every row; its jobs finish only when the test finishes them."""

    def __init__(self, clock: FastForward) -> None:
        super().__init__(clock)
        self.jobs = Jobs(Poller(_Unfinished(), limiter=TokenBucket(Plan.PREMIUM.rate_limit)))
        self.open: list[VideoJob] = []

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        self.sent.append((self.clock.monotonic(), b""))
        n = len(self.sent)
        job = self.jobs.from_created(CreatedProject(project_id=f"p{n}", video_id=f"v{n}"))
        self.open.append(job)
        return job

    def finish_one(self) -> None:
        job = self.open.pop(0)
        done = {"id": job.video_id, "projectId": job.project_id, "status": "COMPLETED"}
        job.state.take_detail(decode(done | {"progress": 100}, VideoDetail))


async def test_a_batch_keeps_at_most_max_open_rows_open() -> None:
    """The batch never runs further ahead of what it has seen finish than ``max_open``
    rows: memory stays bounded and polling (here: the test) catches up."""
    clock = FastForward(100.0)
    submitter = SlowSubmitter(clock)
    batch = request_batch(
        talking(30),
        submitter=submitter,
        jobs=submitter.jobs,
        clock=clock,
        spacing=0,
        concurrency=2,
        max_open=5,
        wait_timeout=None,
    )
    task = asyncio.ensure_future(batch)
    most = 0
    for _ in range(2000):
        await asyncio.sleep(0)
        most = max(most, len(submitter.open))
        if len(submitter.sent) == 30 and not submitter.open:
            break
        if len(submitter.open) == 5 or (len(submitter.sent) == 30 and submitter.open):
            submitter.finish_one()
    results = await asyncio.wait_for(task, 5)
    assert all(r.ok for r in results) and len(submitter.sent) == 30
    assert most == 5  # it reached the bound, never more


class DoneJobs:
    """Jobs for rows a journal knows, their videos finished already."""

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def from_created(self, created: CreatedProject) -> VideoJob:
        job = self.jobs.from_created(created)
        done = {"id": created.video_id, "projectId": created.project_id, "status": "COMPLETED"}
        job.state.take_detail(decode(done | {"progress": 100}, VideoDetail))
        return job


async def journaled(
    requests: list[TalkingAvatarRequest],
    path: Path,
    submitter: FakeSubmitter,
    clock: FastForward,
    *,
    done: bool,
) -> None:
    """A journal at ``path`` in which an earlier run of ``requests`` got every row
    accepted (and, with ``done``, saw each one completed)."""
    first = request_batch(requests, submitter=submitter, jobs=submitter.jobs, clock=clock)
    items = await first.prepare()
    record = Journal.open(path, first._batch_id)
    for item in items:
        record.record(JournalEvent.SUBMIT, item.index, item.fingerprint, name="n")
        record.record(
            JournalEvent.ACCEPTED, item.index, item.fingerprint, project=f"p{item.index}",
            video=f"v{item.index}",
        )  # fmt: skip
        if done:
            record.record(JournalEvent.DONE, item.index, item.fingerprint, status="completed")
    record.close()


async def test_rows_an_earlier_run_got_accepted_are_awaited_without_being_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "j.jsonl"
    requests = list(talking(130))
    clock = FastForward(100.0)
    submitter = FakeSubmitter(clock)
    await journaled(requests, journal, submitter, clock, done=False)
    built: list[int] = []
    real_build = RequestSource.build

    def counting(self: RequestSource, index: int, raw: Any) -> Any:
        built.append(index)
        return real_build(self, index, raw)

    monkeypatch.setattr(RequestSource, "build", counting)
    again = request_batch(
        requests,
        submitter=submitter,
        jobs=DoneJobs(submitter.jobs),
        clock=clock,
        journal=journal,
    )
    results = await asyncio.wait_for(again, 10)
    assert all(r.ok for r in results) and len(results) == 130
    assert submitter.sent == []  # awaited, none sent again
    assert built == [0, 64, 128]  # one in 64 rebuilt and compared with the journal


@pytest.mark.heavy
async def test_rows_done_before_are_told_no_faster_than_a_slow_reader_takes_them(
    tmp_path: Path,
) -> None:
    """A resumed million-row batch held 488 MiB: the rows an earlier run finished were
    told from the journal as fast as it could read them, and their results waited for a
    reader slower than that. They now wait for room as the rows sent do: the results
    waiting never pass the backlog (and a chunk)."""
    from asyncclient.batch import ledger as ledger_module

    journal = tmp_path / "j.jsonl"
    requests = list(talking(3000))
    clock = FastForward(100.0)
    submitter = FakeSubmitter(clock)
    await journaled(requests, journal, submitter, clock, done=True)
    again = request_batch(
        requests, submitter=submitter, jobs=submitter.jobs, clock=clock, journal=journal
    )
    waiting: list[int] = []
    told = 0
    async for result in again:
        assert result.before
        told += 1
        waiting.append(again._ledger.queue.qsize())
        if told % 10 == 0:
            await asyncio.sleep(0.001)  # a reader slower than the telling
    assert told == 3000 and submitter.sent == []
    assert max(waiting) <= ledger_module.BACKLOG + 256, max(waiting)
