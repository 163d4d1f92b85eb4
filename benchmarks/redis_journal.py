"""The Redis journal against the file journal: the same template rows through the
command line, side by side in one run (issue "Scale").

For each size N (100,000 rows; ``--quick``: 2,000), ``bulk.py``'s command, ``asyncclient
batch ROWS.csv --template tpl_welcome --out OUT.jsonl --spacing 0 --concurrency 16
--settle-window 1``, runs with each of the two journals:

- **file**: ``--journal NAME.journal.jsonl`` in a temporary folder;
- **Redis**: ``--journal redis://127.0.0.1:PORT/0/NAME --journal-lease 2`` on a
  ``redis-server`` this benchmark starts for the purpose (``tests/redis_server.py``) with
  its AOF on and ``appendfsync always`` (the journal refuses a Redis that can lose an
  acknowledged write) and Redis's other settings as they come; a fresh server for each
  repetition, its files in the temporary folder, its CPU left to the scheduler.

Each run of the command line is a process of its own against ``bulk.py``'s emulator, a
process of its own too (Premium at 600x, on one CPU; the command line and this process
on the other). For each journal in turn (file then Redis; the order alternates from one
repetition to the next), with the same rows and the same emulator seeds:

1. **the whole run**, from an empty journal to its end;
2. **the same command again** with that finished journal, against the same emulator:
   it has nothing left to send;
3. against a fresh emulator, **the command SIGKILLed** once the service has made N/2
   projects, then started again with the same journal and run to its end. The Redis
   run's second start waits until the killed run's lease has lapsed (2 s at most: a
   start before that is refused, exit 2, as it should be); the file journal's lock
   went with the killed process.

The figures, each with its goal and whether the median over the repetitions meets it:

- **Submission pace, Redis / file**: creations a second over the submission phase of
  run 1 (N - 1 over the span from the service's first creation to its last, from the
  emulator's own records). Goal >= 0.98.
- **Client peak RSS, Redis / file**: the peak RSS of run 1's process, read from it
  (``VmHWM`` in ``/proc``, every 0.1 s while it runs; not ``ru_maxrss``, which starts at
  this process's RSS when it made the child: see :func:`run_process`). Goal <= 1.20 at
  100,000 rows. For information, the CPU of that process (user + system, ``os.wait4``),
  Redis / file.
- **Resume, every row finished**: run 2's wall time, from just before its process is
  made to its exit (interpreter start-up, the rows file scanned, the journal read,
  nothing sent, every row's result written to ``--out``). Goal < 5 s; the file
  journal's beside it.
- **Resume, half finished**: from run 3's second start to the first creation the
  service makes after it (as ``bulk.py``'s resume). Goal < 5 s; the file journal's
  beside it.
- **Redis memory per finished row**: ``used_memory`` (``INFO memory``) after run 1 less
  before it, over N. Goal < 300 bytes at 100,000 rows. For information: the AOF's size
  per row after run 1 (``aof_current_size``, with the rewrites Redis made on its own
  meanwhile) and after a ``BGREWRITEAOF`` (what a restart reads), the file journal's
  bytes per row, and the CPU redis-server used during run 1.
- **Money**: after each resumed run, videos made twice and rows without a video. Goal 0.

Run from the repository root:

    python benchmarks/redis_journal.py [--quick] [--sizes 10000 100000] [--repeat R] [--no-pin]
        [--venv]

The command line runs on this environment's Python, with every package the tests and
benchmarks installed: redis-py below 6 (arq's bound), which imports PyJWT and through it
``cryptography`` (12 MiB of RSS), and whatever optional packages redis-py picks up when
present (``cryptography``, OpenTelemetry). That is not what a user's
``pip install 'vidgen-asyncclient[redis]'`` brings. ``--venv`` makes a fresh virtual
environment in the temporary folder, installs ``'.[redis]'`` into it as the README says,
and runs both journals' command lines on its Python. The report's first line names the
redis-py the command line imported and the optional packages that came with it.

``python -m benchmarks`` runs 100,000 rows once (about 30 minutes on 2 busy cores).

Figures are never pass or fail: a goal missed is printed as MISSED, and the exit status
is 0 all the same.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._processes import process_cpu  # noqa: E402
from benchmarks._report import Figure, fmt, machine, table  # noqa: E402
from benchmarks.bulk import (  # noqa: E402
    JOURNAL_POLL,
    SCALE,
    Exit,
    Service,
    ServiceSide,
    child_env,
    cli_command,
    count_lines,
    emulator,
    error_lines,
    mib,
    peak_rss_of,
    progress,
    read_service,
    rss_of,
    run_limit,
    say,
    span_of,
    spawn,
    title,
    watcher,
    write_rows,
)
from tests.redis_server import (  # noqa: E402
    RedisUnavailable,
    free_port,
    require_redis,
    start_redis,
)

QUICK_SIZES = (2_000,)
"""The quick form's rows: its eight runs take about 30 s on 2 idle cores (CI runs it)."""
FULL_SIZES = (100_000,)
KINDS = ("file", "redis")
LEASE = 2.0
"""The Redis journal's lease, seconds: how long a killed run holds its journal."""
PREFIX = "asyncclient:journal:"
"""Where a Redis journal's keys live (``asyncclient.fleet.journal``)."""
PACE_GOAL, RSS_GOAL, RESUME_GOAL, BYTES_GOAL = 0.98, 1.20, 5.0, 300
SCALE_ROWS = 100_000
"""The size the peak RSS and memory-per-row goals are set at: below it, fixed costs (the
``redis`` package's import, about 12 MiB with the PyJWT and cryptography it loads;
Redis's scripts and keys) weigh on the figures, shown without a verdict."""


