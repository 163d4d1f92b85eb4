"""Scale: client CPU per poll round and memory per pending job, 10 to 100,000 jobs (issue 11).

For each size N, N videos are pending in the emulator and a client holds N ``VideoJob``
(``client.jobs.from_video_id``, as a web backend rebuilds them from stored ids), each
awaited by a task of its own (``await job.wait()``); the client's one poller reads them
all every round. The emulator runs in a process of its own, so that this process's CPU
is the client's alone.

- **Client CPU per round** is ``time.process_time()`` of this process (user + system,
  every thread) over steady rounds, divided by the rounds: it includes everything the
  SDK does for a round, HTTP (aiohttp, the limiter, the retry policy), JSON decoding,
  structuring the list pages, the poller's bookkeeping and any waking of awaiting tasks.
  A round ends when the poller sleeps (the clock handed to ``AsyncClient(clock=...)``
  notes the moment; it is the system clock otherwise, and only the poller sleeps).
  Two kinds of round:

  * *quiet*: no job changes (videos take a million service seconds; nothing moves);
  * *moving*: every job's progress moves by one point each round (the emulator's
    clock steps forward 1% of the processing time when a round's first list page is
    asked for), so every job's record is taken in as a change each round (and whatever
    waits for changes is told), as when a two-minute video is polled every two seconds.

- **Memory per pending job** is tracemalloc's traced heap after two rounds (taken while
  the poller sleeps, after ``gc.collect()``) minus the heap before the jobs were built,
  over N: the jobs, their states, the tasks awaiting them (with their deadlines), the
  poller's own per-job entries, the id strings and the lists holding jobs and tasks.
  One-time costs are paid before the baseline (the connections a round uses, lazily
  imported modules, a round over two throwaway jobs). Rounds run slower while
  tracemalloc traces; the CPU is measured after it stopped.

The videos are seeded straight into the emulator's store (the records a creation
request makes, without N creation requests), for a team of their own whose rate
limit nobody reaches; the client is given the same limit. The poller's interval is
fixed (``PollPolicy(min_interval=max_interval=..., jitter=0)``); at 10,000 jobs and more
a round takes longer than that.

Linear growth is shown three ways: the cost per job at each size divided by the cost
per job at 1,000 jobs; a straight line ``cost = fixed + per_job * N`` fitted to all
sizes (least squares on relative error) with each measured point divided by the line;
and the step cost between neighbouring sizes, per added job. Run from the repository
root:

    python benchmarks/scale.py [--quick] [--sizes 10 100 1000 10000 100000] [--interval 0.25]

``--quick`` (and ``python -m benchmarks --quick``) runs 10, 100 and 1,000 jobs, 5 to 10
rounds each, 0.05 s apart (about 6 s); the full run takes about three and a half minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import itertools
import json
import math
import statistics
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCRIPT = str(Path(__file__).resolve())
ROOT = Path(SCRIPT).parent.parent
sys.path.insert(0, str(ROOT))

from aiohttp import ClientSession, web  # noqa: E402

from asyncclient import AsyncClient, RateLimit, VideoFailedError, VideoJob  # noqa: E402
from asyncclient.awaiting.poller import Poller, PollPolicy  # noqa: E402
from benchmarks._processes import process_cpu, serving  # noqa: E402
from benchmarks._report import Figure, machine  # noqa: E402

SIZES = (10, 100, 1_000, 10_000, 100_000)
QUICK_SIZES = (10, 100, 1_000)
PROCESSING = 1_000_000.0
"""Service seconds a video takes (time scale 1): nothing finishes, nothing moves alone."""
PER_MINUTE, BURST = 6_000_000, 100_000
UNLIMITED = RateLimit(per_minute=PER_MINUTE, burst=BURST)
ROUND_TIMEOUT = 600.0
SEED_PATH = "/_bench/seed"
FAIL_PATH = "/_bench/fail"
WATCHED_FINISHES = 100
"""Videos made to finish (the oldest, the newest, the rest spread between) for the
detection figure of a quiet run, in :data:`GROUPS` groups."""
GROUPS = 4
QUIET, MOVING = "quiet", "moving"
CONNECTIONS = 8
"""Connections opened before the baseline (a round reads up to four pages at once)."""


# -- the emulator's process ---------------------------------------------------------------


async def serve(port: int) -> None:
    """Serve the emulator with a seeding route, until stdin closes or SIGTERM.

    ``POST /_bench/seed {"jobs": N, "moving": bool}`` makes a team whose rate nobody
    reaches and N pending talking-avatar videos of it, and answers its key and the
    video ids (oldest first). A moving team's first list page of a round steps the
    service clock 1% of the processing time forward.
    """
    from asyncclient.emulator import Emulator

    emu = Emulator(time_scale=1.0, seed=11, port=port, processing_seconds=PROCESSING, jitter=0.0)
    moving: set[str] = set()

    async def seed(request: web.Request) -> web.Response:
        body = await request.json()
        store, cat = emu.store, emu.catalog
        key = store.add_team("premium", 10**12, per_minute=PER_MINUTE, burst=BURST)
        team = key.team
        if body.get("moving"):
            moving.add(key.secret)
        ids = []
        for i in range(int(body["jobs"])):
            video = {"script": f"Scale {i}", "avatarId": cat.avatars[0], "voiceId": cat.voices[0]}
            project = store.create_project(
                team, "ugc_video", video, name=f"Scale {i}", cost=8, form="A"
            )
            ids.append(project.videos[0].id)
        return web.json_response({"apiKey": key.secret, "videoIds": ids})

    @web.middleware
    async def tick(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if (
            request.path == "/v1/video/list"
            and request.query.get("offset", "0") == "0"
            and request.headers.get("x-api-key") in moving
        ):
            emu.advance(PROCESSING / 100)
        return await handler(request)

    async def fail(request: web.Request) -> web.Response:
        for video_id in (await request.json())["ids"]:
            emu.fail_video(video_id, "failed for the detection figure")
        return web.json_response({"failed": True})

    emu.app.router.add_post(SEED_PATH, seed)
    emu.app.router.add_post(FAIL_PATH, fail)
    emu.app.middlewares.append(tick)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), stop.set)  # the parent closes our stdin to stop us
    async with emu:
        print(f"scale emulator listening on {emu.url}", flush=True)
        await stop.wait()


@asynccontextmanager
async def emulator_process() -> AsyncIterator[tuple[str, int]]:
    """The emulator in a child process: yield its URL and pid; always stop it."""
    wanted = {"url": r"listening on (\S+)"}
    async with serving([SCRIPT, "--serve"], wanted, stop_by_stdin=True) as child:
        yield child.printed["url"], child.pid


# -- the client's side --------------------------------------------------------------------


class RoundClock:
    """The system clock, noting each round's end: the poller's sleep between rounds.

    Nothing else of the client sleeps here (no retry, no wait for a token: the limit is
    never reached); a second sleep within one round (``poller.stats.rounds`` unchanged)
    is counted in ``stray`` and makes the run an error.
    """

    def __init__(self) -> None:
        self.poller: Poller | None = None
        self.ends: list[float] = []
        """``time.process_time()`` at the end of each round."""
        self.stray = 0
        self._round = -1
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def timers(self) -> asyncio.AbstractEventLoop:
        """Real time: the waits' deadlines run on the loop's timers, as the real clock's."""
        return asyncio.get_running_loop()

    async def sleep(self, seconds: float) -> None:
        if self.poller is not None:
            cpu, rounds = time.process_time(), self.poller.stats.rounds
            if rounds == self._round:
                self.stray += 1
            else:
                self._round = rounds
                self.ends.append(cpu)
                for count, future in self._waiting:
                    if len(self.ends) >= count and not future.done():
                        future.set_result(None)
        await asyncio.sleep(seconds)

    async def rounds(self, more: int) -> None:
        """Wait until ``more`` more rounds have ended."""
        future = asyncio.get_running_loop().create_future()
        entry = (len(self.ends) + more, future)
        self._waiting.append(entry)
        try:
            await asyncio.wait_for(future, ROUND_TIMEOUT)
        except asyncio.TimeoutError:
            raise RuntimeError(
                f"no poll round ended in {ROUND_TIMEOUT:.0f} s: does the poller still sleep "
                "through the client's clock between rounds?"
            ) from None
        finally:
            self._waiting.remove(entry)


