"""The cost of one call: ``client.videos.get`` against raw aiohttp and httpx (issue "Speed").

The emulator runs in a process of its own (``python -m asyncclient.emulator``), so that
``time.process_time()`` of this process is the client's CPU alone. One video is created,
then in interleaved repetitions each contender GETs ``/v1/video/<id>`` N times with 32
requests in flight on one session:

- raw aiohttp: ``session.get(url, headers={"x-api-key": key})`` and ``await resp.json()``;
- httpx (for information): ``client.get(url, headers=...)`` and ``json.loads(resp.content)``,
  default ``httpx.AsyncClient()`` (its pool costs it ~2 ms of CPU a request at 32 in flight);
- the SDK: ``client.videos.get(id)``, end to end (limiter, retry policy, envelope
  checks, rate-limit headers, the ``VideoDetail`` model);
- the sync client (``asyncclient.Client``) from one thread and from eight, each thread
  one call at a time, beside the async client with as many calls in flight: what a
  script or a threaded web server gets (goal: at least 0.7 of the async rate from one
  thread). Its CPU includes its loop's thread.

Nobody is throttled: the emulator serves the Premium plan at a time scale of 1,000, that
is a million requests a (real) minute, burst 2,000; the SDK is given exactly that limit
(``Plan.PREMIUM.rate_limit.scaled(1000)``, what the service announces in
``X-RateLimit-Limit``), so its bucket never waits, and the emulator answers all three
contenders with the same 200 and the same headers. Every contender first warms up its
32 connections; a contender that gets anything but 200 is an error.

With two CPUs or more, this process and the emulator are pinned to one CPU each (and
this process's affinity is given back afterwards). Left to the scheduler, the two
sometimes share a CPU for a whole run: every request then waits for the other process's
turn, the rate halves for whoever runs then, and a ratio of two runs measures the
scheduler. ``--no-pin`` leaves them free. Run from the repository root:

    python benchmarks/callpath.py [--quick] [--requests 5000] [--repeat 5] [--no-pin]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import httpx  # noqa: E402

from asyncclient import AsyncClient, Client, Plan  # noqa: E402
from benchmarks._processes import process_cpu, serving, two_cpus  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402

CONCURRENCY = 32
TIME_SCALE = 1000.0
"""Service seconds per real second: Premium (1,000/min) becomes 1,000,000 a real minute."""
WARMUP = 2 * CONCURRENCY


@dataclass
class Run:
    """One contender's timed run."""

    requests: int
    seconds: float
    cpu: float
    server_cpu: float | None = None
    """The emulator's CPU seconds meanwhile (Linux), for information."""

    @property
    def rate(self) -> float:
        """Requests a second (wall clock)."""
        return self.requests / self.seconds

    @property
    def cpu_per_request(self) -> float:
        """Seconds of this process's CPU per request."""
        return self.cpu / self.requests


@dataclass(frozen=True)
class Service:
    url: str
    key: str
    video_id: str
    pid: int | None = None


@asynccontextmanager
async def emulator_process(pin: bool = False) -> AsyncIterator[tuple[str, str, int]]:
    """Serve the emulator in a child process; yield its URL, demo key, pid; always stop it.

    With ``pin``, this process runs on one CPU and the emulator on another until the
    block exits (this process's affinity is then put back).
    """
    args = ["-m", "asyncclient.emulator", "--port", "0", "--time-scale", str(TIME_SCALE)]
    args += ["--plan", "premium", "--credits", "1000000"]
    wanted = {"url": r"listening on (\S+)", "key": r"demo API key: (\S+)"}
    async with serving(args, wanted, pin=pin) as child:
        yield child.printed["url"], child.printed["key"], child.pid


def sdk_client(service: Service) -> AsyncClient:
    return AsyncClient(
        service.key, base_url=service.url, plan=Plan.PREMIUM.rate_limit.scaled(TIME_SCALE)
    )


async def make_video(url: str, key: str, pid: int | None = None) -> Service:
    """Create one talking-avatar video and wait until it is completed (a full detail)."""
    async with AsyncClient(key, base_url=url, plan=Plan.PREMIUM.rate_limit) as client:
        job = await client.projects.create_talking_avatar(
            script="Benchmark", avatar_id="avatar_001", voice_id="voice_001"
        )
        await job.wait(timeout=60)
        assert job.video_id is not None
        return Service(url, key, job.video_id, pid)


