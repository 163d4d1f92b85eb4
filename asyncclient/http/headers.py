"""Rate-limit headers (spec 8.1), read so that no value a server sends can raise.

Every parser here is total: a header that is absent, not a number, or out of
its bounds is ignored (``None``) or clamped, never an exception:

- ``X-RateLimit-Limit``: requests a minute, an integer from 1 to :data:`MAX_LIMIT`;
  anything else is ignored;
- ``X-RateLimit-Remaining``: clamped to ``0 .. MAX_LIMIT``;
- ``X-RateLimit-Reset``: a Unix timestamp from 0 to the end of year 9999, else
  ignored; ``reset_after`` (Reset minus Date) is clamped to ``0 .. MAX_RESET_AFTER``;
- ``Retry-After``: delta-seconds or an HTTP date, clamped to ``0 .. MAX_RETRY_AFTER``;
- ``Date``: an HTTP date; one without a known zone (``-0000``, an unknown name)
  is read as UTC (RFC 5322 3.3).

A number is a plain ASCII decimal (``60``, ``2.5``, ``1.7e9``) of at most 64
characters: ``inf``, ``nan``, ``1_000`` and non-ASCII digits, which ``float()``
would take, are not numbers in a header.

:func:`parse_rate_limit` reads them all. The caller's per-response path reads only
what can change its limiter, one header at a time (:func:`parse_limit`,
:func:`parse_remaining`, :func:`parse_reset_after`): ``Date`` and
``X-RateLimit-Reset`` only once none remain. Each gives exactly the value
:func:`parse_rate_limit` gives for its field.

Dates here are the service's: an HTTP date is read against the response's own ``Date``,
and only a response without one against the real clock (``SYSTEM_CLOCK``), whatever
clock the client paces by: the service's dates are real time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK

__all__ = [
    "MAX_LIMIT",
    "MAX_RESET_AFTER",
    "MAX_RETRY_AFTER",
    "RateLimitInfo",
    "http_date",
    "parse_limit",
    "parse_rate_limit",
    "parse_remaining",
    "parse_reset_after",
    "parse_retry_after",
]

MAX_LIMIT = 10_000_000
"""Largest ``X-RateLimit-Limit`` taken, in requests a minute (the largest plan has 1000)."""

MAX_RESET_AFTER = 3600.0
"""Longest ``reset_after``, in seconds: the window is a minute (spec 8.1), and the
limiter waits this long at most on the word of one response."""

MAX_RETRY_AFTER = 86400.0
"""Longest ``Retry-After``, in seconds (a day); the retry policy's own
``max_retry_after`` then decides whether to wait or raise."""

_MAX_TIMESTAMP = 253402300799.0  # 9999-12-31T23:59:59Z, the last second datetime holds
_HUGE = 1e18  # numbers are clamped to +-_HUGE: finite, and beyond every bound above
_MAX_NUMBER_CHARS = 64
_MAX_DATE_CHARS = 64  # an IMF-fixdate has 29
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


@frozen
class RateLimitInfo:
    """The rate-limit headers of a response (spec 8.1), parsed and bounded.

    ``reset_after`` is ``X-RateLimit-Reset`` minus the response's ``Date`` (so a
    wrong local clock does not matter), in seconds; ``None`` when absent.
    """

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    reset_after: float | None = None
    retry_after: float | None = None


def _number(raw: object) -> float | None:
    """An ASCII decimal as a float clamped to +-1e18, else None."""
    if not isinstance(raw, str):
        return None
    if raw.isdigit() and raw.isascii() and len(raw) <= _MAX_NUMBER_CHARS:
        return min(_HUGE, float(raw))  # the usual header: plain digits, no regex needed
    text = raw.strip()
    if len(text) > _MAX_NUMBER_CHARS or not _NUMBER.fullmatch(text):
        return None
    return min(_HUGE, max(-_HUGE, float(text)))  # float("1e400") is inf


def _http_date(raw: object) -> datetime | None:
    """An HTTP date as an aware UTC datetime, else None."""
    if not isinstance(raw, str) or len(raw) > _MAX_DATE_CHARS:
        return None
    try:
        when = parsedate_to_datetime(raw.strip())
        if when.tzinfo is None:  # "-0000" or a zone name it does not know
            when = when.replace(tzinfo=timezone.utc)
        return when.astimezone(timezone.utc)
    except Exception:  # junk: the stdlib parser's failure modes are not documented
        return None


def _header_number(headers: Mapping[str, str], name: str) -> float | None:
    return _number(headers.get(name))


def http_date(raw: object) -> datetime | None:
    """An HTTP date (``Date``) as an aware UTC datetime, else None; never raises."""
    return _http_date(raw)


def _response_date(headers: Mapping[str, str]) -> datetime | None:
    return _http_date(headers.get("Date"))


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date.

    Args:
        value: The header's value.
        now: The reference time for an HTTP date (the response's ``Date``, else
            now); a naive one is read as UTC.

    Returns:
        Seconds from 0 to :data:`MAX_RETRY_AFTER`, or ``None`` when absent or unreadable.
    """
    seconds = _number(value)
    if seconds is None:
        when = _http_date(value)
        if when is None:
            return None
        ref = now or SYSTEM_CLOCK.now()
        if ref.tzinfo is None:
            ref = ref.replace(tzinfo=timezone.utc)
        seconds = (when - ref).total_seconds()
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


