"""Bulk: 10,000 to 1,000,000 template rows through the command line (issue "Bulk").

For each size N, ``asyncclient batch ROWS.csv --template tpl_welcome --journal J --out
OUT.jsonl --spacing 0 --concurrency 16 --settle-window 1`` runs as a process of its own
against the emulator, itself in a process of its own (``python -m asyncclient.emulator
--time-scale 600 --plan premium``: its demo team, with credits for every row), the two
on a CPU each. The rows file is a CSV in a temporary folder: a unique title and the
template's three variables (``first_name``, ``product``, ``logo``) a row. The command
line is given no plan (it has no option for one): it starts at the Free plan's limit and
takes the limit the service announces (``X-RateLimit-Limit``, per real minute: the
scaled Premium plan). Each size makes three runs, each against an emulator of its own,
one after the other:

1. **raw aiohttp**, the real alternative: the same creation requests (built by hand from
   the template, read once), 16 in flight, the CSV read as they go; no journal, no
   waiting for videos; ``min(N, 100,000)`` rows (its pace is steady);
2. **the command line**, from start to end;
3. **the command line SIGKILLed** once half the rows have an ``accepted`` record in its
   journal, then started again with the same journal and run to its end.

What is measured (every time of the service from the emulator's own records: its video
table, and ``GET /_emulator/timeline`` for when it first served each video finished):

- **Client peak RSS**: ``ru_maxrss`` of the command line's process, run 2 (``os.wait4``
  on it: that process's own, not this one's or the emulator's). Goal: under 200 MiB at
  1,000,000 rows, and within 50 MiB of the 100,000 figure.
- **CPU per row**: user + system CPU of that process (the same ``wait4``) over N, start-up
  and imports included; and over raw aiohttp's CPU per creation.
- **Submissions against the plan**: the command line's creations a second over the
  Premium plan's own rate (1,000 a minute, unscaled: what a real batch is paced by).
  Goal >= 1: the client is never what slows a batch down. For information, the least
  time the scaled plan lets the run's requests take ((N + 1 - burst) / rate; Premium
  scaled 600 times is 10,000 a second, a rate no plan has, which only the client's CPU
  limits here) over the span from the first creation to the last, and the command
  line's creations a second over raw aiohttp's, measured the same way.
- **Detection delay**: for each video, from its finishing (service time) to the first
  reply of the service that showed it finished (a list page or its detail read; noted
  by the emulator once ``POST /_emulator/served`` asks it to), in real seconds over the
  command line's poll interval (``PollPolicy().min_interval``, 2 s of real time: its
  client is not scaled); median and worst of run 2. Goal: worst <= 1.5 intervals.
- **Resume**: from the second start of run 3 (just before its process is made) to the
  first creation that reaches the emulator after it. Goal <= 5 s at every size.
- **Duplicates and missing rows**: after run 3's second run ends, the videos of its
  team: a title made twice, a title not made, a title not of the batch. Goal: 0.

Run from the repository root:

    python benchmarks/bulk.py [--quick] [--sizes 10000 100000 1000000] [--no-pin]

``--quick`` (and ``python -m benchmarks --quick``) runs 10,000 rows: about 40 s on 2
idle cores, 2 minutes on a busy machine. ``python -m benchmarks`` runs 10,000 and 100,000
(about 12 minutes); 1,000,000 rows only when asked (``--sizes 1000000``: hours, with the
command line's memory and pace as ``benchmarks/README.md`` reports them). The script run
alone prints how each command line run goes every minute (its RSS, its journal).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import csv
import functools
import itertools
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = str(Path(__file__).resolve())
ROOT = Path(SCRIPT).parent.parent
sys.path.insert(0, str(ROOT))

from aiohttp import ClientSession, ClientTimeout  # noqa: E402

from asyncclient import Plan  # noqa: E402
from asyncclient.awaiting.poller import PollPolicy  # noqa: E402
from benchmarks._processes import serving  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
FULL_SIZES = (10_000, 100_000)
"""``python -m benchmarks`` (without ``--quick``); a million only when asked."""
QUICK_SIZES = (10_000,)
SCALE = 600.0
PLAN = Plan.PREMIUM
TEMPLATE = "tpl_welcome"
CONCURRENCY = 16
SETTLE = 600.0 / SCALE
"""The settle window, ten service minutes in real seconds (as ``chaos.py``)."""
RAW_ROWS = 100_000
"""Raw aiohttp's rows at most: its pace is steady past a few thousand."""
CREDITS_PER_ROW = 5  # what the emulator charges a template video ("class")
INTERVAL = PollPolicy().min_interval
"""The command line's poll interval, real seconds (its client runs on the real clock)."""
JOURNAL_POLL = 0.05
PROGRESS_EVERY = 60.0
"""Seconds between the lines saying how a run goes (the script run alone only)."""
TIMELINE_TIMEOUT = ClientTimeout(total=600)
ENV_DROPPED = ("ASYNCCLIENT_WEBHOOK_URL", "ASYNCCLIENT_WEBHOOK_TOKEN", "ASYNCCLIENT_REDIS_URL")
"""Settings a user's shell may hold that would change what the command line does."""
RSS_GOAL_MIB, RSS_GROWTH_MIB, RSS_REFERENCE = 200, 50, 100_000


