"""The arq recipe (``examples/arq_batch``, docs/queue-arq.md) with real processes: a web
handler enqueues a batch, a real ``arq`` worker runs it and is SIGKILLed mid-batch, a
second worker takes the job over (arq delivers it again) and is SIGKILLed too, a third
finishes it. Judged by the emulator (one project a title, credits charged once a row) and
by arq (one job, completed once, its result every row's outcome).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.jobs import JobStatus

from asyncclient.emulator import Emulator
from examples.arq_batch import Config, batch_outcome, start_batch
from tests.test_cli_main import clean_env

ROOT = Path(__file__).resolve().parent.parent
CREATE = "/v1/project/create"
ROWS = 48
CLAIM = 2.0
"""Seconds a dead worker's claim on the job outlives it (arq's own: the job's timeout
plus 10 s, 12 hours in the recipe)."""
LEASE = 5.0
"""Seconds a dead worker's journal lease outlives it: longer than the claim, so the
worker that takes the job over first finds the journal held, and retries (the path a
crash takes when the claim lapses first)."""


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Queued {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


class Worker:
    """One ``python -m arq examples.arq_batch.WorkerSettings`` process, its log in a file."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc, self.log = proc, log

    @classmethod
    async def start(cls, env: dict[str, str], log: Path) -> Worker:
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "arq", "examples.arq_batch.WorkerSettings",
                stdout=out, stderr=asyncio.subprocess.STDOUT, env=env, cwd=log.parent,
            )  # fmt: skip
        return cls(proc, log)

    def text(self) -> str:
        return self.log.read_text("utf-8", errors="replace")

    def lines_of(self, job_id: str) -> list[str]:
        """Its log's lines about the job: ``→`` started, ``↻`` to retry, ``←`` done."""
        return [line for line in self.text().splitlines() if f"{job_id}:run_batch" in line]

    def resumed(self, job_id: str) -> bool:
        """It was refused the job once (the journal held: ``↻``), and runs it now."""
        lines = self.lines_of(job_id)
        return any("↻" in line for line in lines) and "→" in lines[-1]

    async def ready(self) -> None:
        """Wait until it polls the queue (connected, its client made)."""
        await until(lambda: "redis_version=" in self.text(), self, what="the worker to start")
        await asyncio.sleep(0.3)  # on_startup (the client), then its first poll

    async def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def until(
    done: Callable[[], bool], *workers: Worker, what: str, within: float = 90.0
) -> None:
    """Wait for ``done()``; fail after ``within`` seconds, or when a worker exited."""
    deadline = time.monotonic() + within
    while not done():
        for worker in workers:
            assert worker.proc.returncode is None, f"a worker exited:\n{worker.text()[-3000:]}"
        assert time.monotonic() < deadline, f"waited {within:.0f} s for {what}"
        await asyncio.sleep(0.02)


async def _advance(emu: Emulator) -> None:
    while True:  # the service's clock: videos finish
        await asyncio.sleep(0.02)
        emu.advance(5.0)


def worker_env(emu: Emulator, key: str, queue: str, journals: str) -> dict[str, str]:
    env = {k: v for k, v in clean_env().items() if not k.startswith("ARQ_BATCH_")}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "PYTHONIOENCODING": "utf-8",
        "ASYNCCLIENT_API_KEY": key,
        "ASYNCCLIENT_BASE_URL": emu.url,
        "ARQ_BATCH_QUEUE_REDIS": queue,
        "ARQ_BATCH_JOURNAL_REDIS": journals,
        "ARQ_BATCH_JOURNAL_LEASE": str(LEASE),
        "ARQ_BATCH_SETTLE_WINDOW": "2",  # a row cut off while leaving: 2 s, not 10 min
        "ARQ_BATCH_CLAIM": str(CLAIM),
        "ARQ_BATCH_SPACING": "0.2",
        "ARQ_BATCH_PLAN": "premium",
        "ARQ_BATCH_TIME_SCALE": str(emu.clock.time_scale),
    }


