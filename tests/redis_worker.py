"""One worker process of the shared-limiter test: N requests through a Redis bucket.

Usage: python tests/redis_worker.py BASE_URL API_KEY REDIS_URL REQUESTS PER_MINUTE BURST
Prints ``ok=<count> start=<unix> end=<unix>`` when done (the span of its requests).
"""

from __future__ import annotations

import asyncio
import sys
import time

import redis.asyncio as aioredis

from asyncclient import AsyncClient, RateLimit
from asyncclient.fleet.bucket import RedisTokenBucket


async def main(
    base_url: str, key: str, redis_url: str, n: int, rate: RateLimit
) -> tuple[int, float, float]:
    redis = aioredis.from_url(redis_url)
    try:
        bucket = RedisTokenBucket.for_api_key(redis, key, rate)
        async with AsyncClient(key, base_url=base_url, limiter=bucket) as client:
            start = time.time()
            results = await asyncio.gather(
                *(client.integrations.list() for _ in range(n)), return_exceptions=True
            )
            end = time.time()
    finally:
        await redis.aclose()
    return sum(1 for r in results if not isinstance(r, BaseException)), start, end


if __name__ == "__main__":
    url, api_key, rurl, count, per_minute, burst = sys.argv[1:7]
    rate = RateLimit(per_minute=float(per_minute), burst=int(burst))
    ok, start, end = asyncio.run(main(url, api_key, rurl, int(count), rate))
    print(f"ok={ok} start={start:.6f} end={end:.6f}")
