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
import csv
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
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
    share = rate / len(KINDS)
    for i, spec in enumerate(KINDS):
        # rules are tried in order: rule i sees what rules 0..i-1 let through
        probability = share / (1.0 - i * share)
        params = {k: v for k, v in spec.items() if k != "kind"}
        emu.faults.add("GET /v1/*", spec["kind"], probability=probability, **params)


# -- the audit: from the emulator's records ---------------------------------------------


@dataclass
class Reported:
    """What the client reported for one row (None: it reported nothing)."""

    status: str
    project_id: str | None = None


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
    credits_spent: int = 0
    credits_completed: int = 0
    credits_failed: int = 0
    seconds: float = 0.0
    note: str = ""


def audit(
    label: str,
    emu: Emulator,
    key: str,
    titles: Sequence[str],
    reported: Mapping[int, Reported],
    seconds: float,
    note: str = "",
) -> Audit:
    """Compare the client's reports with the service's records, row by row."""
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
    lost = duplicates = duplicated_rows = unreported = 0
    credits_completed = credits_failed = 0
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
        if not projects and not (report and report.status == "rejected" and title in refused):
            lost += 1
            said = f"{report.status}" if report else "nothing"
            misreports[f"{said} (lost: no project, no rejection by the service)"] += 1
        if report is None:
            unreported += 1
            continue
        mine = [p for p in projects if p.id == report.project_id] or projects
        status = mine[0].videos[0].status(now) if mine else None
        if report.status == "rejected" and projects:
            misreports["rejected, but a project exists"] += 1
        elif report.status == "skipped" and projects:
            misreports["skipped, but a project exists"] += 1
        elif report.status == "completed" and status != "COMPLETED":
            misreports[f"completed, but the video is {status or 'missing'}"] += 1
        elif report.status == "failed" and status != "FAILED":
            misreports[f"failed, but the video is {status or 'missing'}"] += 1
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
        credits_spent=CREDITS - emu.credits(key),
        credits_completed=credits_completed,
        credits_failed=credits_failed,
        seconds=seconds,
        note=note,
    )


def table(title: str, audits: Sequence[Audit]) -> None:
    print(f"### {title}")
    print()
    print(
        "| after | rows | faults injected (by kind) | duplicate projects (rows) | rows lost "
        "| misreported | no outcome | credits spent | credits of completed rows "
        "| credits of failed rows | seconds |"
    )
    print("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for a in audits:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(a.faults.items())) or "none"
        total = sum(a.faults.values())
        print(
            f"| {a.label} | {a.rows} | {total}: {faults} | {a.duplicates} ({a.duplicated_rows}) "
            f"| {a.lost} | {a.misreported} | {a.unreported} | {a.credits_spent} "
            f"| {a.credits_completed} | {a.credits_failed} | {a.seconds:.1f} |"
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


async def run_batch(
    emu: Emulator, key: str, data: list[dict[str, str]], journal: Path, settle: float = SETTLE
) -> tuple[dict[int, Reported], str]:
    """One run of the batch; returns the reports and what went wrong, if anything."""
    rate = Plan.PREMIUM.rate_limit.scaled(SCALE)
    timeouts = Timeouts(connect=TIMEOUT, read=TIMEOUT, total=TIMEOUT)
    polling = PollPolicy(min_interval=0.05, max_interval=0.25)
    async with AsyncClient(
        key, base_url=emu.url, plan=rate, timeouts=timeouts, polling=polling
    ) as client:
        batch = client.templates.generate_many(
            TEMPLATE,
            data,
            journal=journal,
            spacing=1.0 / SCALE,
            concurrency=8,
            settle_window=settle,
        )
        try:
            results = await asyncio.wait_for(batch, RUN_LIMIT)
        except TimeoutError:
            return {}, f"gave up after {RUN_LIMIT:g} s"
        except Exception as exc:
            return {}, f"the batch raised {type(exc).__name__}: {exc}"
    return {r.index: Reported(str(r.status), r.project_id) for r in results}, ""


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
            out[int(record["row"])] = Reported(str(record["status"]), record.get("projectId"))
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
        audits.append(
            audit(
                f"{kills} killed runs (faults)",
                emu,
                key,
                titles,
                reported,
                time.monotonic() - started,
                note,
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=500, help="rows per scenario (500)")
    parser.add_argument("--fault-rate", type=float, default=0.1, help="of requests (0.1)")
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs in scenario B (20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="40 rows, 3 kills (for CI)")
    parser.add_argument("--only", choices=["A", "B", "C"], help="run one scenario")
    opts = parser.parse_args()
    if opts.quick:
        opts.rows, opts.kills = 40, 3
    print(
        f"{opts.rows} template rows, faults on {opts.fault_rate:.0%} of requests "
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


if __name__ == "__main__":
    asyncio.run(main())
