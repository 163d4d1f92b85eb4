"""Client-side rate limiting: a token bucket sized by the subscription plan.

The bucket holds at most ``burst`` tokens (less a small reserve for latency jitter,
see :attr:`RateLimit.client_capacity`) and refills at ``per_minute / 60`` tokens a
second; every request of a client takes one token first. Waiters are served
first come, first served within their lane (an ``asyncio.Lock`` a lane queues them in
order), interactive ones first (:mod:`asyncclient.lanes`): a bulk waiter leaves a token
due to an interactive waiter to it. The one at the head sleeps exactly until its token
is due, so nothing busy-waits, and a waiter cancelled while queued or asleep takes no
token. ``clock`` and ``sleep`` are injected so tests run on virtual time.

The service's view wins: :meth:`TokenBucket.observe` lowers the tokens to the
``X-RateLimit-Remaining`` of a response once they lie above what it allows (another
process may share the key), and :meth:`TokenBucket.pause` stops every request of the
client after a 429.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from typing import Protocol

from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient.lanes import Lane, current_lane

__all__ = [
    "Limiter",
    "Plan",
    "RateLimit",
    "TokenBucket",
    "adopt_into",
    "observes_every_header",
    "plan_for_limit",
    "resolve_rate_limit",
    "spare_tokens_of",
    "tokens_from_headers",
]

Monotonic = Callable[[], float]
"""Seconds that never go back: a :class:`~asyncclient._clock.Clock`'s ``monotonic``."""
Sleep = Callable[[float], Awaitable[None]]
"""An awaitable sleep: a :class:`~asyncclient._clock.Clock`'s ``sleep``."""


_JITTER_SECONDS = 0.05
"""Latency jitter the client's reserve absorbs (see RateLimit.client_capacity)."""


@frozen
class RateLimit:
    """A rate limit: ``per_minute`` requests a minute, bursts of up to ``burst``."""

    per_minute: float
    burst: int

    def __attrs_post_init__(self) -> None:
        if not self.per_minute > 0:
            raise ValueError(f"per_minute must be positive, got {self.per_minute}")
        if self.burst < 1:
            raise ValueError(f"burst must be at least 1, got {self.burst}")

    @property
    def per_second(self) -> float:
        """Refill rate in tokens per second."""
        return self.per_minute / 60.0

    @property
    def reserve(self) -> float:
        """Tokens the client keeps back for latency jitter: what the plan refills in 50 ms.

        Requests reach the service after a latency that varies; a client spending
        tokens at exactly the plan's rate would then now and then arrive a little
        early and get a 429. The reserve absorbs that: the tokens the plan refills
        in 50 ms (a fraction of a token on most plans), never so much that a
        single token could not be taken.
        """
        return min(float(self.burst - 1), self.per_second * _JITTER_SECONDS)

    @property
    def client_capacity(self) -> float:
        """The burst a client allows itself: ``burst`` less :attr:`reserve`.

        The steady rate is unchanged; only the first burst is a little smaller.
        """
        return self.burst - self.reserve

    def scaled(self, factor: float) -> RateLimit:
        """The same limit with time running ``factor`` times faster (for the emulator)."""
        return RateLimit(per_minute=self.per_minute * factor, burst=self.burst)


class Plan(enum.Enum):
    """Subscription plans and their limits."""

    FREE = "free"
    STARTER = "starter"
    PRO = "pro"
    PREMIUM = "premium"

    @property
    def rate_limit(self) -> RateLimit:
        """The plan's requests a minute and burst."""
        return _PLAN_LIMITS[self]


_PLAN_LIMITS = {
    Plan.FREE: RateLimit(per_minute=10, burst=20),
    Plan.STARTER: RateLimit(per_minute=60, burst=100),
    Plan.PRO: RateLimit(per_minute=300, burst=500),
    Plan.PREMIUM: RateLimit(per_minute=1000, burst=2000),
}


def resolve_rate_limit(plan: Plan | RateLimit | str | None) -> RateLimit | None:
    """A plan, a plan's name or a custom limit, as a :class:`RateLimit` (None stays None)."""
    if plan is None or isinstance(plan, RateLimit):
        return plan
    if isinstance(plan, Plan):
        return plan.rate_limit
    try:
        return Plan(str(plan).lower()).rate_limit
    except ValueError:
        names = ", ".join(p.value for p in Plan)
        raise ValueError(f"plan: unknown plan {plan!r} (use {names} or RateLimit)") from None


def plan_for_limit(per_minute: int) -> RateLimit:
    """The plan whose rate is ``per_minute``, else a limit with burst = one minute's rate."""
    for limit in _PLAN_LIMITS.values():
        if limit.per_minute == per_minute:
            return limit
    return RateLimit(per_minute=per_minute, burst=max(1, int(per_minute)))