@dataclass
class Run:
    """One size, one kind of round."""

    jobs: int
    kind: str
    cpu: list[float] = field(default_factory=list)
    """Client CPU seconds of each measured round."""
    wall: float = 0.0
    """Wall seconds of the measured rounds."""
    requests: int = 0
    server_cpu: float | None = None
    heap: int | None = None
    """Traced bytes held for the N awaited jobs (quiet runs only)."""
    seen_rounds: list[int] = field(default_factory=list)
    """Quiet runs: for each video made to finish, the rounds that started after it
    finished and before its job ended (0: the round under way saw it)."""
    seen_seconds: list[float] = field(default_factory=list)
    """...and the seconds from its finishing to its job's end."""
    detect_interval: float = 1.0
    """The poll interval while videos were made to finish."""

    @property
    def seen_intervals(self) -> list[float]:
        return [s / self.detect_interval for s in self.seen_seconds]

    @property
    def rounds(self) -> int:
        return len(self.cpu)

    @property
    def cpu_per_round(self) -> float:
        return sum(self.cpu) / len(self.cpu)

    @property
    def cpu_per_job(self) -> float:
        """Client CPU seconds per round per pending job."""
        return self.cpu_per_round / self.jobs


def heap() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def seed(url: str, n: int, moving: bool) -> bytes:
    body = {"jobs": n, "moving": moving}
    async with ClientSession() as session, session.post(f"{url}{SEED_PATH}", json=body) as resp:
        resp.raise_for_status()
        return await resp.read()


