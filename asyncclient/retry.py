"""Retry policy: a pure decision, ``(attempt, error) -> delay in seconds or None``.

What is retried (nothing here sleeps or sends):

- a GET: connection errors, timeouts, 429 and 500/502/503/504;
- a creation POST, which costs credits and has no idempotency key, only when the
  service cannot have processed it: after a 429 (the service's own limiter refused it
  before any processing), or a connection failure before any byte of the request was sent.

A failed creation POST whose fate is unknown is *ambiguous* (:func:`is_ambiguous`):
a reset or timeout after sending, a 5xx of any kind, 501 and 503 included (the service
may have processed it before failing, and a proxy or gateway in front of it answers
502, 503 or 504 for a request it forwarded: "a 503 means nothing happened" is a
guess), or a success status whose body could not be read or names no project or video
(the caller raises that one). It is never retried: it is reconciled with the service.

The wait is full jitter, ``uniform(0, min(cap, base * 2**attempt))``; a
``Retry-After`` is a floor that the jitter never shortens. A ``Retry-After``
longer than ``max_retry_after`` raises the ``RateLimitError`` at once rather than
waiting less than the service asked.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from attrs import field, frozen

from asyncclient.errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    RateLimitError,
)

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "is_ambiguous", "may_retry"]

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Statuses after which a GET is retried (a creation only after 429)."""

_UNPROCESSED_STATUSES = frozenset({429})  # the service's limiter refused it: safe to resend


def _idempotent(error: APIError) -> bool:
    return error.method in (None, "GET", "HEAD")


def may_retry(error: APIError) -> bool:
    """Whether ``error`` may be retried at all, by the rules in the module docstring."""
    if isinstance(error, RateLimitError):
        return True
    if isinstance(error, APIConnectionError):
        return _idempotent(error) or not error.request_sent
    if isinstance(error, APIStatusError):
        if _idempotent(error):
            return error.status_code in RETRYABLE_STATUSES
        return error.status_code in _UNPROCESSED_STATUSES
    return False


def is_ambiguous(error: BaseException) -> bool:
    """Whether a failed POST may have been processed by the service.

    A reset or timeout after sending, any 5xx (the service may have failed after
    processing it; a gateway's 502, 503 or 504 may follow a request it forwarded), or a
    success status whose body we could not read or that names no id. A 4xx is a refusal:
    nothing was made.
    """
    if isinstance(error, APIConnectionError):
        return error.request_sent
    if isinstance(error, APIStatusError):
        return error.status_code >= 500
    return isinstance(error, APIResponseValidationError)


@frozen(kw_only=True)
class RetryPolicy:
    """When and how long to wait before trying a request again.

    Attributes:
        attempts: Attempts in all, the first included (1 = never retry).
        base: First backoff ceiling, in seconds.
        cap: Largest backoff ceiling, in seconds.
        deadline: Give up once this many seconds have passed since the first
            attempt (limiter waits included); ``None`` for no deadline.
        max_retry_after: The longest ``Retry-After`` to honour by waiting.
        random: Source of jitter (seed it in tests).
    """

    attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    deadline: float | None = 300.0
    max_retry_after: float = 120.0
    random: Callable[[float, float], float] = field(default=random.uniform, repr=False)

    def __call__(self, attempt: int, error: APIError, *, elapsed: float = 0.0) -> float | None:
        """The wait before attempt ``attempt + 1``, or None to give up.

        Args:
            attempt: Attempts made so far (1 after the first failure).
            error: What the last attempt raised.
            elapsed: Seconds since the first attempt.

        Raises:
            RateLimitError: ``error`` itself, when its Retry-After exceeds
                ``max_retry_after`` (never a silently shorter wait).
        """
        if attempt >= self.attempts or not may_retry(error):
            return None
        floor = 0.0
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                raise error
            floor = error.retry_after
        ceiling = min(self.cap, self.base * 2 ** (attempt - 1))
        delay = max(floor, self.random(0.0, ceiling))
        if self.deadline is not None and elapsed + delay > self.deadline:
            return None
        return delay