def parse_limit(value: object) -> int | None:
    """``X-RateLimit-Limit``: an integer of at least 1, read as :data:`MAX_LIMIT` when
    above it ("at least the bound": a service that allows more is never paced at a
    smaller plan's rate); None when absent, unreadable or below 1."""
    limit = _number(value)
    if limit is None or limit < 1:
        return None
    return int(min(limit, MAX_LIMIT))


def parse_remaining(value: object) -> int | None:
    """``X-RateLimit-Remaining``, clamped to ``0 .. MAX_LIMIT``; None when absent or unreadable."""
    if isinstance(value, str) and value.isdigit() and value.isascii():
        # The usual header, on every response: plain digits, read exactly (as _number
        # would, up to its length; past MAX_LIMIT the clamp hides float's rounding).
        if len(value) <= _MAX_NUMBER_CHARS:
            count = int(value)
            return count if count <= MAX_LIMIT else MAX_LIMIT
        return None
    remaining = _number(value)
    if remaining is None:
        return None
    return int(min(MAX_LIMIT, max(0, remaining)))


def _reset(headers: Mapping[str, str]) -> float | None:
    reset = _header_number(headers, "X-RateLimit-Reset")
    if reset is not None and not 0 <= reset <= _MAX_TIMESTAMP:
        return None
    return reset


def _reset_after(reset: float | None, date: datetime | None) -> float | None:
    if reset is None:
        return None
    reference = (date or SYSTEM_CLOCK.now()).timestamp()
    return min(MAX_RESET_AFTER, max(0.0, reset - reference))


def parse_reset_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from the response's ``Date`` (else now) to ``X-RateLimit-Reset``, bounded.

    ``0 .. MAX_RESET_AFTER``; None when Reset is absent or unreadable. ``Date`` is
    parsed only when Reset is there.
    """
    reset = _reset(headers)
    return _reset_after(reset, _response_date(headers) if reset is not None else None)


def parse_rate_limit(headers: Mapping[str, str]) -> RateLimitInfo:
    """Read ``X-RateLimit-*``, ``Retry-After`` and ``Date`` of a response; never raises."""
    date = _response_date(headers)
    reset = _reset(headers)
    return RateLimitInfo(
        limit=parse_limit(headers.get("X-RateLimit-Limit")),
        remaining=parse_remaining(headers.get("X-RateLimit-Remaining")),
        reset=reset,
        reset_after=_reset_after(reset, date),
        retry_after=parse_retry_after(headers.get("Retry-After"), now=date),
    )
