"""Sans-I/O protocol: build requests, decode ``(status, headers, body)`` or raise.

Nothing here does I/O or knows about aiohttp: the transport moves bytes, this
module gives them meaning (architecture guide, example 1). The rate-limit
headers are read in :mod:`asyncclient.http.headers` (re-exported here).

Whatever the body, :func:`decode_envelope` returns an :class:`Envelope` or raises
an :class:`~asyncclient.errors.APIError`: a body larger than ``max_bytes`` or
nesting deeper than ``max_depth`` is refused before it is parsed (``json.loads``
recurses once a level and would raise ``RecursionError``).
"""

from __future__ import annotations

import enum
import json
import re
from array import array
from collections.abc import AsyncIterator, Mapping
from itertools import accumulate
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from attrs import field, frozen

from asyncclient.errors import (
    APIResponseValidationError,
    APIStatusError,
    RateLimitError,
    ValidationError,
    status_error_class,
)
from asyncclient.http.headers import RateLimitInfo, parse_rate_limit, parse_retry_after

__all__ = [
    "JSON_HEADERS",
    "MAX_BODY_BYTES",
    "MAX_BODY_DEPTH",
    "Envelope",
    "RateLimitInfo",
    "Request",
    "Response",
    "Stream",
    "build_request",
    "decode_envelope",
    "parse_rate_limit",
    "parse_retry_after",
    "redact_url",
    "response_of",
]

JSON_HEADERS: Mapping[str, str] = MappingProxyType(
    {"Content-Type": "application/json", "Accept": "application/json"}
)
"""The headers of every built request: one read-only mapping, shared (nothing copies it)."""

MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest response body :func:`decode_envelope` parses, by default (32 MiB)."""

MAX_BODY_DEPTH = 64
"""Deepest nesting of arrays and objects :func:`decode_envelope` parses, by default."""

# A JSON string, escapes and all; one left open runs to the end. Never failing
# once started, the pattern never backtracks, so the scan stays linear.
_STRING = re.compile(rb'"[^"\\]*(?:\\.?[^"\\]*)*"?', re.DOTALL)
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1, +1, -1, -1 as signed bytes
_CHUNK = 1 << 16
_SMALL_BODY = 4096
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_ESCAPE = re.compile(rb"\\.", re.DOTALL)  # a backslash and what it escapes
_NOT_SKELETON = bytes(b for b in range(256) if b not in b'[]{}"\\')
_DECODER = json.JSONDecoder()
_JSON_SPACE = " \t\n\r"
_VALUE_STARTS = frozenset('{["-0123456789tfn')  # what json.loads reads at once


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


def _plain(cls: type) -> type:
    """A subclass of the frozen attrs class ``cls`` whose slots take plain stores.

    attrs' frozen ``__init__`` stores each field through ``object.__setattr__``, a call
    a field; the per-request values are built on this instead, then become a ``cls``
    by ``__class__`` assignment (same slots, same layout), equal to ``cls(...)``'s.
    """
    namespace = {"__slots__": (), "__setattr__": object.__setattr__}
    namespace["__delattr__"] = object.__delattr__  # both, or the type keeps the slow slot
    return type(f"_Plain{cls.__name__}", (cls,), namespace)


_PlainRequest = _plain(Request)
_PlainResponse = _plain(Response)
_new = object.__new__


def response_of(status: int, headers: Mapping[str, str], body: bytes) -> Response:
    """``Response(status, headers, body)``, made at a third of the cost (every response)."""
    response: Any = _new(_PlainResponse)
    response.status, response.headers, response.body = status, headers, body
    response.__class__ = Response
    return response  # type: ignore[no-any-return]


def _plain_request(method: str, path: str) -> Request:
    """``Request(method, path, (), None, JSON_HEADERS)``, as :func:`response_of` makes one."""
    request: Any = _new(_PlainRequest)
    request.method, request.path, request.params = method, path, ()
    request.body, request.headers = None, JSON_HEADERS
    request.__class__ = Request
    return request  # type: ignore[no-any-return]


class Envelope(dict[str, Any]):
    """A decoded response envelope that remembers where it came from.

    A ``dict`` (``success``, ``message``, ``data``, ...) plus the request's method,
    path and id and the response's status and raw body, so that a part of it that
    cannot be decoded is reported with all of them.
    """

    method: str = ""
    path: str = ""
    status: int = 0
    raw: bytes = b""
    request_id: str | None = None
    """The request's id (set by the caller): the service's, else the one sent."""


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

    Raises:
        ValidationError: A value cannot be sent: a string that is not valid Unicode (a
            lone surrogate), a number that is NaN or infinite, something that is not
            JSON data, or nesting deeper than ``MAX_BODY_DEPTH``; each named by its path.
    """
    if not params and json_body is None:  # a plain GET: nothing to check
        return _plain_request(method.upper(), path)
    query = tuple((k, _query_value(v)) for k, v in (params or {}).items() if v is not None)
    body = None
    try:
        for _, value in query:
            value.encode("utf-8")
        if json_body is not None:
            text = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            body = text.encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        problems = unsendable(dict(query), "") + unsendable(json_body, "")
        raise ValidationError(problems or ["body: cannot be sent as JSON"]) from None
    # Python 3.13's encoder no longer fails on a body nested past the recursion limit:
    # one with more brackets than the depth allowed is walked (a creation has a few).
    brackets = body.count(b"[") + body.count(b"{") if body is not None else 0
    if brackets > MAX_BODY_DEPTH and (deep := unsendable(json_body, "")):
        raise ValidationError(deep)
    return Request(method.upper(), path, query, body, JSON_HEADERS)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unsendable(value: Any, path: str) -> list[str]:
    """Why parts of ``value`` (JSON-ready data) cannot be sent, as ``<path>: <reason>``.

    Walks the data without recursion, so any depth is safe to look at.
    """
    problems: list[str] = []
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack and len(problems) < 20:
        item, where, depth = stack.pop()
        name = where or "body"
        if depth > MAX_BODY_DEPTH:
            problems.append(f"{name}: nested deeper than {MAX_BODY_DEPTH} levels")
        elif isinstance(item, str):
            if not _is_unicode(item):
                problems.append(f"{name}: must be valid Unicode text (it holds a lone surrogate)")
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                problems.append(f"{name}: must be a finite number, not {item}")
        elif isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                if not isinstance(key, str):
                    problems.append(f"{name}: keys must be strings, not {type(key).__name__}")
                    continue
                if not _is_unicode(key):
                    problems.append(f"{name}: key {key!r} must be valid Unicode text")
                    continue
                stack.append((child, f"{where}.{key}" if where else key, depth + 1))
        elif isinstance(item, (list, tuple)):
            for index in reversed(range(len(item))):
                stack.append((item[index], f"{name}[{index}]", depth + 1))
        elif item is not None and not isinstance(item, (bool, int)):
            problems.append(f"{name}: must be JSON data, not {type(item).__name__}")
    return problems


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


