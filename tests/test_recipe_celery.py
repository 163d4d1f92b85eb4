"""The Celery recipe (``examples/celery_batch``, ``docs/queue-celery.md``) with real
processes: a real redis-server (AOF ``appendfsync always``) as broker, result backend
and journal store; real ``celery worker`` processes, SIGKILLed mid-batch; the emulator in
this process. Judged by the emulator (one project a title, credits charged once a row),
the result backend (one success, with the counts) and the task's delivery log.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from asyncclient.emulator import Emulator
from examples.celery_batch import Settings, batch_status, create_app, deliveries_key, enqueue_batch
from tests.test_cli_main import clean_env

CREATE = "/v1/project/create"
ROOT = Path(__file__).resolve().parent.parent
SCALE = 600.0
VISIBILITY = 6.0
"""The broker's visibility timeout here: above a worker's run of the rest of the batch
(a few seconds), below the test's patience."""


def rows(n: int, prefix: str) -> list[dict[str, str]]:
    return [
        {"title": f"{prefix} {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


def recipe_env(aof_url: str, **more: str) -> dict[str, str]:
    """The recipe's variables: one redis-server, database 0 for the journals, 1 the
    broker, 2 the results; short timings for a test."""
    server = aof_url.rsplit("/", 1)[0]
    return {
        "CELERY_BROKER_URL": f"{server}/1",
        "CELERY_RESULT_BACKEND": f"{server}/2",
        "BATCH_JOURNAL_REDIS": f"{server}/0",
        "BATCH_VISIBILITY_TIMEOUT": str(VISIBILITY),
        "BATCH_RESTORE_INTERVAL": "1",
        "BATCH_JOURNAL_LEASE": "2",  # a dead worker's lease lapses 2 s after its last beat
        "BATCH_SETTLE_WINDOW": "2",  # a row cut off as it left: looked for again after 2 s
        "BATCH_LOCKED_RETRY_AFTER": "1",
        "BATCH_SPACING": "0.05",
        "BATCH_PLAN": "premium",
        "BATCH_TIME_SCALE": str(SCALE),
        **more,
    }


class Workers:
    """``celery -A examples.celery_batch worker`` processes, each in a process group of
    its own (the worker and its pool's child), killed together."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.running: list[asyncio.subprocess.Process] = []

    async def start(self, name: str) -> asyncio.subprocess.Process:
        out = (self.logs / f"{name}.log").open("wb")
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "celery", "-A", "examples.celery_batch", "worker",
                "--concurrency", "1", "--hostname", f"{name}@%h", "--loglevel", "INFO",
                "--without-mingle", "--without-gossip", "--without-heartbeat",
                stdout=out, stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
                env=self.env, cwd=ROOT, start_new_session=True,
            )  # fmt: skip
        finally:
            out.close()
        self.running.append(proc)
        return proc

    async def kill(self, proc: asyncio.subprocess.Process) -> None:
        """SIGKILL the worker and its pool's child at once."""
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        self.running.remove(proc)

    async def stop(self, proc: asyncio.subprocess.Process) -> None:
        """A warm shutdown (SIGTERM); killed if it takes more than 15 s."""
        if proc.returncode is None:
            proc.terminate()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), 15)
        await self.kill(proc)

    async def kill_all(self) -> None:
        for proc in list(self.running):
            await self.kill(proc)

    def log(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.logs.glob("*.log"))
        )


async def _advance(emu: Emulator) -> None:
    while True:
        await asyncio.sleep(0.02)
        emu.advance(5.0)