# -- one journal's runs -------------------------------------------------------------------


@dataclass
class RedisSide:
    """What the Redis of a journal says of run 1."""

    used_before: int
    used_after: int
    aof_after: int
    rewrites: int
    aof_compacted: int
    cpu: float
    """redis-server's CPU seconds during run 1."""


@dataclass
class JournalRuns:
    kind: str
    n: int
    full: Exit
    full_side: ServiceSide
    full_out: int
    rerun: Exit
    rerun_made: int
    killed: Exit
    made_at_kill: int
    resumed: Exit
    resumed_side: ServiceSide
    resumed_after: float
    """Real seconds from the second start to the service's first creation after it."""
    duplicates: int
    missing: int
    file_bytes: int
    """The file journal's size after run 1 (0 for Redis)."""
    redis: RedisSide | None

    @property
    def span(self) -> float:
        return span_of(self.full_side.timeline)

    @property
    def pace(self) -> float:
        """Creations a second over run 1's submission phase."""
        return (self.n - 1) / self.span if self.span > 0 else math.nan


@dataclass
class RedisServer:
    url: str
    pid: int
    client: Any
    """A ``redis.asyncio.Redis`` on it."""


@contextlib.asynccontextmanager
async def redis_server(workdir: Path) -> AsyncIterator[RedisServer]:
    """A fresh redis-server with its AOF synced on every write, files in ``workdir``."""
    import redis.asyncio as aioredis

    await asyncio.to_thread(workdir.mkdir)
    port = free_port()
    proc = await asyncio.to_thread(start_redis, port, str(workdir), appendfsync="always")
    url = f"redis://127.0.0.1:{port}/0"
    client = aioredis.from_url(url)
    try:
        yield RedisServer(url, proc.pid, client)
    finally:
        await client.aclose()
        proc.terminate()
        await asyncio.to_thread(proc.wait, 10)


HWM_EVERY = 0.1
"""Seconds between two readings of a running command line's peak RSS."""


