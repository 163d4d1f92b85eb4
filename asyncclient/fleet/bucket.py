"""A token bucket in Redis, shared by every process that uses one API key.

Install the extra: ``pip install "asyncclient[redis]"``. Each ``acquire`` runs one
Lua script, atomically on the Redis server, that reads the server's own ``TIME``
(so the workers' clocks do not matter), refills, and either takes a token or
answers how long to wait. The wait is slept locally, so nothing busy-polls;
within a process, waiters queue first come, first served.

The service's ``X-RateLimit-Remaining`` and a 429's pause are carried into the
shared state on the next call, so every worker slows down, not just the one that
was told. If Redis fails (unreachable, too slow, out of memory, a read-only replica,
an answer of another shape: any error of ``redis``), each process paces itself with a
bucket of its own at the plan's rate (the service's 429s, retried, cover the fleet's
excess) and tries Redis again a few seconds later: requests go on rather than fail,
and no error of ``redis`` reaches a request.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.errors import FleetError
from asyncclient.fleet.faults import redis_errors, wrapped
from asyncclient.ratelimit import (
    Plan,
    RateLimit,
    TokenBucket,
    resolve_rate_limit,
    tokens_from_headers,
)

__all__ = ["FALLBACK_SECONDS", "RedisTokenBucket"]

logger = logging.getLogger("asyncclient")

FALLBACK_SECONDS = 5.0
"""How long a process paces itself alone after Redis could not be reached."""


# KEYS[1]: the bucket's hash. ARGV: rate (tokens/s), burst, cap ("none" or tokens),
# pause seconds (0: none), take (1 to take a token when one is there, 0 to peek).
# Returns the seconds to wait as a string (Lua numbers would be cut to integers).
_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local cap, pause, take = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'paused')
local tokens = tonumber(s[1]) or burst
local ts = tonumber(s[2]) or now
local paused = tonumber(s[3]) or 0
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
if cap ~= nil and cap < tokens then tokens = cap end
if pause > 0 then
  paused = math.max(paused, now + pause)
  tokens = 0
end
local wait = 0
if now < paused then
  wait = paused - now
elseif tokens >= 1 then
  if take == 1 then tokens = tokens - 1 end
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now),
           'paused', tostring(paused))
local ttl = (burst / rate + math.max(0, paused - now)) * 1000 + 1000
redis.call('PEXPIRE', KEYS[1], math.ceil(ttl))
return tostring(wait)
"""


class RedisTokenBucket:
    """A token bucket whose state lives in Redis (a drop-in ``limiter=`` for the client).

    Args:
        redis: A ``redis.asyncio.Redis`` client (the caller owns and closes it).
        name: The bucket's name, the same in every process sharing the key. Use
            :meth:`for_api_key` to derive it from the key without storing the key.
        rate: The plan, its name, or a custom :class:`RateLimit`.
        clock: Time for the waits and the fallback's pacing (the client's clock; tests
            inject a fake one). The bucket's refills are timed by the Redis server.
    """

    def __init__(
        self,
        redis: Any,
        name: str,
        rate: Plan | RateLimit | str,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        resolved = resolve_rate_limit(rate)
        if resolved is None:
            raise ValueError("rate: a plan or RateLimit is required")
        self._redis = redis
        self._key = f"asyncclient:ratelimit:{name}"
        self._rate = resolved
        self._clock = clock
        self._script = redis.register_script(_SCRIPT)
        self._cap: float | None = None
        self._pause = 0.0
        self._lock = asyncio.Lock()
        self._fallback: TokenBucket | None = None
        self._fallback_until = 0.0  # clock time until which Redis is not tried again

    @classmethod
    def for_api_key(
        cls, redis: Any, api_key: str, rate: Plan | RateLimit | str, **kw: Any
    ) -> RedisTokenBucket:
        """A bucket named by a hash of ``api_key`` (the key itself is never stored)."""
        digest = hashlib.sha256(api_key.encode()).hexdigest()[:16]
        return cls(redis, f"key-{digest}", rate, **kw)

    def __repr__(self) -> str:
        return f"<RedisTokenBucket {self._key} {self._rate.per_minute}/min>"

    @property
    def rate(self) -> RateLimit:
        return self._rate

    async def _reserve(self, take: bool) -> float:
        cap = "none" if self._cap is None else repr(self._cap)
        pause, self._pause, self._cap = self._pause, 0.0, None
        rate = self._rate
        args = [rate.per_second, rate.client_capacity, cap, pause, 1 if take else 0]
        result = await self._script(keys=[self._key], args=args)
        try:
            return float(result.decode() if isinstance(result, bytes) else result)
        except (TypeError, ValueError, UnicodeDecodeError) as exc:
            raise FleetError(f"shared rate limit: Redis answered {result!r}") from exc

    async def acquire(self) -> float:
        """Take one token of the shared bucket, waiting as long as Redis says.

        While tokens are on hand, concurrent acquires each make their one round trip at
        once; once one must wait, the process's acquires queue first come, first served.
        If Redis fails, this process paces itself with a bucket of its own (the plan's
        rate) and tries Redis again after ``FALLBACK_SECONDS``.

        Returns:
            Seconds spent waiting.
        """
        clock = self._clock
        started = clock.monotonic()
        if self._fallback_until > clock.monotonic():
            return await self._fallback_bucket().acquire()
        try:
            if not self._lock.locked() and await self._reserve(take=True) <= 0:
                return clock.monotonic() - started  # a token was on hand: no queue to join
            async with self._lock:
                while (wait := await self._reserve(take=True)) > 0:
                    await clock.sleep(wait)
        except redis_errors() as exc:
            self._fall_back(exc, clock.monotonic())
            return clock.monotonic() - started + await self._fallback_bucket().acquire()
        return clock.monotonic() - started

    def _fall_back(self, error: BaseException, now: float) -> None:
        if self._fallback_until <= 0:
            logger.warning(
                "shared rate limit failed (%r): pacing this process alone for %.0f s",
                error,
                FALLBACK_SECONDS,
            )
        self._fallback_until = now + FALLBACK_SECONDS

    def _fallback_bucket(self) -> TokenBucket:
        if self._fallback is None:
            clock = self._clock
            self._fallback = TokenBucket(self._rate, clock=clock.monotonic, sleep=clock.sleep)
        return self._fallback

    @wrapped("reading the shared bucket")
    async def tokens(self) -> float:
        """Tokens in the shared bucket now (what was taken is gone, time refills).

        Raises:
            FleetError: Redis failed.
        """
        await self._reserve(take=False)
        raw = await self._redis.hget(self._key, "tokens")
        return float(raw) if raw is not None else float(self._rate.client_capacity)

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        """Lower the shared tokens to the service's count, on the next call."""
        if remaining is not None:
            cap = tokens_from_headers(remaining, reset_after, self._rate)
            self._cap = cap if self._cap is None else min(self._cap, cap)

    def pause(self, seconds: float) -> None:
        """Hold every process's requests for ``seconds``, from the next call on."""
        self._pause = max(self._pause, seconds)

    def spare(self) -> None:
        """Unknown here: the shared tokens are counted on the Redis server."""
        return None

    def adopt(self, rate: RateLimit) -> bool:
        """False: the shared bucket keeps the limit it was given (every process of the
        fleet must agree on one)."""
        return False

    @property
    def observes_every_header(self) -> bool:
        """True: :meth:`observe` is handed every rate-limit field of every response."""
        return True