class Recipe:
    """The emulator (a premium team), arq's pool, the workers started, the clock moved."""

    def __init__(self, emu: Emulator, key: str, pool: ArqRedis, env: dict[str, str]) -> None:
        self.emu, self.pool, self.env = emu, pool, env
        self.team = emu.team_id(key)
        self.workers: list[Worker] = []

    def projects(self) -> int:
        return int(self.emu.counters.projects.get(self.team, 0))

    async def worker(self, log: Path) -> Worker:
        """A new worker, once it polls the queue."""
        worker = await Worker.start(self.env, log)
        self.workers.append(worker)
        await worker.ready()
        return worker

    async def result(self, job_id: str, runner: Worker) -> Any:
        """The job's result, once arq says it is complete."""
        deadline = time.monotonic() + 60
        while True:
            status, result = await batch_outcome(self.pool, job_id)
            if status is JobStatus.complete:
                return result
            assert runner.proc.returncode is None, runner.text()[-3000:]
            assert time.monotonic() < deadline, runner.text()[-3000:]
            await asyncio.sleep(0.1)

    def check_money(self, n: int) -> None:
        """By the service's records: one project a title, each row charged once."""
        emu = self.emu
        names = collections.Counter(v.name for v in emu.store.videos.values())
        assert len(names) == n and set(names.values()) == {1}
        assert emu.counters.credits_spent[self.team] == n * emu.store.costs["class"]
        creations = sum(1 for r in emu.requests if r.method == "POST" and r.path == CREATE)
        assert creations == n


@contextlib.asynccontextmanager
async def recipe(aof_url: str, seed: int) -> AsyncIterator[Recipe]:
    """The journals in DB 0 of a Redis with AOF ``appendfsync always``, arq's queue in DB 1
    of the same server; every worker stopped (SIGTERM) at the end."""
    queue = aof_url.rsplit("/", 1)[0] + "/1"
    async with Emulator(time_scale=600.0, seed=seed) as emu:
        key = emu.add_team(plan="premium", credits=100_000)
        pool: ArqRedis = await create_pool(RedisSettings.from_dsn(queue))
        mover = asyncio.ensure_future(_advance(emu))
        fleet = Recipe(emu, key, pool, worker_env(emu, key, queue, aof_url))
        try:
            yield fleet
        finally:
            for worker in fleet.workers:
                await worker.stop()
            mover.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await mover
            await pool.aclose()


@pytest.mark.heavy
async def test_a_batch_job_is_finished_once_by_a_third_worker_after_two_were_killed(
    aof_url: str, tmp_path: Path
) -> None:
    """48 rows enqueued by the web handler (twice: one job) to three idle workers; the one
    that takes it runs it while the others wait (its claim holds the job); it is
    SIGKILLed; another takes the job over once the claim lapsed, finds the journal still
    held, retries later, resumes; it is SIGKILLed too; the last one does the same and
    finishes. One result, every row completed, one project a title, credits charged once
    a row. (All three start before the job is enqueued: a worker starting on a loaded
    machine can take longer than the batch left to run.)"""
    name = f"spring-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    killed_at: list[int] = []
    async with recipe(aof_url, seed=61) as fleet:
        pool = fleet.pool
        workers = [await fleet.worker(tmp_path / f"worker{i}.log") for i in (1, 2, 3)]
        job_id = await start_batch(pool, name, rows(ROWS))
        assert await start_batch(pool, name, rows(ROWS)) == job_id  # a retried request

        def running() -> list[Worker]:
            """The live workers running the job now (their last line about it: ``→``)."""
            return [
                w
                for w in workers
                if w.proc.returncode is None and (w.lines_of(job_id) or ["←"])[-1].count("→")
            ]

        async def kill_runner(projects: int) -> Worker:
            """Once ``projects`` projects are made, SIGKILL the one worker running the job."""
            await until(lambda: fleet.projects() >= projects, *workers, what=f"{projects} projects")
            runners = running()
            assert len(runners) == 1, [w.lines_of(job_id) for w in workers]  # never two
            await runners[0].kill()
            workers.remove(runners[0])
            killed_at.append(fleet.projects())
            assert killed_at[-1] < ROWS, "the batch ended before its runner was killed"
            return runners[0]

        first = await kill_runner(10)
        # another worker finds the journal held (the dead worker's lease), retries, resumes
        second = await kill_runner(killed_at[-1] + 5)
        assert second is not first
        (third,) = workers
        result = await fleet.result(job_id, third)

        # asked again after it finished: the same job, not run again
        assert await start_batch(pool, name, rows(ROWS)) == job_id
        assert await pool.queued_jobs() == []
        results = [r for r in await pool.all_job_results() if r.job_id == job_id]
        assert len(results) == 1 and results[0].success
        cost = fleet.emu.store.costs["class"]

    elapsed = time.monotonic() - started
    logs = [w.lines_of(job_id) for w in (first, second, third)]
    # The job's result: every row completed, by a delivery that resumed the journal.
    assert isinstance(result, dict), result
    assert result["rows"] == ROWS and result["completed"] == ROWS
    assert result["outcomes"] == {"completed": ROWS}
    assert result["resumed"] and result["submitted_before"] >= killed_at[-1]
    assert 0 < result["credits_spent"] < ROWS * cost  # this delivery's rows only
    assert result["job_try"] >= 5, logs  # 1 run, then for each kill: held, resumed
    # Delivered again after each kill, first finding the journal still held by the dead
    # worker (a Retry, not a failure), then resuming: at least twice each.
    lines = [line for log in logs for line in log]
    assert sum("retrying job in" in line for line in lines) >= 2, logs
    assert sum("try=" in line and "→" in line for line in lines) >= 4, logs
    assert logs[1] and logs[1][-1].count("→"), logs  # worker 2 was running it when killed
    completions = [line for line in lines if "←" in line]
    assert completions == [logs[2][-1]], logs  # once, by the last worker
    fleet.check_money(ROWS)
    print(f"arq recipe, 2 kills: {elapsed:.1f} s, job_try={result['job_try']}, at {killed_at}")