async def run_process(
    command: list[str],
    env: dict[str, str],
    log: Path,
    limit: float,
    kill_when: Callable[[], Awaitable[None]] | None = None,
    watch: Callable[[int], str] | None = None,
) -> Exit:
    """``bulk.run_process``, its peak RSS read from the process itself (``VmHWM``, every
    :data:`HWM_EVERY` s until it exits), not ``ru_maxrss``: Linux carries the peak of the
    memory a process had before ``exec`` into the ``ru_maxrss`` of the program it runs,
    so a child's starts at this process's RSS when it was made (a process of 300 MiB
    makes ``python -c pass`` report 313 MiB), and this one grows with the timelines it
    reads."""
    started = time.time()
    proc = spawn(command, env, log)
    waited = asyncio.ensure_future(asyncio.to_thread(os.wait4, proc.pid, 0))
    moment = asyncio.ensure_future(kill_when() if kill_when else asyncio.sleep(limit))
    watching = asyncio.ensure_future(progress(watch, proc.pid) if watch else asyncio.sleep(0))
    peak, killed = 0, False
    try:
        deadline = time.monotonic() + limit
        while not waited.done() and not moment.done() and time.monotonic() < deadline:
            peak = max(peak, peak_rss_of(proc.pid) or 0)
            await asyncio.wait({waited, moment}, timeout=HWM_EVERY)
        if not waited.done():
            peak = max(peak, peak_rss_of(proc.pid) or 0)
            proc.send_signal(signal.SIGKILL)
            killed = True
        _, status, usage = await waited
    finally:
        moment.cancel()
        watching.cancel()
        if not waited.done():
            proc.kill()
            await asyncio.wait({waited})
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Exit(
        code=None if killed else proc.returncode,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_rss=peak,
        wall=time.time() - started,
        started=started,
    )


def command(rows: Path, journal: str, out: Path) -> list[str]:
    """``bulk.py``'s command line with ``journal`` (a file or a Redis URL)."""
    args = cli_command(rows, Path(), out)
    args[0] = COMMAND_PYTHON
    args[args.index("--journal") + 1] = journal
    if journal.startswith("redis://"):
        args += ["--journal-lease", f"{LEASE:g}"]
    return args


async def projects_made(service: Service, wanted: int) -> None:
    """Return once the service has made ``wanted`` projects for the team."""
    while await made_so_far(service) < wanted:  # noqa: ASYNC110 (no event to wait on)
        await asyncio.sleep(JOURNAL_POLL)


async def made_so_far(service: Service) -> int:
    async with service.session.get(f"{service.url}/_emulator/counters") as resp:
        return int((await resp.json())["projects"].get(service.team, 0))


async def lease_lapsed(server: RedisServer, name: str) -> None:
    """Return once the Redis journal ``name`` has no lease (its holder was killed)."""
    while await server.client.exists(f"{PREFIX}{name}:lease"):  # noqa: ASYNC110
        await asyncio.sleep(JOURNAL_POLL)


async def redis_info(server: RedisServer) -> tuple[int, int, int]:
    """``used_memory``, ``aof_current_size`` and ``aof_rewrites`` now."""
    memory = await server.client.info("memory")
    persistence = await server.client.info("persistence")
    return (
        int(memory["used_memory"]),
        int(persistence.get("aof_current_size", 0)),
        int(persistence.get("aof_rewrites", 0)),
    )


async def compacted_aof(server: RedisServer) -> int:
    """The AOF's size once Redis rewrote it (``BGREWRITEAOF``, waited for)."""
    while (await server.client.info("persistence"))["aof_rewrite_in_progress"]:  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    await server.client.bgrewriteaof()
    while True:
        await asyncio.sleep(0.1)
        info = await server.client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return int(info["aof_current_size"])


def redis_watcher(server: RedisServer, name: str) -> Callable[[int], str]:
    import redis

    sync = redis.Redis.from_url(server.url)

    def watch(pid: int) -> str:
        rows = sync.hlen(f"{PREFIX}{name}:rows")
        return f"the command line holds {mib(rss_of(pid)):.0f} MiB; {rows:,} rows in Redis"

    return watch


