"""Polling: the shared poller's cost, its detection delay, and a per-job poller that ran.

The emulator runs in a process of its own (``python benchmarks/polling.py --serve``: the
emulator with videos of 90 to 150 service seconds, and one extra read-only route that
tells when each video was created and finished), pinned to one CPU while the client side
is pinned to the other, so that the client's rounds are timed against a service that
does not share its CPU. Times are service seconds: the emulator runs ``--scale`` times
faster than real time, and every interval, plan and deadline of the client is scaled the
same way. The poll interval is the poller's default shortest, 2 service seconds.

Three measurements:

- **Requests per completed job, against per-job polling at the same interval.** N jobs
  are created, then awaited (``job.wait()``, so each finished video's detail is read);
  the poller runs at a steady 2-second interval (no backoff, no jitter) on a team the
  rate limit never holds back. The denominator is a *computed* cost: what one ``GET
  /v1/video/{id}`` per pending job per interval over its life would have sent (for each
  video, ceil((finished - created) / interval), from the emulator's own records). It
  does not depend on how many rounds the shared poller made.
- **Detection delay**: for each video, the service seconds from its finishing (the
  emulator's record) to ``await job.wait()`` returning, in poll intervals; median and
  worst, at 1,000 and at 10,000 pending jobs.
- **A per-job poller run for real, and the SDK, on the same plan** (Premium: 1,000
  requests a minute, burst 2,000), one after the other on two fresh teams of one
  emulator: the per-job poller is a separate process (``--peer``) written as a user
  would with raw aiohttp: it creates its N talking-avatar videos (``POST``), then each
  job's task does ``sleep(interval); GET /v1/video/{id}`` until the video is finished
  (a 429 just means "try next interval"). The SDK creates N jobs with
  ``client.projects.create_talking_avatar`` and awaits them, with the Premium limit and
  the default polling policy (2 to 30 s, backoff, jitter, half the plan's rate for the
  rounds), in this process. Each one's 429 count and makespan (first creation to every
  job known finished) are reported. The per-job poller runs on the client's CPU; how
  many of its GETs get a 429 depends on how fast it can send them.

Run from the repository root (``--quick``: 100 jobs, about 25 s):

    python benchmarks/polling.py [--quick] [--sizes 10 100 1000 10000] [--repeat 3]
        [--peer-jobs 1000] [--peer-repeat 3] [--no-pin]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from asyncclient import AsyncClient, Plan, RateLimit, VideoJob  # noqa: E402
from asyncclient.awaiting.poller import PollPolicy  # noqa: E402
from benchmarks._processes import process_cpu, serving  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402

INTERVAL = 2.0
"""Service seconds between rounds: the poller's default shortest interval."""
PROCESSING, JITTER = 120.0, 0.25
"""Each video takes 120 service seconds +/- 25%."""
UNLIMITED = {"perMinute": 6_000_000, "burst": 100_000}
PREMIUM = Plan.PREMIUM.rate_limit
AVATAR, VOICE = "avatar_001", "voice_001"


def scale_for(n: int) -> float:
    """The time scale for ``n`` pending jobs: 20 up to 100, 10 up to 1,000, then 2.

    At 10,000 pending jobs a round (100 list pages of 100 videos) takes a few hundred
    milliseconds of the client's and of the emulator's CPU, so the 2-second interval
    must last a real second for a round to fit in it.
    """
    return 20.0 if n <= 100 else 10.0 if n <= 1000 else 2.0


PEER_SCALE = 5.0
"""Premium side by side: 1,000 per-job GETs every 0.4 real seconds."""


# -- the emulator's process ----------------------------------------------------------------


async def _serve(scale: float, seed: int) -> None:
    from aiohttp import web

    from asyncclient.emulator import Emulator

    emu = Emulator(time_scale=scale, seed=seed, processing_seconds=PROCESSING, jitter=JITTER)

    async def videos(request: web.Request) -> web.Response:
        """Each video of a team: id, created and finished, as this host's monotonic time."""
        team = request.query["team"]
        now, mono = emu.clock.now(), time.monotonic()
        out = [
            [v.id, mono - (now - v.created_at) / scale, mono - (now - v.done_at) / scale]
            for v in emu.store.videos.values()
            if v.team_id == team
        ]
        return web.json_response(out)

    emu.app.router.add_get("/_bench/videos", videos)
    async with emu:
        print(f"listening on {emu.url}", flush=True)
        await asyncio.get_running_loop().create_future()  # until terminated