def tokens_from_headers(remaining: int, reset_after: float | None, rate: RateLimit) -> float:
    """How many tokens the service's headers leave the client (may be below zero).

    That is what the service says remain, less the client's reserve (see
    :attr:`RateLimit.client_capacity`): so the reserve is set up again on the
    service's side whenever the two counts drift apart (a burst that reached the
    service spread out in time, another process using the key). With none
    remaining, ``X-RateLimit-Reset`` says when the next token comes; it and
    ``Date`` are whole seconds, so their difference may be up to a second too
    long, and we trust it less that second rather than wait for nothing.
    """
    return _tokens_from_headers(remaining, reset_after, rate.per_second, rate.reserve)


def _tokens_from_headers(
    remaining: int, reset_after: float | None, per_second: float, reserve: float
) -> float:
    if remaining <= 0 and reset_after is not None:
        return 1.0 - max(0.0, reset_after - 1.0) * per_second - reserve
    return float(max(0, remaining)) - reserve


def _most_held(remaining: int, reset_after: float | None, per_second: float) -> float:
    """Fewer tokens than this the service holds, by its headers (the band's top).

    ``X-RateLimit-Remaining`` is a floor: below ``remaining + 1``. With none remaining,
    ``X-RateLimit-Reset`` is rounded up to a whole second and ``Date`` down, so the next
    token comes more than ``reset_after - 2`` seconds on: the service holds less than
    what that wait leaves.
    """
    if remaining <= 0 and reset_after is not None:
        return 1.0 - max(0.0, reset_after - 2.0) * per_second
    return float(max(0, remaining)) + 1.0


class Limiter(Protocol):
    """What the client needs of a limiter (the token bucket, or the Redis one).

    The first four members are what every request uses. The last three let the client
    ask more of a limiter without knowing its type: how many tokens it holds now (the
    gate keeps polling behind announced creations by it), whether it takes a limit the
    service announces, and which rate-limit headers it reads. A limiter written against
    the first four only still works: :func:`spare_tokens_of`, :func:`adopt_into` and
    :func:`observes_every_header` answer for it as "cannot count", "keeps its limit"
    and "every header".
    """

    @property
    def rate(self) -> RateLimit:
        """The limit it keeps (the poller sizes its share by it)."""
        ...

    async def acquire(self) -> float:
        """Wait for a token; returns the seconds waited."""
        ...

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        """Take the service's ``X-RateLimit-Remaining`` (and ``-Reset``) into account."""
        ...

    def pause(self, seconds: float) -> None:
        """Hold every request for ``seconds`` (after a 429)."""
        ...

    def spare(self) -> float | None:
        """The tokens on hand now, or None where this process cannot count them (a
        limiter shared through Redis may answer the count it last saw, refilled since)."""
        ...

    def adopt(self, rate: RateLimit) -> bool:
        """Take a limit the service announced (``X-RateLimit-Limit``); False where
        this limiter keeps the one it was given."""
        ...

    @property
    def observes_every_header(self) -> bool:
        """True: :meth:`observe` is handed every field of every response. False: it
        reads ``reset_after`` only when none remain, so the caller parses ``Date`` and
        ``X-RateLimit-Reset`` only then (the hot path of a busy client)."""
        ...


def spare_tokens_of(limiter: Limiter) -> Callable[[], float | None] | None:
    """How to count ``limiter``'s tokens on hand, or None for a limiter that cannot."""
    return getattr(limiter, "spare", None)


def adopt_into(limiter: Limiter, rate: RateLimit) -> bool:
    """Hand ``limiter`` an announced limit; False when it keeps its own (or cannot take one)."""
    adopt = getattr(limiter, "adopt", None)
    return bool(adopt(rate)) if adopt is not None else False


def observes_every_header(limiter: Limiter) -> bool:
    """Whether ``limiter`` is handed every rate-limit field of every response."""
    return bool(getattr(limiter, "observes_every_header", True))


