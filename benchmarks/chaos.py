"""Money under faults: what the service's own records say after a batch meets every fault.

Scenario A runs ``client.templates.generate_many("tpl_welcome", rows, journal=J)`` in
process against a time-scaled emulator whose creation requests meet every fault kind at
``--fault-rate`` (reads meet them too, at the same rate), then runs the same batch again
with the same journal and no faults, to finish what the first run left unresolved.
Scenario B runs the CLI (``asyncclient batch rows.csv --template tpl_welcome --journal
J``) as a subprocess against the same kind of emulator and SIGKILLs it ``--kills``
times, then lets a finishing run (no faults) complete. The kills follow the journal:
most land a few milliseconds after a ``submit`` or ``accepted`` record (where a row's
money is in flight), a quarter at a random time; the note says how many rows each kill
cut between their ``submit`` record and its answer, and how many of those the service
had made.

Scenario C runs small batches whose every creation meets one of the paths that used to
charge twice or misreport (a service that processes a creation after the client gave up
on its reply, a gateway's 503 after processing, a 200 without ids), each then finished
by a second run with the same journal, and two batches of the same titles on one key
whose second batch's creations are all lost before the service.

Every column comes from the emulator's records (its projects, videos, request log,
fault counters and the team's balance), never from what the client believes; the
client's reports are only compared with them. Run from the repository root:

    python benchmarks/chaos.py [--rows 500] [--fault-rate 0.1] [--kills 20] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextvars
import csv
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient import AsyncClient, Plan, Timeouts
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = "tpl_welcome"
CREATE = "POST /v1/project/create"
READS = "GET /v1/*"
LIST = "GET /v1/video/list"
SCALE = 600.0  # ten service minutes per real second
PROCESSING = 60.0  # service seconds a video takes: 0.1 s real
FAILURE_RATE = 0.05  # of template ("class") videos, seeded
HOLD = 1.5  # real seconds a held reply waits; scenario A's client gives up after TIMEOUT
TIMEOUT = 1.0
JOURNAL_KILL_CAP = 20.0  # real seconds a run waits for its journal-following kill at most
RUN_LIMIT = 240.0  # real seconds any one run may take before the benchmark gives up on it
CREDITS = 10**7
SETTLE = 600.0 / SCALE  # the settle window: ten service minutes, in real seconds

FaultSpec = dict[str, Any]

# Every fault kind, with the parameters it is injected with.
KINDS: tuple[FaultSpec, ...] = (
    {"kind": "status", "status": 503, "message": "service unavailable"},
    {"kind": "latency", "latency": 0.05},
    {"kind": "drop_before"},
    {"kind": "drop_after"},
    {"kind": "malformed"},
    {"kind": "status_after", "status": 500},
    {"kind": "status_after", "status": 502},
    {"kind": "status_after", "status": 504},
    {"kind": "hold_reply", "latency": HOLD},
    {"kind": "rate_burst", "retry_after": 1},
    {"kind": "garbage_headers"},
)
BURST = 3  # a rate_burst on creations is this many 429s in a row


def rows(n: int) -> list[dict[str, str]]:
    """Rows like tests/test_batch_runner.py's: the title names the row at the service."""
    return [
        {
            "title": f"Welcome {i}",
            "first_name": f"Name{i}",
            "product": "Acme",
            "logo": "https://cdn.example/logo.png",
        }
        for i in range(n)
    ]


