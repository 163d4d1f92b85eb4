"""Crash tests of a batch journaled in Redis, with real processes and a real redis-server
(issue "Batches that outlive their machine"): the runner is the command line
(``python -m asyncclient batch rows.csv --journal redis://.../NAME``), SIGKILLed,
SIGSTOPped, started twice at once, its Redis SIGKILLed; each next run starts in a new
directory with its own copy of the rows, and no journal is ever written on disk. Judged
by the emulator's records: one project a title, every row with its outcome, credits
charged once a row.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import random
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asyncclient.emulator import Emulator
from tests.redis_server import RedisUnavailable, free_port, require_redis, start_redis
from tests.test_cli_main import clean_env, write_rows

REPO = Path(__file__).resolve().parent.parent
CREATE = "/v1/project/create"
HELD = "held by another run"
FENCED = re.compile(r"could not record row \d+'s .*lease.*; the journal stops here")
"""A record refused because this run's lease lapsed (another run took it, or may have)."""


# -- the runs ------------------------------------------------------------------------------


class Runner:
    """One ``asyncclient batch`` process; its output is read as it comes (a full pipe
    would stall it)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._output = asyncio.ensure_future(proc.communicate())
        self.out = self.err = ""

    @property
    def running(self) -> bool:
        return self.proc.returncode is None and not self._output.done()

    async def ended(self, timeout: float = 120.0) -> int:
        """Its exit status, once it exited (its output read)."""
        raw_out, raw_err = await asyncio.wait_for(asyncio.shield(self._output), timeout)
        self.out, self.err = raw_out.decode(), raw_err.decode()
        assert self.proc.returncode is not None
        return self.proc.returncode

    async def kill(self) -> None:
        assert self.running, f"the run ended before it could be killed: {self.err[-2000:]}"
        self.proc.send_signal(signal.SIGKILL)
        assert await self.ended() == -signal.SIGKILL

    def document(self) -> dict[str, Any]:
        """What ``--json`` printed."""
        return json.loads(self.out)  # type: ignore[no-any-return]


async def wait_for(done: Callable[[], bool], runner: Runner) -> None:
    """Wait until ``done()`` holds, the run still running."""
    while not done():
        assert runner.running, f"the run ended first: {runner.err[-2000:]}"
        await asyncio.sleep(0.01)


def held_for(err: str) -> float:
    """The seconds a refusal says the holder's lease has left."""
    found = re.search(r"for (\d+(?:\.\d+)?) s more", err)
    assert found is not None, err
    return float(found.group(1))


def batch_argv(journal: str, emu: Emulator, key: str, *more: str) -> list[str]:
    return [
        "batch", "rows.csv", "--template", "tpl_welcome", "--journal", journal,
        "--base-url", emu.url, "--api-key", key,
        "--journal-lease", "2",  # a dead or paused run is replaced 2 s after its last beat
        "--settle-window", "2",  # a row cut off before its request left: 2 s, not 10 min
        "--spacing", "0", "--json", *more,
    ]  # fmt: skip


def fresh_dir(tmp_path: Path, name: str, n: int) -> Path:
    """A new directory with its own copy of the rows."""
    where = tmp_path / name
    where.mkdir()
    write_rows(where / "rows.csv", n)
    return where


def no_journal_on_disk(tmp_path: Path) -> None:
    written = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if "journal" in p.name]
    assert not written, written


async def _advance(emu: Emulator) -> None:
    while True:
        await asyncio.sleep(0.02)
        emu.advance(5.0)


