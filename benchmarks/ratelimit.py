"""How close to the plan's rate does the client get, with how many 429s? (issue 4)

Saturating load against the emulator (time-scaled), one process with the in-process
token bucket and four processes sharing one key through the Redis bucket; then the
limiter's own cost per request. Prints one table; run from the repository root:

    python benchmarks/ratelimit.py [--seconds 5] [--plan starter] [--scale 60]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asyncclient import AsyncClient, Plan, RateLimit, TokenBucket  # noqa: E402
from asyncclient.emulator import Emulator  # noqa: E402
from tests.redis_server import RedisUnavailable, redis_server  # noqa: E402

WORKER = ROOT / "tests" / "redis_worker.py"


def requests_for(rate: RateLimit, seconds: float) -> int:
    return rate.burst + int(rate.per_second * seconds)


def ratio(rate: RateLimit, n: int, elapsed: float) -> float:
    """Achieved rate past the burst over the plan's rate (1.0 = exactly the plan)."""
    ideal = (n - rate.burst) / rate.per_second
    return ideal / elapsed


async def one_process(plan: Plan, scale: float, seconds: float) -> tuple[int, float, int]:
    rate = plan.rate_limit.scaled(scale)
    n = requests_for(rate, seconds)
    async with Emulator(time_scale=scale) as emu:
        key = emu.add_team(plan=plan.value, credits=0)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as client:
            started = time.perf_counter()
            await asyncio.gather(*(client.integrations.list() for _ in range(n)))
            elapsed = time.perf_counter() - started
        return n, elapsed, emu.counters.rate_limited


async def four_processes(
    plan: Plan, scale: float, seconds: float, redis_url: str
) -> tuple[int, float, int]:
    rate = plan.rate_limit.scaled(scale)
    per = requests_for(rate, seconds) // 4
    async with Emulator(time_scale=scale) as emu:
        key = emu.add_team(plan=plan.value, credits=0)
        args = [emu.url, key, redis_url, str(per), str(rate.per_minute), str(rate.burst)]
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable, str(WORKER), *args, stdout=asyncio.subprocess.PIPE, cwd=ROOT
            )
            for _ in range(4)
        ]
        outputs = await asyncio.gather(*(p.communicate() for p in procs))
        # The span from the first worker's first request to the last one's end
        # (process start-up is not the limiter's doing).
        fields = [dict(f.split("=") for f in out.decode().split()) for out, _ in outputs]
        elapsed = max(float(f["end"]) for f in fields) - min(float(f["start"]) for f in fields)
        return per * 4, elapsed, emu.counters.rate_limited


async def overhead(iterations: int = 20000) -> tuple[float, float]:
    """Microseconds per acquire: in-process bucket, and a round trip to nothing (baseline)."""
    bucket = TokenBucket(RateLimit(per_minute=1e12, burst=10**9))
    started = time.perf_counter()
    for _ in range(iterations):
        await bucket.acquire()
    per_acquire = (time.perf_counter() - started) / iterations * 1e6
    started = time.perf_counter()
    for _ in range(iterations):
        await asyncio.sleep(0)
    per_yield = (time.perf_counter() - started) / iterations * 1e6
    return per_acquire, per_yield


async def redis_overhead(redis_url: str, iterations: int = 2000) -> float:
    import redis.asyncio as aioredis

    from asyncclient.fleet.bucket import RedisTokenBucket

    redis = aioredis.from_url(redis_url)
    try:
        bucket = RedisTokenBucket(redis, "bench", RateLimit(per_minute=1e12, burst=10**9))
        started = time.perf_counter()
        for _ in range(iterations):
            await bucket.acquire()
        return (time.perf_counter() - started) / iterations * 1e6
    finally:
        await redis.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--plan", default="starter", choices=[p.value for p in Plan])
    parser.add_argument("--scale", type=float, default=60.0)
    opts = parser.parse_args()
    plan = Plan(opts.plan)
    rate = plan.rate_limit.scaled(opts.scale)
    print(
        f"plan {plan.value}: {plan.rate_limit.per_minute:g}/min burst {plan.rate_limit.burst}; "
        f"emulator time_scale {opts.scale:g} -> {rate.per_second:g} requests/s real"
    )
    rows = []
    n, elapsed, limited = await one_process(plan, opts.scale, opts.seconds)
    rows.append(("1 process, in-process bucket", n, elapsed, ratio(rate, n, elapsed), limited))
    redis_us = None
    try:
        with redis_server() as url:
            n, elapsed, limited = await four_processes(plan, opts.scale, opts.seconds, url)
            rows.append(("4 processes, Redis bucket", n, elapsed, ratio(rate, n, elapsed), limited))
            redis_us = await redis_overhead(url)
    except RedisUnavailable as exc:
        print(f"(skipping the Redis rows: {exc})")
    print()
    print(f"| {'setup':<30} | {'requests':>8} | {'seconds':>7} | {'rate/plan':>9} | {'429s':>4} |")
    print(f"|{'-' * 32}|{'-' * 10}|{'-' * 9}|{'-' * 11}|{'-' * 6}|")
    for name, count, secs, r, lim in rows:
        print(f"| {name:<30} | {count:>8} | {secs:>7.2f} | {r:>9.3f} | {lim:>4} |")
    per_acquire, per_yield = await overhead()
    print()
    print("| limiter overhead per request     | microseconds |")
    print("|----------------------------------|-------------:|")
    print(f"| in-process TokenBucket.acquire   | {per_acquire:>12.2f} |")
    print(f"| (baseline: one event-loop yield) | {per_yield:>12.2f} |")
    if redis_us is not None:
        print(f"| RedisTokenBucket.acquire (1 RTT) | {redis_us:>12.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