def run_limit(n: int) -> float:
    """Real seconds one run of ``n`` rows may take before it is given up (killed)."""
    return 300.0 + n * 0.02


def title(i: int) -> str:
    return f"Bulk {i}"


def write_rows(path: Path, n: int) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(("title", "first_name", "product", "logo"))
        for i in range(n):
            writer.writerow((title(i), f"Name{i}", "Acme", "https://cdn.example/logo.png"))


# -- processes, measured by wait4 ------------------------------------------------------


@dataclass
class Exit:
    """How a process of this benchmark ended, from ``os.wait4`` on it."""

    code: int | None
    """Its exit status; None when this benchmark SIGKILLed it."""
    cpu: float
    """User + system CPU seconds."""
    peak_rss: int
    """Bytes (``ru_maxrss``)."""
    wall: float
    started: float
    """``time.time()`` just before the process was made."""


async def run_process(
    command: list[str],
    env: dict[str, str],
    log: Path,
    limit: float,
    kill_when: Callable[[], Awaitable[None]] | None = None,
    watch: Callable[[int], str] | None = None,
) -> Exit:
    """Run ``command`` to its end (or SIGKILL it when ``kill_when`` returns, or after
    ``limit`` seconds); its own CPU and peak RSS from ``os.wait4``. ``watch(pid)`` says
    how it goes, printed every :data:`PROGRESS_EVERY` seconds."""
    started = time.time()
    proc = spawn(command, env, log)
    waited = asyncio.ensure_future(asyncio.to_thread(os.wait4, proc.pid, 0))
    moment = asyncio.ensure_future(kill_when() if kill_when else asyncio.sleep(limit))
    watching = asyncio.ensure_future(progress(watch, proc.pid) if watch else asyncio.sleep(0))
    killed = False
    try:
        await asyncio.wait({waited, moment}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        if not waited.done():
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
        peak_rss=usage.ru_maxrss * 1024,
        wall=time.time() - started,
        started=started,
    )


async def progress(watch: Callable[[int], str], pid: int) -> None:
    started = time.perf_counter()
    while True:
        await asyncio.sleep(PROGRESS_EVERY)
        line = await asyncio.to_thread(watch, pid)
        print(f"    {time.perf_counter() - started:6.0f} s: {line}", file=sys.stderr, flush=True)


def watcher(journal: Path) -> Callable[[int], str]:
    """What :func:`progress` prints of a command line run: its RSS, its journal."""
    offset = accepted = 0

    def watch(pid: int) -> str:
        nonlocal offset, accepted
        offset, new = read_new(journal, offset, b'"ev":"accepted"')
        accepted += new
        return f"the command line holds {mib(rss_of(pid)):.0f} MiB; {accepted:,} accepted"

    return watch