class TokenBucket:
    """An in-process token bucket shared by every request of one client.

    A request that finds a token and nobody queued takes it at once, without the
    lock (nothing awaits in between, so the order of arrival is kept); the others
    queue on the lock.

    Args:
        rate: Capacity (``burst``) and refill (``per_minute``).
        clock: Monotonic seconds; the real clock's by default.
        sleep: Awaitable sleep; the real clock's by default.
    """

    def __init__(
        self,
        rate: RateLimit,
        *,
        clock: Monotonic = SYSTEM_CLOCK.monotonic,
        sleep: Sleep = SYSTEM_CLOCK.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._set_limits(rate)
        self._tokens = self._capacity
        self._updated = clock()
        self._refilled = 0.0  # tokens refilled since the last one was taken
        self._paused_until = 0.0
        self._lock = asyncio.Lock()  # bulk waiters, in order
        self._front_lock = asyncio.Lock()  # interactive waiters, in order, first
        self._queued = 0  # acquirers holding or waiting for a lock
        self._front = 0  # interactive acquirers among them
        self._front_idle = asyncio.Event()  # set while no interactive acquirer waits
        self._front_idle.set()

    def _set_limits(self, rate: RateLimit) -> None:
        # What every acquire and observe reads, worked out once per rate.
        self._rate = rate
        self._capacity = rate.client_capacity
        self._per_second = rate.per_second
        self._reserve = rate.reserve

    def __repr__(self) -> str:
        return f"<TokenBucket {self._rate.per_minute}/min burst {self._rate.burst}>"

    @property
    def rate(self) -> RateLimit:
        return self._rate

    @property
    def tokens(self) -> float:
        """Tokens available now (after refill)."""
        self._refill()
        return self._tokens

    def spare(self) -> float:
        """The tokens on hand now (see :attr:`tokens`)."""
        return self.tokens

    def adopt(self, rate: RateLimit) -> bool:
        """Take an announced limit (:meth:`set_rate`); the bucket always does."""
        self.set_rate(rate)
        return True

    @property
    def observes_every_header(self) -> bool:
        """False: the bucket reads ``reset_after`` only when none remain. A subclass may
        read more in :meth:`observe`, so it is handed every header."""
        return type(self) is not TokenBucket

    def set_rate(self, rate: RateLimit) -> None:
        """Change the limit (e.g. learnt from X-RateLimit-Limit); tokens carry over."""
        self._refill()
        self._set_limits(rate)
        self._tokens = min(self._tokens, self._capacity)

    def _refill(self) -> None:
        now = self._clock()
        elapsed = now - self._updated
        self._updated = now
        if elapsed > 0.0:
            tokens = min(self._capacity, self._tokens + elapsed * self._per_second)
            self._refilled += tokens - self._tokens
            self._tokens = tokens
        elif self._tokens > self._capacity:  # a clock that did not move: only clamp
            self._tokens = self._capacity

    def _wait_needed(self) -> float:
        self._refill()
        now = self._updated
        if now < self._paused_until:
            return self._paused_until - now
        if self._tokens >= 1.0:
            return 0.0
        return (1.0 - self._tokens) / self._per_second

    async def acquire(self) -> float:
        """Take one token, waiting first come, first served within the caller's lane
        (:func:`~asyncclient.lanes.current_lane`), interactive waiters first.

        Returns:
            Seconds spent waiting (by the injected clock).
        """
        if not self._queued and self._wait_needed() <= 0:
            self._take()  # nobody ahead and a token now: no lock, no wait
            return 0.0
        started = self._clock()
        self._queued += 1
        try:
            if current_lane() is Lane.INTERACTIVE:
                await self._acquire_first()
            else:
                async with self._lock:
                    while (wait := self._wait_needed()) > 0 or self._front:
                        if wait > 0:
                            await self._sleep(wait)
                        else:  # a token, due to an interactive waiter: it takes it first
                            await self._front_idle.wait()
                    self._take()
        finally:
            self._queued -= 1
        return self._clock() - started

    async def _acquire_first(self) -> None:
        self._front += 1
        self._front_idle.clear()
        try:
            async with self._front_lock:
                while (wait := self._wait_needed()) > 0:
                    await self._sleep(wait)
                self._take()
        finally:
            self._front -= 1
            if not self._front:
                self._front_idle.set()

    def _take(self) -> None:
        self._tokens -= 1.0
        self._refilled = 0.0

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        """Lower the tokens to what the service says remain (it may count other clients).

        The headers give a band: ``X-RateLimit-Remaining`` is a whole number (the
        service holds at least that many tokens and less than one more), and with none
        remaining ``X-RateLimit-Reset`` says when the next token comes, give or take
        the whole seconds it and ``Date`` are rounded to. While the bucket's own count
        (less the reserve) lies in that band it agrees with the service and is kept, so
        what the headers cannot show is not thrown away at every response. The headers
        are as old as the service's answer, and the bucket has refilled since: by at
        most what it refilled since it last gave a token (to the answered request or a
        later one), so the band's top is raised by that.

        A count above the top by less than the reserve is a latency's worth ahead of
        the service (its refill started when the first request reached it, a little
        after ours): it is trimmed to the top, which costs that much and no more (a
        whole token, six seconds on the Free plan, before). A count further above
        means something else spent tokens of the key: the bucket drops to the
        header's count, less the reserve, which is so rebuilt.

        Args:
            remaining: ``X-RateLimit-Remaining``.
            reset_after: Seconds until ``X-RateLimit-Reset``, read against the
                response's ``Date``. With none remaining it says when the next
                token comes; a bucket above the band then waits that long, less
                the second the two may be off.
        """
        if remaining is None:
            return
        cap = _tokens_from_headers(remaining, reset_after, self._per_second, self._reserve)
        if cap >= self._capacity:
            return  # the service leaves more than the bucket ever holds: nothing to lower
        self._refill()
        top = _most_held(remaining, reset_after, self._per_second) - self._reserve
        top += max(0.0, self._refilled)  # what the bucket gained since the answer left
        over = self._tokens - top
        if over >= self._reserve:  # more than latency explains: something else spent
            self._tokens = cap
        elif over >= 0.0:  # a latency's worth over (the service refilled later): trimmed
            self._tokens = top

    def pause(self, seconds: float) -> None:
        """Hold every request until ``seconds`` from now, and empty the bucket."""
        self._refill()
        self._tokens = 0.0
        self._paused_until = max(self._paused_until, self._updated + max(0.0, seconds))
