"""What the processes of a fleet share through Redis, keyed by a hash of their API key.

Several worker processes (often on several machines) that hold one API key share one
rate limit and one video list. With ``AsyncClient(redis=...)`` they share, through that
Redis and under a name derived from a hash of the key (never the key itself):

- the token bucket (:class:`~asyncclient.ratelimit_redis.RedisTokenBucket`);
- the deduplication of notifications (:class:`FleetStore` claims): a notification, and
  every copy of it that the service sends or retries, reaches the user's callbacks once
  across the fleet, and only once it was taken (a refused or failed copy never makes
  the genuine one count as a duplicate).

Install the extra: ``pip install "asyncclient[redis]"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from typing import Any

__all__ = ["FleetStore", "fleet_name", "redis_from"]

SEEN_SECONDS = 24 * 3600
"""How long a taken notification is remembered: the service's retries end 21 minutes
after the first attempt (spec 6); a day covers copies that come much later."""

CLAIM_SECONDS = 120.0
"""How long a process may hold a notification it is handling before another may take
it over (a process that died while handling one)."""

# Delete KEYS[1] only if it still holds ARGV[1] (a claim is released by its holder only).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def fleet_name(api_key: str) -> str:
    """The namespace of ``api_key``'s fleet in Redis: a hash of the key, never the key."""
    digest = hashlib.sha256(api_key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"asyncclient:fleet:{digest}"


def redis_from(redis: Any) -> tuple[Any, bool]:
    """A ``redis.asyncio.Redis`` from a URL or a client; True when we made it (and close it).

    Raises:
        ImportError: A URL was given and the ``redis`` extra is not installed.
    """
    if not isinstance(redis, str):
        return redis, False
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'redis=...: install the extra, pip install "asyncclient[redis]"'
        ) from exc
    return aioredis.from_url(redis), True


class FleetStore:
    """One fleet's shared state in Redis.

    Args:
        redis: A ``redis.asyncio.Redis`` client.
        api_key: Names the fleet (hashed).
        sleep: Awaitable sleep, for waiting on another process's claim.
    """

    def __init__(self, redis: Any, api_key: str, *, sleep: Any = asyncio.sleep) -> None:
        self.redis = redis
        self.name = fleet_name(api_key)
        self.process = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        """This process's id in the fleet (unique across machines and restarts)."""
        self._sleep = sleep
        self._release = redis.register_script(_RELEASE)

    def __repr__(self) -> str:
        return f"<FleetStore {self.name} process={self.process}>"

    def key(self, *parts: str) -> str:
        """A Redis key of this fleet."""
        return ":".join((self.name, *parts))

    # -- notifications, once across the fleet --------------------------------------------

    async def claim_event(self, event_key: str, *, poll: float = 0.05) -> bool:
        """Claim a notification for this process: False when the fleet already took it.

        While another process handles a copy, this waits for its outcome: taken (then
        False), or released without being taken (then this process may handle it).
        """
        busy, seen = self.key("hook", "busy", event_key), self.key("hook", "seen", event_key)
        while True:
            if await self.redis.exists(seen):
                return False
            if await self.redis.set(busy, self.process, nx=True, px=int(CLAIM_SECONDS * 1000)):
                if await self.redis.exists(seen):  # taken between the two calls
                    await self._release(keys=[busy], args=[self.process])
                    return False
                return True
            await self._sleep(poll)

    async def settle_event(self, event_key: str, *, taken: bool) -> None:
        """End this process's claim: remembered across the fleet when it was taken."""
        if taken:
            await self.redis.set(self.key("hook", "seen", event_key), b"1", ex=SEEN_SECONDS)
        await self._release(keys=[self.key("hook", "busy", event_key)], args=[self.process])