def rss_of(pid: int) -> int | None:
    """Bytes: ``VmRSS`` of a live process, where /proc tells."""
    return _status_field(pid, "VmRSS:")


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``command``; its output is appended to ``log``. Reaped by ``os.wait4``."""
    with log.open("ab") as err:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=err, stderr=err)


def child_env(url: str, key: str) -> dict[str, str]:
    env = {**os.environ, "ASYNCCLIENT_API_KEY": key, "ASYNCCLIENT_BASE_URL": url}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for name in ENV_DROPPED:
        env.pop(name, None)
    return env


def cli_command(rows: Path, journal: Path, out: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "asyncclient", "batch", str(rows)),
        *("--template", TEMPLATE, "--journal", str(journal), "--out", str(out)),
        *("--spacing", "0", "--concurrency", str(CONCURRENCY), "--settle-window", f"{SETTLE:g}"),
    ]


def peak_rss_of(pid: int) -> int | None:
    """Bytes: ``VmHWM`` of a live process, where /proc tells."""
    return _status_field(pid, "VmHWM:")


def _status_field(pid: int, name: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(name):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


# -- the emulator, in a process of its own ---------------------------------------------


@dataclass
class Service:
    url: str
    key: str
    team: str
    pid: int
    session: ClientSession


@contextlib.asynccontextmanager
async def emulator(n: int, seed: int, pin: bool) -> AsyncIterator[Service]:
    """``python -m asyncclient.emulator`` on Premium at :data:`SCALE`, noting when it
    serves each video finished; its demo team has credits for ``n`` rows and more."""
    args = [
        *("-m", "asyncclient.emulator", "--port", "0", "--json", "--seed", str(seed)),
        *("--time-scale", f"{SCALE:g}", "--plan", PLAN.value),
        *("--credits", str(2 * CREDITS_PER_ROW * n + 1000)),
    ]
    wanted = {
        "url": r'"url": "([^"]+)"',
        "key": r'"apiKey": "([^"]+)"',
        "team": r'"teamId": "([^"]+)"',
    }
    async with (
        serving(args, wanted, pin=pin) as child,
        ClientSession(timeout=TIMELINE_TIMEOUT) as session,
    ):
        url = child.printed["url"]
        async with session.post(f"{url}/_emulator/served", json={"record": True}) as resp:
            resp.raise_for_status()
        yield Service(url, child.printed["key"], child.printed["team"], child.pid, session)


@dataclass
class Timeline:
    """The team's videos in creation order, from ``GET /_emulator/timeline``."""

    names: list[str] = field(default_factory=list)
    created: array[float] = field(default_factory=lambda: array("d"))
    done: array[float] = field(default_factory=lambda: array("d"))
    served: array[float] = field(default_factory=lambda: array("d"))
    """NaN: never served finished."""
    now: float = 0.0
    wall: float = 0.0

    def service_time(self, wall: float) -> float:
        """The service time at real Unix time ``wall``."""
        return self.now - (self.wall - wall) * SCALE


@dataclass
class ServiceSide:
    """What the emulator says of a run."""

    timeline: Timeline
    counters: dict[str, Any]
    logged: int
    """Records in its request log (it keeps every one)."""
    peak_rss: int | None


async def read_service(service: Service) -> ServiceSide:
    session, url = service.session, service.url
    found = Timeline()
    offset: int | None = 0
    while offset is not None:
        query = {"team": service.team, "offset": str(offset)}
        async with session.get(f"{url}/_emulator/timeline", params=query) as resp:
            resp.raise_for_status()
            page = await resp.json()
        found.names += page["names"]
        found.created.extend(page["created"])
        found.done.extend(page["done"])
        found.served.extend(math.nan if t is None else t for t in page["served"])
        found.now, found.wall, offset = page["now"], page["wall"], page["next"]
    async with session.get(f"{url}/_emulator/counters") as resp:
        counters = await resp.json()
    async with session.get(f"{url}/_emulator/requests", params={"limit": "0"}) as resp:
        logged = int((await resp.json())["total"])
    return ServiceSide(found, counters, logged, peak_rss_of(service.pid))


# -- run 1: raw aiohttp ------------------------------------------------------------------


def raw_body(template: dict[str, Any], row: dict[str, str]) -> dict[str, Any]:
    """The creation request of spec 4.9 for ``row``, as the SDK sends it."""
    scenes = []
    for scene in template["scenes"]:
        variables = [
            {"key": v["key"], "value": row[v["key"]], "type": v["type"]} for v in scene["variables"]
        ]
        avatar = {k: scene["avatar"][k] for k in ("id", "topLeft", "bottomRight")}
        scenes.append({"script": scene["script"], "variables": variables, "avatar": avatar})
    return {
        "templateId": template["id"],
        "title": row["title"],
        "scenes": scenes,
        "caption": True,
        "language": "en",
        "type": template.get("type") or "class",
    }


