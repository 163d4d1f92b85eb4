"""A token bucket in Redis, shared by every process that uses one API key.

Install the extra: ``pip install "vidgen-asyncclient[redis]"``. Each ``acquire`` runs one
Lua script, atomically on the Redis server, that reads the server's own ``TIME``
(so the workers' clocks do not matter), refills, and either takes a token or
answers how long to wait. The wait is slept locally, so nothing busy-polls;
within a process, waiters queue first come, first served.

The service's ``X-RateLimit-Remaining`` and a 429's pause are carried into the
shared state on the next call, so every worker slows down, not just the one that
was told. So is a limit the service announced (``X-RateLimit-Limit``),
taken by :meth:`RedisTokenBucket.adopt`: the script writes it into the shared hash
beside the tokens, and from then on every process's calls refill at it (a process
made without a plan follows it as it is; a process given a plan only where it is
lower than its own, so a plan is never raised). The limit lives as long as the
bucket's state: a bucket left alone until it is full again is forgotten, and each
process goes on at the limit it last used.

If Redis fails (unreachable, too slow, out of memory, a read-only replica, an answer
of another shape: any error of ``redis``), each process paces itself with a bucket of
its own at the limit it last used (the service's 429s, retried, cover the fleet's
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
from asyncclient.lanes import Lane, current_lane
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


# KEYS[1]: the bucket's hash: tokens, ts, paused and, once a limit was adopted, the
# fleet's limit (per_second, capacity; per_minute and burst as the RateLimit says).
# ARGV: the process's limit (per_second, capacity, per_minute, burst); follow (1: take
# the fleet's limit as it is, 0: only where lower); adopt (1: the process's limit
# becomes the fleet's); cap ("none" or tokens); pause seconds (0: none); take (1 to
# take a token when one is there, 0 to peek); lane (1: interactive, 0: bulk). An
# interactive caller told to wait marks the hash's 'front' until its token is due (and
# half an interval more), and clears it once it took a token; meanwhile a bulk caller
# takes a token only when two are there, so that the next one is the interactive
# caller's, whichever process it is in.
# Returns {wait, tokens, per_minute, burst} of the limit used, as strings (Lua numbers
# would be cut to integers).
_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst, minute, size = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local follow, adopt = ARGV[5] == '1', ARGV[6] == '1'
local cap, pause, take = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'paused',
                     'per_second', 'capacity', 'per_minute', 'burst', 'front')
local shared, room = tonumber(s[4]), tonumber(s[5])
if adopt then
  redis.call('HSET', KEYS[1], 'per_second', ARGV[1], 'capacity', ARGV[2],
             'per_minute', minute, 'burst', size)
elseif shared and room and s[6] and s[7] and (follow or shared < rate) then
  rate, burst, minute, size = shared, room, s[6], s[7]
end
local tokens = tonumber(s[1]) or burst
local ts = tonumber(s[2]) or now
local paused = tonumber(s[3]) or 0
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
if cap ~= nil and cap < tokens then tokens = cap end
if pause > 0 then
  paused = math.max(paused, now + pause)
  tokens = 0
end
local front = tonumber(s[8]) or 0
local need = 1
if ARGV[10] == '0' and now < front then need = 2 end
local wait = 0
if now < paused then
  wait = paused - now
elseif tokens >= need then
  if take == 1 then
    tokens = tokens - 1
    if ARGV[10] == '1' then front = 0 end
  end
else
  wait = (need - tokens) / rate
  if need == 2 then wait = math.max((1 - tokens) / rate, math.min(wait, front - now)) end
end
if ARGV[10] == '1' and take == 1 and wait > 0 then
  front = math.max(front, now + wait + 0.5 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now),
           'paused', tostring(paused), 'front', tostring(front))
local ttl = (burst / rate + math.max(0, paused - now)) * 1000 + 1000
redis.call('PEXPIRE', KEYS[1], math.ceil(ttl))
return {tostring(wait), tostring(tokens), minute, size}
"""