@dataclass
class Service:
    url: str
    scale: float
    pid: int
    client_cpus: set[int] | None

    async def team(self, **body: Any) -> tuple[str, str]:
        """A new team's API key and id."""
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{self.url}/_emulator/teams", json=body) as resp,
        ):
            data = await resp.json()
        return data["apiKey"], data["teamId"]

    async def videos(self, team: str) -> dict[str, tuple[float, float]]:
        """Video id -> (created, finished), monotonic seconds of this host."""
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{self.url}/_bench/videos", params={"team": team}) as resp,
        ):
            rows = await resp.json()
        return {vid: (created, done) for vid, created, done in rows}


@asynccontextmanager
async def emulator_process(scale: float, pin: bool = True) -> AsyncIterator[Service]:
    """The emulator in a child process (on a CPU of its own with ``pin``); always stopped."""
    args = [str(HERE), "--serve", "--scale", str(scale)]
    async with serving(args, {"url": r"listening on (\S+)"}, pin=pin) as child:
        yield Service(child.printed["url"], scale, child.pid, child.cpu)


# -- the SDK ------------------------------------------------------------------------------


@dataclass
class SdkRun:
    jobs: int
    requests: int
    list_requests: int
    detail_requests: int
    rounds: int
    per_job_cost: int
    """Computed: one GET per pending job per interval over its life, summed."""
    delays: list[float]
    """Per video, finished to known, in intervals."""
    makespan: float
    """Service seconds from the first creation to every job known finished."""
    rate_limited: int
    cpu_per_round: float
    """Client CPU seconds per poll round (creations excluded)."""
    server_cpu_per_round: float | None
    """The emulator's CPU seconds per poll round (Linux)."""
    round_seconds: float
    """Real seconds per round: the time awaited over the rounds."""

    @property
    def ratio(self) -> float:
        return self.requests / self.per_job_cost


async def sdk_run(
    service: Service,
    n: int,
    *,
    plan: RateLimit | None = None,
    steady: bool = True,
    detail: bool = True,
) -> SdkRun:
    """Create ``n`` talking-avatar jobs with the SDK on a new team and await them all."""
    scale = service.scale
    if plan is None:
        key, team = await service.team(plan="premium", credits=10**8, **UNLIMITED)
        rate = RateLimit(per_minute=UNLIMITED["perMinute"] * scale, burst=UNLIMITED["burst"])
    else:
        key, team = await service.team(plan="premium", credits=10**8)
        rate = plan.scaled(scale)
    base = PollPolicy()
    policy = (
        PollPolicy(min_interval=INTERVAL / scale, max_interval=INTERVAL / scale, jitter=0.0)
        if steady
        else PollPolicy(
            min_interval=base.min_interval / scale, max_interval=base.max_interval / scale
        )
    )
    known: dict[str, float] = {}
    async with AsyncClient(key, base_url=service.url, plan=rate, polling=policy) as client:
        sem = asyncio.Semaphore(50)
        started = time.monotonic()

        async def create(i: int) -> VideoJob:
            async with sem:
                return await client.projects.create_talking_avatar(
                    script=f"Video {i}", avatar_id=AVATAR, voice_id=VOICE
                )

        jobs = list(await asyncio.gather(*(create(i) for i in range(n))))

        async def wait(job: VideoJob) -> None:
            job.read_detail = detail
            await job.wait()
            known[job.video_id or ""] = time.monotonic()

        cpu, wall, server = time.process_time(), time.monotonic(), process_cpu(service.pid)
        await asyncio.gather(*(wait(job) for job in jobs))
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        server_after = process_cpu(service.pid)
        stats = client.jobs.poller.stats
        rate_limited = client.stats.rate_limited
    records = await service.videos(team)
    delays = [(known[v] - records[v][1]) * scale / INTERVAL for v in known]
    cost = sum(math.ceil((done - created) * scale / INTERVAL) for created, done in records.values())
    return SdkRun(
        jobs=n,
        requests=stats.requests,
        list_requests=stats.list_requests,
        detail_requests=stats.detail_requests,
        rounds=stats.rounds,
        per_job_cost=cost,
        delays=delays,
        makespan=(max(known.values()) - started) * scale,
        rate_limited=rate_limited,
        cpu_per_round=cpu / max(1, stats.rounds),
        server_cpu_per_round=(
            None
            if server is None or server_after is None
            else (server_after - server) / max(1, stats.rounds)
        ),
        round_seconds=wall / max(1, stats.rounds),
    )


# -- a per-job poller, as a user would write it with aiohttp, in its own process ----------