async def raw_creations(url: str, key: str, rows: Path, n: int) -> int:
    """The raw alternative (in a process of its own): ``n`` rows' creations, 16 in
    flight; returns the exit status (1 if any was not a 200)."""
    headers = {"x-api-key": key, "content-type": "application/json"}
    statuses: collections.Counter[int] = collections.Counter()
    async with ClientSession(headers=headers) as session:
        async with session.get(f"{url}/v1/template/{TEMPLATE}") as resp:
            template = (await resp.json())["data"]
        with rows.open(newline="", encoding="utf-8") as fh:
            reader = itertools.islice(csv.DictReader(fh), n)

            async def worker() -> None:
                for row in reader:
                    body = json.dumps(raw_body(template, row))
                    async with session.post(f"{url}/v1/project/create", data=body) as resp:
                        await resp.read()
                        statuses[resp.status] += 1

            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    if statuses != {200: n}:
        print(f"raw creations: statuses {dict(statuses)}", file=sys.stderr)
        return 1
    return 0


@dataclass
class RawRun:
    rows: int
    exit: Exit
    span: float
    """Real seconds from the first creation to the last."""

    @property
    def rate(self) -> float:
        return (self.rows - 1) / self.span if self.span > 0 else math.nan


async def run_raw(n: int, rows: Path, folder: Path, seed: int, pin: bool) -> RawRun:
    m = min(n, RAW_ROWS)
    async with emulator(m, seed, pin) as service:
        command = [sys.executable, SCRIPT, "--raw", service.url, service.key, str(rows), str(m)]
        done = await run_process(
            command, child_env(service.url, service.key), folder / "raw.log", run_limit(m)
        )
        side = await read_service(service)
    if done.code != 0 or len(side.timeline.names) != m:
        raise RuntimeError(f"raw aiohttp: exit {done.code}, {len(side.timeline.names)} made")
    return RawRun(m, done, span_of(side.timeline))


def span_of(timeline: Timeline) -> float:
    created = timeline.created
    return (max(created) - min(created)) / SCALE if len(created) > 1 else math.nan


# -- run 2: the command line from start to end -------------------------------------------


@dataclass
class CliRun:
    rows: int
    exit: Exit
    side: ServiceSide
    out_lines: int

    @property
    def span(self) -> float:
        return span_of(self.side.timeline)

    @property
    def delays(self) -> list[float]:
        """Each video's detection delay in poll intervals (videos never served finished
        left out: see :attr:`unseen`)."""
        t = self.side.timeline
        return sorted(
            (s - d) / SCALE / INTERVAL for s, d in zip(t.served, t.done, strict=True) if s == s
        )

    @property
    def unseen(self) -> int:
        return sum(1 for s in self.side.timeline.served if s != s)


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


async def run_cli(
    n: int, rows: Path, folder: Path, seed: int, pin: bool, log: bool = False
) -> CliRun:
    journal, out = folder / "full.journal.jsonl", folder / "full.out.jsonl"
    async with emulator(n, seed, pin) as service:
        env = child_env(service.url, service.key)
        command = cli_command(rows, journal, out)
        watch = watcher(journal) if log else None
        done = await run_process(command, env, folder / "full.log", run_limit(n), watch=watch)
        side = await read_service(service)
    return CliRun(n, done, side, count_lines(out))


# -- run 3: killed at half, resumed ------------------------------------------------------


