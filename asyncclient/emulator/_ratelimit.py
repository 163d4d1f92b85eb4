"""Token buckets per API key (spec 8.1), refilled on the service clock."""

from __future__ import annotations

import math
from dataclasses import dataclass

from asyncclient.emulator._clock import ServiceClock

__all__ = ["PLANS", "Bucket", "Decision", "unmetered"]

# spec 8.1: plan -> (requests per minute, burst)
PLANS: dict[str, tuple[int, int]] = {
    "free": (10, 20),
    "starter": (60, 100),
    "pro": (300, 500),
    "premium": (1000, 2000),
}
"""Each plan's requests a minute and burst, in service time (see
:class:`~asyncclient.ratelimit.Plan`)."""


@dataclass(frozen=True)
class Decision:
    """The outcome of one request against a bucket, with its header values."""

    allowed: bool
    limit: int
    remaining: int
    reset: int
    retry_after: int

    def headers(self) -> dict[str, str]:
        """Return the X-RateLimit-* headers (and Retry-After when refused)."""
        out = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if not self.allowed:
            out["Retry-After"] = str(self.retry_after)
        return out


class Bucket:
    """A token bucket: ``burst`` tokens, refilled at ``per_minute / 60`` per service second."""

    def __init__(self, per_minute: int, burst: int, clock: ServiceClock) -> None:
        if per_minute <= 0 or burst <= 0:
            raise ValueError("per_minute and burst must be positive")
        self.per_minute = per_minute
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.now()

    @property
    def rate(self) -> float:
        """Tokens per service second."""
        return self.per_minute / 60.0

    def _refill(self) -> None:
        now = self._clock.now()
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now

    def take(self) -> Decision:
        """Take one token if there is one; return the decision and header values."""
        self._refill()
        allowed = self._tokens >= 1.0
        if allowed:
            self._tokens -= 1.0
        to_one = max(0.0, 1.0 - self._tokens) / self.rate
        until_reset = to_one if self._tokens < 1.0 else (self.burst - self._tokens) / self.rate
        real_reset = self._clock.to_real(until_reset)
        reset = math.ceil(self._clock.now() + real_reset)  # on the service's clock, as Date
        retry_after = max(1, math.ceil(self._clock.to_real(to_one)))
        return Decision(
            allowed=allowed,
            # Per real minute, as Retry-After and Reset - Date are in real seconds: a client
            # sized by this header keeps to the bucket whatever the time scale.
            limit=max(1, round(self.per_minute * self._clock.time_scale)),
            remaining=math.floor(self._tokens),
            reset=reset,
            retry_after=retry_after,
        )


def unmetered(plan: str, clock: ServiceClock) -> Decision:
    """The decision of a request metered by no bucket: ``plan``'s full, untouched one.

    What a refused key is answered with (spec 8.1: each response carries the
    X-RateLimit-* headers; spec 5.3: a missing or invalid key gives 401), though it takes
    no token of any bucket.
    """
    per_minute, burst = PLANS[plan]
    now = clock.now()
    return Decision(
        allowed=True,
        limit=max(1, round(per_minute * clock.time_scale)),  # per real minute, as Bucket's
        remaining=burst,
        reset=math.ceil(now),  # full already: nothing to wait for
        retry_after=0,
    )