async def until(what: Callable[[], Any], timeout: float, why: str, workers: Workers) -> Any:
    """Wait (the event loop serving the emulator) until ``what()`` is true; its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = what()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{why} after {timeout} s\n{workers.log()}")
        await asyncio.sleep(0.02)


async def deliveries(log: Any, name: str) -> list[dict[str, Any]]:
    return [json.loads(entry) for entry in await log.lrange(deliveries_key(name), 0, -1)]


def projects_by_name(emu: Emulator) -> collections.Counter[str]:
    return collections.Counter(v.name for v in emu.store.videos.values())


@pytest.mark.heavy
async def test_a_batch_task_killed_twice_is_delivered_again_and_completes_once(
    aof_url: str, tmp_path: Path
) -> None:
    """A web handler queues a 50-row batch; a worker runs it and is SIGKILLed (its whole
    process group) mid-batch, then the next one too; Redis delivers the unacknowledged
    message again after the visibility timeout each time, and the third worker finishes
    it from the journal. One success in the result backend, with every row completed;
    one project a title; credits charged once a row; three deliveries, the two later
    ones marked redelivered by the broker."""
    name, n = "spring-celery", 50
    env = recipe_env(aof_url)
    settings = Settings.from_env(env)
    workers = Workers({**clean_env(), **env, "PYTHONPATH": str(ROOT)}, tmp_path)
    log = aioredis.from_url(settings.journal_redis)
    web = create_app(settings)
    async with Emulator(time_scale=SCALE, seed=51) as emu:
        key = emu.add_team(plan="premium", credits=100_000)
        team = emu.team_id(key)
        workers.env.update(ASYNCCLIENT_API_KEY=key, ASYNCCLIENT_BASE_URL=emu.url)

        def made() -> int:
            return int(emu.counters.projects.get(team, 0))

        async def started(count: int) -> list[dict[str, Any]]:
            entries = [e for e in await deliveries(log, name) if e["event"] == "start"]
            return entries if len(entries) >= count else []

        mover = asyncio.ensure_future(_advance(emu))
        try:
            task_id = enqueue_batch(name, rows(n, "Spring"), app=web)
            first = await workers.start("w1")
            await until(lambda: made() >= 10, 30, "the first worker made 10 projects", workers)
            assert first.returncode is None and made() < n, "the run ended before the kill"
            await workers.kill(first)
            killed_at = made()

            # Redis delivers the message again once the visibility timeout has passed
            # since it was delivered to the dead worker: to the next worker that sweeps.
            delivered = (await started(1))[0]["at"]
            await asyncio.sleep(max(0.0, delivered + VISIBILITY + 0.2 - time.time()))
            second = await workers.start("w2")
            await until(lambda: started(2), 30, "the second worker started the task", workers)
            await until(
                lambda: made() >= killed_at + 10, 30, "the second worker made projects", workers
            )
            assert second.returncode is None and made() < n, "the run ended before the kill"
            await workers.kill(second)

            delivered = (await started(2))[1]["at"]
            await asyncio.sleep(max(0.0, delivered + VISIBILITY + 0.2 - time.time()))
            third = await workers.start("w3")
            status = await until(
                lambda: (s := batch_status(name, app=web))["state"] in ("SUCCESS", "FAILURE") and s,
                40,
                "the batch did not end",
                workers,
            )
            await asyncio.sleep(1.0)  # a delivery after the success would be logged now
            await workers.stop(third)
            entries = await deliveries(log, name)
        finally:
            mover.cancel()
            await workers.kill_all()
            await log.aclose()
            web.close()
    assert status["state"] == "SUCCESS", (status, workers.log())
    assert task_id == "video-batch-spring-celery"
    summary = status["result"]
    assert summary["rows"] == n and summary["outcomes"]["completed"] == n, summary
    assert summary["resumed"] and summary["submitted_before"] >= killed_at + 10
    cost = emu.store.costs["class"]
    assert summary["credits_spent"] == summary["accepted"] * cost
    names = projects_by_name(emu)
    assert len(names) == n and set(names.values()) == {1}  # one project a title
    assert emu.counters.credits_spent[team] == n * cost  # charged once a row
    starts = [e for e in entries if e["event"] == "start"]
    assert len(starts) >= 3, entries
    assert [e["worker"].split("@")[0] for e in entries if e["event"] == "done"] == ["w3"]
    again = {e["worker"].split("@")[0] for e in starts if e["redelivered"]}
    assert {"w2", "w3"} <= again, entries  # delivered again by the broker, not retried


@pytest.mark.heavy
async def test_a_batch_longer_than_the_visibility_timeout_is_delivered_twice_and_paid_once(
    aof_url: str, tmp_path: Path
) -> None:
    """The trade-off of a visibility timeout shorter than a batch: the batch (40 rows a
    quarter of a second apart) outlives the 3 s timeout, and a second worker gets its
    message while the first still runs it. The journal's lease refuses that delivery
    (JournalLockedError): it retries every second until the first run ends, then
    resumes a finished journal and sends nothing. Both deliveries succeed; every row
    was sent once and paid once."""
    name, n = "longer-than-visibility", 40
    short = 3.0  # seconds: the batch runs about 10
    env = recipe_env(aof_url, BATCH_VISIBILITY_TIMEOUT=str(short), BATCH_SPACING="0.25")
    settings = Settings.from_env(env)
    workers = Workers({**clean_env(), **env, "PYTHONPATH": str(ROOT)}, tmp_path)
    log = aioredis.from_url(settings.journal_redis)
    web = create_app(settings)
    async with Emulator(time_scale=SCALE, seed=52) as emu:
        key = emu.add_team(plan="premium", credits=100_000)
        team = emu.team_id(key)
        workers.env.update(ASYNCCLIENT_API_KEY=key, ASYNCCLIENT_BASE_URL=emu.url)

        async def events(event: str, count: int = 1) -> list[dict[str, Any]]:
            found = [e for e in await deliveries(log, name) if e["event"] == event]
            return found if len(found) >= count else []

        mover = asyncio.ensure_future(_advance(emu))
        try:
            enqueue_batch(name, rows(n, "Long"), app=web)
            await workers.start("w1")
            delivered = (await until(lambda: events("start"), 30, "w1 started", workers))[0]
            await asyncio.sleep(max(0.0, delivered["at"] + short + 0.2 - time.time()))
            await workers.start("w2")
            await until(lambda: events("locked"), 30, "w2 was refused by the lease", workers)
            assert emu.counters.projects.get(team, 0) < n, "the first run ended too soon"
            done = await until(lambda: events("done", 2), 40, "both deliveries ended", workers)
            status = batch_status(name, app=web)
            entries = await deliveries(log, name)
        finally:
            mover.cancel()
            await workers.kill_all()
            await log.aclose()
            web.close()
    assert [e["worker"].split("@")[0] for e in done] == ["w1", "w2"], entries
    refused = [e for e in entries if e["event"] == "locked"]
    assert refused and all(e["worker"].startswith("w2@") for e in refused), entries
    assert "held by another run" in refused[0]["error"]
    second = [e for e in entries if e["event"] == "start" and e["worker"].startswith("w2@")]
    assert second[0]["redelivered"] and second[-1]["retries"] >= 1, entries
    assert status["state"] == "SUCCESS", status
    summary = status["result"]  # the first success is kept, not replaced by the second
    assert summary["outcomes"]["completed"] == n and summary["submitted"] == n, summary
    assert not summary["resumed"] and summary["credits_spent"] == n * emu.store.costs["class"]
    again = done[1]  # the second delivery resumed a finished journal: it sent nothing
    assert again["outcomes"]["completed"] == n and again["submitted"] == 0, entries
    names = projects_by_name(emu)
    assert len(names) == n and set(names.values()) == {1}
    creations = sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)
    assert creations == n  # nothing sent twice
    assert emu.counters.credits_spent[team] == n * emu.store.costs["class"]


@pytest.mark.heavy
async def test_a_pool_child_killed_mid_batch_is_requeued_at_once_by_its_worker(
    aof_url: str, tmp_path: Path
) -> None:
    """Only the pool's child dies (SIGKILL, as the OOM killer does); its worker lives on.
    With ``task_reject_on_worker_lost`` the worker puts the message back at once, not
    after the visibility timeout (an hour here), and its new child resumes the batch:
    one success, one project a title, each row charged once."""
    name, n = "child-killed", 40
    env = recipe_env(aof_url, BATCH_VISIBILITY_TIMEOUT="3600")
    settings = Settings.from_env(env)
    workers = Workers({**clean_env(), **env, "PYTHONPATH": str(ROOT)}, tmp_path)
    log = aioredis.from_url(settings.journal_redis)
    web = create_app(settings)
    async with Emulator(time_scale=SCALE, seed=53) as emu:
        key = emu.add_team(plan="premium", credits=100_000)
        team = emu.team_id(key)
        workers.env.update(ASYNCCLIENT_API_KEY=key, ASYNCCLIENT_BASE_URL=emu.url)

        async def events(event: str) -> list[dict[str, Any]]:
            return [e for e in await deliveries(log, name) if e["event"] == event]

        mover = asyncio.ensure_future(_advance(emu))
        try:
            enqueue_batch(name, rows(n, "Child"), app=web)
            worker = await workers.start("w1")
            await until(
                lambda: emu.counters.projects.get(team, 0) >= 10, 30, "10 projects", workers
            )
            child = (await events("start"))[0]["pid"]
            assert child != worker.pid
            os.kill(child, signal.SIGKILL)
            status = await until(
                lambda: (s := batch_status(name, app=web))["state"] in ("SUCCESS", "FAILURE") and s,
                30,
                "the batch did not end",
                workers,
            )
            assert worker.returncode is None  # the worker itself lived on
            await workers.stop(worker)
            entries = await deliveries(log, name)
        finally:
            mover.cancel()
            await workers.kill_all()
            await log.aclose()
            web.close()
    assert status["state"] == "SUCCESS", (status, workers.log())
    assert status["result"]["outcomes"]["completed"] == n and status["result"]["resumed"]
    done = [e for e in entries if e["event"] == "done"]
    assert len(done) == 1 and done[0]["pid"] != child, entries
    assert any(e["redelivered"] for e in entries if e["event"] == "start"), entries
    names = projects_by_name(emu)
    assert len(names) == n and set(names.values()) == {1}
    assert emu.counters.credits_spent[team] == n * emu.store.costs["class"]