def _limit_args(rate: RateLimit, follow: bool) -> list[str]:
    """The script's first five arguments: ``rate`` as the script reads and stores it.

    Written as text here, so that what the script stores and hands back compares equal
    to what this process sent while the fleet's limit is the process's own.
    """
    per_minute, burst = repr(float(rate.per_minute)), str(int(rate.burst))
    return [repr(rate.per_second), repr(rate.client_capacity), per_minute, burst, str(int(follow))]


def _read_answer(result: Any) -> tuple[float, float, str, str]:
    """The script's answer: the wait, the tokens left and the limit used (as sent)."""
    try:
        wait, tokens, per_minute, burst = (
            item.decode() if isinstance(item, bytes) else str(item) for item in result
        )
        return float(wait), float(tokens), per_minute, burst
    except (TypeError, ValueError, UnicodeDecodeError) as exc:
        raise FleetError(f"shared rate limit: Redis answered {result!r}") from exc


class RedisTokenBucket:
    """A token bucket whose state lives in Redis (a drop-in ``limiter=`` for the client).

    Args:
        redis: A ``redis.asyncio.Redis`` client (the caller owns and closes it).
        name: The bucket's name, the same in every process sharing the key. Use
            :meth:`for_api_key` to derive it from the key without storing the key.
        rate: The plan, its name, or a custom :class:`RateLimit`: the most this
            process ever paces at (a limit the fleet adopted is followed only where
            lower). None (no plan): start at the Free plan's limit and follow the
            limit the fleet adopts, higher or lower, as ``AsyncClient(redis=...)``
            without ``plan`` does. Which announced limits are adopted is the client's
            rule (a higher one only without a plan); a bucket given as ``limiter=`` is
            only ever lowered by the client, as any limiter given.
        clock: Time for the waits and the fallback's pacing (the client's clock; tests
            inject a fake one). The bucket's refills are timed by the Redis server.
    """

    def __init__(
        self,
        redis: Any,
        name: str,
        rate: Plan | RateLimit | str | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        resolved = resolve_rate_limit(rate)
        self._redis = redis
        self._key = f"asyncclient:ratelimit:{name}"
        self._follows = resolved is None
        self._clock = clock
        self._script = redis.register_script(_SCRIPT)
        self._cap: float | None = None
        self._pause = 0.0
        self._lock = asyncio.Lock()  # bulk callers of this process, in order
        self._front_lock = asyncio.Lock()  # interactive ones, in order
        self._fallback: TokenBucket | None = None
        self._fallback_until = 0.0  # clock time until which Redis is not tried again
        self._adopting = False  # a limit adopted here, for the shared hash on the next call
        self._generation = 0  # rate changes: a reply to an older call changes nothing
        self._seen: tuple[float, float] | None = None  # tokens the script left, and when
        self._set_rate(resolved or Plan.FREE.rate_limit)

    @classmethod
    def for_api_key(
        cls, redis: Any, api_key: str, rate: Plan | RateLimit | str | None = None, **kw: Any
    ) -> RedisTokenBucket:
        """A bucket named by a hash of ``api_key`` (the key itself is never stored)."""
        digest = hashlib.sha256(api_key.encode()).hexdigest()[:16]
        return cls(redis, f"key-{digest}", rate, **kw)

    def __repr__(self) -> str:
        return f"<RedisTokenBucket {self._key} {self._rate.per_minute}/min>"

    @property
    def rate(self) -> RateLimit:
        """The limit this process paces at: its own, or the fleet's as it last read it."""
        return self._rate

    def _set_rate(self, rate: RateLimit) -> None:
        self._rate = rate
        self._limit = _limit_args(rate, self._follows)
        self._generation += 1
        if self._fallback is not None:
            self._fallback.set_rate(rate)

    async def _reserve(self, take: bool) -> float:
        cap = "none" if self._cap is None else repr(self._cap)
        pause, self._pause, self._cap = self._pause, 0.0, None
        adopt, self._adopting = self._adopting, False
        limit, generation = self._limit, self._generation
        interactive = current_lane() is Lane.INTERACTIVE
        args = [*limit, "1" if adopt else "0", cap, pause, 1 if take else 0, int(interactive)]
        try:
            result = await self._script(keys=[self._key], args=args)
        except BaseException:
            if adopt:
                self._adopting = True  # the shared hash may not have it: carry it again
            raise
        wait, tokens, per_minute, burst = _read_answer(result)
        self._seen = (tokens, self._clock.monotonic())
        if (per_minute != limit[2] or burst != limit[3]) and generation == self._generation:
            self._follow(per_minute, burst)
        return wait

    def _follow(self, per_minute: str, burst: str) -> None:
        """Pace at the limit the script used: the fleet's (lower than ours, or we follow)."""
        try:
            rate = RateLimit(per_minute=float(per_minute), burst=int(float(burst)))
        except ValueError as exc:
            raise FleetError(f"shared rate limit: Redis holds {per_minute!r}/min") from exc
        self._set_rate(rate)

    async def acquire(self) -> float:
        """Take one token of the shared bucket, waiting as long as Redis says.

        While tokens are on hand, concurrent acquires each make their one round trip at
        once; once one must wait, the process's acquires queue first come, first served
        within their lane (:mod:`asyncclient.lanes`), and a bulk one leaves a token to an
        interactive caller waiting for it in any process.
        If Redis fails, this process paces itself with a bucket of its own (the limit it
        last used) and tries Redis again after ``FALLBACK_SECONDS``.

        Returns:
            Seconds spent waiting.
        """
        clock = self._clock
        started = clock.monotonic()
        if self._fallback_until > clock.monotonic():
            return await self._fallback_bucket().acquire()
        # Interactive callers queue apart from bulk ones, and ahead of them in Redis.
        lock = self._front_lock if current_lane() is Lane.INTERACTIVE else self._lock
        try:
            if not lock.locked() and await self._reserve(take=True) <= 0:
                return clock.monotonic() - started  # a token was on hand: no queue to join
            async with lock:
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
        seen = self._seen
        return seen[0] if seen is not None else float(self._rate.client_capacity)

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        """Lower the shared tokens to the service's count, on the next call."""
        if remaining is not None:
            cap = tokens_from_headers(remaining, reset_after, self._rate)
            self._cap = cap if self._cap is None else min(self._cap, cap)

    def pause(self, seconds: float) -> None:
        """Hold every process's requests for ``seconds``, from the next call on."""
        self._pause = max(self._pause, seconds)

    def spare(self) -> float | None:
        """The shared tokens on hand as this process last saw them, without a round trip.

        That is what the script left at this process's last call, refilled since at
        the limit in use (by this process's clock), at most the bucket's capacity.
        Other processes may have taken some since, so it is at most what the Redis
        server holds: the gate then holds background reads back no more than a lone
        client's would. None before the first call; while Redis fails, the count of
        the process's own bucket.
        """
        now = self._clock.monotonic()
        if self._fallback is not None and self._fallback_until > now:
            return self._fallback.spare()
        seen = self._seen
        if seen is None:
            return None
        rate = self._rate
        tokens, at = seen
        return min(rate.client_capacity, tokens + max(0.0, now - at) * rate.per_second)

    def adopt(self, rate: RateLimit) -> bool:
        """Take a limit the service announced, for every process sharing the bucket.

        This process paces at it at once; the next call writes it into the shared hash,
        atomically, in the same script that refills and takes: the tokens on hand carry
        over, at most the new capacity, so a raised limit adds no burst and a lowered
        one cuts the tokens to it. Re-adopting the limit in use costs nothing. Which
        announced limits are adopted is the client's rule, as for the in-process bucket
        (:meth:`~asyncclient.ratelimit.TokenBucket.adopt`).

        Returns:
            True: the bucket takes every limit it is handed.
        """
        if rate != self._rate:
            self._set_rate(rate)
            self._adopting = True
        return True

    @property
    def observes_every_header(self) -> bool:
        """True: :meth:`observe` is handed every rate-limit field of every response."""
        return True
