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
from asyncclient.jobs import Jobs
from asyncclient.poller import Poller, PollPolicy
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


async def figures(quick: bool = False, repeats: int = 3) -> list[Figure]:
    """Bytes per awaited job (goal <= 2048 at 10,000 jobs), and over the floor."""
    n = 2_000 if quick else 10_000
    per_job, over_floor = [], []
    tracemalloc.start()
    try:
        await jobs(200)  # what is paid once: lazy imports, the deadline timer
        for _ in range(1 if quick else repeats):
            _, total = await jobs(n)
            floor = await bare_tasks(n)
            per_job.append(total / n)
            over_floor.append(total / floor)
    finally:
        tracemalloc.stop()
    return [
        Figure(
            name=(
                f"bytes per awaited VideoJob ({n:,} jobs, its awaiting task and deadline "
                "included, after two polling rounds)"
            ),
            values=per_job,
            goal="<= 2048",
            baseline="absolute bytes (tracemalloc), not a ratio",
        ),
        Figure(
            name="awaited VideoJob / a bare task waiting on an Event",
            values=over_floor,
            goal="-",
            baseline="the least any awaitable-per-job design holds, measured in the same run",
        ),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    n = parser.parse_args().jobs
    tracemalloc.start()
    await jobs(200)  # what is paid once: lazy imports, the deadline timer
    objects, total = await jobs(n)  # first: what the floor's tasks leave to free skews it
    floor = await bare_tasks(n)
    print(f"{n} pending jobs")
    print()
    print("| what                                       | bytes per job |")
    print("|--------------------------------------------|--------------:|")
    print(f"| VideoJob objects (ids known, nobody waits) | {objects / n:>13.0f} |")
    print(f"| VideoJob + a task awaiting it, polled      | {total / n:>13.0f} |")
    print(f"| floor: a bare task waiting on an Event     | {floor / n:>13.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