class Service:
    """The emulator, a premium team, its clock moved along (videos finish), and the
    runs started against it (any still running at the end is killed)."""

    def __init__(self, emu: Emulator, **team: Any) -> None:
        self.emu = emu
        self.key = emu.add_team(plan="premium", credits=1_000_000, **team)
        self.team = emu.team_id(self.key)
        self.runners: list[Runner] = []
        self._mover = asyncio.ensure_future(_advance(emu))

    async def start(self, argv: list[str], cwd: Path) -> Runner:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "asyncclient", *argv,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**clean_env(), "PYTHONPATH": str(REPO)},
            cwd=cwd,
        )  # fmt: skip
        self.runners.append(Runner(proc))
        return self.runners[-1]

    async def take_over(
        self, argv: list[str], cwd: Path, until: Callable[[], bool] | None = None
    ) -> tuple[Runner, int]:
        """Start the run, again while it is refused because the journal's lease is held
        (after the time the refusal says is left), until one runs: it ended, or
        ``until()`` holds while it runs. Returns it and the refusals before it."""
        for refusals in range(20):
            runner = await self.start(argv, cwd)
            while runner.running and not (until is not None and until()):  # noqa: ASYNC110 (no event to wait on)
                await asyncio.sleep(0.01)
            if runner.running:
                return runner, refusals
            if await runner.ended() != 2 or HELD not in runner.err:
                return runner, refusals
            await asyncio.sleep(held_for(runner.err) + 0.05)
        raise AssertionError(f"still held after 20 tries: {runner.err}")

    async def stop(self) -> None:
        self._mover.cancel()
        for runner in self.runners:
            if runner.running:
                runner.proc.send_signal(signal.SIGKILL)
                runner.proc.send_signal(signal.SIGCONT)
                await runner.ended()

    @property
    def projects(self) -> int:
        return int(self.emu.counters.projects.get(self.team, 0))

    def at_least(self, count: int) -> Callable[[], bool]:
        return lambda: self.projects >= count

    @property
    def cost(self) -> int:
        return int(self.emu.store.costs["class"])

    def mark(self) -> int:
        """Where the request log is now (a moment to tell requests by)."""
        return len(self.emu.requests)

    def creations(self, since: int = 0) -> list[Any]:
        log = self.emu.requests
        found = (log[i] for i in range(since, len(log)))
        return [r for r in found if r.method == "POST" and r.path == CREATE]

    def told(self, titles: list[str], marks: dict[str, int]) -> str:
        """When each creation of these titles came, by the test's marked moments."""
        wanted, lines = set(titles), []
        for at, r in enumerate(self.emu.requests):
            if r.method == "POST" and r.path == CREATE and r.name in wanted:
                after = [name for name, mark in marks.items() if mark <= at]
                lines.append(f"{r.name}: request {at} (after {after[-1] if after else '-'})")
        return "; ".join(lines)

    def check_once_a_row(self, n: int, marks: dict[str, int] | None = None) -> None:
        """One project a title; a creation that made a project per row, any other one
        refused by the service (made nothing); credits charged once a row."""
        names = collections.Counter(v.name for v in self.emu.store.videos.values())
        twice = [name for name, count in names.items() if count > 1]
        assert not twice, f"titles made more than once: {self.told(twice, marks or {})}"
        assert set(names) == {f"Row {i}" for i in range(n)}, f"{n - len(names)} rows lost"
        creations = self.creations()
        assert sum(1 for r in creations if r.project is not None) == n
        assert all(r.status >= 400 for r in creations if r.project is None)
        assert self.emu.counters.credits_spent[self.team] == n * self.cost

    def check_rows(self, document: dict[str, Any], n: int) -> None:
        """The ``--json`` of the run that ended the batch: every row completed, with the
        project the service made for its title."""
        summary, rows = document["summary"], document["rows"]
        assert summary["completed"] == n and summary["exitCode"] == 0, ("completed", summary)
        assert summary["pending"] == 0 and summary["unresolved"] == 0, ("pending", summary)
        assert sorted(r["row"] for r in rows) == list(range(n))
        assert {r["status"] for r in rows} == {"completed"}
        project_of = {v.name: v.project_id for v in self.emu.store.videos.values()}
        wrong = [r["row"] for r in rows if r["projectId"] != project_of[r["title"]]]
        assert not wrong, f"rows reporting another project than their title's: {wrong[:10]}"
        # It reports what the service charged the rows it got accepted itself.
        assert summary["creditsSpent"] == summary["submitted"] * self.cost, ("credits", summary)


# -- 1. SIGKILL at five random points --------------------------------------------------------

ROWS = 5000