def read_new(path: Path, offset: int, needle: bytes) -> tuple[int, int]:
    """The new offset and the count of ``needle`` in the whole lines past ``offset``."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0, 0
    offset = min(offset, size)
    if size == offset:
        return offset, 0
    with path.open("rb") as fh:
        fh.seek(offset)
        chunk = fh.read(size - offset)
    cut = chunk.rfind(b"\n") + 1
    return offset + cut, chunk[:cut].count(needle)


async def accepted_count(journal: Path, wanted: int) -> None:
    """Return once the journal has ``wanted`` ``accepted`` records."""
    offset = seen = 0
    while seen < wanted:
        await asyncio.sleep(JOURNAL_POLL)
        offset, new = await asyncio.to_thread(read_new, journal, offset, b'"ev":"accepted"')
        seen += new


@dataclass
class ResumeRun:
    rows: int
    first: Exit
    accepted_at_kill: int
    second: Exit
    side: ServiceSide
    resumed_after: float
    """Real seconds from the second start to the first creation after it (NaN: none)."""
    made_by_second: int
    duplicates: int
    missing: int
    strays: int
    out_lines: int


async def run_resume(
    n: int, rows: Path, folder: Path, seed: int, pin: bool, log: bool = False
) -> ResumeRun:
    journal, out = folder / "resume.journal.jsonl", folder / "resume.out.jsonl"
    out_log = folder / "resume.log"
    async with emulator(n, seed, pin) as service:
        env = child_env(service.url, service.key)
        command = cli_command(rows, journal, out)
        half = functools.partial(accepted_count, journal, n // 2)
        watch = watcher(journal) if log else None
        first = await run_process(command, env, out_log, run_limit(n), half, watch)
        at_kill = (await asyncio.to_thread(read_new, journal, 0, b'"ev":"accepted"'))[1]
        watch = watcher(journal) if log else None
        second = await run_process(command, env, out_log, run_limit(n), watch=watch)
        side = await read_service(service)
    t = side.timeline
    since = t.service_time(second.started)
    after = [c for c in t.created if c >= since]
    counts = collections.Counter(t.names)
    expected = {title(i) for i in range(n)}
    return ResumeRun(
        rows=n,
        first=first,
        accepted_at_kill=at_kill,
        second=second,
        side=side,
        resumed_after=(min(after) - since) / SCALE if after else math.nan,
        made_by_second=len(after),
        duplicates=sum(c - 1 for c in counts.values() if c > 1),
        missing=sum(1 for name in expected if name not in counts),
        strays=sum(1 for name in counts if name not in expected),
        out_lines=count_lines(out),
    )


# -- all sizes ---------------------------------------------------------------------------


@dataclass
class SizeRuns:
    n: int
    raw: RawRun
    cli: CliRun
    resume: ResumeRun
    seconds: float


async def run_size(n: int, folder: Path, seed: int, pin: bool, log: bool) -> SizeRuns:
    started = time.perf_counter()
    rows = folder / f"rows-{n}.csv"
    await asyncio.to_thread(write_rows, rows, n)
    raw = await run_raw(n, rows, folder, seed, pin)
    say(log, f"  {n:,} rows: raw aiohttp {raw.rows:,} creations in {raw.span:.1f} s")
    cli = await run_cli(n, rows, folder, seed + 1, pin, log)
    delays = cli.delays or [math.nan]
    say(
        log,
        f"  {n:,} rows: the command line, exit {cli.exit.code}, {cli.exit.wall:.1f} s, peak "
        f"RSS {mib(cli.exit.peak_rss):.0f} MiB, {cli.exit.cpu / n * 1e3:.3f} ms CPU a row, "
        f"creations over {cli.span:.1f} s, detection {statistics.median(delays):.2f} / "
        f"{max(delays):.2f} intervals",
    )
    resume = await run_resume(n, rows, folder, seed + 2, pin, log)
    say(
        log,
        f"  {n:,} rows: killed at {resume.accepted_at_kill:,} accepted, resumed run exit "
        f"{resume.second.code}, {resume.second.wall:.1f} s, first creation "
        f"{resume.resumed_after:.2f} s after its start; {resume.duplicates} duplicates, "
        f"{resume.missing} missing",
    )
    rows.unlink()
    return SizeRuns(n, raw, cli, resume, time.perf_counter() - started)


def say(log: bool, text: str) -> None:
    if log:
        print(text, file=sys.stderr, flush=True)


async def run_all(sizes: Sequence[int], seed: int, pin: bool, log: bool = False) -> list[SizeRuns]:
    with tempfile.TemporaryDirectory(prefix="bulk-") as tmp:
        out: list[SizeRuns] = []
        for n in sizes:
            folder = Path(tmp) / str(n)
            folder.mkdir()
            out.append(await run_size(n, folder, seed + 10 * len(out), pin, log))
            errors = error_lines(folder)
            if errors:
                say(log, f"  {n:,} rows, the command line's errors: {'; '.join(errors)}")
        return out


def error_lines(folder: Path) -> list[str]:
    found: set[str] = set()
    for name in ("full.log", "resume.log", "raw.log"):
        path = folder / name
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            found.update(line for line in text.splitlines() if line.startswith("error"))
    return sorted(found)[:5]


# -- the report --------------------------------------------------------------------------


def bound(n: int) -> float:
    """Real seconds: the least time the scaled plan lets the template read and ``n``
    creations take, past its burst (as ``batch.py``)."""
    limit = PLAN.rate_limit.scaled(SCALE)
    return max(0.0, (n + 1 - limit.burst) / limit.per_second)


def mib(size: float | None) -> float:
    return size / 2**20 if size is not None else math.nan


def figures_of(runs: list[SizeRuns]) -> list[Figure]:
    out: list[Figure] = []
    peaks = {r.n: mib(r.cli.exit.peak_rss) for r in runs}
    for r in runs:
        out += size_figures(r)
        if r.n > RSS_REFERENCE and RSS_REFERENCE in peaks:
            out.append(
                Figure(
                    name=f"client peak RSS at {r.n:,} rows - at {RSS_REFERENCE:,}, MiB",
                    values=[peaks[r.n] - peaks[RSS_REFERENCE]],
                    goal=f"<= {RSS_GROWTH_MIB}",
                    baseline="the same process measured at 100,000 rows in the same run",
                )
            )
    return out


def size_figures(r: SizeRuns) -> list[Figure]:
    n, cli, raw, resume = r.n, r.cli, r.raw, r.resume
    rate = (n - 1) / cli.span if cli.span > 0 else math.nan
    delays = cli.delays or [math.nan]
    return [
        Figure(
            name=f"client peak RSS, MiB ({n:,} rows)",
            values=[mib(cli.exit.peak_rss)],
            goal=f"< {RSS_GOAL_MIB}",
            baseline="absolute: ru_maxrss of the command line's process (os.wait4), run to its end",
        ),
        Figure(
            name=f"client CPU per row, ms ({n:,} rows)",
            values=[cli.exit.cpu / n * 1e3],
            goal="-",
            baseline=f"absolute: user + system of that process / rows; raw aiohttp: "
            f"{raw.exit.cpu / raw.rows * 1e3:.3f} ms a creation",
        ),
        Figure(
            name=f"client CPU per row / raw aiohttp's per creation ({n:,} rows)",
            values=[(cli.exit.cpu / n) / (raw.exit.cpu / raw.rows)],
            goal="-",
            baseline=f"raw aiohttp in a process of its own: {raw.rows:,} creations, "
            f"{CONCURRENCY} in flight, no journal, no awaiting",
        ),
        Figure(
            name=f"creations: the scaled plan's bound / their span ({n:,} rows)",
            values=[bound(n) / cli.span],
            goal="-",
            baseline=f"Premium x {SCALE:g} (10,000 a second, a rate no plan has: the "
            f"client's CPU, not the plan, sets the pace here), (rows + 1 - burst) / rate "
            f"= {bound(n):.2f} s; span {cli.span:.1f} s, first to last creation",
        ),
        Figure(
            name=f"creations a second / the Premium plan's own rate ({n:,} rows)",
            values=[rate / PLAN.rate_limit.per_second],
            goal=">= 1",
            baseline=f"Premium unscaled: {PLAN.rate_limit.per_minute:,.0f} a minute; the "
            "command line keeps up with the largest plan many times over (the service's "
            "limit, not the client, paces a real batch)",
        ),
        Figure(
            name=f"creations a second, the command line / raw aiohttp ({n:,} rows)",
            values=[rate / raw.rate],
            goal="-",
            baseline=f"raw aiohttp against an emulator of its own: {raw.rate:,.0f}/s "
            f"(the command line: {rate:,.0f}/s)",
        ),
        Figure(
            name=f"detection delay, median, intervals ({n:,} rows)",
            values=[statistics.median(delays)],
            goal="-",
            baseline=f"the video finishing to the service first serving it finished / the "
            f"{INTERVAL:g} s poll interval; {cli.unseen} never served finished",
        ),
        Figure(
            name=f"detection delay, worst, intervals ({n:,} rows)",
            values=[max(delays)],
            goal="<= 1.5",
            baseline="as above, the slowest video of the run",
        ),
        Figure(
            name=f"resume: second start to its first creation, s ({n:,} rows)",
            values=[resume.resumed_after],
            goal="<= 5",
            baseline=f"SIGKILLed at {resume.accepted_at_kill:,} accepted records; "
            f"{resume.made_by_second:,} creations after the second start",
        ),
        Figure(
            name=f"after the resumed run: duplicate videos ({n:,} rows)",
            values=[float(resume.duplicates)],
            goal="<= 0",
            baseline="the emulator's videos of the team, by title",
        ),
        Figure(
            name=f"after the resumed run: rows without a video ({n:,} rows)",
            values=[float(resume.missing)],
            goal="<= 0",
            baseline=f"the emulator's videos of the team, by title; {resume.strays} not of the "
            "batch",
        ),
    ]


def runs_table(runs: list[SizeRuns]) -> str:
    lines = [
        "| rows | run | exit | wall s | CPU s | peak RSS MiB | creations | span s | per s "
        "| list pages | detail reads | 429s | --out lines | emulator peak RSS MiB "
        "| request log |",
        "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in runs:
        raw, cli, res = r.raw, r.cli, r.resume
        lines.append(
            f"| {r.n:,} | raw aiohttp | {raw.exit.code} | {raw.exit.wall:.1f} "
            f"| {raw.exit.cpu:.1f} | {mib(raw.exit.peak_rss):.0f} | {raw.rows:,} "
            f"| {raw.span:.1f} | {raw.rate:,.0f} | - | - | - | - | - | - |"
        )
        lines.append(row_of(r.n, "command line", cli.exit, cli.side, cli.out_lines))
        lines.append(
            f"| {r.n:,} | killed at half | killed | {res.first.wall:.1f} | {res.first.cpu:.1f} "
            f"| {mib(res.first.peak_rss):.0f} | - | - | - | - | - | - | - | - | - |"
        )
        lines.append(row_of(r.n, "resumed", res.second, res.side, res.out_lines))
    return "\n".join(lines)


def row_of(n: int, label: str, done: Exit, side: ServiceSide, out_lines: int) -> str:
    """A run's row: its creations are those the emulator dated after its start."""
    requests = side.counters.get("requests", {})
    since = side.timeline.service_time(done.started)
    made = [c for c in side.timeline.created if c >= since]
    span = (max(made) - min(made)) / SCALE if len(made) > 1 else math.nan
    return (
        f"| {n:,} | {label} | {'killed' if done.code is None else done.code} "
        f"| {done.wall:.1f} | {done.cpu:.1f} "
        f"| {mib(done.peak_rss):.0f} | {len(made):,} | {span:.1f} "
        f"| {(len(made) - 1) / span if span > 0 else math.nan:,.0f} "
        f"| {requests.get('GET /v1/video/list', 0):,} "
        f"| {requests.get('GET /v1/video/{videoId}', 0):,} "
        f"| {side.counters.get('rateLimited', 0)} | {out_lines:,} "
        f"| {mib(side.peak_rss):.0f} | {side.logged:,} |"
    )