def _size(n: int) -> str:
    mib = 1024 * 1024
    return f"{n // mib} MiB" if n >= mib and n % mib == 0 else f"{n} bytes"


def _nesting(body: bytes, limit: int) -> int | None:
    """How deep ``body`` nests arrays and objects, or None when its brackets do not pair up.

    Linear and at C speed (no Python loop over the bytes): strings, escapes
    included, are cut out, every other byte but a bracket dropped, the brackets
    made +1 and -1, and their running sum taken a chunk at a time. Counting stops
    in the first chunk that goes deeper than ``limit``. Brackets that do not pair
    up (a close before its open, or one left open) mean the body is no JSON.

    Strings are cut out on the body's skeleton, its quotes and brackets alone. Each
    escape (a backslash and the byte after it, paired from the left as the JSON
    lexer reads them) first becomes a lone backslash, so no quote is escaped any
    more; then every byte but quotes, brackets and backslashes goes. Two quotes side
    by side enclose nothing and leave every other quote's parity as it was, so they
    go next (a string without brackets is two quotes side by side), and what is left
    is split at its quotes: the pieces between the pairs are outside strings. A
    backslash left outside is no JSON; the lexer's own pattern (:data:`_STRING`) on
    the whole body then decides, as it always did.
    """
    skeleton = body.translate(None, _NOT_SKELETON)
    if b"\\" in skeleton:
        skeleton = _ESCAPE.sub(rb"\\", body).translate(None, _NOT_SKELETON)
    outside = b"".join(skeleton.replace(b'""', b"").split(b'"')[0::2])
    if b"\\" in outside:  # a backslash outside strings: a body that is no JSON
        outside = _STRING.sub(b"", body)
    steps = array("b", outside.translate(_STEPS, _NOT_BRACKETS))
    depth = deepest = lowest = 0
    for start in range(0, len(steps), _CHUNK):
        sums = list(accumulate(steps[start : start + _CHUNK], initial=depth))
        deepest, lowest, depth = max(deepest, max(sums)), min(lowest, min(sums)), sums[-1]
        if deepest > limit:
            return deepest
    return deepest if lowest == 0 and depth == 0 else None