async def _peer(url: str, key: str, n: int, scale: float) -> None:
    """Create ``n`` videos, then GET each one every interval until it is finished."""
    interval = INTERVAL / scale
    headers = {"x-api-key": key}
    limited = requests = 0
    async with aiohttp.ClientSession(headers=headers) as session:
        started = time.monotonic()

        async def create(i: int) -> str:
            body = {"script": f"Video {i}", "avatarId": AVATAR, "voiceId": VOICE}
            while True:
                async with session.post(
                    f"{url}/v1/project/create/talking-avatar", json=body
                ) as resp:
                    if resp.status == 429:
                        await asyncio.sleep(interval)
                        continue
                    resp.raise_for_status()
                    return str((await resp.json())["data"]["videoId"])

        ids = await asyncio.gather(*(create(i) for i in range(n)))

        async def follow(video_id: str) -> float:
            nonlocal limited, requests
            while True:
                await asyncio.sleep(interval)
                requests += 1
                async with session.get(f"{url}/v1/video/{video_id}") as resp:
                    if resp.status == 429:
                        limited += 1
                        continue
                    resp.raise_for_status()
                    status = (await resp.json())["data"]["status"]
                if status in ("COMPLETED", "FAILED"):
                    return time.monotonic()

        cpu = time.process_time()
        done = await asyncio.gather(*(follow(v) for v in ids))
        cpu = time.process_time() - cpu
    out = {
        "rate_limited": limited,
        "requests": requests,
        "makespan": (max(done) - started) * scale,
        "cpu": cpu,
    }
    print(json.dumps(out), flush=True)


async def peer_run(service: Service, n: int) -> dict[str, float]:
    """Run the per-job poller in a process of its own, on a new Premium team."""
    key, _ = await service.team(plan="premium", credits=10**8)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE),
        "--peer",
        service.url,
        key,
        str(n),
        "--scale",
        str(service.scale),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if service.client_cpus:
        os.sched_setaffinity(proc.pid, service.client_cpus)
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"the per-job poller failed ({proc.returncode})")
    result: dict[str, float] = json.loads(out.decode().strip().splitlines()[-1])
    return result


# -- the report -----------------------------------------------------------------------------


@dataclass
class Results:
    steady: dict[int, list[SdkRun]] = field(default_factory=dict)
    peers: list[tuple[dict[str, float], SdkRun]] = field(default_factory=list)
    peer_jobs: int = 0
    peer_scale: float = PEER_SCALE


async def measure(
    sizes: list[int],
    repeat: int,
    peer_jobs: int,
    peer_repeat: int,
    pin: bool = True,
    peer_scale: float = PEER_SCALE,
) -> Results:
    """Each size ``repeat`` times on one emulator process, then the per-job poller and
    the SDK on Premium, alternately, ``peer_repeat`` times each on another."""
    results = Results(peer_jobs=peer_jobs, peer_scale=peer_scale)
    for n in sizes:
        async with emulator_process(scale_for(n), pin) as service:
            results.steady[n] = [await sdk_run(service, n) for _ in range(repeat)]
    if peer_jobs:
        async with emulator_process(peer_scale, pin) as service:
            for _ in range(peer_repeat):
                peer = await peer_run(service, peer_jobs)
                ours = await sdk_run(service, peer_jobs, plan=PREMIUM, steady=False)
                results.peers.append((peer, ours))
    return results


def figures_of(results: Results) -> list[Figure]:
    out = []
    for n, runs in results.steady.items():
        last = runs[-1]
        out += [
            Figure(
                name=f"shared poller requests / per-job polling's at the same interval ({n} jobs)",
                values=[r.ratio for r in runs],
                goal="<= 3%",
                baseline=(
                    "a computed cost, not a run: one GET /v1/video/{id} per pending job per "
                    "2 s interval over its life, from the emulator's created/finished times "
                    f"(last run: SDK {last.requests / n:.3f} req/job = "
                    f"{last.list_requests} list pages + {last.detail_requests} detail reads "
                    f"in {last.rounds} rounds; per-job {last.per_job_cost / n:.1f} req/job)"
                ),
            ),
            Figure(
                name=f"detection delay of a finished video, median, intervals ({n} jobs)",
                values=[statistics.median(r.delays) for r in runs],
                goal="<= 1",
                baseline=(
                    "service seconds from the emulator finishing the video to job.wait() "
                    "returning / the 2 s interval; emulator in its own process, time scale "
                    f"{scale_for(n):g}"
                ),
            ),
            Figure(
                name=f"detection delay of a finished video, worst, intervals ({n} jobs)",
                values=[max(r.delays) for r in runs],
                goal="<= 1.5",
                baseline=(
                    "as above, the slowest job of a run "
                    f"(client CPU per round, last run: {last.cpu_per_round * 1e3:.1f} ms)"
                ),
            ),
        ]
    if results.peers:
        n = results.peer_jobs
        peer, ours = results.peers[-1]
        what = (
            f"a per-job poller run for real in its own process (raw aiohttp, one GET per "
            f"pending job per 2 s, 429 = try next interval), {n} jobs, Premium "
            f"(1,000/min, burst 2,000) at time scale {results.peer_scale:g}, its own team; "
            "last run: "
            f"peer {peer['rate_limited']:.0f} x 429 of {peer['requests']:.0f} GETs, "
            f"makespan {peer['makespan']:.0f} s; SDK {ours.rate_limited} x 429, "
            f"{ours.requests} polling requests, makespan {ours.makespan:.0f} s"
        )
        out += [
            Figure(
                name=f"SDK makespan / per-job poller's, Premium, {n} jobs",
                values=[s.makespan / p["makespan"] for p, s in results.peers],
                goal="<= 1",
                baseline=what,
            ),
            Figure(
                name=f"SDK 429s, Premium, {n} jobs",
                values=[float(s.rate_limited) for _, s in results.peers],
                goal="<= 0",
                baseline="the SDK's own count of 429 responses (client.stats.rate_limited)",
            ),
            Figure(
                name=f"per-job poller 429s, Premium, {n} jobs",
                values=[p["rate_limited"] for p, _ in results.peers],
                goal="-",
                baseline="for information: the per-job poller above hits the rate limit",
            ),
        ]
    return out