def schedule(length: int, rate: float, rng: random.Random) -> list[FaultSpec | None]:
    """A seeded fault schedule over creation requests: each kind equally often."""
    out: list[FaultSpec | None] = []
    while len(out) < length:
        if rng.random() >= rate:
            out.append(None)
            continue
        spec = dict(rng.choice(KINDS))
        if spec["kind"] == "rate_burst":
            out.extend([spec] * BURST)
        else:
            out.append(spec)
    out = out[:length]
    # every kind at least once, even in a short run: on free slots among the first rows
    free = [i for i, spec in enumerate(out[: length // 4]) if spec is None]
    rng.shuffle(free)
    for spec in KINDS:
        if spec not in out and free:
            out[free.pop()] = dict(spec)
    return out


def add_faults(emu: Emulator, n: int, rate: float, seed: int) -> None:
    """Creations follow a schedule; every other request meets each kind by probability."""
    emu.faults.add_schedule(CREATE, schedule(n * 4, rate, random.Random(seed)))
    add_read_faults(emu, rate)


def add_read_faults(emu: Emulator, rate: float) -> None:
    """Reads meet each kind by probability, ``rate`` in all."""
    share = rate / len(KINDS)
    for i, spec in enumerate(KINDS):
        # rules are tried in order: rule i sees what rules 0..i-1 let through
        probability = share / (1.0 - i * share)
        params = {k: v for k, v in spec.items() if k != "kind"}
        emu.faults.add(READS, spec["kind"], probability=probability, **params)


# -- the audit: from the emulator's records ---------------------------------------------


@dataclass
class Reported:
    """What the client reported for one row (None: it reported nothing)."""

    status: str
    project_id: str | None = None
    error: str | None = None


@dataclass
class Audit:
    label: str
    rows: int
    faults: dict[str, int]
    duplicates: int
    duplicated_rows: int
    lost: int
    misreported: int
    misreports: collections.Counter[str] = field(default_factory=collections.Counter)
    unreported: int = 0
    pending: int = 0
    credits_spent: int = 0
    credits_completed: int = 0
    credits_failed: int = 0
    credits_pending: int = 0
    credits_reported: int = 0
    seconds: float = 0.0
    note: str = ""


# What a report says of the row's project: it was charged (and, for ``submitted``, is
# still pending: accepted, its video not known finished when the run ended).
CHARGED = frozenset({"completed", "failed", "submitted"})


def audit(
    label: str,
    emu: Emulator,
    key: str,
    titles: Sequence[str],
    reported: Mapping[int, Reported],
    seconds: float,
    note: str = "",
    unsent: Collection[int] = (),
) -> Audit:
    """Compare the client's reports with the service's records, row by row.

    ``unsent``: rows the run had not sent when it ended (a cancelled run's, by its
    journal); one without a project is not lost, one with a project is misreported.

    The credits of a row are those of its project (the first one, should there be
    several), by the service's status of its video: completed, failed, or pending
    (still being made: charged, not finished). The credits of the rows reported are
    those of the projects the client's reports name as the row's (``completed``,
    ``failed``, or ``submitted``: pending); a row reported ``unresolved`` (maybe
    charged) or with no outcome names none.
    """
    team = emu.team_id(key)
    now = emu.now()
    by_title: dict[str, list[Any]] = collections.defaultdict(list)
    for project in emu.store.projects.values():
        if project.team_id == team:
            by_title[project.videos[0].name].append(project)
    # a rejection the service confirms: an unfaulted 4xx (not 429) to a creation of the row
    refused = {
        r.name
        for r in emu.requests
        if r.team == team
        and r.route.startswith(CREATE)
        and 400 <= r.status < 500
        and r.status != 429
        and r.fault is None
        and r.project is None
    }
    misreports: collections.Counter[str] = collections.Counter()
    lost = duplicates = duplicated_rows = unreported = pending = 0
    credits_completed = credits_failed = credits_pending = credits_reported = 0
    finished_since = 0  # rows reported pending whose video the service has since finished
    for index, title in enumerate(titles):
        projects = by_title.get(title, [])
        statuses = [p.videos[0].status(now) for p in projects]
        if len(projects) > 1:
            duplicates += len(projects) - 1
            duplicated_rows += 1
        report = reported.get(index)
        if "COMPLETED" in statuses:
            credits_completed += projects[statuses.index("COMPLETED")].videos[0].used_credits
        elif "FAILED" in statuses:
            credits_failed += projects[statuses.index("FAILED")].videos[0].used_credits
        elif projects:  # charged at creation, still being made
            credits_pending += projects[0].videos[0].used_credits
        if report is None and index in unsent:
            unreported += 1
            if projects:
                misreports["not sent by its journal, but a project exists"] += 1
            continue
        if not projects and not (report and report.status == "rejected" and title in refused):
            lost += 1
            said = f"{report.status}" if report else "nothing"
            if report and report.status == "rejected" and report.error:
                said = f"{said} ({report.error})"
            misreports[f"{said} (lost: no project, no rejection by the service)"] += 1
        if report is None:
            unreported += 1
            continue
        named = [p for p in projects if p.id == report.project_id]
        mine = named or projects
        status = mine[0].videos[0].status(now) if mine else None
        if report.status in CHARGED and named:
            credits_reported += named[0].videos[0].used_credits
        if report.status == "submitted":
            pending += 1
        if report.project_id is not None and projects and not named:
            misreports[f"{report.status}, naming a project the service did not make for it"] += 1
        elif report.status == "rejected" and projects:
            misreports["rejected, but a project exists"] += 1
        elif report.status in ("skipped", "not_sent") and projects:
            misreports[f"{report.status}, but a project exists"] += 1
        elif report.status == "completed" and status != "COMPLETED":
            misreports[f"completed, but the video is {status or 'missing'}"] += 1
        elif report.status == "failed" and status != "FAILED":
            misreports[f"failed, but the video is {status or 'missing'}"] += 1
        elif report.status == "submitted" and status is None:
            misreports["submitted (pending), but no project exists"] += 1
        elif report.status == "submitted" and status != "STARTED":
            finished_since += 1  # not a contradiction: it finished after the run ended
    if finished_since:
        more = f"{finished_since} rows reported pending were finished by the service since"
        note = f"{note}; {more}" if note else more
    return Audit(
        label=label,
        rows=len(titles),
        faults=dict(emu.counters.faults),
        duplicates=duplicates,
        duplicated_rows=duplicated_rows,
        lost=lost,
        misreported=sum(v for k, v in misreports.items() if "(lost" not in k),
        misreports=misreports,
        unreported=unreported,
        pending=pending,
        credits_spent=CREDITS - emu.credits(key),
        credits_completed=credits_completed,
        credits_failed=credits_failed,
        credits_pending=credits_pending,
        credits_reported=credits_reported,
        seconds=seconds,
        note=note,
    )


def table(title: str, audits: Sequence[Audit]) -> None:
    print(f"### {title}")
    print()
    print(
        "| after | rows | faults injected (by kind) | duplicate projects (rows) | rows lost "
        "| misreported | no outcome | pending | credits spent | credits of completed rows "
        "| credits of failed rows | credits of pending rows | credits of the rows reported "
        "| seconds |"
    )
    print("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for a in audits:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(a.faults.items())) or "none"
        total = sum(a.faults.values())
        print(
            f"| {a.label} | {a.rows} | {total}: {faults} | {a.duplicates} ({a.duplicated_rows}) "
            f"| {a.lost} | {a.misreported} | {a.unreported} | {a.pending} | {a.credits_spent} "
            f"| {a.credits_completed} | {a.credits_failed} | {a.credits_pending} "
            f"| {a.credits_reported} | {a.seconds:.1f} |"
        )
    print()
    for a in audits:
        for what, count in sorted(a.misreports.items()):
            print(f"- {a.label}: {count} reported {what}")
        if a.note:
            print(f"- {a.label}: {a.note}")
    print()


def emulator(seed: int) -> Emulator:
    return Emulator(
        time_scale=SCALE,
        seed=seed,
        processing_seconds=PROCESSING,
        failure_rate={"class": FAILURE_RATE},
    )


# -- scenario A: in process --------------------------------------------------------------


_LOOK: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("look", default=None)


@dataclass
class Probe:
    """What a run asked of the video list, counted at the client's calls (a call's
    retries are one call; the emulator's request log counts every attempt): the looks
    for lost creations (``projects.reconcile``), the rows they were for, the pages they
    read, the most one look read, and the pages the poller read to follow the rows."""

    looks: int = 0
    looked_for: set[str] = field(default_factory=set)
    look_pages: int = 0
    deepest: int = 0
    poll_pages: int = 0
    batch: Any = None  # the run's batch: a cancelled one still tells what it finished

    def attach(self, client: AsyncClient) -> None:
        """Count through ``client``'s own objects (the batch calls the same ones)."""
        videos, projects = client.videos, client.projects
        list_page, reconcile = videos.list_page, projects.reconcile

        async def counted_page(**options: Any) -> Any:
            pages = _LOOK.get()
            if pages is None:
                self.poll_pages += 1
            else:
                self.look_pages += 1
                pages[0] += 1
                self.deepest = max(self.deepest, pages[0])
            return await list_page(**options)

        async def counted_look(error: Any, **options: Any) -> Any:
            self.looks += 1
            self.looked_for.add(str(error.name))
            token = _LOOK.set([0])
            try:
                return await reconcile(error, **options)
            finally:
                _LOOK.reset(token)

        videos.list_page = counted_page  # type: ignore[method-assign]
        projects.reconcile = counted_look  # type: ignore[method-assign]

    def describe(self) -> str:
        return (
            f"{self.looks} looks for lost creations ({len(self.looked_for)} rows) read "
            f"{self.look_pages} list pages (the most in one look: {self.deepest}); "
            f"following the rows read {self.poll_pages}"
        )


async def run_batch(
    emu: Emulator,
    key: str,
    data: list[dict[str, str]],
    journal: Path,
    settle: float = SETTLE,
    probe: Probe | None = None,
) -> tuple[dict[int, Reported], str]:
    """One run of the batch; returns the reports and what went wrong, if anything."""
    rate = Plan.PREMIUM.rate_limit.scaled(SCALE)
    timeouts = Timeouts(connect=TIMEOUT, read=TIMEOUT, total=TIMEOUT)
    polling = PollPolicy(min_interval=0.05, max_interval=0.25)
    async with AsyncClient(
        key, base_url=emu.url, plan=rate, timeouts=timeouts, polling=polling
    ) as client:
        if probe is not None:
            probe.attach(client)
        batch = client.templates.generate_many(
            TEMPLATE,
            data,
            journal=journal,
            spacing=1.0 / SCALE,
            concurrency=8,
            settle_window=settle,
        )
        if probe is not None:
            probe.batch = batch
        try:
            results = await asyncio.wait_for(batch, RUN_LIMIT)
        except TimeoutError:
            return {}, f"gave up after {RUN_LIMIT:g} s"
        except Exception as exc:
            return {}, f"the batch raised {type(exc).__name__}: {exc}"
    return {r.index: Reported(str(r.status), r.project_id, r.error) for r in results}, ""


async def scenario_a(n: int, rate: float, seed: int, folder: Path) -> list[Audit]:
    data = rows(n)
    titles = [r["title"] for r in data]
    journal = folder / "a.journal.jsonl"
    audits = []
    async with emulator(seed) as emu:
        key = emu.add_team(plan="premium", credits=CREDITS)
        add_faults(emu, n, rate, seed)
        started = time.monotonic()
        reported, note = await run_batch(emu, key, data, journal)
        audits.append(
            audit("run 1 (faults)", emu, key, titles, reported, time.monotonic() - started, note)
        )
        emu.faults.clear()
        started = time.monotonic()
        reported, note = await run_batch(emu, key, data, journal)
        audits.append(
            audit(
                "run 2 (same journal)", emu, key, titles, reported, time.monotonic() - started, note
            )
        )
    return audits


# -- scenario B: the CLI, killed --------------------------------------------------------


def write_csv(path: Path, data: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(data[0]))
        writer.writeheader()
        writer.writerows(data)


@dataclass(frozen=True)
class Kill:
    """When to SIGKILL a run: ``after`` new journal records of ``event`` and ``delay``
    more seconds, or (``event`` None) ``delay`` seconds after the start."""

    event: str | None
    after: int = 0
    delay: float = 0.0

    def describe(self) -> str:
        if self.event is None:
            return f"{self.delay:.1f} s in"
        return f"{self.delay * 1000:.0f} ms after its {self.after}th new {self.event!r} record"


def kills_for(n: int, rng: random.Random) -> list[Kill]:
    """Moments that follow the journal, so that kills land where money is at stake.

    Half land just after a ``submit`` record (0 to 20 ms later: the request is on its way,
    being processed, or its reply is coming back), a quarter just after an ``accepted``
    record (the job is known, not yet awaited), a quarter at a random time.
    """
    out = []
    for i in range(n):
        pick = i % 4
        if pick in (0, 2):
            out.append(Kill("submit", rng.randint(1, 12), rng.uniform(0.0, 0.02)))
        elif pick == 1:
            out.append(Kill("accepted", rng.randint(1, 12), rng.uniform(0.0, 0.005)))
        else:
            out.append(Kill(None, delay=rng.uniform(0.5, 4.0)))
    return out


def _read_new(path: Path, offset: int, needle: bytes) -> tuple[int, int]:
    """The new offset and the count of ``needle`` in the whole lines past ``offset``."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0, 0
    offset = min(offset, size)  # a torn tail cut on open shortens the file
    if size == offset:
        return offset, 0
    with path.open("rb") as fh:
        fh.seek(offset)
        chunk = fh.read(size - offset)
    cut = chunk.rfind(b"\n") + 1  # whole lines only
    return offset + cut, chunk[:cut].count(needle)


async def _records_seen(path: Path, event: str, count: int, proc: Any) -> None:
    """Return once ``count`` new ``event`` records were appended to the journal at
    ``path`` (read incrementally, every 2 ms)."""
    needle = f'"ev":"{event}"'.encode()
    offset, _ = _read_new(path, 1 << 62, needle)  # start at the end
    seen = 0
    while proc.returncode is None:
        offset, new = _read_new(path, offset, needle)
        seen += new
        if seen >= count:
            return
        await asyncio.sleep(0.002)


def journal_lines(journal: Path) -> list[str]:
    if not journal.exists():
        return []
    return journal.read_text(encoding="utf-8", errors="replace").splitlines()


def cut_rows(lines: Sequence[str], since: int) -> set[int]:
    """Rows sent at line ``since`` or later whose last journal record is ``submit``: the
    answer to that sending was not recorded before the run died."""
    last: dict[int, str] = {}
    sent: set[int] = set()
    for number, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(record, dict) and "i" in record:
            last[int(record["i"])] = str(record.get("ev"))
            if number >= since and record.get("ev") == "submit":
                sent.add(int(record["i"]))
    return {i for i in sent if last[i] == "submit"}


async def cli(emu: Emulator, key: str, folder: Path, kill: Kill | None) -> tuple[int | None, bool]:
    """Run ``asyncclient batch`` once; SIGKILL it at ``kill`` if given.

    Returns its exit status and whether it was killed.
    """
    env = dict(os.environ, ASYNCCLIENT_API_KEY=key, ASYNCCLIENT_BASE_URL=emu.url)
    env.pop("ASYNCCLIENT_PLAN", None)
    journal = folder / "b.journal.jsonl"
    command = [
        sys.executable,
        "-m",
        "asyncclient",
        "batch",
        str(folder / "rows.csv"),
        "--template",
        TEMPLATE,
        "--journal",
        str(journal),
        "--out",
        str(folder / "b.out.jsonl"),
        "--concurrency",
        "8",
        "--spacing",
        f"{1.0 / SCALE:.6f}",
        "--settle-window",
        f"{SETTLE:g}",
    ]
    proc = await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=(folder / "b.stderr.txt").open("ab"),
    )
    if kill is None:
        moment: asyncio.Future[Any] = asyncio.ensure_future(asyncio.sleep(RUN_LIMIT))
    elif kill.event is None:
        moment = asyncio.ensure_future(asyncio.sleep(kill.delay))
    else:  # a run that sends no more (it is reconciling, or awaiting) is killed anyway
        moment = asyncio.ensure_future(
            asyncio.wait_for(_records_seen(journal, kill.event, kill.after, proc), JOURNAL_KILL_CAP)
        )
    ended = asyncio.ensure_future(proc.wait())
    await asyncio.wait({moment, ended}, return_when=asyncio.FIRST_COMPLETED)
    if not ended.done() and kill is not None and kill.event is not None:
        await asyncio.sleep(kill.delay)
    if moment.done() and not moment.cancelled():
        moment.exception()  # a capped wait's TimeoutError: seen, nothing to report
    moment.cancel()
    if ended.done():
        return proc.returncode, False
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    return None, kill is not None


def read_out(path: Path) -> dict[int, Reported]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            status, project, error = record["status"], record.get("projectId"), record.get("error")
            out[int(record["row"])] = Reported(str(status), project, error)
    return out


async def scenario_b(n: int, rate: float, kills: int, seed: int, folder: Path) -> list[Audit]:
    data = rows(n)
    titles = [r["title"] for r in data]
    write_csv(folder / "rows.csv", data)
    rng = random.Random(seed + 100)
    audits = []
    async with emulator(seed) as emu:
        key = emu.add_team(plan="premium", credits=CREDITS)
        add_faults(emu, n, rate, seed)
        started = time.monotonic()
        killed = finished_early = 0
        cut: list[int] = []  # rows cut between submit and answer, kill by kill
        made_when_cut = 0  # of those, rows the service had made by then
        for kill in kills_for(kills, rng):
            since = len(journal_lines(folder / "b.journal.jsonl"))
            _, was_killed = await cli(emu, key, folder, kill)
            killed += was_killed
            finished_early += not was_killed
            if was_killed:
                rows_cut = cut_rows(journal_lines(folder / "b.journal.jsonl"), since)
                cut.append(len(rows_cut))
                made = {p.videos[0].name for p in emu.store.projects.values()}
                made_when_cut += sum(titles[i] in made for i in rows_cut)
        errors = [
            line
            for line in (folder / "b.stderr.txt").read_text(errors="replace").splitlines()
            if line.startswith("error:")
        ]
        note = (
            f"{killed} SIGKILLs ({kills - kills // 4} following the journal); "
            f"{finished_early} runs ended before their kill; "
            f"{sum(k > 0 for k in cut)} kills cut {sum(cut)} rows between their submit "
            f"record and its answer, {made_when_cut} of which the service had made"
        )
        if errors:
            note += f"; their errors: {'; '.join(sorted(set(errors))[:5])}"
        reported = read_out(folder / "b.out.jsonl")
        # rows no run had sent when the last was killed: not lost (the journal's word)
        sent, _ = journal_reports(folder / "b.journal.jsonl")
        audits.append(
            audit(
                f"{kills} killed runs (faults)",
                emu,
                key,
                titles,
                reported,
                time.monotonic() - started,
                note,
                unsent=set(range(n)) - set(sent),
            )
        )
        emu.faults.clear()
        (folder / "b.out.jsonl").unlink(missing_ok=True)
        started = time.monotonic()
        status, _ = await cli(emu, key, folder, None)
        reported = read_out(folder / "b.out.jsonl")
        note = f"exit status {status}" if status is not None else f"gave up after {RUN_LIMIT:g} s"
        audits.append(
            audit("finishing run", emu, key, titles, reported, time.monotonic() - started, note)
        )
    return audits


# -- scenario C: the paths of issue "Money-safe, proven" ---------------------------------

# Each is a fault on every creation of a small batch; run 2 (same journal, no faults)
# finishes what run 1 left pending. The emulator's latency is real seconds (unscaled): the
# settle window here is longer than it, as the real one is longer than any delay.
SLOW_SETTLE = 4.0
PATHS: tuple[tuple[str, FaultSpec], ...] = (
    ("slow service: processed after the reply was given up", {"kind": "latency", "latency": 2.0}),
    ("a gateway's 503 after processing", {"kind": "status_after", "status": 503}),
    ("200 without ids", {"kind": "ok_without_ids"}),
)


async def scenario_c(n: int, seed: int, folder: Path) -> list[Audit]:
    data = rows(n)
    titles = [r["title"] for r in data]
    audits = []
    for number, (label, spec) in enumerate(PATHS):
        journal = folder / f"c{number}.journal.jsonl"
        async with emulator(seed + number) as emu:
            key = emu.add_team(plan="premium", credits=CREDITS)
            params = {k: v for k, v in spec.items() if k != "kind"}
            emu.faults.add(CREATE, spec["kind"], **params)
            started = time.monotonic()
            reported, note = await run_batch(emu, key, data, journal, SLOW_SETTLE)
            seconds = time.monotonic() - started
            audits.append(audit(label, emu, key, titles, reported, seconds, note))
            emu.faults.clear()
            started = time.monotonic()
            reported, note = await run_batch(emu, key, data, journal)
            seconds = time.monotonic() - started
            audits.append(audit(f"{label}, run 2", emu, key, titles, reported, seconds, note))
    audits.append(await _repeated_titles(n, seed, folder))
    return audits


async def _repeated_titles(n: int, seed: int, folder: Path) -> Audit:
    """Two batches of the same titles, one after the other on one key; every creation of
    the second is lost before the service. Its rows must get projects of their own."""
    data = rows(n)
    async with emulator(seed + 10) as emu:
        key = emu.add_team(plan="premium", credits=CREDITS)
        first, _ = await run_batch(emu, key, data, folder / "c-first.journal.jsonl")
        await asyncio.sleep(2.0)  # whole seconds apart on the service's Date
        emu.faults.add(CREATE, "drop_before", times=n)
        started = time.monotonic()
        second, note = await run_batch(emu, key, data, folder / "c-second.journal.jsonl")
        seconds = time.monotonic() - started
        result = audit("repeated titles, a second batch", emu, key, [], second, seconds, note)
        team = emu.team_id(key)
        per_title = collections.Counter(
            p.videos[0].name for p in emu.store.projects.values() if p.team_id == team
        )
    taken = {r.project_id for r in first.values()} & {r.project_id for r in second.values()}
    result.rows = n
    result.duplicates = sum(max(0, c - 2) for c in per_title.values())
    result.duplicated_rows = sum(1 for c in per_title.values() if c > 2)
    result.lost = sum(1 for t in (r["title"] for r in data) if per_title.get(t, 0) < 2)
    result.misreported = len(taken - {None})
    if result.misreported:
        result.misreports["completed with the first batch's project"] = result.misreported
    return result


# -- scenario D: many rows, a list outage, a cancel, a resume ---------------------------

OUTAGE = 120.0  # service seconds the video list fails (two minutes: 0.2 s real)
OUTAGE_AT = 0.4  # of the rows created when it starts
CANCEL_AT = 0.6  # of the rows created when the run is cancelled...
CANCEL_AFTER_OUTAGE = 60.0  # ...and at least this many service seconds after the outage
RESUMES = 3  # finishing runs at most (each waits for every row: one is expected)
OPEN = frozenset({"submitted", "unresolved", "not_sent"})


@dataclass
class Outage:
    """What the director did to run 1, from the emulator's records."""

    started_at: float | None = None  # service time
    ended_at: float | None = None
    created_at_start: int = 0
    created_at_end: int = 0
    list_reads: int = 0  # during the outage, every one failed
    list_faults: collections.Counter[str] = field(default_factory=collections.Counter)
    created_at_cancel: int = 0
    cancelled: bool = False

    def describe(self, n: int) -> str:
        if self.started_at is None or self.ended_at is None:
            return "the run ended before its list outage"
        failed = ", ".join(f"{k} {v}" for k, v in sorted(self.list_faults.items()))
        said = (
            f"GET /v1/video/list failed for {self.ended_at - self.started_at:.0f} service "
            f"seconds from the {_nth(self.created_at_start)} creation to the "
            f"{_nth(self.created_at_end)}: {self.list_reads} reads, {failed or 'none failed'}"
        )
        if self.cancelled:
            return f"{said}; cancelled at the {_nth(self.created_at_cancel)} creation of {n}"
        return f"{said}; the run ended before its cancel"


def _nth(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    if number % 100 in (11, 12, 13):
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


async def direct(
    emu: Emulator,
    team: str,
    n: int,
    rate: float,
    run: asyncio.Future[Any],
    outage_for: float = OUTAGE,
) -> Outage:
    """Fail the video list for ``outage_for`` service seconds once ``OUTAGE_AT`` of the
    rows were created, then cancel ``run`` (a deploy stopping a worker) once
    ``CANCEL_AT`` were and :data:`CANCEL_AFTER_OUTAGE` service seconds have passed."""
    said = Outage()

    def created() -> int:
        return int(emu.counters.projects[team])

    async def until(ready: Any) -> bool:
        while not run.done():
            if ready():
                return True
            await asyncio.sleep(0.002)
        return False

    if not await until(lambda: created() >= OUTAGE_AT * n):
        return said
    said.started_at, said.created_at_start = emu.now(), created()
    mark = len(emu.requests)
    # the outage first, the reads' usual faults behind it (rules are tried in order)
    for rule in emu.faults.rules:
        if rule.route == READS:
            emu.faults.remove(rule.id)
    outage = [
        emu.faults.add(LIST, "drop_before", probability=0.5),
        emu.faults.add(LIST, "status", status=503, message="service unavailable"),
    ]
    add_read_faults(emu, rate)
    end = said.started_at + outage_for
    await until(lambda: emu.now() >= end)
    for rule in outage:
        emu.faults.remove(rule.id)
    said.ended_at, said.created_at_end = emu.now(), created()
    for record in emu.requests[mark:]:
        if record.route == LIST:
            said.list_reads += 1
            said.list_faults[record.fault or "answered"] += 1
    after = said.ended_at + CANCEL_AFTER_OUTAGE
    if await until(lambda: created() >= CANCEL_AT * n and emu.now() >= after):
        said.created_at_cancel = created()
        said.cancelled = run.cancel()
    return said


def journal_reports(journal: Path) -> tuple[dict[int, Reported], collections.Counter[str]]:
    """What a run that ended without results left in its journal, row by row, as
    reports: ``done`` its outcome, ``accepted`` pending (``submitted``), ``rejected``, a
    ``submit`` with no answer ``unresolved``; a row the run stopped before sending (the
    journal's ``rejected`` "not sent") is unsent, as a row the journal never names. And
    how many rows each last event has."""
    last: dict[int, dict[str, Any]] = {}
    for line in journal_lines(journal):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(record, dict) and "i" in record:
            last[int(record["i"])] = record
    reported = {}
    events: collections.Counter[str] = collections.Counter()
    for row, record in last.items():
        event = str(record.get("ev"))
        if event == "done":
            reported[row] = Reported(str(record.get("status")), record.get("project"))
        elif event == "accepted":
            reported[row] = Reported("submitted", record.get("project"))
        elif event == "rejected" and str(record.get("error", "")).startswith("not sent"):
            event = "rejected: not sent"  # the run stopped before the request left
        elif event == "rejected":
            reported[row] = Reported("rejected", error=record.get("error"))
            event = f"rejected ({record.get('error', 'no reason')})"
        elif event == "submit":
            reported[row] = Reported("unresolved")
        events[event] += 1
    return reported, events


def _gist(error: str) -> str:
    """An error's words up to its first colon (a parenthesis it opened, closed)."""
    gist = error.split(":")[0].strip()
    return gist + ")" * (gist.count("(") - gist.count(")"))


def list_reads(emu: Emulator, mark: int) -> str:
    """The video list's pages served since request ``mark`` (every attempt, faulted ones
    apart), from the emulator's request log."""
    served = faulted = 0
    for record in emu.requests[mark:]:
        if record.route == LIST:
            served += 1
            faulted += record.fault is not None
    return f"the emulator served {served} list pages ({faulted} faulted)"


async def scenario_d(
    n: int, rate: float, seed: int, folder: Path, outage_for: float = OUTAGE
) -> list[Audit]:
    data = rows(n)
    titles = [r["title"] for r in data]
    journal = folder / "d.journal.jsonl"
    audits = []
    began = time.monotonic()
    async with emulator(seed) as emu:
        key = emu.add_team(plan="premium", credits=CREDITS)
        team = emu.team_id(key)
        add_faults(emu, n, rate, seed)
        probe, mark, started = Probe(), len(emu.requests), time.monotonic()
        run = asyncio.ensure_future(run_batch(emu, key, data, journal, probe=probe))
        outage = await direct(emu, team, n, rate, run, outage_for)
        unsent: set[int] = set()
        try:
            reported, note = await run
        except asyncio.CancelledError:  # what it reports is its journal
            reported, states = journal_reports(journal)
            unsent = set(range(n)) - set(reported)
            made = {p.videos[0].name for p in emu.store.projects.values() if p.team_id == team}
            # a row whose last record is its submit: left unresolved by the run (its
            # looks could not tell; the batch said so), or cut by the cancel
            results = probe.batch.results if probe.batch is not None else []
            told = {r.index: r for r in results if r.status == "unresolved"}
            why = collections.Counter(_gist(str(r.error)) for r in told.values())
            open_ = [i for i, r in reported.items() if r.status == "unresolved"]
            cut = [i for i in open_ if i not in told]
            left = [i for i in open_ if i in told]
            reasons = "".join(f"; {count}: {text}" for text, count in why.items())
            note = (
                "its outcomes are its journal's: "
                + ", ".join(f"{count} rows {ev!r}" for ev, count in sorted(states.items()))
                + f"; {len(unsent)} rows unsent; of the rows at 'submit', {len(left)} the "
                f"run had ended unresolved ({sum(titles[i] in made for i in left)} of "
                f"which the service had made{reasons}) and {len(cut)} the "
                "cancel caught in flight or while their project was looked for "
                f"({sum(titles[i] in made for i in cut)} made)"
            )
        seconds = time.monotonic() - started
        notes = [outage.describe(n), note] if note else [outage.describe(n)]
        notes.append(f"{probe.describe()}; {list_reads(emu, mark)}")
        label = "run 1 (faults, list outage, cancelled)"
        audits.append(audit(label, emu, key, titles, reported, seconds, "; ".join(notes), unsent))
        emu.faults.clear()
        for number in range(1, RESUMES + 1):
            probe, mark, started = Probe(), len(emu.requests), time.monotonic()
            reported, note = await run_batch(emu, key, data, journal, probe=probe)
            seconds = time.monotonic() - started
            notes = [note] if note else []
            notes.append(f"{probe.describe()}; {list_reads(emu, mark)}")
            still_open = sum(r.status in OPEN for r in reported.values())
            last = bool(reported and not still_open) or number == RESUMES
            if last:
                notes.append(f"D took {time.monotonic() - began:.1f} s in all")
            label = "resumed (same journal, no faults)"
            if number > 1:
                label = f"resumed again ({number})"
            audits.append(audit(label, emu, key, titles, reported, seconds, "; ".join(notes)))
            if last:
                break
    return audits


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=500, help="rows per scenario (500)")
    parser.add_argument("--fault-rate", type=float, default=0.1, help="of requests (0.1)")
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs in scenario B (20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows-d", type=int, default=5000, help="rows of scenario D (5000)")
    parser.add_argument(
        "--outage",
        type=float,
        default=OUTAGE / 60,
        help=f"service minutes the video list fails in scenario D ({OUTAGE / 60:g})",
    )
    parser.add_argument(
        "--quick", action="store_true", help="40 rows, 3 kills, 200 rows in D (for CI)"
    )
    parser.add_argument("--only", choices=["A", "B", "C", "D"], help="run one scenario")
    opts = parser.parse_args()
    if opts.quick:
        opts.rows, opts.kills, opts.rows_d = 40, 3, 200
    sizes = [f"{opts.rows} template rows"] if opts.only in (None, "A", "B", "C") else []
    if opts.only in (None, "D"):
        sizes.append(f"{opts.rows_d} in D")
    print(
        f"{', '.join(sizes)}, faults on {opts.fault_rate:.0%} of requests "
        f"({len(KINDS)} kinds and variants), emulator at {SCALE:g}x, "
        f"{FAILURE_RATE:.0%} of videos fail; every number from the emulator's records"
    )
    print()
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        folder = Path(tmp)
        if opts.only in (None, "A"):
            table(
                "A: in process, then again with the same journal",
                await scenario_a(opts.rows, opts.fault_rate, opts.seed, folder),
            )
        if opts.only in (None, "B"):
            table(
                f"B: the CLI, SIGKILLed {opts.kills} times, then a finishing run",
                await scenario_b(opts.rows, opts.fault_rate, opts.kills, opts.seed, folder),
            )
        if opts.only in (None, "C"):
            table(
                'C: each money path of issue "Money-safe, proven" on every creation',
                await scenario_c(max(4, opts.rows // 20), opts.seed, folder),
            )
        if opts.only in (None, "D"):
            table(
                f"D: {opts.rows_d} rows, a list outage of {opts.outage:g} service minutes, "
                "cancelled, then resumed",
                await scenario_d(opts.rows_d, opts.fault_rate, opts.seed, folder, opts.outage * 60),
            )


if __name__ == "__main__":
    asyncio.run(main())