def _could_nest_deeper(body: bytes, max_depth: int) -> bool:
    """Whether ``body`` holds more ``[`` and ``{`` than ``max_depth`` (strings included).

    A body over :data:`_SMALL_BODY` bytes is taken as one that could: measuring it
    costs about what counting would (a list page has hundreds anyway).
    """
    return len(body) > _SMALL_BODY or body.count(b"[") + body.count(b"{") > max_depth


def _parse_body(body: bytes, text: str, max_depth: int, max_bytes: int) -> tuple[Any, str | None]:
    """The body's JSON value (None when not JSON) and the limit it broke (None when none)."""
    if len(body) > max_bytes:
        return None, f"is larger than {_size(max_bytes)} ({len(body)} bytes)"
    if _could_nest_deeper(body, max_depth):
        # More openings than the limit: it could nest deeper; measure. With no more it
        # cannot, and json.loads then refuses unpaired brackets as _nesting would. Most
        # bodies (a video's detail among them) skip this.
        depth = _nesting(body, max_depth)
        if depth is None:
            return None, None
        if depth > max_depth:
            return None, f"nests deeper than {max_depth} levels"
    return _loads(text), None


def _loads(text: str) -> Any:
    """``json.loads(text)``, or None when it is empty or not JSON.

    A text that starts with its value (what services send) is read by the decoder's
    documented ``raw_decode``, which skips the two whitespace scans ``json.loads``
    wraps around it; what follows the value must then be JSON whitespace only, as
    ``json.loads`` requires. Anything else takes ``json.loads`` itself.
    """
    try:
        if text[:1] in _VALUE_STARTS:
            value, end = _DECODER.raw_decode(text)
            if end == len(text) or not text[end:].strip(_JSON_SPACE):
                return value
            return None
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: belt and braces, see above
        return None


def decode_envelope(
    request: Request,
    response: Response,
    *,
    max_depth: int = MAX_BODY_DEPTH,
    max_bytes: int = MAX_BODY_BYTES,
) -> Envelope:
    """Check a response and return its decoded JSON envelope.

    Args:
        request: The request that was sent (for error context).
        response: What came back.
        max_depth: Deepest nesting of arrays and objects parsed.
        max_bytes: Largest body parsed.

    Returns:
        The whole envelope (``success``, ``message``, ``data``, ...); which part
        holds the result differs per endpoint (spec part 4).

    Raises:
        APIStatusError: A subclass chosen by status and message, for an error
            status, a redirect (never followed), or ``success: false``. Its body
            is the text when the body was too large or deep to parse.
        APIResponseValidationError: A success status whose body is not a JSON
            object, or is larger than ``max_bytes`` or deeper than ``max_depth``.
    """
    text = response.body.decode("utf-8", errors="replace")
    payload, broken = _parse_body(response.body, text, max_depth, max_bytes)
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
            f"response body {broken or 'is not a JSON object'}",
            body=response.body,
            status_code=response.status,
            errors=[f"body: {broken}" if broken else "body: expected a JSON object"],
            method=request.method,
            path=request.path,
        )
    if payload.get("success") is False:
        _raise_status(request, response, payload, text)
    envelope = Envelope(payload)
    envelope.method, envelope.path = request.method, request.path
    envelope.status, envelope.raw = response.status, response.body
    return envelope


@frozen
class Stream:
    """An open response of a transport's ``stream_get`` (a signed file URL, spec 2.3).

    Attributes:
        status: The HTTP status (after redirects).
        headers: The response headers (a case-insensitive mapping).
        chunks: The body, chunk by chunk; aiohttp errors come out as ours.
    """

    status: int
    headers: Mapping[str, str]
    chunks: AsyncIterator[bytes]


def redact_url(url: str) -> str:
    """``url`` without its query (a signature) or fragment, for error messages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
