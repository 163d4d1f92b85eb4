"""A fleet of processes sharing one API key: one poller through Redis (issue "Fleet").

Everything runs for real, side by side in one run: the emulator (in this process, its
clock 60 times real time; the workers' plans are scaled alike), a throwaway redis-server
(``tests/redis_server.py``) and worker processes, each one process of a fleet
(``tests/fleet_worker.py``: it creates N talking-avatar videos with the shared key,
awaits them, and prints the monotonic time it learnt each outcome, its poller's and its
client's requests and its fleet counters). Each run has a team of its own (a fresh key:
a fleet of its own in Redis) on the Premium plan, with credits nobody runs out of. The
workers poll at a steady interval (no backoff, no jitter). Times are real seconds. A
worker that exits non-zero or prints no report stops the benchmark with its stderr;
what the others wrote to stderr is printed after the tables.

- **Requests per completed job, a fleet through Redis / one process.** 8 processes x 250
  jobs with ``--redis`` (one lease holder polls for the 2,000), against 1 process x
  2,000 jobs without Redis; in the same repetition, the real alternative: 8 processes x
  250 jobs without Redis (each process polls its own jobs, reading the team's video list
  down to them). Counted at the service: every request of the run's team in the
  emulator's request log except the creations (list pages, reads by id, and the one
  detail read of each finished video), over the completed jobs. The list pages alone
  are shown too, and the workers' own count (``client_requests`` less the creations)
  beside the service's. Poll interval 0.5 s, videos 3 to 9 s. For information, the
  detection delay of each run (the emulator finishing a video to its worker learning
  it, in intervals, median and worst): a fleet should not learn later than one process.
- **Polling behind notifications.** 8 processes x 250 jobs with Redis; every creation
  carries the fleet's notification URL (``https://127.0.0.1:PORT/hooks``, a trustme
  certificate the emulator's deliveries trust), which every worker serves on the same
  port with SO_REUSEPORT, so the kernel spreads the deliveries over the fleet. Polling
  is the safety net (``--safety-net S``, S = 6 s: a first round S after the poller
  starts, then one every S); videos take 2 to 6 S, so the lease holder's safety net is
  due about 6 times within a run and makes those rounds (each reads what notifications
  have not finished yet). The figure is the poller requests (list pages, reads by id,
  detail reads) summed over the workers, per job: if polling were not held back by the
  notifications, each video's detail alone would be 1 per job. Notifications: the
  emulator's deliveries per job (1.0: each answered 200 at its first attempt), and the
  workers' callbacks (``notified``, summed when every worker stopped serving). How long a
  delivery took (the video finishing to the receiving worker's 200) is shown: a round
  that finds a finished video whose notification is still on its way reads its detail.
- **A lease holder SIGKILLed.** 4 processes x 50 jobs with Redis, poll interval I = 0.5 s
  (lease 3 I, beats every 0.75 I). Once every worker has created its jobs, the worker
  holding the lease (the last to print ``leading``) is SIGKILLed one interval after the
  first video finished; videos take 3 to 9 s, so they finish over about 12 intervals
  from a little before the kill on. For each job of the surviving workers, the
  detection delay: from the emulator finishing the video (its record, converted to this
  host's monotonic clock as ``polling.py`` does) to the worker learning it, in
  intervals; the worst of a run. Side by side, the same run without the kill (the
  would-be victim's jobs left out alike).

Each part also tells how much of the machine's CPU other processes used while it ran
(``/proc/stat`` less this process and its children): the workers, the emulator and
redis-server share the machine, and the delays and deliveries are sensitive to it.

Run from the repository root (about 6 minutes; ``--quick``: 2 x 10 against 1 x 20,
2 x 10 with notifications, 3 x 10 killed, once each, about 35 s):

    python benchmarks/fleet.py [--quick] [--repeat 3] [--only counts notifications kill]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import itertools
import json
import os
import resource
import signal
import socket
import ssl
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

import trustme  # noqa: E402

from asyncclient.emulator import Emulator  # noqa: E402
from benchmarks._processes import process_cpu  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402
from tests.redis_server import RedisUnavailable, redis_server, require_redis  # noqa: E402

WORKER = ROOT / "tests" / "fleet_worker.py"
SCALE = 60.0
"""Service seconds per real second (the emulator's clock; the workers' plans alike)."""
CREATE = "POST /v1/project/create/{format}"
LIST = "GET /v1/video/list"
DETAIL = "GET /v1/video/{videoId}"
RUN_SECONDS = 240.0
"""The longest a run may take before it is an error (its workers are then killed)."""
STOP_SECONDS = 15.0


class Others:
    """How busy the machine was with other processes while a part ran: the CPU time
    the kernel counted (``/proc/stat``) less this process's and its children's (the
    workers and redis-server: reaped, from ``getrusage``, or still running, from
    ``/proc``), as a share of all the machine's CPUs."""

    def __init__(self) -> None:
        self._start = self._now()

    @staticmethod
    def _children() -> float:
        """CPU seconds so far of this process's children that still run."""
        me, cpu = os.getpid(), 0.0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == me:
                cpu += process_cpu(int(entry.name)) or 0.0
        return cpu

    @classmethod
    def _now(cls) -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat") as stat:
                ticks = [int(x) for x in stat.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        hz = os.sysconf("SC_CLK_TCK")
        busy = (sum(ticks[:8]) - ticks[3] - ticks[4]) / hz  # all but idle and iowait
        ours = cls._children() + sum(
            getattr(resource.getrusage(who), field)
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
            for field in ("ru_utime", "ru_stime")
        )
        return busy, ours, time.monotonic()

    def share(self) -> float | None:
        """Other processes' CPU over the machine's CPU since this was made (0 to 1)."""
        end = self._now()
        if self._start is None or end is None:
            return None
        busy, ours, wall = (b - a for a, b in zip(self._start, end, strict=True))
        cpus = os.cpu_count() or 1
        return max(0.0, busy - ours) / (wall * cpus) if wall > 0 else None


def _others(share: float | None) -> str:
    if share is None:
        return "other processes' CPU unknown"
    return f"other processes used {share:.0%} of the machine's CPU meanwhile"


@dataclass(frozen=True)
class Sizes:
    """The sizes of one form (full or quick)."""

    count_processes: int
    count_jobs: int
    """Jobs per process of the fleets of the first measurement."""
    count_interval: float
    count_processing: float
    """Mean real seconds a video takes (jitter 50%)."""
    hook_processes: int
    hook_jobs: int
    safety_net: float
    hook_processing: float
    kill_processes: int
    kill_jobs: int
    kill_interval: float
    kill_processing: float
    repeat: int


FULL = Sizes(
    count_processes=8,
    count_jobs=250,
    count_interval=0.5,
    count_processing=6.0,
    hook_processes=8,
    hook_jobs=250,
    safety_net=6.0,
    hook_processing=24.0,
    kill_processes=4,
    kill_jobs=50,
    kill_interval=0.5,
    kill_processing=6.0,
    repeat=3,
)
QUICK = Sizes(
    count_processes=2,
    count_jobs=10,
    count_interval=0.25,
    count_processing=2.0,
    hook_processes=2,
    hook_jobs=10,
    safety_net=1.0,
    hook_processing=3.0,
    kill_processes=3,
    kill_jobs=10,
    kill_interval=0.25,
    kill_processing=3.0,
    repeat=1,
)
JITTER = 0.5


# -- worker processes ------------------------------------------------------------------------


class WorkerFailed(RuntimeError):
    """A worker exited, or printed no report, when it should not have."""


class Worker:
    """One ``tests/fleet_worker.py`` process and what it printed, as it printed it."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self.process = ""
        """Its id in the fleet."""
        self.created = asyncio.Event()
        self.leading = False
        self.lease_lines: list[tuple[float, bool]] = []
        """(monotonic time read, leading) for each ``leading`` / ``following`` line."""
        self.report: dict[str, Any] | None = None
        self.reported = asyncio.Event()
        self.ended = asyncio.Event()
        """Its standard output closed (it exited, or was killed)."""
        self.killed = False
        self.stderr = bytearray()
        self._readers = [
            asyncio.ensure_future(self._read_stdout()),
            asyncio.ensure_future(self._read_stderr()),
        ]

    @classmethod
    async def start(cls, name: str, args: Sequence[str], *, stdin: bool) -> Worker:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(WORKER),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            limit=1 << 24,  # the report is one line of about 40 bytes per job
        )
        return cls(name, proc)

    async def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                text = line.decode(errors="replace").strip()
                if text.startswith("process "):
                    self.process = text.split()[1]
                elif text.startswith("created "):
                    self.created.set()
                elif text in ("leading", "following"):
                    self.leading = text == "leading"
                    self.lease_lines.append((time.monotonic(), self.leading))
                elif text.startswith('{"report"'):
                    self.report = json.loads(text)["report"]
                    self.reported.set()
                elif text.startswith('{"final"') and self.report is not None:
                    self.report.update(json.loads(text)["final"])
        finally:
            self.ended.set()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk

    def failure(self, what: str) -> WorkerFailed:
        tail = self.stderr.decode(errors="replace")[-4000:].strip() or "(empty)"
        status = self.proc.returncode
        return WorkerFailed(
            f"fleet worker {self.name} {what} (exit status {status}); its stderr:\n{tail}"
        )

    async def until(self, event: asyncio.Event, what: str) -> None:
        """Wait for ``event``; raise with the worker's stderr if it ends first."""
        waiter = asyncio.ensure_future(event.wait())
        ender = asyncio.ensure_future(self.ended.wait())
        try:
            await asyncio.wait({waiter, ender}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            ender.cancel()
        if not event.is_set():
            await self._exit(STOP_SECONDS)
            raise self.failure(f"ended before it {what}")

    def kill(self) -> None:
        self.killed = True
        self.proc.send_signal(signal.SIGKILL)

    async def _exit(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.proc.wait(), seconds)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        await asyncio.gather(*self._readers, return_exceptions=True)

    async def stop(self) -> None:
        """Close its standard input (a notification server's signal to stop) and wait
        for it to exit; a worker that did not exit cleanly with a report is an error."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        await self._exit(STOP_SECONDS)
        if self.killed:
            return
        if self.proc.returncode != 0:
            raise self.failure("failed")
        if self.report is None:
            raise self.failure("printed no report")

    async def abandon(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self._exit(STOP_SECONDS)


@contextlib.asynccontextmanager
async def fleet(
    emu: Emulator,
    processes: int,
    jobs: int,
    args: Sequence[str],
    *,
    stdin: bool = False,
) -> AsyncIterator[tuple[str, list[Worker]]]:
    """Start ``processes`` workers on a new team, each creating ``jobs`` videos; yield the
    team's id and the workers; every worker is stopped (killed after an error)."""
    key = emu.add_team(plan="premium", credits=10**8)
    cat = emu.catalog
    common = [
        *("--base-url", emu.url, "--api-key", key, "--jobs", str(jobs), "--scale", str(SCALE)),
        *("--avatar", cat.avatars[0], "--voice", cat.voices[0]),
        *args,
    ]
    workers: list[Worker] = []
    try:
        for i in range(processes):
            workers.append(await Worker.start(f"{i + 1}/{processes}", common, stdin=stdin))
        yield emu.team_id(key), workers
    except BaseException:
        await asyncio.gather(*(w.abandon() for w in workers), return_exceptions=True)
        raise


async def reports(
    workers: Sequence[Worker], *, before: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Wait until every worker not killed has reported (``RUN_SECONDS`` at most), run
    ``before`` (a coroutine function), then stop them all."""
    try:
        await asyncio.wait_for(
            asyncio.gather(
                *(w.until(w.reported, "printed its report") for w in workers if not w.killed)
            ),
            RUN_SECONDS,
        )
    except asyncio.TimeoutError:
        late = [w for w in workers if not w.killed and w.report is None]
        await asyncio.gather(*(w.abandon() for w in late), return_exceptions=True)
        raise late[0].failure(f"did not report within {RUN_SECONDS:g} s") from None
    if before is not None:
        await before()
    for worker in workers:
        await worker.stop()


# -- what the service recorded ---------------------------------------------------------------


def finished_at(emu: Emulator, team: str) -> dict[str, float]:
    """Video id -> when the emulator finished it, as this host's ``time.monotonic()``."""
    now, mono, scale = emu.clock.now(), time.monotonic(), emu.clock.time_scale
    return {
        v.id: mono - (now - v.done_at) / scale
        for v in emu.store.videos.values()
        if v.team_id == team
    }


def created_at(emu: Emulator, team: str) -> dict[str, float]:
    """Video id -> when it was created, as this host's ``time.monotonic()``."""
    now, mono, scale = emu.clock.now(), time.monotonic(), emu.clock.time_scale
    return {
        v.id: mono - (now - v.created_at) / scale
        for v in emu.store.videos.values()
        if v.team_id == team
    }


def routes(emu: Emulator, team: str, since: int) -> collections.Counter[str]:
    """The team's requests since record ``since`` of the log, by route (``429`` too)."""
    out: collections.Counter[str] = collections.Counter()
    for record in emu.requests[since:]:
        if record.team == team:
            out[record.route] += 1
            out["429"] += record.status == 429
    return out


_SEEDS = itertools.count(1)


def emulator(processing: float, **options: Any) -> Emulator:
    """The emulator of a measurement: videos of ``processing`` real seconds +/- 50%.

    Each has a seed of its own: emulators seeded alike hand out the same API keys and
    video ids, and a fleet that met a key before would find the outcomes Redis keeps for
    its video ids (those of another emulator's videos) and end its jobs at once.
    """
    return Emulator(
        time_scale=SCALE,
        seed=next(_SEEDS),
        processing_seconds=processing * SCALE,
        jitter=JITTER,
        **options,
    )


def total(reports_: Sequence[dict[str, Any]], name: str) -> int:
    return sum(int(r[name]) for r in reports_)


def collected(workers: Sequence[Worker]) -> list[dict[str, Any]]:
    return [w.report for w in workers if w.report is not None and not w.killed]


# -- 1: requests per completed job -----------------------------------------------------------


def stderr_lines(workers: Sequence[Worker]) -> list[str]:
    """What the workers that ran to the end wrote to stderr (warnings), by worker."""
    out = []
    for w in workers:
        if not w.killed:
            out += [f"{w.name}: {line}" for line in w.stderr.decode(errors="replace").splitlines()]
    return out


@dataclass
class CountRun:
    """One fleet (or one process) creating and awaiting its jobs, as counted."""

    label: str
    processes: int
    jobs: int
    """Completed jobs (every worker's ``seen``)."""
    service: collections.Counter[str]
    worker_requests: int
    """The workers' ``client_requests`` summed (creations included)."""
    rounds_led: int
    leads: int
    seconds: float
    """First worker started to last job seen."""
    delays: list[float]
    """Each job: the emulator finishing its video to its worker learning it, intervals."""
    stderr: list[str]

    @property
    def creations(self) -> int:
        return self.service[CREATE]

    @property
    def polling(self) -> int:
        """Every request of the team at the service but the creations (429s included)."""
        return sum(n for route, n in self.service.items() if route != "429") - self.creations

    @property
    def per_job(self) -> float:
        return self.polling / self.jobs

    @property
    def pages_per_job(self) -> float:
        return self.service[LIST] / self.jobs


async def count_run(
    emu: Emulator,
    label: str,
    processes: int,
    jobs: int,
    interval: float,
    redis_url: str | None,
) -> CountRun:
    args = ["--interval", str(interval)]
    if redis_url:
        args += ["--redis", redis_url]
    since = len(emu.requests)
    started = time.monotonic()
    async with fleet(emu, processes, jobs, args) as (team, workers):
        await reports(workers)
    got = collected(workers)
    seen = {v: t for r in got for v, t in r["seen"].items()}
    if len(seen) != processes * jobs:
        raise RuntimeError(f"{label}: {len(seen)} jobs seen of {processes * jobs}")
    done = finished_at(emu, team)
    return CountRun(
        label=label,
        processes=processes,
        jobs=len(seen),
        service=routes(emu, team, since),
        worker_requests=total(got, "client_requests"),
        rounds_led=sum(int(r.get("rounds_led", 0)) for r in got),
        leads=sum(int(r.get("leads", 0)) for r in got),
        seconds=max(seen.values()) - started,
        delays=[(t - done[v]) / interval for v, t in seen.items()],
        stderr=stderr_lines(workers),
    )


@dataclass
class CountResults:
    sizes: Sizes
    runs: list[tuple[CountRun, CountRun, CountRun]] = field(default_factory=list)
    """Per repetition: the fleet through Redis, one process, the fleet without Redis."""
    others: float | None = None


async def measure_counts(sizes: Sizes, redis_url: str) -> CountResults:
    n, m, interval = sizes.count_processes, sizes.count_jobs, sizes.count_interval
    out = CountResults(sizes)
    others = Others()
    async with emulator(sizes.count_processing) as emu:
        for _ in range(sizes.repeat):
            shared = await count_run(emu, f"{n} x {m}, Redis", n, m, interval, redis_url)
            alone = await count_run(emu, f"1 x {n * m}", 1, n * m, interval, None)
            apart = await count_run(emu, f"{n} x {m}, no Redis", n, m, interval, None)
            out.runs.append((shared, alone, apart))
    out.others = others.share()
    return out


def _describe(run: CountRun) -> str:
    s = run.service
    return (
        f"{run.label}: {run.per_job:.3f} req/job ({s[LIST]} list pages + {s[DETAIL]} reads "
        f"by id or detail, {s['429']} x 429; the workers counted "
        f"{(run.worker_requests - run.creations) / run.jobs:.3f})"
    )


def count_figures(res: CountResults) -> list[Figure]:
    sz = res.sizes
    n, m = sz.count_processes, sz.count_jobs
    shared, alone, apart = res.runs[-1]
    setup = (
        f"poll interval {sz.count_interval:g} s, videos {sz.count_processing * (1 - JITTER):g}"
        f" to {sz.count_processing * (1 + JITTER):g} s; {_others(res.others)}"
    )
    counted = "counted at the service: the emulator's request log, creations excluded"
    return [
        Figure(
            name=f"requests per completed job: {n} processes x {m} jobs through Redis / "
            f"1 process x {n * m} ({counted})",
            values=[a.per_job / b.per_job for a, b, _ in res.runs],
            goal="<= 1.2",
            baseline=f"1 process x {n * m} jobs without Redis, same emulator, run alternately;"
            f" {setup}; last run: {_describe(shared)}; {_describe(alone)}",
        ),
        Figure(
            name=f"requests per completed job: {n} processes x {m} jobs without Redis / "
            f"1 process x {n * m}",
            values=[c.per_job / b.per_job for _, b, c in res.runs],
            goal="-",
            baseline=f"the real alternative, in the same repetitions; last run: {_describe(apart)}",
        ),
        Figure(
            name=f"list pages per completed job: {n} x {m} through Redis / 1 x {n * m}",
            values=[a.pages_per_job / b.pages_per_job for a, b, _ in res.runs],
            goal="-",
            baseline="the list pages alone (the part of polling that grows with the pollers)",
        ),
        Figure(
            name=f"list pages per completed job: {n} x {m} without Redis / 1 x {n * m}",
            values=[c.pages_per_job / b.pages_per_job for _, b, c in res.runs],
            goal="-",
            baseline="the list pages alone; each process reads the team's list down to its "
            "deepest pending job",
        ),
        *(
            Figure(
                name=f"detection delay, {what}, intervals: {n} processes x {m} jobs through Redis",
                values=[pick(a.delays) for a, _, _ in res.runs],
                goal="-",
                baseline=(
                    "for information: the emulator finishing a video to its worker learning "
                    f"it, / {sz.count_interval:g} s; in the same repetitions 1 process x "
                    f"{n * m}: {', '.join(f'{pick(b.delays):.2f}' for _, b, _ in res.runs)}; "
                    f"{n} x {m} without Redis: "
                    f"{', '.join(f'{pick(c.delays):.2f}' for _, _, c in res.runs)}"
                ),
            )
            for what, pick in (("median", statistics.median), ("worst", max))
        ),
    ]


# -- 2: polling behind notifications ---------------------------------------------------------


@dataclass
class HookRun:
    jobs: int
    poller_requests: int
    list_requests: int
    detail_requests: int
    rounds_led: int
    notified: int
    """The workers' callbacks, summed (as of each worker's report)."""
    deliveries: int
    delivered_ok: int
    unanswered: int
    """Jobs whose video's notification was never answered 200."""
    service: collections.Counter[str]
    span: float
    """First creation to last video finished, seconds."""
    safety_net: float
    delays: list[float]
    """Seconds from a video finishing to its worker learning it."""
    lags: list[float]
    """Seconds from a video finishing to the end of its notification's first delivery
    (answered once the receiving worker confirmed it and told the fleet)."""
    stderr: list[str]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def hook_run(
    emu: Emulator, sizes: Sizes, redis_url: str, certfile: Path, keyfile: Path
) -> HookRun:
    port = _free_port()
    args = [
        *("--redis", redis_url, "--safety-net", str(sizes.safety_net)),
        *("--webhook-url", f"https://127.0.0.1:{port}/hooks", "--listen", str(port)),
        *("--certfile", str(certfile), "--keyfile", str(keyfile)),
    ]
    since, attempts_since = len(emu.requests), len(emu.webhook_attempts)
    n, m = sizes.hook_processes, sizes.hook_jobs
    async with fleet(emu, n, m, args, stdin=True) as (team, workers):
        await reports(workers, before=emu.settle)  # deliveries in flight reach a server
    got = collected(workers)
    done, made = finished_at(emu, team), created_at(emu, team)
    seen = {v: t for r in got for v, t in r["seen"].items()}
    if len(seen) != n * m:
        raise RuntimeError(f"notifications: {len(seen)} jobs seen of {n * m}")
    attempts = [a for a in emu.webhook_attempts[attempts_since:] if a.video_id in done]
    ok = collections.Counter(a.video_id for a in attempts if a.status == 200)
    now, mono, scale = emu.clock.now(), time.monotonic(), emu.clock.time_scale
    return HookRun(
        jobs=len(seen),
        poller_requests=total(got, "requests"),
        list_requests=total(got, "list_requests"),
        detail_requests=total(got, "detail_requests"),
        rounds_led=sum(int(r.get("rounds_led", 0)) for r in got),
        notified=total(got, "notified"),
        deliveries=len(attempts),
        delivered_ok=sum(ok.values()),
        unanswered=sum(1 for v in done if not ok[v]),
        service=routes(emu, team, since),
        span=max(done.values()) - min(made.values()),
        safety_net=sizes.safety_net,
        delays=[t - done[v] for v, t in seen.items()],
        lags=[mono - (now - a.time) / scale - done[a.video_id] for a in attempts if a.attempt == 1],
        stderr=stderr_lines(workers),
    )


@dataclass
class HookResults:
    sizes: Sizes
    runs: list[HookRun] = field(default_factory=list)
    others: float | None = None


async def measure_hooks(sizes: Sizes, redis_url: str) -> HookResults:
    ca = trustme.CA()
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    cert = ca.issue_cert("127.0.0.1")
    out = HookResults(sizes)
    others = Others()
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        certfile, keyfile = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
        certfile.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
        cert.private_key_pem.write_to_path(str(keyfile))
        async with emulator(sizes.hook_processing, webhook_ssl=trusting) as emu:
            for _ in range(sizes.repeat):
                out.runs.append(await hook_run(emu, sizes, redis_url, certfile, keyfile))
    out.others = others.share()
    return out


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def hook_figures(res: HookResults) -> list[Figure]:
    sz = res.sizes
    n, m = sz.hook_processes, sz.hook_jobs
    last = res.runs[-1]
    return [
        Figure(
            name=f"polling requests per completed job, notifications on, {n} processes x {m} "
            "jobs through Redis",
            values=[r.poller_requests / r.jobs for r in res.runs],
            goal="<= 0.1",
            baseline=(
                "absolute, not a ratio: the workers' poller requests (list pages, reads by "
                f"id, detail reads) summed, over the jobs; safety net every {sz.safety_net:g} s"
                f", videos {sz.hook_processing * (1 - JITTER):g} to "
                f"{sz.hook_processing * (1 + JITTER):g} s; {_others(res.others)}; last run: "
                f"{last.list_requests / last.jobs:.3f} list pages + "
                f"{last.detail_requests / last.jobs:.3f} reads per job in "
                f"{last.rounds_led} rounds led, over {last.span:.1f} s "
                f"({last.span / sz.safety_net:.1f} safety-net intervals) from the first "
                "creation to the last video finished; a notification's delivery ended "
                f"{statistics.median(last.lags):.2f} s (median), "
                f"{_quantile(last.lags, 0.9):.2f} s (9th decile) after its video finished"
            ),
        ),
        Figure(
            name="notification deliveries per job (the emulator's attempts)",
            values=[r.deliveries / r.jobs for r in res.runs],
            goal="<= 1",
            baseline=(
                "1.0: each video's one notification answered 200 at its first attempt (the "
                "service retries any other answer, or none within 10 s, a minute later); "
                f"last run: {last.deliveries} attempts, {last.delivered_ok} answered 200, "
                f"{last.unanswered} videos never answered 200"
            ),
        ),
        Figure(
            name="notifications handled per job across the fleet (the workers' `notified`)",
            values=[r.notified / r.jobs for r in res.runs],
            goal="-",
            baseline=(
                "the workers' on_event callbacks summed, as each worker tells when it stops "
                f"serving (last run: {last.notified} of {last.jobs}); 1.0: each notification "
                "handled once across the fleet"
            ),
        ),
    ]


# -- 3: the lease holder SIGKILLed -----------------------------------------------------------


@dataclass
class KillRun:
    killed: bool
    delays: list[float]
    """Surviving workers' jobs: finished to learnt, in poll intervals."""
    takeover: float | None
    """Intervals from the kill to a surviving worker printing ``leading``."""
    before: int
    """Surviving jobs whose video finished before the kill (or would-be kill)."""
    within_lease: int
    """... finished from the kill to a lease and a beat after it."""
    after: int
    stderr: list[str]


async def kill_run(emu: Emulator, sizes: Sizes, redis_url: str, kill: bool) -> KillRun:
    interval = sizes.kill_interval
    args = ["--redis", redis_url, "--interval", str(interval)]
    n, m = sizes.kill_processes, sizes.kill_jobs
    async with fleet(emu, n, m, args) as (team, workers):
        await asyncio.wait_for(
            asyncio.gather(*(w.until(w.created, "created its jobs") for w in workers)),
            RUN_SECONDS,
        )
        first = min(finished_at(emu, team).values())
        await asyncio.sleep(max(0.0, first + interval - time.monotonic()))
        for _ in range(int(RUN_SECONDS / 0.01)):
            holders = [w for w in workers if w.leading]
            if holders:
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("no worker took the lease")
        victim = max(holders, key=lambda w: w.lease_lines[-1][0])
        at = time.monotonic()
        if kill:
            victim.kill()
        await reports(workers)
    done = finished_at(emu, team)
    survivors = [w for w in workers if w is not victim]
    seen = {v: t for w in survivors if w.report is not None for v, t in w.report["seen"].items()}
    if len(seen) != (n - 1) * m:
        raise RuntimeError(f"kill: {len(seen)} surviving jobs seen of {(n - 1) * m}")
    takeovers = [t for w in survivors for t, leading in w.lease_lines if leading and t > at]
    window = 3 * interval * (1 + 1 / 4)  # a lease and a beat
    finishes = [done[v] for v in seen]
    return KillRun(
        killed=kill,
        delays=[(t - done[v]) / interval for v, t in seen.items()],
        takeover=(min(takeovers) - at) / interval if kill and takeovers else None,
        before=sum(1 for t in finishes if t < at),
        within_lease=sum(1 for t in finishes if at <= t < at + window),
        after=sum(1 for t in finishes if t >= at + window),
        stderr=stderr_lines(workers),
    )


@dataclass
class KillResults:
    sizes: Sizes
    runs: list[tuple[KillRun, KillRun]] = field(default_factory=list)
    """Per repetition: killed, not killed."""
    others: float | None = None


async def measure_kills(sizes: Sizes, redis_url: str) -> KillResults:
    out = KillResults(sizes)
    others = Others()
    async with emulator(sizes.kill_processing) as emu:
        for _ in range(sizes.repeat):
            killed = await kill_run(emu, sizes, redis_url, kill=True)
            kept = await kill_run(emu, sizes, redis_url, kill=False)
            out.runs.append((killed, kept))
    out.others = others.share()
    return out


def kill_figures(res: KillResults) -> list[Figure]:
    sz = res.sizes
    n, m, interval = sz.kill_processes, sz.kill_jobs, sz.kill_interval
    killed, kept = res.runs[-1]
    takeover = "n/a" if killed.takeover is None else f"{killed.takeover:.2f}"
    what = f"{n} processes x {m} jobs through Redis, poll interval {interval:g} s"
    return [
        Figure(
            name=f"detection delay, lease holder SIGKILLed, worst, intervals ({what})",
            values=[max(k.delays) for k, _ in res.runs],
            goal="<= 4",
            baseline=(
                "the surviving workers' jobs: emulator's finish to the worker learning it, "
                f"/ {interval:g} s (lease {3 * interval:g} s = 3 intervals); "
                f"{_others(res.others)}; last run: median "
                f"{statistics.median(killed.delays):.2f}, a survivor leading {takeover} "
                f"intervals after the kill; of its {len(killed.delays)} jobs "
                f"{killed.before} finished before the kill, {killed.within_lease} within a "
                f"lease and a beat after it, {killed.after} later"
            ),
        ),
        Figure(
            name="detection delay, the same run without the kill, worst, intervals",
            values=[max(k.delays) for _, k in res.runs],
            goal="-",
            baseline=(
                "side by side, alternately; the would-be victim's jobs left out alike "
                f"(last run: median {statistics.median(kept.delays):.2f})"
            ),
        ),
    ]


# -- the report ------------------------------------------------------------------------------

PARTS = ("counts", "notifications", "kill")


@dataclass
class Results:
    counts: CountResults | None = None
    hooks: HookResults | None = None
    kills: KillResults | None = None


async def measure(sizes: Sizes, only: Sequence[str] = PARTS) -> Results:
    out = Results()
    with redis_server() as redis_url:
        if "counts" in only:
            out.counts = await measure_counts(sizes, redis_url)
        if "notifications" in only:
            out.hooks = await measure_hooks(sizes, redis_url)
        if "kill" in only:
            out.kills = await measure_kills(sizes, redis_url)
    return out


def figures_of(results: Results) -> list[Figure]:
    out: list[Figure] = []
    if results.counts:
        out += count_figures(results.counts)
    if results.hooks:
        out += hook_figures(results.hooks)
    if results.kills:
        out += kill_figures(results.kills)
    return out


async def figures(quick: bool = False) -> list[Figure]:
    """The three measurements, 3 repetitions each (quick: tiny fleets, once); none
    without redis-server, unless in CI (where its absence is an error)."""
    try:
        return figures_of(await measure(QUICK if quick else FULL))
    except RedisUnavailable as exc:
        if require_redis():
            raise
        print(f"fleet: not run ({exc})", file=sys.stderr)
        return []


def _spread(delays: Sequence[float]) -> str:
    return f"{statistics.median(delays):.2f} / {max(delays):.2f}"


def absolute(results: Results) -> str:
    lines: list[str] = []
    stderr: list[str] = []
    if results.counts:
        lines += [
            "| run | jobs | seconds | list pages | reads by id + detail | 429s | req/job "
            "(service) | req/job (workers) | leases taken / rounds led | detection delay, "
            "intervals (median / worst) |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for i, runs in enumerate(results.counts.runs, 1):
            for r in runs:
                lines.append(
                    f"| {i}: {r.label} | {r.jobs} | {r.seconds:.1f} | {r.service[LIST]} "
                    f"| {r.service[DETAIL]} | {r.service['429']} | {r.per_job:.3f} "
                    f"| {(r.worker_requests - r.creations) / r.jobs:.3f} "
                    f"| {r.leads} / {r.rounds_led} | {_spread(r.delays)} |"
                )
                stderr += r.stderr
        lines.append("")
    if results.hooks:
        lines += [
            "| run | jobs | span (safety nets) | rounds led | list pages | reads | notified "
            "| deliveries (200) | service req/job | delivery ended, s after finish (median "
            "/ 9th decile / worst) | detection delay, s (median / worst) |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for i, h in enumerate(results.hooks.runs, 1):
            polling = sum(n for k, n in h.service.items() if k != "429") - h.service[CREATE]
            lines.append(
                f"| {i} | {h.jobs} | {h.span:.1f} s ({h.span / h.safety_net:.1f}) "
                f"| {h.rounds_led} | {h.list_requests} | {h.detail_requests} | {h.notified} "
                f"| {h.deliveries} ({h.delivered_ok}) | {polling / h.jobs:.3f} "
                f"| {statistics.median(h.lags):.2f} / {_quantile(h.lags, 0.9):.2f} / "
                f"{max(h.lags):.2f} | {_spread(h.delays)} |"
            )
            stderr += h.stderr
        lines.append("")
    if results.kills:
        lines += [
            "| run | killed | jobs | finished before / within lease+beat / after "
            "| takeover (intervals) | detection delay, intervals (median / worst) |",
            "|--:|---|--:|---|--:|--:|",
        ]
        for i, pair in enumerate(results.kills.runs, 1):
            for k in pair:
                takeover = "-" if k.takeover is None else f"{k.takeover:.2f}"
                lines.append(
                    f"| {i} | {'yes' if k.killed else 'no'} | {len(k.delays)} "
                    f"| {k.before} / {k.within_lease} / {k.after} | {takeover} "
                    f"| {_spread(k.delays)} |"
                )
                stderr += k.stderr
        lines.append("")
    if stderr:
        lines += [f"The workers' stderr ({len(stderr)} lines, the first 20):", ""]
        lines += [f"    {line}" for line in stderr[:20]]
    return "\n".join(lines)


async def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny fleets, once")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions of each part")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    opts = parser.parse_args()
    sizes = QUICK if opts.quick else FULL
    if opts.repeat is not None:
        sizes = dataclasses.replace(sizes, repeat=opts.repeat)
    started = time.perf_counter()
    results = await measure(sizes, opts.only)
    print(f"{machine()}; {time.perf_counter() - started:.0f} s")
    print()
    print(table(figures_of(results)))
    print()
    print(absolute(results))


def main() -> None:
    asyncio.run(_main())


if __name__ == "__main__":
    main()