async def warm_up(client: AsyncClient, clock: RoundClock, ids: list[str]) -> None:
    """Before the baseline: open the connections a round uses (it reads up to four list
    pages at once), load what the first calls load (lazily imported modules), and run a
    round over two throwaway jobs: one-time costs, not the jobs'."""
    pages = [client.videos.list_page(limit=100, offset=100 * k) for k in range(CONNECTIONS)]
    await asyncio.gather(*pages)
    tasks = [asyncio.ensure_future(client.jobs.from_video_id(v).wait()) for v in ids]
    await clock.rounds(1)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def rounds_for(n: int, quick: bool) -> tuple[int, int, float]:
    """Fewest and most measured rounds, and the CPU seconds to collect before stopping."""
    if quick:
        return 5, 10, 0.2
    return 5, 30, 3.0


async def measure(
    url: str, pid: int, n: int, kind: str, interval: float, quick: bool, memory: bool
) -> Run:
    """N awaited jobs against the emulator at ``url``: memory, then CPU per round."""
    raw = await seed(url, n, kind == MOVING)
    key = json.loads(raw)["apiKey"]
    clock = RoundClock()
    steady = PollPolicy(min_interval=interval, max_interval=interval, jitter=0.0)
    run = Run(n, kind)
    async with AsyncClient(
        key, base_url=url, plan=UNLIMITED, polling=steady, clock=clock
    ) as client:
        poller = clock.poller = client.jobs.poller
        await warm_up(client, clock, json.loads(raw)["videoIds"][:2])
        gc.collect()
        if memory:
            tracemalloc.start()
        try:
            before = heap() if memory else 0
            ids: list[str] = json.loads(raw)["videoIds"]  # counted: a backend holds its ids
            jobs: list[VideoJob] = [client.jobs.from_video_id(v) for v in ids]
            del ids
            tasks = [asyncio.ensure_future(job.wait()) for job in jobs]
            await clock.rounds(2)
            if memory:
                run.heap = heap() - before
        finally:
            if memory:
                tracemalloc.stop()
        if poller.watching != n:
            raise RuntimeError(f"the poller watches {poller.watching} jobs, not {n}")
        fewest, most, enough = rounds_for(n, quick)
        await clock.rounds(1)
        start = len(clock.ends) - 1
        wall, requests, server = time.perf_counter(), poller.stats.requests, process_cpu(pid)
        while True:
            await clock.rounds(1)
            done = len(clock.ends) - 1 - start
            spent = clock.ends[-1] - clock.ends[start]
            if done >= most or (done >= fewest and spent >= enough):
                break
        server_after = process_cpu(pid)
        run.wall = time.perf_counter() - wall
        run.requests = poller.stats.requests - requests
        ends = clock.ends[start:]
        run.cpu = [b - a for a, b in itertools.pairwise(ends)]
        if server is not None and server_after is not None:
            run.server_cpu = server_after - server
        check(jobs, kind, client)
        if clock.stray:
            raise RuntimeError(f"the client slept {clock.stray} times within a round")
        if kind == QUIET:
            await detection(run, url, jobs, tasks, clock, detect_interval_for(quick))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return run


