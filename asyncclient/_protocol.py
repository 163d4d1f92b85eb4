"""Sans-I/O protocol: build requests, decode ``(status, headers, body)`` or raise.

Nothing here does I/O or knows about aiohttp: the transport moves bytes, this
module gives them meaning (architecture guide, example 1).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from attrs import field, frozen

from asyncclient.errors import (
    APIResponseValidationError,
    APIStatusError,
    RateLimitError,
    status_error_class,
)

__all__ = [
    "Envelope",
    "RateLimitInfo",
    "Request",
    "Response",
    "build_request",
    "decode_envelope",
    "parse_rate_limit",
    "parse_retry_after",
]

_JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


@frozen
class Request:
    """A request ready to send; the API key is added by the transport, never stored here."""

    method: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    body: bytes | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(factory=dict, repr=False)

    @property
    def is_idempotent(self) -> bool:
        """GET (and HEAD) may be repeated without side effects; a POST may not."""
        return self.method in ("GET", "HEAD")


@frozen
class Response:
    """What the transport got back."""

    status: int
    headers: Mapping[str, str] = field(repr=False)
    body: bytes = field(repr=False)


class Envelope(dict[str, Any]):
    """A decoded response envelope that remembers where it came from.

    A ``dict`` (``success``, ``message``, ``data``, ...) plus the request's method
    and path and the response's status and raw body, so that a part of it that
    cannot be decoded is reported with all of them.
    """

    method: str = ""
    path: str = ""
    status: int = 0
    raw: bytes = b""


@frozen
class RateLimitInfo:
    """The rate-limit headers of a response (spec 8.1), parsed.

    ``reset_after`` is ``X-RateLimit-Reset`` minus the response's ``Date`` (so a
    wrong local clock does not matter), in seconds; ``None`` when absent.
    """

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    reset_after: float | None = None
    retry_after: float | None = None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def build_request(
    method: str,
    path: str,
    *,
    params: Mapping[str, Any] | None = None,
    json_body: Any = None,
) -> Request:
    """Build a :class:`Request`; ``None`` params are left out, enums sent by value.

    Args:
        method: HTTP method.
        path: Path beginning with ``/v1`` (spec part 9).
        params: Query parameters.
        json_body: JSON-ready data (already unstructured), or ``None`` for no body.

    Returns:
        The request.
    """
    query = tuple((k, _query_value(v)) for k, v in (params or {}).items() if v is not None)
    body = None
    if json_body is not None:
        body = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode()
    return Request(method.upper(), path, query, body, dict(_JSON_HEADERS))


def _header_number(headers: Mapping[str, str], name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return float(raw.strip())
    except ValueError:
        return None


def _response_date(headers: Mapping[str, str]) -> datetime | None:
    raw = headers.get("Date")
    if not raw:
        return None
    try:
        return parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date.

    Args:
        value: The header's value.
        now: The reference time for an HTTP date (the response's ``Date``, else now).

    Returns:
        Seconds (never negative), or ``None`` when absent or unreadable.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    ref = now or datetime.now(timezone.utc)
    return max(0.0, (when - ref).total_seconds())


def parse_rate_limit(headers: Mapping[str, str]) -> RateLimitInfo:
    """Read ``X-RateLimit-*``, ``Retry-After`` and ``Date`` of a response."""
    date = _response_date(headers)
    limit = _header_number(headers, "X-RateLimit-Limit")
    remaining = _header_number(headers, "X-RateLimit-Remaining")
    reset = _header_number(headers, "X-RateLimit-Reset")
    reference = date.timestamp() if date else datetime.now(timezone.utc).timestamp()
    return RateLimitInfo(
        limit=int(limit) if limit is not None else None,
        remaining=int(remaining) if remaining is not None else None,
        reset=reset,
        reset_after=max(0.0, reset - reference) if reset is not None else None,
        retry_after=parse_retry_after(headers.get("Retry-After"), now=date),
    )


def _message_of(payload: Any, text: str, status: int) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return str(payload["message"])
    if text.strip():
        return text.strip()[:500]
    return f"HTTP {status}"


def _raise_status(request: Request, response: Response, payload: Any, text: str) -> None:
    message = _message_of(payload, text, response.status)
    cls = status_error_class(response.status, message)
    common: dict[str, Any] = {
        "status_code": response.status,
        "body": payload if payload is not None else text,
        "headers": response.headers,
        "method": request.method,
        "path": request.path,
    }
    if issubclass(cls, RateLimitError):
        info = parse_rate_limit(response.headers)
        raise cls(
            message,
            retry_after=info.retry_after,
            limit=info.limit,
            remaining=info.remaining,
            reset=info.reset,
            **common,
        )
    raise cls(message, **common)


def decode_envelope(request: Request, response: Response) -> Envelope:
    """Check a response and return its decoded JSON envelope.

    Args:
        request: The request that was sent (for error context).
        response: What came back.

    Returns:
        The whole envelope (``success``, ``message``, ``data``, ...); which part
        holds the result differs per endpoint (spec part 4).

    Raises:
        APIStatusError: A subclass chosen by status and message, for an error
            status, a redirect (never followed), or ``success: false``.
        APIResponseValidationError: A success status whose body is not a JSON object.
    """
    text = response.body.decode("utf-8", errors="replace")
    try:
        payload: Any = json.loads(text) if text.strip() else None
    except ValueError:
        payload = None
    if response.status >= 300:
        if 300 <= response.status < 400:
            where = response.headers.get("Location", "?")
            raise APIStatusError(
                f"redirect to {where} not followed (the API key is never sent elsewhere)",
                status_code=response.status,
                body=text,
                headers=response.headers,
                method=request.method,
                path=request.path,
            )
        _raise_status(request, response, payload, text)
    if not isinstance(payload, dict):
        raise APIResponseValidationError(
            "response body is not a JSON object",
            body=response.body,
            status_code=response.status,
            errors=["body: expected a JSON object"],
            method=request.method,
            path=request.path,
        )
    if payload.get("success") is False:
        _raise_status(request, response, payload, text)
    envelope = Envelope(payload)
    envelope.method, envelope.path = request.method, request.path
    envelope.status, envelope.raw = response.status, response.body
    return envelope