def kill_points(rng: random.Random, n: int) -> list[int]:
    """Five project counts between 5 % and 90 % of ``n``, increasing, at least 4 % apart
    (each resumed run sends rows of its own before it is killed)."""
    while True:
        points = sorted(rng.sample(range(n * 5 // 100, n * 90 // 100), 5))
        if all(b - a >= n // 25 for a, b in itertools.pairwise(points)):
            return points


@pytest.mark.heavy
async def test_sigkill_at_five_random_points_of_a_5000_row_batch(
    aof_url: str, tmp_path: Path
) -> None:
    """A 5,000-row batch is SIGKILLed at five random points, each run resumed by the
    next from a new directory (once the dead run's lease lapsed), the fifth resume to
    the end: one project a title, every row completed, one creation that made a project
    per row, credits charged once a row and as the last run reports them."""
    points = kill_points(random.Random(5000), ROWS)
    journal = f"{aof_url}/five-kills"
    refused: list[int] = []
    killed_at: list[int] = []
    async with Emulator(time_scale=600.0, seed=51) as emu:
        service = Service(emu)
        argv = batch_argv(journal, emu, service.key, "--concurrency", "64")
        try:
            for run, point in enumerate(points):
                where = fresh_dir(tmp_path, f"run{run}", ROWS)
                runner, refusals = await service.take_over(argv, where, service.at_least(point))
                refused.append(refusals)
                await runner.kill()
                killed_at.append(service.projects)
                # Its lease lives 2 s more at most: a run started now would be refused.
                await asyncio.sleep(1.0)
            last, refusals = await service.take_over(argv, fresh_dir(tmp_path, "last", ROWS))
            refused.append(refusals)
            code = await last.ended()
        finally:
            await service.stop()
    assert code == 0, last.err[-3000:]
    assert killed_at[-1] < ROWS, killed_at  # the last kill left rows to send
    assert refused[0] == 0 and max(refused) <= 3, refused  # a 2 s lease lapses soon
    no_journal_on_disk(tmp_path)
    service.check_once_a_row(ROWS)
    document = last.document()
    service.check_rows(document, ROWS)
    summary = document["summary"]
    # Every row the service made a project for had been recorded sent first; the rows
    # an earlier run saw finished (maybe none: a run sends before it polls) are told so.
    assert summary["submittedBefore"] >= killed_at[-1], ("before", killed_at, summary)
    assert summary["submittedBefore"] + summary["submitted"] >= ROWS, ("sent", summary)
    assert sum(r["before"] for r in document["rows"]) == summary["doneBefore"], summary


# -- 2. two runners at once ------------------------------------------------------------------


@pytest.mark.heavy
async def test_two_runners_started_together_one_runs(aof_url: str, tmp_path: Path) -> None:
    """Two processes started at once on one journal: one runs every row, the other is
    refused (exit 2, "held by another run") and sends nothing."""
    n = 300
    journal = f"{aof_url}/started-together"
    async with Emulator(time_scale=600.0, seed=52) as emu:
        service = Service(emu)
        argv = batch_argv(journal, emu, service.key, "--concurrency", "16")
        try:
            one, two = await asyncio.gather(
                service.start(argv, fresh_dir(tmp_path, "one", n)),
                service.start(argv, fresh_dir(tmp_path, "two", n)),
            )
            codes = sorted(await asyncio.gather(one.ended(), two.ended()))
        finally:
            await service.stop()
    assert codes == [0, 2], (one.err[-2000:], two.err[-2000:])
    ran, refused = (one, two) if one.proc.returncode == 0 else (two, one)
    assert HELD in refused.err and not refused.out, refused.err
    no_journal_on_disk(tmp_path)
    service.check_once_a_row(n)
    document = ran.document()
    service.check_rows(document, n)
    assert document["summary"]["submitted"] == n  # every creation was the runner's


# -- 3. a paused runner --------------------------------------------------------------------


@pytest.mark.heavy
async def test_a_sigstopped_runner_woken_after_another_took_over_writes_nothing(
    aof_url: str, tmp_path: Path
) -> None:
    """A runner is SIGSTOPped mid-batch; once its lease lapsed another takes the journal
    over from another directory; the first, woken (SIGCONT) while the second runs, stops
    (exit 1: its next record is refused as fenced) and sends no row the second may have
    sent (a request already leaving when it was paused is the second's to find): nothing
    is made twice, and the second finishes every row."""
    n = 300
    journal = f"{aof_url}/paused"
    async with Emulator(time_scale=600.0, seed=53) as emu:
        # A rate limit (400 requests a real second at this scale) keeps rows waiting for
        # their token after their `submit` was recorded, as on any plan: the pause
        # catches some there, every time.
        service = Service(emu, per_minute=40, burst=40)
        argv = batch_argv(journal, emu, service.key, "--concurrency", "16")
        try:
            first = await service.start(argv, fresh_dir(tmp_path, "first", n))
            await wait_for(service.at_least(n // 5), first)
            first.proc.send_signal(signal.SIGSTOP)
            paused_at = service.projects
            marks = {"SIGSTOP": service.mark()}
            # Its requests already sent are answered meanwhile; its lease lapses in 2 s.
            await asyncio.sleep(1.0)
            marks["second started"] = service.mark()
            second, _ = await service.take_over(
                argv, fresh_dir(tmp_path, "second", n), service.at_least(paused_at + n // 10)
            )
            assert second.running, second.err
            marks["SIGCONT"] = service.mark()
            first.proc.send_signal(signal.SIGCONT)
            first_code = await first.ended(timeout=30)
            marks["first ended"] = service.mark()
            code = await second.ended()
        finally:
            await service.stop()
    assert first_code == 1, first.err[-3000:]
    assert FENCED.search(first.err), first.err[-3000:]
    assert code == 0, second.err[-3000:]
    cut_off = re.search(r"(\d+) cut off while submitting", second.err)
    assert cut_off is not None and int(cut_off.group(1)) > 0, second.err[-3000:]  # caught
    no_journal_on_disk(tmp_path)
    service.check_once_a_row(n, marks)
    service.check_rows(second.document(), n)


# -- 4. Redis killed and restarted from its AOF ---------------------------------------------


def own_redis(port: int, workdir: Path) -> Any:
    """A redis-server with an AOF synced on every write (skipped without one, failed
    in CI)."""
    try:
        return start_redis(port, str(workdir), appendfsync="always")
    except RedisUnavailable as exc:
        if require_redis():
            pytest.fail(f"CI needs redis-server: {exc}")
        pytest.skip(str(exc))


@pytest.mark.heavy
async def test_redis_killed_and_restarted_from_its_aof_mid_batch(tmp_path: Path) -> None:
    """The journal's redis-server is SIGKILLed mid-batch: the run stops (a record
    cannot be written: exit 1); restarted on its AOF, the batch is resumed from another
    directory: one project a title, every row completed, credits charged once a row."""
    n = 600
    port = free_port()
    (tmp_path / "redis").mkdir()
    server = own_redis(port, tmp_path / "redis")
    journal = f"redis://127.0.0.1:{port}/0/redis-killed"
    try:
        async with Emulator(time_scale=600.0, seed=54) as emu:
            service = Service(emu)
            argv = batch_argv(journal, emu, service.key, "--concurrency", "16")
            try:
                first = await service.start(argv, fresh_dir(tmp_path, "first", n))
                await wait_for(service.at_least(n // 3), first)
                server.kill()
                server.wait()
                killed_at = service.projects
                first_code = await first.ended(timeout=60)
                server = own_redis(port, tmp_path / "redis")  # it reads its AOF back
                second, _ = await service.take_over(argv, fresh_dir(tmp_path, "second", n))
                code = await second.ended()
            finally:
                await service.stop()
    finally:
        server.kill()
        server.wait()
    assert first_code == 1, first.err[-3000:]
    assert "could not record" in first.err, first.err[-3000:]
    assert code == 0, second.err[-3000:]
    no_journal_on_disk(tmp_path)
    service.check_once_a_row(n)
    document = second.document()
    service.check_rows(document, n)
    assert document["summary"]["submittedBefore"] >= killed_at  # none lost with Redis


# -- 5. a Redis without AOF ------------------------------------------------------------------


@pytest.mark.heavy
async def test_a_redis_without_aof_is_refused_exit_2_unless_the_risk_is_accepted(
    redis_url: str, tmp_path: Path
) -> None:
    """A Redis that can lose acknowledged writes (no AOF, no replica): the command
    refuses the journal (exit 2, saying why) before sending anything; with
    --accept-journal-loss it runs every row."""
    n = 20
    journal = f"{redis_url}/no-aof-{tmp_path.name}"
    async with Emulator(time_scale=600.0, seed=55) as emu:
        service = Service(emu)
        argv = batch_argv(journal, emu, service.key)
        try:
            refused = await service.start(argv, fresh_dir(tmp_path, "refused", n))
            refused_code = await refused.ended()
            sent = {(r.method, r.path) for r in emu.requests}  # the template read, at most
            ran = await service.start(
                [*argv, "--accept-journal-loss"], fresh_dir(tmp_path, "accepted", n)
            )
            code = await ran.ended()
        finally:
            await service.stop()
    assert refused_code == 2, refused.err
    assert "can lose writes it acknowledged" in refused.err, refused.err
    assert "appendfsync always" in refused.err, refused.err
    assert not refused.out and ("POST", CREATE) not in sent, sent  # nothing paid for
    assert code == 0, ran.err[-3000:]
    no_journal_on_disk(tmp_path)
    service.check_once_a_row(n)
    service.check_rows(ran.document(), n)


async def test_the_refusal_of_a_redis_without_aof_names_the_command_line_option(
    redis_url: str, tmp_path: Path
) -> None:
    """The refusal tells the person at the command line what to type."""
    async with Emulator(time_scale=600.0, seed=56) as emu:
        service = Service(emu)
        argv = batch_argv(f"{redis_url}/no-aof-option", emu, service.key)
        try:
            refused = await service.start(argv, fresh_dir(tmp_path, "refused", 2))
            code = await refused.ended()
        finally:
            await service.stop()
    assert code == 2, refused.err
    assert "--accept-journal-loss" in refused.err, refused.err
    assert "accept_journal_loss=True" not in refused.err, refused.err