async def figures(quick: bool = False) -> list[Figure]:
    """Peak RSS, CPU per row, pace, detection, resume and duplicates at 10,000 rows
    (``quick``), or 10,000 and 100,000."""
    return figures_of(await run_all(QUICK_SIZES if quick else FULL_SIZES, 1, pin=True))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 rows (for CI)")
    parser.add_argument("--sizes", type=int, nargs="+", help="rows, one size after another")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-pin", action="store_true", help="leave CPUs to the scheduler")
    parser.add_argument("--raw", nargs=4, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.raw:
        url, key, rows, n = opts.raw
        sys.exit(await raw_creations(url, key, Path(rows), int(n)))
    sizes = sorted(set(opts.sizes or (QUICK_SIZES if opts.quick else SIZES)))
    if sizes[0] < 100:
        parser.error("--sizes: 100 rows or more")
    started = time.perf_counter()
    runs = await run_all(sizes, opts.seed, not opts.no_pin, log=True)
    print(
        f"Bulk: template rows through `asyncclient batch` (--spacing 0 --concurrency "
        f"{CONCURRENCY}), emulator on {PLAN.value} at {SCALE:g}x; {machine()}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print()
    print(runs_table(runs))
    print()
    print(table(figures_of(runs)))


if __name__ == "__main__":
    asyncio.run(main())