@pytest.mark.heavy
async def test_a_worker_stopped_for_a_deploy_hands_its_batch_over_at_once(
    aof_url: str, tmp_path: Path
) -> None:
    """SIGTERM (a deploy) cancels the job: arq puts it back at once, the run gives its
    journal lease up, and the standby worker resumes the batch on its next poll, without
    waiting for a claim or a lease to lapse."""
    name = f"deploy-{uuid.uuid4().hex[:8]}"
    async with recipe(aof_url, seed=62) as fleet:
        job_id = await start_batch(fleet.pool, name, rows(24))
        first = await fleet.worker(tmp_path / "worker1.log")
        await until(lambda: fleet.projects() >= 6, first, what="6 projects")
        second = await fleet.worker(tmp_path / "worker2.log")
        assert not second.lines_of(job_id), second.text()
        await first.stop()
        stopped = time.monotonic()
        await until(lambda: bool(second.lines_of(job_id)), second, what="worker 2 to take it")
        handed_over = time.monotonic() - stopped
        result = await fleet.result(job_id, second)
    assert any("cancelled, will be run again" in line for line in first.lines_of(job_id))
    assert handed_over < CLAIM, handed_over  # no claim to lapse (nor a lease: try 2)
    assert result["job_try"] == 2 and result["completed"] == 24, result  # no "held" retry
    assert result["resumed"] and result["submitted_before"] >= 6
    fleet.check_money(24)


async def test_the_recipe_refuses_bad_names_and_settings_before_anything_runs() -> None:
    """A batch name that cannot name a journal, or a journal Redis without a database
    number, is refused at once (the web handler, the worker's start)."""
    with pytest.raises(ValueError, match="batch name"):
        await start_batch(None, "spring/../x", rows(1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ARQ_BATCH_JOURNAL_REDIS"):
        Config.from_env({"ARQ_BATCH_JOURNAL_REDIS": "redis://127.0.0.1:6379"})
    with pytest.raises(ValueError, match="ARQ_BATCH_CLAIM"):
        Config.from_env({"ARQ_BATCH_JOURNAL_REDIS": "redis://h:1/0", "ARQ_BATCH_CLAIM": "0"})
    config = Config.from_env({"ARQ_BATCH_JOURNAL_REDIS": "redis://h:1/2/"})
    assert config.journal_url("spring-1") == "redis://h:1/2/spring-1"
    assert (config.claim, config.journal_lease, config.settle_window) == (30.0, 15.0, 600.0)