async def detection(
    run: Run,
    url: str,
    jobs: list[VideoJob],
    tasks: list[asyncio.Future[Any]],
    clock: RoundClock,
    interval: float,
) -> None:
    """Make :data:`WATCHED_FINISHES` of the N videos fail (the oldest, lying deepest in
    the list, the newest, the rest spread between), in four groups, each a quarter of
    an interval later after a round's end than the one before, the poller's interval set
    to ``interval``; note for each the rounds begun and the seconds gone until its job
    ended."""
    poller = clock.poller
    assert poller is not None
    poller.min_interval = poller.max_interval = interval
    await clock.rounds(1)  # the next round is paced by the new interval
    n = len(jobs)
    spread = max(1, WATCHED_FINISHES - 1)
    picked = sorted({round(k * (n - 1) / spread) for k in range(WATCHED_FINISHES)})
    ended: dict[int, tuple[float, int]] = {}

    def note(i: int, _: object) -> None:
        ended.setdefault(i, (now(), poller.stats.rounds))

    for i in picked:
        tasks[i].add_done_callback(functools.partial(note, i))
    async with ClientSession() as session:
        for phase in range(GROUPS):
            group = picked[phase::GROUPS]
            await clock.rounds(1)
            await asyncio.sleep(interval * phase / GROUPS)
            body = {"ids": [jobs[i].video_id for i in group]}
            async with session.post(f"{url}{FAIL_PATH}", json=body) as resp:
                resp.raise_for_status()
            failed_at, rounds_at = now(), poller.stats.rounds
            await asyncio.wait([tasks[i] for i in group], timeout=ROUND_TIMEOUT)
            for i in group:
                if i not in ended or not isinstance(tasks[i].exception(), VideoFailedError):
                    raise RuntimeError(f"job {i} did not end failed: {tasks[i]!r}")
                at, rounds = ended[i]
                run.seen_rounds.append(rounds - rounds_at)
                run.seen_seconds.append(at - failed_at)
    run.detect_interval = interval


def now() -> float:
    return time.monotonic()


def check(jobs: list[VideoJob], kind: str, client: AsyncClient) -> None:
    """Every job still pending; moved (or not) as its kind says; nothing retried."""
    if any(job.done() for job in jobs):
        raise RuntimeError("a job finished during the measurement")
    progress = {job.progress for job in jobs}
    if kind == QUIET and progress != {0}:
        raise RuntimeError(f"quiet rounds, but progress is {sorted(progress, key=str)[:5]}")
    if kind == MOVING and (len(progress) != 1 or progress & {0, None}):
        raise RuntimeError(f"moving rounds, but progress is {sorted(progress, key=str)[:5]}")
    stats = client.stats
    if stats.retries or stats.rate_limited:
        raise RuntimeError(f"the client was throttled or retried: {stats!r}")


async def run_all(
    sizes: list[int], quick: bool, interval: float, log: bool = False
) -> dict[str, list[Run]]:
    """Quiet (with memory) and moving runs at every size, against one emulator process."""
    runs: dict[str, list[Run]] = {QUIET: [], MOVING: []}
    async with emulator_process() as (url, pid):
        for n in sizes:
            for kind in (QUIET, MOVING):
                started = time.perf_counter()
                run = await measure(url, pid, n, kind, interval, quick, memory=kind == QUIET)
                runs[kind].append(run)
                if log:
                    print(
                        f"  {n:>7,} jobs, {kind}: {run.rounds} rounds, "
                        f"{run.cpu_per_round * 1e3:.1f} ms CPU a round "
                        f"({time.perf_counter() - started:.0f} s)",
                        file=sys.stderr,
                    )
    return runs


# -- linearity ----------------------------------------------------------------------------


def line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """``(fixed, per_job)`` of the line through ``points`` (n, cost), least squares on the
    relative error (every size counts alike)."""
    w = [1.0 / (y * y) for _, y in points]
    s0 = sum(w)
    s1 = sum(wi * n for wi, (n, _) in zip(w, points, strict=True))
    s2 = sum(wi * n * n for wi, (n, _) in zip(w, points, strict=True))
    t0 = sum(wi * y for wi, (_, y) in zip(w, points, strict=True))
    t1 = sum(wi * n * y for wi, (n, y) in zip(w, points, strict=True))
    det = s0 * s2 - s1 * s1
    return (t0 * s2 - t1 * s1) / det, (s0 * t1 - s1 * t0) / det