async def figures(quick: bool = False) -> list[Figure]:
    """1,000 and 10,000 pending jobs x 3, and 3 side-by-side runs of 1,000 (quick: tiny)."""
    if quick:
        return figures_of(await measure([100], 1, 100, 1, peer_scale=20.0))
    return figures_of(await measure([1000, 10_000], 3, 1000, 3))


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.0f}"


def absolute(results: Results) -> str:
    lines = [
        "| pending | time scale | rounds | list pages | detail reads | SDK req/job "
        "| per-job polling, computed, req/job | ratio | detection delay, intervals "
        "(median / worst) | real s per round (interval) | client / emulator CPU per round |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|",
    ]
    for n, runs in results.steady.items():
        for r in runs:
            lines.append(
                f"| {n} | {scale_for(n):g} | {r.rounds} | {r.list_requests} "
                f"| {r.detail_requests} | {r.requests / n:.3f} | {r.per_job_cost / n:.1f} "
                f"| {r.ratio:.2%} | {statistics.median(r.delays):.2f} / {max(r.delays):.2f} "
                f"| {r.round_seconds:.2f} ({INTERVAL / scale_for(n):.2f}) "
                f"| {r.cpu_per_round * 1e3:.0f} / {_ms(r.server_cpu_per_round)} ms |"
            )
    if results.peers:
        lines += [
            "",
            f"Premium, {results.peer_jobs} jobs each, time scale {results.peer_scale:g}, "
            "service seconds:",
            "",
            "| run | per-job poller: 429s / GETs | makespan | SDK: 429s / requests | makespan |",
            "|--:|--:|--:|--:|--:|",
        ]
        for i, (p, s) in enumerate(results.peers, 1):
            lines.append(
                f"| {i} | {p['rate_limited']:.0f} / {p['requests']:.0f} | {p['makespan']:.0f} s "
                f"| {s.rate_limited} / {s.requests} | {s.makespan:.0f} s |"
            )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes")
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 100, 1000, 10_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-jobs", type=int, default=1000, help="0: no side-by-side run")
    parser.add_argument("--peer-repeat", type=int, default=3)
    parser.add_argument("--no-pin", action="store_true")
    opts = parser.parse_args()
    peer_scale = PEER_SCALE
    if opts.quick:
        opts.sizes, opts.repeat, opts.peer_jobs, opts.peer_repeat = [100], 1, 100, 1
        peer_scale = 20.0
    results = await measure(
        opts.sizes, opts.repeat, opts.peer_jobs, opts.peer_repeat, not opts.no_pin, peer_scale
    )
    print(
        f"videos take {PROCESSING * (1 - JITTER):g}-{PROCESSING * (1 + JITTER):g} service "
        f"seconds, rounds every {INTERVAL:g} service seconds; {machine()}"
    )
    print()
    print(table(figures_of(results)))
    print()
    print(absolute(results))


def _entry() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        scale = float(sys.argv[sys.argv.index("--scale") + 1])
        asyncio.run(_serve(scale, seed=1))
    elif len(sys.argv) > 1 and sys.argv[1] == "--peer":
        url, key, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        asyncio.run(_peer(url, key, n, float(sys.argv[sys.argv.index("--scale") + 1])))
    else:
        asyncio.run(main())


if __name__ == "__main__":
    _entry()
