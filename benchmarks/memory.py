"""Memory per pending job at 10,000 jobs (issue 5).

Builds the jobs a web backend would hold (``client.jobs.from_video_id``), then has a task
wait on each (``await job``), with the poller's rounds stubbed out so that nothing is
sent; tracemalloc measures the Python heap. A bare asyncio task waiting on an Event is
measured side by side as the floor any awaitable-per-job design pays. Run from the
repository root:

    python benchmarks/memory.py [--jobs 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient import Page, Plan, TokenBucket, Video, VideoDetail
from asyncclient.jobs import Jobs
from asyncclient.poller import Poller
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


class _Unanswered:
    """A video source that never answers: the poller's rounds, minus the network."""

    def __init__(self) -> None:
        self._never = asyncio.Event()

    async def get(self, video_id: str) -> VideoDetail:
        await self._never.wait()
        raise AssertionError("unreachable")

    async def list_page(self, *, limit: int = 100, offset: int = 0) -> Page[Video]:
        await self._never.wait()
        raise AssertionError("unreachable")


async def jobs(n: int) -> tuple[int, int]:
    poller = Poller(_Unanswered(), limiter=TokenBucket(Plan.PREMIUM.rate_limit))
    client_jobs = Jobs(poller)  # what client.jobs is, without a client
    before = heap()
    held = [client_jobs.from_video_id(f"vid_{i:012x}") for i in range(n)]
    objects = heap() - before
    waiting = [asyncio.ensure_future(job.wait()) for job in held]
    await asyncio.sleep(0)
    assert poller.watching == n
    total = heap() - before
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
        for _ in range(1 if quick else repeats):
            floor = await bare_tasks(n)
            _, total = await jobs(n)
            per_job.append(total / n)
            over_floor.append(total / floor)
    finally:
        tracemalloc.stop()
    return [
        Figure(
            name=f"bytes per awaited VideoJob ({n:,} jobs, its awaiting task included)",
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
    floor = await bare_tasks(n)  # first: nothing freed meanwhile skews it
    objects, total = await jobs(n)
    print(f"{n} pending jobs")
    print()
    print("| what                                       | bytes per job |")
    print("|--------------------------------------------|--------------:|")
    print(f"| VideoJob objects (ids known, nobody waits) | {objects / n:>13.0f} |")
    print(f"| VideoJob + a task awaiting it (watched)    | {total / n:>13.0f} |")
    print(f"| floor: a bare task waiting on an Event     | {floor / n:>13.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
