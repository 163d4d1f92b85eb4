"""A batch's journal in a real redis-server: the file journal's answers, durable before
paid, one runner at a time (fenced), a crash of Redis survived through its AOF.

When redis-server is missing these tests skip on a developer's machine and fail in CI
(CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import JournalEvent
from asyncclient.batch.journal import Journal, key_id
from asyncclient.errors import (
    FleetError,
    JournalKeyError,
    JournalLockedError,
    JournalWriteError,
)
from asyncclient.fleet.journal import (
    JournalDurabilityError,
    JournalFencedError,
    RedisJournal,
    open_redis_journal,
    pack,
    unpack,
)
from asyncclient.fleet.journal_lease import parse_url
from asyncclient.fleet.journal_scripts import RENEW

aioredis = pytest.importorskip("redis.asyncio")

E = JournalEvent
KEY = key_id("the key")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


class Ticks:
    """A wall clock that moves a second each time it is read."""

    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)
        return self.at


class Wall:
    """A wall clock that shows what the test sets."""

    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at


_names = iter(range(1_000_000))


def fresh(url: str) -> str:
    """A journal URL of a batch no test used yet."""
    return f"{url}/batch-{next(_names)}"


async def _open(url: str, batch: str = "b1", **kwargs: Any) -> RedisJournal:
    kwargs.setdefault("key", KEY)
    return await open_redis_journal(url, batch, now=kwargs.pop("now", Ticks()), **kwargs)


# What a run writes: (event, row, fingerprint, data), through both stores.
SEQUENCE: list[tuple[JournalEvent, int, str, dict[str, Any]]] = [
    (E.SUBMIT, 0, "fp0", {"svc": "2026-03-01T11:59:00+00:00"}),
    (E.ACCEPTED, 0, "fp0", {"project": "p0", "video": "v0"}),
    (E.DONE, 0, "fp0", {"status": "completed", "project": "p0", "title": "Zero é"}),
    (E.SUBMIT, 1, "fp1", {}),
    (E.REJECTED, 1, "fp1", {"error": "Bad request", "api": True}),
    (E.SUBMIT, 2, "fp2", {}),
    (E.ACCEPTED, 2, "fp2", {"project": "p2", "video": "v2"}),
    (E.SUBMIT, 3, "fp3", {"svc": "2026-03-01T11:59:30+00:00"}),
    (E.SUBMIT, 5, "fp5", {}),
    (E.REJECTED, 5, "fp5", {"error": "not sent: stopped"}),
    (E.SUBMIT, 5, "fp5b", {}),  # sent again, changed
    (E.ACCEPTED, 5, "fp5b", {"project": "p5", "video": "v5"}),
    (E.DONE, 5, "fp5b", {"status": "failed", "error": "render failed"}),
    (E.DONE, 5, "fp5b", {"status": "failed", "error": "render failed"}),  # read again
    (E.SUBMIT, 6, "fp6", {}),
    (E.REJECTED, 6, "fp6", {"project": "p6a", "error": "failed at once"}),
    (E.SUBMIT, 6, "fp6", {}),
    (E.ACCEPTED, 6, "fp6", {"project": "p6b", "video": "v6"}),  # a project more
]


def _answers(journal: Any) -> tuple[Any, ...]:
    rows = journal.rows
    return (
        {index: rows[index] for index in rows},
        len(rows),
        journal.counts(),
        [journal.event_of(index) for index in range(-1, 8)],
        [journal.owns(p) for p in ("p0", "p2", "p5", "p6b", "nope")],
        list(journal.open_rows()),
        4 in rows,
        3 in rows,
    )


async def test_records_replay_with_the_file_journals_answers(aof_url: str, tmp_path: Path) -> None:
    url = fresh(aof_url)
    wall = Wall()
    redis_journal = await _open(url, now=wall)
    file_journal = Journal.open(tmp_path / "j.jsonl", "b1", now=wall, key=KEY)
    try:
        assert redis_journal.durability.mode == "fsync"
        for k, (event, index, fp, data) in enumerate(SEQUENCE):
            wall.at = T0 + timedelta(seconds=k, microseconds=k)
            if k % 2:  # both ways of writing
                mine = redis_journal.record(event, index, fp, **data)
                theirs = file_journal.record(event, index, fp, **data)
            else:
                mine = await redis_journal.arecord(event, index, fp, **data)
                theirs = await file_journal.arecord(event, index, fp, **data)
            assert mine == theirs
        assert _answers(redis_journal) == _answers(file_journal)
        # A project only a refusal named: the file journal forgets it, this one keeps it
        assert redis_journal.owns("p6a") and not file_journal.owns("p6a")
        with pytest.raises(ValueError, match=r"may not follow|not allowed|cannot"):
            await redis_journal.arecord(E.DONE, 1, "fp1")  # the state table's rule
        with pytest.raises(ValueError, match="not a row number"):
            redis_journal.record(E.SUBMIT, -1, "fp")
    finally:
        await redis_journal.aclose()
        file_journal.close()
    again = await _open(url)  # another run resumes it: the same answers, from Redis
    file_again = Journal.open(tmp_path / "j.jsonl", "b1", now=Ticks(), key=KEY)
    try:
        assert _answers(again) == _answers(file_again)
        assert again.rows[0].title == "Zero é" and again.rows[3].service_at is not None
        assert again.rows[1].api_rejection and again.rows[1].error == "Bad request"
        assert again.owns("p6a") and again.owns("p6b")
    finally:
        await again.aclose()
        file_again.close()


def test_a_record_packs_and_unpacks_to_the_same_state() -> None:
    journal_state = unpack(7, pack(unpack(7, b'[2,"fp",1,"p","v",null,null,1,"t",2]')[0]))[0]
    assert journal_state.project_id == "p" and journal_state.api_rejection
    assert journal_state.sent_at == datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(
        microseconds=1
    )
    with pytest.raises(ValueError, match="row 7"):
        unpack(7, b'[9,"fp"]')


def test_a_journal_url_names_its_database_and_batch() -> None:
    where = parse_url("redis://:s3cret@cache:6380/2/spring-campaign")
    assert where.database == "redis://:s3cret@cache:6380/2"
    assert where.name == "spring-campaign"
    assert "s3cret" not in where.shown and where.shown.endswith("cache:6380/2/spring-campaign")
    assert parse_url("rediss://cache:6380/0/a/b").database == "rediss://cache:6380/0"
    assert parse_url("rediss://cache:6380/0/a/b").name == "a/b"
    for bad in ("redis://cache:6379/0", "http://cache/0/x", "redis://:pw@cache:1/x/y"):
        with pytest.raises(ValueError, match="DB/NAME") as caught:
            parse_url(bad)
        assert "pw" not in str(caught.value)


async def test_a_journal_of_another_key_or_batch_is_refused(aof_url: str) -> None:
    url = fresh(aof_url)
    journal = await _open(url)
    await journal.arecord(E.SUBMIT, 0, "fp")
    await journal.aclose()
    with pytest.raises(JournalKeyError, match="another API key"):
        await _open(url, key=key_id("another key"))
    with pytest.raises(ValueError, match="another batch"):
        await _open(url, "other rows")
    journal = await _open(url)  # neither refusal kept the lease
    assert journal.event_of(0) is E.SUBMIT
    await journal.aclose()


async def test_a_redis_that_can_lose_acknowledged_writes_is_refused_unless_accepted(
    redis_url: str,
) -> None:
    url = fresh(redis_url)  # the conftest's server: no AOF, no replica
    with pytest.raises(JournalDurabilityError, match="accept_journal_loss=True") as caught:
        await _open(url)
    assert "appendonly no" in caught.value.reason
    journal = await _open(url, accept_journal_loss=True)  # refused before the lease
    try:
        assert journal.durability.mode == "accepted-loss"
        await journal.arecord(E.SUBMIT, 0, "fp")
    finally:
        await journal.aclose()


async def test_a_second_runner_is_refused_while_the_first_lives(aof_url: str) -> None:
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=0.6)
    try:
        await asyncio.sleep(0.9)  # past one lease: the beat keeps it
        with pytest.raises(JournalLockedError, match="held by another run") as caught:
            await _open(url)
        assert caught.value.pid is not None and caught.value.host
        await first.arecord(E.SUBMIT, 0, "fp")
    finally:
        first.close()
    second = await _open(url)  # given up: taken at once
    assert second.event_of(0) is E.SUBMIT
    await second.aclose()


async def test_a_lapsed_lease_is_taken_over_and_the_paused_holder_cannot_write(
    aof_url: str,
) -> None:
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=0.3)
    await first.arecord(E.SUBMIT, 0, "fp0")
    assert first._beat is not None
    first._beat.cancel()  # paused: no beat, no write
    await asyncio.sleep(0.5)
    second = await _open(url, lease_seconds=1.0)
    try:
        assert second.holding is not None and first.holding is not None
        assert second.holding.split()[1] > first.holding.split()[1]  # a higher fence
        with pytest.raises(JournalFencedError, match="another run took"):
            await first.arecord(E.SUBMIT, 1, "fp1")  # so row 1 is not sent
        with pytest.raises(JournalWriteError):
            first.record(E.ACCEPTED, 0, "fp0", project="p", video="v")
        await second.arecord(E.ACCEPTED, 0, "fp0", project="p0", video="v0")
    finally:
        first.close()  # does not give up the other's lease
        await asyncio.sleep(0.5)
        with pytest.raises(JournalLockedError):
            await _open(url)
        await second.aclose()
    third = await _open(url)
    try:
        assert third.event_of(1) is E.NONE and third.rows[0].project_id == "p0"
    finally:
        await third.aclose()


def hold_up_the_loop(seconds: float) -> None:
    """Block the running loop (as a busy machine or a long computation does)."""
    time.sleep(seconds)


async def test_a_holder_held_up_past_its_lease_that_nobody_replaced_goes_on(
    aof_url: str,
) -> None:
    """A loop held up longer than the lease (a loaded machine, a long open): the lease
    lapsed, but no run took it since (the fencing counter is still this run's), so its
    next write (or beat) and ``ensure_held`` take it again and go on; a run that
    comes once it is taken again is refused. A lapsed lease another run took and gave
    up (the counter moved) stays lost: see the tests around this one."""
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=0.3)
    assert first.holding is not None
    fence = int(first.holding.split()[1])
    client = aioredis.from_url(aof_url)
    try:
        await first.arecord(E.SUBMIT, 0, "fp0")
        assert first._beat is not None
        first._beat.cancel()  # (a beat would take it again too: the same script as below)
        hold_up_the_loop(0.5)  # no beat: the lease lapses in Redis
        assert await client.get(first.key_of("lease")) is None
        await first.arecord(E.SUBMIT, 1, "fp1")  # not fenced: nobody took it
        assert (await client.get(first.key_of("lease"))).decode() == first.holding
        hold_up_the_loop(0.5)
        first.ensure_held(2)  # asked of Redis: taken again
        assert first.holding is not None and not first.lease.fenced
        with pytest.raises(JournalLockedError):
            await _open(url)
        await first.arecord(E.ACCEPTED, 1, "fp1", project="p1", video="v1")
        value = first.holding
    finally:
        await client.aclose()
        await first.aclose()
    # a beat of the closed run still on its way cannot take the lease it gave up
    lease = first.lease
    assert lease._scripts[RENEW](keys=lease._renew_keys, args=[value, 300]) == 0
    second = await _open(url)
    try:
        assert second.event_of(1) is E.ACCEPTED and second.event_of(0) is E.SUBMIT
        assert second.holding is not None
        assert int(second.holding.split()[1]) == fence + 2  # moved on by the release only
    finally:
        await second.aclose()


async def test_a_holder_whose_beat_finds_the_lease_taken_is_refused_as_fenced(
    aof_url: str,
) -> None:
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=0.3)
    await first.arecord(E.SUBMIT, 0, "fp0")
    client = aioredis.from_url(aof_url)
    try:  # the lease lapses while the holder is paused (its beat not yet woken) ...
        await client.delete(first.key_of("lease"))
    finally:
        await client.aclose()
    second = await _open(url, lease_seconds=5.0)
    try:
        await asyncio.sleep(0.3)  # ... and its beat, woken first, finds it taken
        assert first.holding is None
        with pytest.raises(JournalFencedError, match="another run took"):
            await first.arecord(E.SUBMIT, 1, "fp1")  # refused as fenced, not as "lost"
    finally:
        first.close()
        await second.aclose()


async def test_a_rows_end_is_not_waited_for_and_closing_writes_it(aof_url: str) -> None:
    # A row's end moves no money: the row goes on without a round trip to Redis (the
    # batch's pace), and the journal still has it once closed.
    url = fresh(aof_url)
    journal = await _open(url)
    client = aioredis.from_url(aof_url)
    project, video = "p" * 24, "v" * 24
    try:
        await journal.arecord(E.SUBMIT, 0, "fp0")
        await journal.arecord(E.ACCEPTED, 0, "fp0", project=project, video=video)
        journal.record(E.DONE, 0, "fp0", status="completed", title="Row 0")
        assert journal.event_of(0) is E.ACCEPTED  # not in Redis yet: not waited for
        journal.close()  # before the group writer ever ran
        state, _ = unpack(0, await client.hget(journal.key_of("rows"), "0"))
        assert state.event is E.DONE and state.title == "Row 0"
        assert state.project_id == project
    finally:
        await client.aclose()


async def test_a_rows_end_that_cannot_be_written_stops_the_journal(aof_url: str) -> None:
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=5.0)
    client = aioredis.from_url(aof_url)
    try:
        await first.arecord(E.SUBMIT, 0, "fp0")
        await first.arecord(E.ACCEPTED, 0, "fp0", project="p" * 24, video="v" * 24)
        await client.delete(first.key_of("lease"))  # another run takes the journal over
        second = await _open(url, lease_seconds=5.0)
        first.record(E.DONE, 0, "fp0", status="completed", title="Row 0")  # not waited for
        for _ in range(100):  # its group write is refused, fenced ...
            if first.holding is None:
                break
            await asyncio.sleep(0.01)
        with pytest.raises(JournalFencedError):  # ... and no record of money follows it
            await first.arecord(E.SUBMIT, 1, "fp1")
        state, _ = unpack(0, await client.hget(first.key_of("rows"), "0"))
        assert state.event is E.ACCEPTED  # the end the fenced run saw was not written
        await second.aclose()
    finally:
        first.close()
        await client.aclose()


async def test_a_submit_survives_redis_killed_right_after_it_was_acknowledged() -> None:
    from tests.redis_server import RedisUnavailable, free_port, require_redis, start_redis

    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        try:
            proc = start_redis(port, workdir, appendfsync="always")
        except RedisUnavailable as exc:
            if require_redis():
                pytest.fail(f"CI needs redis-server: {exc}")
            pytest.skip(str(exc))
        url = f"redis://127.0.0.1:{port}/0/killed"
        try:
            journal = await _open(url, lease_seconds=0.5)
            for index in range(50):
                await journal.arecord(E.SUBMIT, index, f"fp{index}")
            proc.send_signal(signal.SIGKILL)  # the moment the last submit was acknowledged
            proc.wait(timeout=10)
            with pytest.raises(JournalWriteError, match="row 50's submission"):
                await journal.arecord(E.SUBMIT, 50, "fp50")  # Redis is gone: not sent
            journal.close()
            proc = start_redis(port, workdir, appendfsync="always")  # from its AOF
            await asyncio.sleep(0.6)  # the killed run's lease lapses
            again = await _open(url)
            try:
                assert again.counts()[E.SUBMIT] == 50 and again.event_of(50) is E.NONE
                assert again.rows[49].fingerprint == "fp49"
            finally:
                await again.aclose()
        finally:
            proc.kill()
            proc.wait(timeout=10)


async def test_an_unreachable_redis_is_a_fleet_error() -> None:
    from tests.redis_server import free_port

    with pytest.raises(FleetError):
        await _open(f"redis://127.0.0.1:{free_port()}/0/nobody")


async def test_a_finished_row_costs_redis_under_300_bytes(redis_url: str) -> None:
    url = fresh(redis_url)
    rows = 10_000
    journal = await _open(url, accept_journal_loss=True)

    async def run(index: int) -> None:
        fp, project, video = f"{index:016x}", f"{index:024x}", f"{index + 7:024x}"
        await journal.arecord(E.SUBMIT, index, fp)
        await journal.arecord(E.ACCEPTED, index, fp, project=project, video=video)
        journal.record(E.DONE, index, fp, status="completed", title=f"Spring row {index}")

    try:
        for start in range(0, rows, 500):
            await asyncio.gather(*(run(i) for i in range(start, start + 500)))
        journal.writer.write_now()  # the last rows' ends, not waited for
        used = await journal._aredis.memory_usage(journal.key_of("rows"), samples=0)
    finally:
        await journal.aclose()
    per_row = used / rows
    print(f"\nRedis bytes per finished row: {per_row:.0f}")
    assert per_row < 300
    started = time.perf_counter()
    again = await _open(url, accept_journal_loss=True)
    print(f"open at {rows} rows: {time.perf_counter() - started:.2f} s")
    try:
        assert again.counts()[E.DONE] == rows
        assert again.rows[rows - 1].title == f"Spring row {rows - 1}"
        assert again.owns(f"{123:024x}") and not again.owns(f"{rows + 5:024x}")
    finally:
        await again.aclose()


async def test_a_redis_with_a_replica_waits_for_it_and_everysec_alone_is_refused() -> None:
    from tests.redis_server import RedisUnavailable, free_port, require_redis, start_redis

    primary_port, replica_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        try:
            primary = start_redis(
                primary_port, one, appendfsync="everysec", more=["--repl-diskless-sync-delay", "0"]
            )
        except RedisUnavailable as exc:
            if require_redis():
                pytest.fail(f"CI needs redis-server: {exc}")
            pytest.skip(str(exc))
        replica = None
        try:
            url = f"redis://127.0.0.1:{primary_port}/0/replicated"
            with pytest.raises(JournalDurabilityError, match="appendfsync everysec"):
                await _open(url)  # synced once a second: a crash loses up to a second
            more = ["--replicaof", "127.0.0.1", str(primary_port)]
            replica = start_redis(replica_port, two, more=more)
            client = aioredis.from_url(f"redis://127.0.0.1:{primary_port}/0")
            try:
                for _ in range(100):  # the replica's first sync
                    info = await client.info("replication")
                    if dict(info.get("slave0") or {}).get("state") == "online":
                        break
                    await asyncio.sleep(0.05)
            finally:
                await client.aclose()
            journal = await _open(url)
            try:
                assert journal.durability == journal.durability._replace(
                    mode="replicas", replicas=1
                )
                await journal.arecord(E.SUBMIT, 0, "fp0")
                journal.record(E.ACCEPTED, 0, "fp0", project="p", video="v")
            finally:
                await journal.aclose()
            mirror = aioredis.from_url(f"redis://127.0.0.1:{replica_port}/0")
            try:  # WAIT returned: the replica has both records
                assert await mirror.hlen("asyncclient:journal:replicated:rows") == 1
                assert b'"p"' in await mirror.hget("asyncclient:journal:replicated:rows", "0")
            finally:
                await mirror.aclose()
        finally:
            for proc in (primary, replica):
                if proc is not None:
                    proc.kill()
                    proc.wait(timeout=10)


async def test_a_damaged_record_refuses_the_journal(aof_url: str) -> None:
    url = fresh(aof_url)
    journal = await _open(url)
    await journal.arecord(E.SUBMIT, 0, "fp0")
    rows = journal.key_of("rows")
    await journal.aclose()
    client = aioredis.from_url(aof_url)
    try:
        await client.hset(rows, "1", b"not a record")
    finally:
        await client.aclose()
    with pytest.raises(ValueError, match="damaged"):
        await _open(url)
    with pytest.raises(ValueError, match="damaged"):  # and the refusal let the lease go
        await _open(url)


WORKER = Path(__file__).with_name("journal_worker.py")


async def _start_worker(url: str, lease: float) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, str(WORKER), url, str(lease), stdout=asyncio.subprocess.PIPE
    )


async def _line(proc: asyncio.subprocess.Process, prefix: str) -> str:
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        if not line:
            raise AssertionError(f"the worker exited before printing {prefix!r}")
        if line.startswith(prefix):
            return line.strip()


async def test_a_stopped_runner_woken_after_another_took_over_writes_nothing(
    redis_url: str,
) -> None:
    url = fresh(redis_url)
    worker = await _start_worker(url, 0.5)
    try:
        await _line(worker, "submitted 5")
        worker.send_signal(signal.SIGSTOP)  # paused mid-batch: no beat, no write
        await asyncio.sleep(1.0)  # its lease lapses
        taker = await _open(url, "worker rows", key=None, accept_journal_loss=True)
        try:
            rows_key = taker.key_of("rows")
            seen = taker.counts()[E.SUBMIT]
            assert seen >= 6
            worker.send_signal(signal.SIGCONT)
            line = await _line(worker, "fenced")
            assert await asyncio.wait_for(worker.wait(), 30) == 3
            assert line == f"fenced {seen}"  # its very next record was refused
            assert await taker._aredis.hlen(rows_key) == seen  # not a single record more
            await taker.arecord(E.SUBMIT, seen, "taker's")  # the new runner writes
        finally:
            await taker.aclose()
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()


async def test_a_killed_runner_is_replaced_once_its_lease_lapses(redis_url: str) -> None:
    url = fresh(redis_url)
    worker = await _start_worker(url, 0.8)
    await _line(worker, "submitted 2")
    worker.kill()  # SIGKILL: nothing given up
    await worker.wait()
    with pytest.raises(JournalLockedError):
        await _open(url, "worker rows", key=None, accept_journal_loss=True)
    await asyncio.sleep(1.0)
    again = await _open(url, "worker rows", key=None, accept_journal_loss=True)
    try:
        assert again.counts()[E.SUBMIT] >= 3
    finally:
        await again.aclose()


async def test_a_creation_leaves_only_while_the_lease_is_surely_held(aof_url: str) -> None:
    """``ensure_held``, called right before a creation leaves: a lease renewed lately
    passes at once; one not renewed for half a lease is asked of Redis (renewed, it
    passes); one another run took is refused as fenced (the creation does not leave)."""
    url = fresh(aof_url)
    first = await _open(url, lease_seconds=0.4)
    try:
        first.ensure_held(0)  # just taken
        assert first._beat is not None
        first._beat.cancel()  # paused: no beat
        await asyncio.sleep(0.25)  # past half the lease, within it
        first.ensure_held(0)  # asked of Redis, still this run's: renewed
        assert first.lease.sure_until > time.monotonic()
        await asyncio.sleep(0.6)  # lapsed
        second = await _open(url, lease_seconds=5.0)
        try:
            with pytest.raises(JournalFencedError, match="row 1's submission"):
                first.ensure_held(1)
            with pytest.raises(JournalFencedError):
                first.ensure_held(2)  # and from then on
        finally:
            await second.aclose()
    finally:
        await first.aclose()


async def test_rows_a_lapsed_run_was_sending_settle_from_its_lease_end(aof_url: str) -> None:
    """A run that lapsed (paused or dead) may still send a row it recorded ``submit`` for
    until its lease ended: the next run counts that row as sent no earlier than the
    lease's end; a run that gave its lease up leaves the rows' times as they were."""
    url = fresh(aof_url)
    wall = Wall()
    first = await _open(url, lease_seconds=0.3, now=wall)
    await first.arecord(E.SUBMIT, 0, "fp0")
    assert first._beat is not None
    first._beat.cancel()
    await asyncio.sleep(0.5)
    wall.at = T0 + timedelta(hours=1)  # the next run's clock: an hour later
    second = await _open(url, now=wall)
    try:
        assert second.lease.previous_end is not None and second.lease.previous_end < 5
        sent_at = second.rows[0].sent_at
        assert sent_at is not None and sent_at > T0 + timedelta(minutes=59)
    finally:
        await second.aclose()  # gives the lease up: nothing of it can leave any more
    third = await _open(url, now=wall)
    try:
        assert third.lease.previous_end is None
        assert third.rows[0].sent_at == T0  # as recorded
    finally:
        await third.aclose()
    await first.aclose()