async def drive(n: int, one: Callable[[], Awaitable[None]], concurrency: int = CONCURRENCY) -> Run:
    """Run ``one`` ``n`` times, ``concurrency`` at a time, after a warm-up."""
    left = WARMUP

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await one()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    left = n
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Run(n, time.perf_counter() - wall, time.process_time() - cpu)


def drive_threads(n: int, one: Callable[[], object], threads: int) -> Run:
    """Run ``one`` ``n`` times from ``threads`` threads (each its share, one call at a
    time), after a warm-up; the CPU is this process's, every thread's."""

    def calls(count: int) -> None:
        for _ in range(count):
            one()

    def spread(total: int) -> None:
        workers = [
            threading.Thread(target=calls, args=(total // threads + (i < total % threads),))
            for i in range(threads)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    spread(WARMUP)
    cpu, wall = time.process_time(), time.perf_counter()
    spread(n)
    return Run(n, time.perf_counter() - wall, time.process_time() - cpu)


async def raw_aiohttp(service: Service, n: int) -> Run:
    target = f"{service.url}/v1/video/{service.video_id}"
    headers = {"x-api-key": service.key}
    async with aiohttp.ClientSession() as session:

        async def one() -> None:
            async with session.get(target, headers=headers) as resp:
                await resp.json()
                if resp.status != 200:
                    raise RuntimeError(f"raw aiohttp got {resp.status}")

        return await drive(n, one)


async def raw_httpx(service: Service, n: int) -> Run:
    target = f"{service.url}/v1/video/{service.video_id}"
    headers = {"x-api-key": service.key}
    async with httpx.AsyncClient() as client:

        async def one() -> None:
            resp = await client.get(target, headers=headers)
            json.loads(resp.content)
            if resp.status_code != 200:
                raise RuntimeError(f"httpx got {resp.status_code}")

        return await drive(n, one)


async def sdk(service: Service, n: int) -> Run:
    async with sdk_client(service) as client:

        async def one() -> None:
            await client.videos.get(service.video_id)

        run = await drive(n, one)
        if client.stats.retries or client.stats.rate_limited:
            raise RuntimeError(f"the SDK was throttled or retried: {client.stats!r}")
        return run


async def sdk_in_flight(service: Service, n: int, in_flight: int) -> Run:
    """The async client with ``in_flight`` calls at a time (what ``in_flight`` threads
    of the sync client can have)."""
    async with sdk_client(service) as client:

        async def one() -> None:
            await client.videos.get(service.video_id)

        return await drive(n, one, in_flight)


def sync_threads(service: Service, n: int, threads: int) -> Run:
    """The sync client (``asyncclient.Client``) from ``threads`` threads, one call at a
    time each; its own loop runs in its own thread."""
    with Client(
        service.key, base_url=service.url, plan=Plan.PREMIUM.rate_limit.scaled(TIME_SCALE)
    ) as client:
        run = drive_threads(n, lambda: client.videos.get(service.video_id), threads)
        if client.stats.retries or client.stats.rate_limited:
            raise RuntimeError(f"the sync client was throttled or retried: {client.stats!r}")
        return run


async def sdk_1(service: Service, n: int) -> Run:
    return await sdk_in_flight(service, n, 1)


async def sync_1(service: Service, n: int) -> Run:
    return await asyncio.to_thread(sync_threads, service, n, 1)


async def sdk_8(service: Service, n: int) -> Run:
    return await sdk_in_flight(service, n, SYNC_THREADS)


async def sync_8(service: Service, n: int) -> Run:
    return await asyncio.to_thread(sync_threads, service, n, SYNC_THREADS)


SYNC_THREADS = 8
CONTENDERS = {
    "raw aiohttp": raw_aiohttp,
    "httpx": raw_httpx,
    "SDK": sdk,
    "SDK, 1 in flight": sdk_1,
    "sync, 1 thread": sync_1,
    f"SDK, {SYNC_THREADS} in flight": sdk_8,
    f"sync, {SYNC_THREADS} threads": sync_8,
}


async def measure(n: int, repeat: int, pin: bool = True) -> dict[str, list[Run]]:
    """Each contender ``repeat`` times, interleaved, against one emulator process."""
    runs: dict[str, list[Run]] = {name: [] for name in CONTENDERS}
    async with emulator_process(pin) as (url, key, pid):
        service = await make_video(url, key, pid)
        for _ in range(repeat):
            for name, contender in CONTENDERS.items():
                before = process_cpu(pid)
                run = await contender(service, n)
                after = process_cpu(pid)
                if before is not None and after is not None:
                    run.server_cpu = after - before
                runs[name].append(run)
    return runs


def _extra(sdk_runs: list[Run], other: list[Run], other_name: str) -> dict[str, str]:
    s, o = sdk_runs[-1], other[-1]
    return {
        "last run": (
            f"SDK {s.rate:.0f} req/s, {s.cpu_per_request * 1e6:.0f} us CPU/req; "
            f"{other_name} {o.rate:.0f} req/s, {o.cpu_per_request * 1e6:.0f} us CPU/req"
        )
    }


def figures_of(runs: dict[str, list[Run]], n: int, pin: bool = True) -> list[Figure]:
    sdk_runs = runs["SDK"]
    where = "on a CPU of its own" if pin and two_cpus() else "unpinned"
    out = []
    for other, goals in (("raw aiohttp", (">= 0.90", "<= 1.25")), ("httpx", ("-", "-"))):
        base = runs[other]
        what = (
            f"{other} GET /v1/video/<id> + JSON decode, {n} GETs, {CONCURRENCY} in flight, "
            f"emulator in its own process {where}"
        )
        out.append(
            Figure(
                name=f"videos.get: SDK req/s / {other} req/s",
                values=[s.rate / b.rate for s, b in zip(sdk_runs, base, strict=True)],
                goal=goals[0],
                baseline=what,
                extra=_extra(sdk_runs, base, other),
            )
        )
        out.append(
            Figure(
                name=f"videos.get: SDK CPU/request / {other} CPU/request",
                values=[
                    s.cpu_per_request / b.cpu_per_request
                    for s, b in zip(sdk_runs, base, strict=True)
                ],
                goal=goals[1],
                baseline=what,
                extra=_extra(sdk_runs, base, other),
            )
        )
    for threads, goal in ((1, ">= 0.7"), (SYNC_THREADS, "-")):
        sync_runs = runs[f"sync, {threads} thread{'s' if threads > 1 else ''}"]
        async_runs = runs[f"SDK, {threads} in flight"]
        what = (
            f"the async client with {threads} call{'s' if threads > 1 else ''} in flight "
            f"(the same {n} GETs, the same emulator, interleaved); the sync client runs "
            f"it in its own loop thread, called from {threads} thread"
            f"{'s' if threads > 1 else ''}"
        )
        out.append(
            Figure(
                name=f"videos.get: sync client req/s / async client req/s, {threads} "
                f"thread{'s' if threads > 1 else ''}",
                values=[s.rate / a.rate for s, a in zip(sync_runs, async_runs, strict=True)],
                goal=goal,
                baseline=what,
                extra={
                    "last run": f"sync {sync_runs[-1].rate:.0f} req/s, async "
                    f"{async_runs[-1].rate:.0f} req/s"
                },
            )
        )
    return out


async def figures(quick: bool = False) -> list[Figure]:
    """The report's figures: 5 x 5,000 GETs per contender (``quick``: 2 x 500)."""
    n, repeat = (500, 2) if quick else (5000, 5)
    return figures_of(await measure(n, repeat), n)


def absolute(runs: dict[str, list[Run]], n: int) -> str:
    """Medians per contender: rate, client CPU and the emulator's CPU per request."""
    lines = [
        "| contender | req/s | client CPU us/request | emulator CPU us/request |",
        "|---|--:|--:|--:|",
    ]
    for name, rs in runs.items():
        rate = statistics.median(r.rate for r in rs)
        cpu = statistics.median(r.cpu_per_request * 1e6 for r in rs)
        # The emulator also served the warm-up requests while its CPU was counted.
        served = [r.server_cpu / (n + WARMUP) * 1e6 for r in rs if r.server_cpu is not None]
        server = f"{statistics.median(served):.1f}" if served else "n/a"
        lines.append(f"| {name} | {rate:.0f} | {cpu:.1f} | {server} |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repetitions of 500 GETs")
    parser.add_argument("--requests", type=int, help="GETs per contender and repetition")
    parser.add_argument("--repeat", type=int, help="interleaved repetitions")
    parser.add_argument("--no-pin", action="store_true", help="leave both processes unpinned")
    args = parser.parse_args()
    n, repeat = (500, 2) if args.quick else (5000, 5)
    n, repeat = args.requests or n, args.repeat or repeat
    pin = not args.no_pin
    runs = await measure(n, repeat, pin)
    print(f"videos.get call path: {n} GETs x {repeat}, {CONCURRENCY} in flight; {machine()}")
    print()
    print(table(figures_of(runs, n, pin)))
    print()
    print(absolute(runs, n))


if __name__ == "__main__":
    asyncio.run(main())
