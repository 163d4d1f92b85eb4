"""Requests per completed job: the shared poller against per-job polling (issue 5).

For 10, 100 and 1,000 pending jobs against the emulator, with the poller's 2-second
interval in service time (a video takes about two minutes there; the emulator runs
``--scale`` times faster). Per-job polling reads every pending video each round (GET
/v1/video/{id}); the shared poller reads the processing list in pages of 100, then each
finished video's detail once. "Same rounds" counts what per-job polling would have sent on
exactly the shared poller's rounds; "list record only" is the same poller for jobs that
do not need each video's detail (batches); the last column runs a per-job poller for real,
side by side (its rounds stretch when a round's GETs take longer than the interval).
Run from the repository root:

    python benchmarks/polling.py [--sizes 10 100 1000] [--scale 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient import AsyncClient, RateLimit, VideoJob
from asyncclient.emulator import Emulator
from asyncclient.poller import PollPolicy
from benchmarks._report import Figure

INTERVAL = 2.0  # service seconds between rounds: the poller's default shortest interval
UNLIMITED = RateLimit(per_minute=6_000_000, burst=100_000)


async def make_jobs(emu: Emulator, client: AsyncClient, n: int) -> list[VideoJob]:
    cat = emu.catalog
    sem = asyncio.Semaphore(50)

    async def one(i: int) -> VideoJob:
        async with sem:
            return await client.projects.create_talking_avatar(
                script=f"Video {i}", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
            )

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def shared_poller(
    n: int, scale: float, detail: bool = True
) -> tuple[int, int, int, list[float]]:
    """Requests, rounds, per-job-equivalent requests, and each job's detection delay: the
    service seconds from its video finishing to the job knowing, in poll intervals."""
    interval = INTERVAL / scale
    async with Emulator(time_scale=scale, seed=1, processing_seconds=120, jitter=0.25) as emu:
        key = emu.add_team(credits=10**7, per_minute=6_000_000, burst=100_000)
        steady = PollPolicy(min_interval=interval, max_interval=interval, jitter=0.0)
        async with AsyncClient(key, base_url=emu.url, plan=UNLIMITED, polling=steady) as client:
            poller = client.jobs.poller
            jobs = await make_jobs(emu, client, n)
            known: dict[str, float] = {}

            async def wait(job: VideoJob) -> None:
                await job.wait()
                known[job.video_id or ""] = emu.now()

            for job in jobs:
                job.read_detail = detail
            await asyncio.gather(*(wait(job) for job in jobs))
            done_at = {v.id: v.done_at for p in emu.store.projects.values() for v in p.videos}
            delays = [(known[v] - done_at[v]) / INTERVAL for v in known]
            stats = poller.stats
            return stats.requests, stats.rounds, stats.job_rounds, delays


async def per_job_polling(n: int, scale: float) -> tuple[int, int]:
    interval = INTERVAL / scale
    async with Emulator(time_scale=scale, seed=1, processing_seconds=120, jitter=0.25) as emu:
        key = emu.add_team(credits=10**7, per_minute=6_000_000, burst=100_000)
        async with AsyncClient(key, base_url=emu.url, plan=UNLIMITED) as client:
            jobs = await make_jobs(emu, client, n)
            pending = [job.video_id or "" for job in jobs]
            requests = rounds = 0
            while pending:
                rounds += 1
                videos = await asyncio.gather(*(client.videos.get(v) for v in pending))
                requests += len(pending)
                pending = [v.id for v in videos if not v.is_terminal]
                if pending:
                    await asyncio.sleep(interval)
            return requests, rounds


async def figures(quick: bool = False) -> list[Figure]:
    """Requests per completed job against per-job polling, and detection delays."""
    sizes = [100] if quick else [1000]
    out = []
    for n in sizes:
        ours, _, same_rounds, delays = await shared_poller(n, 20.0)
        real, real_rounds = await per_job_polling(n, 20.0)
        out += [
            Figure(
                name=f"shared poller requests / per-job polling's on the same rounds ({n} jobs)",
                values=[ours / same_rounds],
                goal="<= 3%",
                baseline=(
                    "a computed cost: one GET per pending job per round the shared poller "
                    f"made; a per-job poller run for real made {real / n:.1f} requests a job "
                    f"in {real_rounds} rounds"
                ),
            ),
            Figure(
                name=f"detection delay of a finished video, median, in intervals ({n} jobs)",
                values=[statistics.median(delays)],
                goal="<= 1",
                baseline="service seconds from finishing to the job knowing / the interval",
            ),
            Figure(
                name=f"detection delay of a finished video, worst, in intervals ({n} jobs)",
                values=[max(delays)],
                goal="<= 1.5",
                baseline="as above, the slowest job",
            ),
        ]
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--scale", type=float, default=20.0)
    parser.add_argument(
        "--real-up-to", type=int, default=1000, help="run per-job polling up to this size"
    )
    opts = parser.parse_args()
    print(
        f"videos take 90-150 service seconds, rounds every {INTERVAL:g} service seconds; "
        f"time scale {opts.scale:g}"
    )
    print()
    print(
        "| pending | rounds | per-job, same rounds | shared poller | ratio "
        "| list record only (batches) | per-job run for real (rounds) "
        "| detection delay, intervals (median / worst) |"
    )
    print("|--------:|-------:|---------------------:|--------------:|------:|------:|------:|---|")
    for n in opts.sizes:
        ours, rounds, same_rounds, delays = await shared_poller(n, opts.scale)
        listed, _, _, _ = await shared_poller(n, opts.scale, detail=False)
        real, real_rounds = await per_job_polling(n, opts.scale) if n <= opts.real_up_to else (0, 0)
        real_text = f"{real / n:.2f} req/job ({real_rounds})" if real else "not run"
        print(
            f"| {n:>7} | {rounds:>6} | {same_rounds / n:>14.2f} req/job "
            f"| {ours / n:>7.3f} req/job | {ours / same_rounds:>5.1%} "
            f"| {listed / n:.3f} req/job | {real_text} "
            f"| {statistics.median(delays):.2f} / {max(delays):.2f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