def made_after(side: ServiceSide, started: float) -> list[float]:
    """Service times of the creations after real time ``started``."""
    since = side.timeline.service_time(started)
    return [c for c in side.timeline.created if c >= since]


async def run_journal(
    kind: str, n: int, rows: Path, folder: Path, seed: int, pin: bool, log: bool
) -> JournalRuns:
    """Runs 1 to 3 of ``kind`` (``file`` or ``redis``) at ``n`` rows."""
    if kind == "file":
        return await _runs(kind, n, rows, folder, seed, pin, log, None)
    async with redis_server(folder / "redis") as server:
        return await _runs(kind, n, rows, folder, seed, pin, log, server)


async def _runs(
    kind: str,
    n: int,
    rows: Path,
    folder: Path,
    seed: int,
    pin: bool,
    log: bool,
    server: RedisServer | None,
) -> JournalRuns:
    def journal(name: str) -> tuple[str, Callable[[int], str] | None]:
        if server is None:
            path = folder / f"{name}.journal.jsonl"
            return str(path), watcher(path) if log else None
        return f"{server.url}/{name}", redis_watcher(server, name) if log else None

    full_log, out = folder / f"{kind}.log", folder / f"{kind}.out.jsonl"
    where, watch = journal(f"{kind}-full")
    redis_side = None
    async with emulator(n, seed, pin) as service:
        env = child_env(service.url, service.key)
        before = await redis_info(server) if server else (0, 0, 0)
        cpu_before = process_cpu(server.pid) if server else None
        args = command(rows, where, out)
        full = await run_process(args, env, full_log, run_limit(n), watch=watch)
        full_side = await read_service(service)
        if server is not None:
            cpu_after = process_cpu(server.pid)
            cpu = (
                cpu_after - cpu_before
                if cpu_after is not None and cpu_before is not None
                else math.nan
            )
            used, aof, rewrites = await redis_info(server)
            compacted = await compacted_aof(server)
            redis_side = RedisSide(before[0], used, aof, rewrites - before[2], compacted, cpu)
        file_bytes = 0 if server else (await asyncio.to_thread(Path(where).stat)).st_size
        full_out = count_lines(out)
        out.unlink()
        rerun = await run_process(args, env, full_log, run_limit(n))
        rerun_made = len(made_after(await read_service(service), rerun.started))
    say(
        log,
        f"  {n:,} rows, {kind}: exit {full.code}, {full.wall:.1f} s, peak RSS "
        f"{mib(full.peak_rss):.0f} MiB, {(n - 1) / span_of(full_side.timeline):,.0f} "
        f"creations a second; again: exit {rerun.code} in {rerun.wall:.2f} s",
    )
    where, watch = journal(f"{kind}-resume")
    args = command(rows, where, folder / f"{kind}.resume.out.jsonl")
    async with emulator(n, seed + 1, pin) as service:
        env = child_env(service.url, service.key)
        half = lambda: projects_made(service, n // 2)  # noqa: E731
        killed = await run_process(args, env, full_log, run_limit(n), half, watch)
        made_at_kill = await made_so_far(service)
        if server is not None:
            await lease_lapsed(server, f"{kind}-resume")
        resumed = await run_process(args, env, full_log, run_limit(n), watch=watch)
        resumed_side = await read_service(service)
    after = made_after(resumed_side, resumed.started)
    since = resumed_side.timeline.service_time(resumed.started)
    counts = collections.Counter(resumed_side.timeline.names)
    runs = JournalRuns(
        kind=kind,
        n=n,
        full=full,
        full_side=full_side,
        full_out=full_out,
        rerun=rerun,
        rerun_made=rerun_made,
        killed=killed,
        made_at_kill=made_at_kill,
        resumed=resumed,
        resumed_side=resumed_side,
        resumed_after=(min(after) - since) / SCALE if after else math.nan,
        duplicates=sum(c - 1 for c in counts.values() if c > 1),
        missing=sum(1 for i in range(n) if title(i) not in counts),
        file_bytes=file_bytes,
        redis=redis_side,
    )
    say(
        log,
        f"  {n:,} rows, {kind}: killed at {made_at_kill:,} made, resumed run exit "
        f"{resumed.code}, first creation {runs.resumed_after:.2f} s after its start; "
        f"{runs.duplicates} duplicates, {runs.missing} missing",
    )
    return runs


# -- all sizes and repetitions ------------------------------------------------------------


@dataclass
class Pair:
    n: int
    file: JournalRuns
    redis: JournalRuns


async def run_all(
    sizes: Sequence[int], repeats: int, seed: int, pin: bool, log: bool = False
) -> list[Pair]:
    out: list[Pair] = []
    with tempfile.TemporaryDirectory(prefix="redis-journal-") as tmp:
        for n in sizes:
            rows = Path(tmp) / f"rows-{n}.csv"
            await asyncio.to_thread(write_rows, rows, n)
            for rep in range(repeats):
                done: dict[str, JournalRuns] = {}
                for kind in KINDS if rep % 2 == 0 else KINDS[::-1]:
                    folder = Path(tmp) / f"{n}-{rep}-{kind}"
                    folder.mkdir()
                    done[kind] = await run_journal(kind, n, rows, folder, seed, pin, log)
                    for line in error_lines_of(folder, kind):
                        say(log, f"  {n:,} rows, {kind}, the command line said: {line}")
                out.append(Pair(n, done["file"], done["redis"]))
            rows.unlink()
    return out


def error_lines_of(folder: Path, kind: str) -> list[str]:
    path = folder / f"{kind}.log"
    if not path.exists():
        return error_lines(folder)
    text = path.read_text(encoding="utf-8", errors="replace")
    return sorted({line for line in text.splitlines() if line.startswith("error")})[:5]


# -- the report ---------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def figures_of(pairs: list[Pair]) -> list[Figure]:
    out: list[Figure] = []
    for n in sorted({p.n for p in pairs}):
        out += size_figures(n, [p for p in pairs if p.n == n])
    return out


def size_figures(n: int, pairs: list[Pair]) -> list[Figure]:
    files, redises = [p.file for p in pairs], [p.redis for p in pairs]
    memo = [r.redis for r in redises if r.redis is not None]
    aof = _median([m.aof_after / n for m in memo])
    rewrites = "/".join(str(m.rewrites) for m in memo)
    return [
        Figure(
            name=f"submission pace, Redis journal / file journal ({n:,} rows)",
            values=[p.redis.pace / p.file.pace for p in pairs],
            goal=f">= {PACE_GOAL}",
            baseline=f"the file journal's run in the same repetition: creations a second "
            f"over the submission phase, file {_median([f.pace for f in files]):,.0f}, Redis "
            f"{_median([r.pace for r in redises]):,.0f} (medians)",
        ),
        Figure(
            name=f"client peak RSS, Redis journal / file journal ({n:,} rows)",
            values=[p.redis.full.peak_rss / p.file.full.peak_rss for p in pairs],
            goal=at_scale(n, f"<= {RSS_GOAL}"),
            baseline=f"VmHWM of the command line's whole run, each in its own process: "
            f"file {_median([mib(f.full.peak_rss) for f in files]):.0f} MiB, Redis "
            f"{_median([mib(r.full.peak_rss) for r in redises]):.0f} MiB (medians)",
        ),
        Figure(
            name=f"client CPU per row, Redis journal / file journal ({n:,} rows)",
            values=[p.redis.full.cpu / p.file.full.cpu for p in pairs],
            goal="-",
            baseline=f"user + system CPU of the command line's whole run (os.wait4): file "
            f"{_median([f.full.cpu / n * 1e3 for f in files]):.3f} ms a row, Redis "
            f"{_median([r.full.cpu / n * 1e3 for r in redises]):.3f} ms (medians)",
        ),
        Figure(
            name=f"resume, every row finished: the same command again, s, Redis ({n:,} rows)",
            values=[r.rerun.wall for r in redises],
            goal=f"< {RESUME_GOAL:g}",
            baseline=f"start to exit, nothing to send; the file journal: "
            f"{fmt(_median([f.rerun.wall for f in files]))} s (median); creations made: "
            f"{sum(p.redis.rerun_made + p.file.rerun_made for p in pairs)}",
        ),
        Figure(
            name=f"resume, half finished: second start to its first creation, s, Redis "
            f"({n:,} rows)",
            values=[r.resumed_after for r in redises],
            goal=f"< {RESUME_GOAL:g}",
            baseline=f"SIGKILLed at about {n // 2:,} projects made; the file journal: "
            f"{fmt(_median([f.resumed_after for f in files]))} s (median)",
        ),
        Figure(
            name=f"Redis memory per finished row, bytes ({n:,} rows)",
            values=[(m.used_after - m.used_before) / n for m in memo],
            goal=at_scale(n, f"< {BYTES_GOAL}"),
            baseline=f"INFO memory used_memory after the run less before, over the rows; "
            f"the AOF: {aof:,.0f} bytes a row after the run ({rewrites} rewrites by Redis "
            f"meanwhile), {_median([m.aof_compacted / n for m in memo]):,.0f} once "
            f"rewritten; the file journal: "
            f"{_median([f.file_bytes / n for f in files]):,.0f} bytes a row",
        ),
        Figure(
            name=f"after the resumed runs: videos made twice + rows without one ({n:,} rows)",
            values=[
                float(p.redis.duplicates + p.redis.missing + p.file.duplicates + p.file.missing)
                for p in pairs
            ],
            goal="<= 0",
            baseline="the emulator's videos of the team, by title, both journals",
        ),
    ]


def runs_table(pairs: list[Pair]) -> str:
    lines = [
        "| rows | journal | run | exit | wall s | CPU s | peak RSS MiB | creations | span s "
        "| per s | --out lines |",
        "|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for p in pairs:
        for r in (p.file, p.redis):
            made_full = len(r.full_side.timeline.created)
            resumed_made = made_after(r.resumed_side, r.resumed.started)
            resumed_span = (
                (max(resumed_made) - min(resumed_made)) / SCALE
                if len(resumed_made) > 1
                else math.nan
            )
            rows_of = [
                ("whole run", r.full, made_full, r.span, r.full_out),
                ("the same again", r.rerun, r.rerun_made, math.nan, -1),
                ("killed at half", r.killed, r.made_at_kill, math.nan, -1),
                ("resumed", r.resumed, len(resumed_made), resumed_span, -1),
            ]
            for label, done, made, span, out_lines in rows_of:
                per_s = (made - 1) / span if span > 0 else math.nan
                lines.append(
                    f"| {p.n:,} | {r.kind} | {label} "
                    f"| {'killed' if done.code is None else done.code} | {done.wall:.2f} "
                    f"| {done.cpu:.1f} | {mib(done.peak_rss):.0f} | {made:,} "
                    f"| {fmt(span)} | {fmt(per_s)} | {out_lines if out_lines >= 0 else '-'} |"
                )
    memo = [(p.n, p.redis.redis) for p in pairs if p.redis.redis is not None]
    if memo:
        lines += [
            "",
            "| rows | used_memory before | after | a row | AOF after the run | a row | rewrites "
            "| AOF rewritten | a row | redis-server CPU s |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for n, m in memo:
            lines.append(
                f"| {n:,} | {m.used_before:,} | {m.used_after:,} "
                f"| {(m.used_after - m.used_before) / n:,.0f} | {m.aof_after:,} "
                f"| {m.aof_after / n:,.0f} | {m.rewrites} | {m.aof_compacted:,} "
                f"| {m.aof_compacted / n:,.0f} | {m.cpu:.1f} |"
            )
    return "\n".join(lines)


def at_scale(n: int, goal: str) -> str:
    """``goal``, or the same said of :data:`SCALE_ROWS` rows (no verdict) below it."""
    return goal if n >= SCALE_ROWS else f"({goal} at {SCALE_ROWS:,} rows)"


def missed(figures: Sequence[Figure]) -> list[str]:
    """A line for each goal missed (none: figures are never pass or fail)."""
    return [
        f"MISSED: {f.name}: {fmt(f.median)}, goal {f.goal}" for f in figures if f.met() is False
    ]


async def figures(quick: bool = False) -> list[Figure]:
    """Pace, peak RSS, resume and Redis memory of the Redis journal against the file
    journal, at 2,000 rows (``quick``) or 100,000; none without redis-server, unless in
    CI (where its absence is an error)."""
    try:
        pairs = await run_all(QUICK_SIZES if quick else FULL_SIZES, 1, 1, pin=True)
    except RedisUnavailable as exc:
        if require_redis():
            raise
        print(f"redis_journal: not run ({exc})", file=sys.stderr)
        return []
    out = figures_of(pairs)
    for line in missed(out):
        print(f"redis_journal: {line}", file=sys.stderr)
    return out


COMMAND_PYTHON = sys.executable
"""The Python the command lines run on (``--venv``: a fresh virtual environment's)."""


def make_venv(folder: Path) -> str:
    """A fresh virtual environment in ``folder`` with ``'.[redis]'`` installed (not
    editable), as a user installs it; its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", f"{ROOT}[redis]"], check=True)
    return python


def imports_of_command_line() -> str:
    """The redis-py a command line started as the runs start theirs imports, and the
    optional packages that came with its import."""
    probe = (
        "import sys, redis.asyncio, redis, asyncclient.fleet.journal; print(redis.__version__, "
        "*sorted({'jwt', 'cryptography', 'opentelemetry'} & sys.modules.keys()))"
    )
    out = subprocess.run(
        [COMMAND_PYTHON, "-c", probe],
        env=child_env("http://127.0.0.1:9", "probe"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    extra = f" (which imports {', '.join(out[1:])})" if out[1:] else " (alone)"
    where = "a fresh venv" if sys.executable != COMMAND_PYTHON else "this environment"
    return f"{where}: redis-py {out[0]}{extra}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 rows (for CI)")
    parser.add_argument("--sizes", type=int, nargs="+", help="rows, one size after another")
    parser.add_argument("--repeat", type=int, default=1, help="repetitions, order alternated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-pin", action="store_true", help="leave CPUs to the scheduler")
    parser.add_argument(
        "--venv", action="store_true", help="the command lines on a fresh venv of '.[redis]'"
    )
    opts = parser.parse_args()
    sizes = sorted(set(opts.sizes or (QUICK_SIZES if opts.quick else FULL_SIZES)))
    if sizes[0] < 100 or opts.repeat < 1:
        parser.error("--sizes: 100 rows or more; --repeat: 1 or more")
    started = time.perf_counter()
    global COMMAND_PYTHON
    with tempfile.TemporaryDirectory(prefix="redis-journal-venv-") as folder:
        if opts.venv:
            COMMAND_PYTHON = make_venv(Path(folder))
        imported = imports_of_command_line()
        pairs = await run_all(sizes, opts.repeat, opts.seed, not opts.no_pin, log=True)
    print(
        f"Redis journal against file journal: template rows through `asyncclient batch`, "
        f"emulator on Premium at {SCALE:g}x; the command line on {imported}; {machine()}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print()
    print(runs_table(pairs))
    print()
    found = figures_of(pairs)
    print(table(found))
    print()
    print("\n".join(missed(found)) or "Every goal met.")


if __name__ == "__main__":
    asyncio.run(main())
