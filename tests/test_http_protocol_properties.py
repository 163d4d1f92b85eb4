"""Properties of the sans-I/O layer: no header value and no body makes it raise wrongly.

``parse_rate_limit`` is total and bounded (spec 8.1 headers); ``decode_envelope``
returns an Envelope or raises an ``APIError`` for any bytes with any status.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncclient.errors import APIError
from asyncclient.http.headers import MAX_LIMIT, MAX_RESET_AFTER, MAX_RETRY_AFTER
from asyncclient.http.protocol import (
    Envelope,
    Request,
    Response,
    decode_envelope,
    parse_rate_limit,
    parse_retry_after,
)

REQ = Request("GET", "/v1/video/list")
FAST = settings(max_examples=200, deadline=None)

DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Xyz"]
MONTHS = ["Jan", "Feb", "Oct", "Dec", "Foo"]
ZONES = st.one_of(
    st.from_regex(r"\A[+-]\d{4}\Z"),
    st.sampled_from(["GMT", "UT", "UTC", "Z", "EST", "PDT", "-0000", "+2359", "XYZ", ""]),
)


@st.composite
def http_dates(draw: st.DrawFn) -> str:
    """HTTP and RFC 5322 dates, valid and not, with every zone form."""
    day = draw(st.sampled_from(DAYS))
    parts = [
        draw(st.integers(0, 40)),
        draw(st.sampled_from(MONTHS)),
        draw(st.integers(0, 99_999)),
        f"{draw(st.integers(0, 30)):02d}:{draw(st.integers(0, 70)):02d}:"
        f"{draw(st.integers(0, 70)):02d}",
        draw(ZONES),
    ]
    return f"{day}, " + " ".join(str(p) for p in parts).strip()


NUMBERS = st.one_of(
    st.floats().map(str),
    st.floats().map(repr),
    st.integers().map(str),
    st.integers(min_value=-(10**400), max_value=10**400).map(str),
    st.from_regex(r"\A\s*[+-]?\d{0,30}(\.\d*)?([eE][+-]?\d{1,6})?\s*\Z"),
    st.sampled_from(["inf", "-inf", "nan", "NaN", "Infinity", "1e400", "-1e400", "1_000", "٣"]),
)
VALUES = st.one_of(st.text(), NUMBERS, http_dates())
NAMES = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "Date")
HEADERS = st.dictionaries(st.sampled_from(NAMES), VALUES)


def _bounded(value: float | None, low: float, high: float) -> bool:
    return value is None or (math.isfinite(value) and low <= value <= high)


@pytest.mark.heavy
@FAST
@given(HEADERS)
def test_parse_rate_limit_is_total_and_bounded(headers: dict[str, str]) -> None:
    info = parse_rate_limit(headers)
    assert info.limit is None or (type(info.limit) is int and 1 <= info.limit <= MAX_LIMIT)
    assert info.remaining is None or (
        type(info.remaining) is int and 0 <= info.remaining <= MAX_LIMIT
    )
    assert _bounded(info.reset, 0, 253402300799)
    assert _bounded(info.reset_after, 0, MAX_RESET_AFTER)
    assert _bounded(info.retry_after, 0, MAX_RETRY_AFTER)
    assert (info.reset is None) == (info.reset_after is None)


NOWS = st.one_of(
    st.none(),
    st.datetimes(),
    st.datetimes(
        timezones=st.builds(
            timezone, st.timedeltas(timedelta(hours=-23, minutes=-59), timedelta(hours=23))
        )
    ),
)


@FAST
@given(VALUES, NOWS)
def test_parse_retry_after_is_total_and_bounded(value: str, now: datetime | None) -> None:
    assert _bounded(parse_retry_after(value, now=now), 0, MAX_RETRY_AFTER)


JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
BODIES = st.one_of(
    st.binary(),
    st.text().map(str.encode),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.builds(lambda v: json.dumps({"success": v}).encode(), JSON),
    # Fragments of JSON glued together: brackets, quotes and escapes in any order.
    st.lists(st.sampled_from(["[", "]", "{", "}", '"', "\\", '"a":', ",", "1", " "])).map(
        lambda parts: "".join(parts).encode()
    ),
)
STATUSES = st.one_of(
    st.sampled_from([200, 201, 204, 301, 400, 404, 429, 500, 503]), st.integers(0, 999)
)


@FAST
@given(st.binary() | BODIES, STATUSES, st.integers(1, 70), st.integers(0, 4096))
def test_decode_envelope_returns_an_envelope_or_raises_an_api_error(
    body: bytes, status: int, max_depth: int, max_bytes: int
) -> None:
    try:
        result: Any = decode_envelope(
            REQ, Response(status, {}, body), max_depth=max_depth, max_bytes=max_bytes
        )
    except APIError:
        return
    assert isinstance(result, Envelope)
    assert status < 300 and len(body) <= max_bytes


@pytest.mark.heavy
@FAST
@given(JSON, st.integers(1, 10))
def test_depth_is_enforced_exactly_for_valid_json(value: Any, max_depth: int) -> None:
    body = json.dumps({"success": True, "data": value}).encode()
    try:
        decode_envelope(REQ, Response(200, {}, body), max_depth=max_depth)
        refused = ""
    except APIError as exc:
        refused = exc.message
    if 1 + _depth(value) > max_depth:
        assert refused == f"response body nests deeper than {max_depth} levels"
    else:
        assert refused == ""


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0