def reference(sizes: list[int]) -> int:
    """The size per-job costs are compared with: 1,000 if run, else the one nearest."""
    return min(sizes, key=lambda n: abs(math.log(n / 1000)))


def scale_table(runs: dict[str, list[Run]]) -> str:
    quiet, moving = runs[QUIET], runs[MOVING]
    sizes = [r.jobs for r in quiet]
    ref = reference(sizes)
    q_ref = next(r for r in quiet if r.jobs == ref)
    m_ref = next(r for r in moving if r.jobs == ref)
    lines = [
        "| pending jobs | rounds (quiet / moving) | list pages a round | client CPU a round, "
        "quiet | per job | per job / at "
        f"{ref:,} | client CPU a round, moving | per job | per job / at {ref:,} "
        f"| bytes per job | / at {ref:,} | emulator CPU a round, quiet "
        "| detection, rounds, worst | detection, intervals, median / worst |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for q, m in zip(quiet, moving, strict=True):
        heap_ref = q_ref.heap or float("nan")
        server = f"{q.server_cpu / q.rounds * 1e3:.1f} ms" if q.server_cpu is not None else "n/a"
        lines.append(
            f"| {q.jobs:,} | {q.rounds} / {m.rounds} | {q.requests / q.rounds:.0f} "
            f"| {ms(q.cpu_per_round)} | {q.cpu_per_job * 1e6:.1f} us "
            f"| {q.cpu_per_job / q_ref.cpu_per_job:.2f} "
            f"| {ms(m.cpu_per_round)} | {m.cpu_per_job * 1e6:.1f} us "
            f"| {m.cpu_per_job / m_ref.cpu_per_job:.2f} "
            f"| {(q.heap or 0) / q.jobs:,.0f} | {(q.heap or 0) / q.jobs / (heap_ref / ref):.2f} "
            f"| {server} | {max(q.seen_rounds)} "
            f"| {statistics.median(q.seen_intervals):.2f} / {max(q.seen_intervals):.2f} |"
        )
    return "\n".join(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def fits(runs: dict[str, list[Run]]) -> str:
    """The fitted lines, each size's measured cost over its line, and the step costs."""
    quiet, moving = runs[QUIET], runs[MOVING]
    series = [
        ("client CPU a round, quiet", [(r.jobs, r.cpu_per_round) for r in quiet], 1e6, "us"),
        ("client CPU a round, moving", [(r.jobs, r.cpu_per_round) for r in moving], 1e6, "us"),
        ("bytes held", [(r.jobs, float(r.heap or 0)) for r in quiet], 1.0, "bytes"),
    ]
    sizes = [r.jobs for r in quiet]
    head = " | ".join(f"{n:,}" for n in sizes)
    out = [
        f"| line: fixed + per job x N | {head} |",
        "|---|" + "--:|" * len(sizes),
    ]
    steps = [
        f"| step cost per added job | {head} |",
        "|---|" + "--:|" * len(sizes),
    ]
    for name, points, unit, text in series:
        fixed, per_job = line(points)
        ratios = " | ".join(f"{y / (fixed + per_job * n):.2f}" for n, y in points)
        out.append(
            f"| {name}: {fixed * unit:,.0f} {text} + {per_job * unit:,.2f} {text} x N; "
            f"measured / line | {ratios} |"
        )
        cells = ["-"] + [
            f"{(y1 - y0) / (n1 - n0) * unit:,.2f}"
            for (n0, y0), (n1, y1) in itertools.pairwise(points)
        ]
        steps.append(f"| {name} ({text}) | {' | '.join(cells)} |")
    return "\n".join(out) + "\n\n" + "\n".join(steps)


# -- the report ---------------------------------------------------------------------------

BASELINE_CPU = (
    "absolute: this process's CPU (HTTP, JSON decoding, structuring, poller, awaiting "
    "tasks) per round / pending jobs; emulator in its own process"
)


def figures_of(runs: dict[str, list[Run]]) -> list[Figure]:
    quiet, moving = runs[QUIET], runs[MOVING]
    sizes = [r.jobs for r in quiet]
    big = max(sizes)
    ref = reference([n for n in sizes if n != big] or sizes)
    at = {(r.kind, r.jobs): r for r in quiet + moving}
    out = []
    for kind, what in ((QUIET, "quiet rounds"), (MOVING, "every job moving each round")):
        top, base = at[kind, big], at[kind, ref]
        out.append(
            Figure(
                name=f"client CPU per poll round per pending job, us, {what} ({big:,} jobs)",
                values=[c / big * 1e6 for c in top.cpu],
                goal="-",
                baseline=BASELINE_CPU + f"; one value per round ({ms(top.cpu_per_round)} a round)",
            )
        )
        out.append(
            Figure(
                name=f"client CPU per round per job, {big:,} jobs / {ref:,} jobs, {what}",
                values=[c / big / base.cpu_per_job for c in top.cpu],
                goal="<= 1.2",
                baseline=(
                    f"the same measured at {ref:,} jobs (mean of {base.rounds} rounds); "
                    "1.0 is linear growth, one value per round"
                ),
            )
        )
    top, base = at[QUIET, big], at[QUIET, ref]
    out += [
        Figure(
            name=f"detection: rounds begun after a video finished until its job ended, "
            f"worst ({big:,} pending jobs)",
            values=[float(max(top.seen_rounds))],
            goal="<= 1",
            baseline=(
                f"{len(top.seen_rounds)} videos failed at once (the oldest, the newest, the "
                "rest spread between); 0: the round under way saw it, 1: the next one"
            ),
        ),
        Figure(
            name=f"detection delay, poll intervals, worst ({big:,} pending jobs)",
            values=[max(top.seen_intervals)],
            goal="<= 1.5",
            baseline=(
                f"seconds from the failure to the job's end (its detail read included) over "
                f"the poll interval ({top.detect_interval:g} s); median "
                f"{statistics.median(top.seen_intervals):.2f}"
            ),
        ),
        Figure(
            name=f"bytes per pending job, awaited, after two rounds ({big:,} jobs)",
            values=[(top.heap or 0) / big],
            goal="-",
            baseline="absolute bytes (tracemalloc), the awaiting tasks included",
        ),
        Figure(
            name=f"bytes per pending job, {big:,} jobs / {ref:,} jobs",
            values=[(top.heap or 0) / big / ((base.heap or 0) / ref)],
            goal="<= 1.2",
            baseline=f"the same measured at {ref:,} jobs; 1.0 is linear growth",
        ),
    ]
    return out


def interval_for(quick: bool) -> float:
    return 0.05 if quick else 0.25


def detect_interval_for(quick: bool) -> float:
    """The poll interval of the detection figure: the policy's default (a round over
    100,000 jobs takes longer than the CPU figures' interval), shorter when quick."""
    return 0.5 if quick else PollPolicy().min_interval


async def figures(quick: bool = False) -> list[Figure]:
    """CPU per round and bytes per job at the largest size, and their growth."""
    sizes = list(QUICK_SIZES if quick else SIZES)
    return figures_of(await run_all(sizes, quick, interval_for(quick)))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10, 100 and 1,000 jobs, few rounds")
    parser.add_argument("--sizes", type=int, nargs="+", help="pending jobs, one run each")
    parser.add_argument("--interval", type=float, help="seconds between rounds")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.serve:
        await serve(opts.port)
        return
    sizes = sorted(set(opts.sizes or (QUICK_SIZES if opts.quick else SIZES)))
    if sizes[0] < 2:
        parser.error("--sizes: 2 jobs or more (one job is read by its id, not in the list)")
    interval = opts.interval or interval_for(opts.quick)
    started = time.perf_counter()
    runs = await run_all(sizes, opts.quick, interval, log=True)
    print(
        f"Scale: N pending videos, N VideoJobs each awaited by a task, one poller, poll "
        f"interval {interval:g} s; {machine()}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print()
    print(scale_table(runs))
    print()
    if len(sizes) > 1:
        print(fits(runs))
        print()
    moving = runs[MOVING]
    print(
        "Client CPU: time.process_time() of this process over the measured rounds "
        "(HTTP, JSON decoding and structuring included), divided by the rounds. Quiet: no "
        "job changes; moving: every job's progress moves each round. Bytes: tracemalloc, "
        "the awaiting tasks included. Median CPU a round, moving: "
        + ", ".join(f"{r.jobs:,}: {ms(statistics.median(r.cpu))}" for r in moving)
        + "."
    )


if __name__ == "__main__":
    asyncio.run(main())
