"""Memory per pending job at 10,000 jobs (issues 5 and 11).

Builds the jobs a web backend would hold (``client.jobs.from_video_id``), then has a task
wait on each (``await job``, with its one-hour deadline) while the poller reads them: the
video list is answered in process (the records a page of the service would hold, every
video still running), so nothing is sent. tracemalloc measures the Python heap after
two rounds, while the poller sleeps; a warm-up run first pays what is paid once (lazy
imports, the timer). A bare asyncio task waiting on an Event is measured side by side as
the floor any awaitable-per-job design pays. Run from the repository root:

    python benchmarks/memory.py [--jobs 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient import Page, Plan, TokenBucket, Video, VideoDetail
from asyncclient._clock import SystemClock
from asyncclient._convert import decode
from asyncclient.awaiting.jobs import Jobs
from asyncclient.awaiting.poller import Poller, PollPolicy
from benchmarks._report import Figure


def heap() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def bare_tasks(n: int) -> int:
    event = asyncio.Event()
    before = heap()
    tasks = [asyncio.ensure_future(event.wait()) for _ in range(n)]
    await asyncio.sleep(0)
    used = heap() - before
    event.set()
    await asyncio.gather(*tasks)
    return used


INTERVAL = 0.5  # real seconds between the poller's rounds (a round takes far less)


class _RoundEnds(SystemClock):
    """The real clock, telling when the poller has gone to sleep between rounds."""

    def __init__(self) -> None:
        self.asleep = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.asleep.set()
        try:
            await asyncio.sleep(seconds)
        finally:
            self.asleep.clear()


def video_id(i: int) -> str:
    return f"vid_{i:012x}"


class _Running:
    """The video list, answered in process: every job's video, still running; each page
    decoded afresh from its JSON, as a page read from the service is."""

    def __init__(self, n: int) -> None:
        self.records = [
            json.dumps(
                {
                    "id": video_id(i),
                    "projectId": f"proj_{i:012x}",
                    "name": f"Video {i}",
                    "type": "ugc_ads",
                    "status": "STARTED",
                    "progress": 40,
                    "createdAt": "2026-11-24T08:00:00Z",
                }
            )
            for i in range(n)
        ]
        self.pages = 0

    async def get(self, video_id: str) -> VideoDetail:
        raise AssertionError("every video is found in the list")

    async def list_page(self, *, limit: int = 100, offset: int = 0) -> Page[Video]:
        self.pages += 1
        items = [decode(json.loads(raw), Video) for raw in self.records[offset : offset + limit]]
        return Page(items=items, total=len(self.records), limit=limit, offset=offset)


async def jobs(n: int) -> tuple[int, int]:
    """Bytes of ``n`` jobs nobody waits on, and of ``n`` awaited jobs after two rounds."""
    source = _Running(n)
    steady = PollPolicy(min_interval=INTERVAL, max_interval=INTERVAL, jitter=0.0)
    rate = Plan.PREMIUM.rate_limit.scaled(10_000)  # the limiter never holds a round back
    clock = _RoundEnds()
    poller = Poller(source, limiter=TokenBucket(rate), policy=steady, clock=clock)
    client_jobs = Jobs(poller)  # what client.jobs is, without a client
    before = heap()
    held = [client_jobs.from_video_id(video_id(i)) for i in range(n)]
    objects = heap() - before
    waiting = [asyncio.ensure_future(job.wait()) for job in held]
    await asyncio.sleep(0)
    assert poller.watching == n
    while True:  # measured once the second round is over and the poller sleeps
        await clock.asleep.wait()
        if poller.stats.rounds >= 2:
            break
        await asyncio.sleep(INTERVAL / 2)
    assert source.pages >= 2 * (n // 100 or 1)
    total = heap() - before
    assert poller.watching == n and not any(task.done() for task in waiting)
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    await poller.aclose()
    return objects, total


async def measure(n: int, what: str) -> dict[str, float]:
    """One measurement in this (fresh) interpreter: the jobs', or the floor's."""
    tracemalloc.start()
    try:
        if what == "floor":
            return {"floor": await bare_tasks(n) / n}
        await jobs(200)  # what is paid once: lazy imports, the deadline timer
        objects, total = await jobs(n)
        return {"objects": objects / n, "total": total / n}
    finally:
        tracemalloc.stop()


async def measure_apart(n: int, what: str) -> dict[str, float]:
    """:func:`measure` in a fresh interpreter: nothing a run before freed falls in it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--jobs", str(n), "--json", what, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"benchmarks/memory.py --json {what} exited {proc.returncode}")
    result: dict[str, float] = json.loads(out)
    return result


async def figures(quick: bool = False, repeats: int = 3) -> list[Figure]:
    """Bytes per awaited job (goal <= 2048 at 10,000 jobs), and over the floor."""
    n = 2_000 if quick else 10_000
    runs = []
    for _ in range(1 if quick else repeats):  # each part in a fresh interpreter
        runs.append({**await measure_apart(n, "jobs"), **await measure_apart(n, "floor")})
    return [
        Figure(
            name=(
                f"bytes per awaited VideoJob ({n:,} jobs, its awaiting task and deadline "
                "included, after two polling rounds)"
            ),
            values=[r["total"] for r in runs],
            goal="<= 2048",
            baseline="absolute bytes (tracemalloc), not a ratio; each run in a fresh interpreter",
        ),
        Figure(
            name="awaited VideoJob / a bare task waiting on an Event",
            values=[r["total"] / r["floor"] for r in runs],
            goal="-",
            baseline="the least any awaitable-per-job design holds (in an interpreter of its own)",
        ),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--json", choices=["jobs", "floor"], help="one part, as JSON")
    opts = parser.parse_args()
    n = opts.jobs
    if opts.json:
        print(json.dumps(await measure(n, opts.json)))
        return
    result = {**await measure_apart(n, "jobs"), **await measure_apart(n, "floor")}
    print(f"{n} pending jobs")
    print()
    print("| what                                       | bytes per job |")
    print("|--------------------------------------------|--------------:|")
    print(f"| VideoJob objects (ids known, nobody waits) | {result['objects']:>13.0f} |")
    print(f"| VideoJob + a task awaiting it, polled      | {result['total']:>13.0f} |")
    print(f"| floor: a bare task waiting on an Event     | {result['floor']:>13.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
