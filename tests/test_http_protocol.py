"""The sans-I/O layer: request building, header parsing, envelope decoding."""

from __future__ import annotations

import json
import re
from array import array
from datetime import datetime, timezone
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from asyncclient.errors import (
    APIResponseValidationError,
    APIStatusError,
    InsufficientCreditsError,
    InternalServerError,
    RateLimitError,
    ValidationError,
)
from asyncclient.http.headers import (
    MAX_LIMIT,
    _number,
    parse_limit,
    parse_remaining,
    parse_reset_after,
)
from asyncclient.http.protocol import (
    JSON_HEADERS,
    MAX_BODY_BYTES,
    RateLimitInfo,
    Request,
    Response,
    _loads,
    _nesting,
    _parse_body,
    build_request,
    decode_envelope,
    parse_rate_limit,
    parse_retry_after,
)
from asyncclient.models import VideoListStatus

REQ = Request("GET", "/v1/video/list")


def test_build_request_drops_none_and_sends_enums_and_bools_as_text() -> None:
    req = build_request(
        "get",
        "/v1/video/list",
        params={"status": VideoListStatus.COMPLETED, "type": None, "limit": 5, "x": True},
    )
    assert req.method == "GET"
    assert req.params == (("status", "completed"), ("limit", "5"), ("x", "true"))
    assert req.body is None
    assert req.is_idempotent


def test_build_request_body_is_compact_utf8_json() -> None:
    req = build_request("POST", "/v1/project/create", json_body={"title": "Für Ann"})
    assert req.body == '{"title":"Für Ann"}'.encode()
    assert req.headers["Content-Type"] == "application/json"
    assert not req.is_idempotent


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7", 7.0), (" 2.5 ", 2.5), ("-3", 0.0), ("", None), (None, None), ("soon", None)],
)
def test_retry_after_seconds(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_retry_after_http_date_is_read_against_the_given_now() -> None:
    now = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("Sun, 22 Nov 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Sun, 22 Nov 2026 11:00:00 GMT", now=now) == 0.0


def test_rate_limit_reset_is_measured_from_the_response_date() -> None:
    # The response's Date says 12:00:00; Reset is 40 s later, whatever the local clock.
    date = datetime(2020, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    info = parse_rate_limit(
        {
            "Date": "Wed, 01 Jan 2020 12:00:00 GMT",
            "X-RateLimit-Limit": "60",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(date.timestamp()) + 40),
            "Retry-After": "3",
        }
    )
    assert (info.limit, info.remaining, info.retry_after) == (60, 0, 3.0)
    assert info.reset_after == 40.0


def test_rate_limit_headers_absent_or_garbage() -> None:
    info = parse_rate_limit({"X-RateLimit-Limit": "lots"})
    assert info.limit is None and info.remaining is None and info.reset_after is None


def _resp(status: int, body: object, **headers: str) -> Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Response(status, headers, raw)


def test_success_envelope_is_returned_whole() -> None:
    env = {"success": True, "projectId": "p1", "message": "ok"}
    assert decode_envelope(REQ, _resp(200, env)) == env


def test_429_carries_the_headers() -> None:
    resp = _resp(
        429,
        {"success": False, "message": "rate limit exceeded"},
        **{"Retry-After": "2", "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0"},
    )
    with pytest.raises(RateLimitError) as info:
        decode_envelope(REQ, resp)
    err = info.value
    assert (err.retry_after, err.limit, err.remaining) == (2.0, 10, 0)
    assert err.message == "rate limit exceeded"
    assert (err.method, err.path) == ("GET", "/v1/video/list")


def test_success_false_on_200_is_an_error_and_credits_win_over_status() -> None:
    with pytest.raises(APIStatusError) as info:
        decode_envelope(REQ, _resp(200, {"success": False, "message": "nope"}))
    assert info.value.status_code == 200
    with pytest.raises(InsufficientCreditsError):
        decode_envelope(REQ, _resp(400, {"success": False, "message": "Not enough credits"}))


def test_non_json_error_body_keeps_the_text() -> None:
    with pytest.raises(APIStatusError) as info:
        decode_envelope(REQ, _resp(502, b"<html>Bad gateway</html>"))
    assert info.value.status_code == 502
    assert info.value.message == "<html>Bad gateway</html>"


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b""])
def test_success_status_with_a_body_that_is_no_object(body: bytes) -> None:
    with pytest.raises(APIResponseValidationError) as info:
        decode_envelope(REQ, _resp(200, body))
    assert info.value.body == body
    assert info.value.errors == ["body: expected a JSON object"]


# -- hostile headers: every parser is total and bounded ------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("inf", None),
        ("nan", None),
        ("-5", None),
        ("0", None),
        ("1e400", 10_000_000),  # above the bound: "at least the bound", never ignored
        ("99999999999999999999", 10_000_000),
        ("10000001", 10_000_000),
        ("10000000", 10_000_000),
        ("60.0", 60),
        ("١٢", None),
        ("\uff11\uff12", None),
        ("1_000", None),
        ("\udcff", None),
        ("6" * 10_000, None),
    ],
)
def test_rate_limit_limit_is_a_positive_int_capped_at_the_bound_else_ignored(
    value: str, expected: int | None
) -> None:
    assert parse_rate_limit({"X-RateLimit-Limit": value}).limit == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("nan", None),
        ("inf", None),
        ("-3", 0),
        ("1e400", 10_000_000),
        ("99999999999999999999", 10_000_000),
        ("7", 7),
        ("ten", None),
    ],
)
def test_rate_limit_remaining_is_clamped(value: str, expected: int | None) -> None:
    assert parse_rate_limit({"X-RateLimit-Remaining": value}).remaining == expected


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "-1", "1e300", "253402300800"])
def test_rate_limit_reset_out_of_range_is_ignored(value: str) -> None:
    info = parse_rate_limit({"X-RateLimit-Reset": value, "Date": "Wed, 01 Jan 2020 12:00:00 GMT"})
    assert info.reset is None and info.reset_after is None


def test_rate_limit_reset_far_ahead_is_capped_at_an_hour() -> None:
    date = datetime(2020, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    info = parse_rate_limit(
        {
            "Date": "Wed, 01 Jan 2020 12:00:00 GMT",
            "X-RateLimit-Reset": str(int(date.timestamp()) + 365 * 86400),
        }
    )
    assert info.reset == date.timestamp() + 365 * 86400
    assert info.reset_after == 3600.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("31536000", 86400.0),
        ("1e400", 86400.0),
        ("inf", None),
        ("nan", None),
        ("-inf", None),
        ("٣", None),
        ("\x00", None),
        ("Wed, 21 Oct 2015 07:28:00 +9999", None),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 86400.0),
    ],
)
def test_retry_after_is_finite_and_at_most_a_day(value: str, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # A numeric offset: 07:28:30 at +01:00 is 06:28:30 UTC.
        ("Wed, 21 Oct 2015 07:28:30 +0100", 30.0),
        # -0000 (RFC 5322 3.3: UTC, local zone unknown) and unknown zone names
        # parse to naive datetimes: read them as UTC.
        ("Wed, 21 Oct 2015 06:28:30 -0000", 30.0),
        ("Wed, 21 Oct 2015 06:28:30 XYZ", 30.0),
    ],
)
def test_retry_after_http_date_with_any_zone_form(value: str, expected: float) -> None:
    now = datetime(2015, 10, 21, 6, 28, 0, tzinfo=timezone.utc)
    assert parse_retry_after(value, now=now) == expected


def test_retry_after_against_a_naive_now_reads_it_as_utc() -> None:
    now = datetime(2015, 10, 21, 6, 28, 0)
    assert parse_retry_after("Wed, 21 Oct 2015 06:28:30 GMT", now=now) == 30.0


@pytest.mark.parametrize(
    "headers",
    [
        {"Date": "Wed, 21 Oct 2015 06:28:00 -0000", "Retry-After": "Wed, 21 Oct 2015 06:28:30 GMT"},
        {"Date": "Wed, 21 Oct 2015 06:28:00 GMT", "Retry-After": "Wed, 21 Oct 2015 06:28:30 -0000"},
        {"Date": "Wed, 21 Oct 2015 07:28:00 +0100", "Retry-After": "Wed, 21 Oct 2015 06:28:30 UT"},
    ],
)
def test_date_and_retry_after_in_mixed_zone_forms(headers: dict[str, str]) -> None:
    assert parse_rate_limit(headers).retry_after == 30.0


def test_date_with_offset_or_minus_zero_measures_reset_from_utc() -> None:
    reset = str(int(datetime(2015, 10, 21, 6, 28, 40, tzinfo=timezone.utc).timestamp()))
    for date in ("Wed, 21 Oct 2015 07:28:00 +0100", "Wed, 21 Oct 2015 06:28:00 -0000"):
        info = parse_rate_limit({"Date": date, "X-RateLimit-Reset": reset})
        assert info.reset_after == 40.0, date


@pytest.mark.parametrize(
    "junk", ["\x00\xff", "Wed, 21 Oct 2015 25:61:00 GMT", "日本語", "x" * 100_000, "\udcff"]
)
def test_junk_in_every_header_is_ignored(junk: str) -> None:
    names = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After")
    info = parse_rate_limit({**dict.fromkeys(names, junk), "Date": junk})
    assert info == RateLimitInfo()


# -- hostile bodies: bounded size and nesting, checked before parsing -----------------------


def _nested(depth: int) -> bytes:
    return b'{"success":true,"data":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


@pytest.mark.parametrize(
    "body",
    [
        b'{"success":true,"data":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b"[" * 100_000,  # never closed: json.loads would recurse all the same
    ],
)
def test_a_body_nesting_a_hundred_thousand_levels_is_refused_before_parsing(body: bytes) -> None:
    with pytest.raises(APIResponseValidationError) as info:
        decode_envelope(REQ, _resp(200, body))
    assert info.value.message == "response body nests deeper than 64 levels"
    assert info.value.errors == ["body: nests deeper than 64 levels"]
    assert info.value.body == body


def test_nesting_up_to_the_limit_is_parsed() -> None:
    assert decode_envelope(REQ, _resp(200, _nested(64)))["success"] is True
    with pytest.raises(APIResponseValidationError, match="deeper than 64 levels"):
        decode_envelope(REQ, _resp(200, _nested(65)))
    with pytest.raises(APIResponseValidationError, match="deeper than 3 levels"):
        decode_envelope(REQ, _resp(200, _nested(4)), max_depth=3)


@pytest.mark.parametrize("pad", [0, 10_000])  # a large body is measured without counting
def test_small_and_large_bodies_meet_the_same_depth_limit(pad: int) -> None:
    def body(depth: int) -> bytes:
        inner = b"[" * (depth - 1) + b"]" * (depth - 1)
        return b'{"success":true,"pad":"' + b"[" * pad + b'","data":' + inner + b"}"

    assert decode_envelope(REQ, _resp(200, body(64)))["pad"] == "[" * pad
    with pytest.raises(APIResponseValidationError, match="deeper than 64 levels"):
        decode_envelope(REQ, _resp(200, body(65)))
    with pytest.raises(APIResponseValidationError, match="not a JSON object"):
        decode_envelope(REQ, _resp(200, body(3)[:-1]))  # one left open


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = '[[[{{ \\" ]]] \\\\' * 50
    env = decode_envelope(REQ, _resp(200, {"success": True, "data": {"name": text}}))
    assert env["data"]["name"] == text


@pytest.mark.parametrize("body", [b"[" * 60 + b"]]", b'{"a": "' + b'\\"' * 50_000, b"]" * 70])
def test_unclosed_brackets_or_strings_are_no_json_object(body: bytes) -> None:
    with pytest.raises(APIResponseValidationError) as info:
        decode_envelope(REQ, _resp(200, body))
    assert info.value.errors == ["body: expected a JSON object"]


def test_a_body_over_the_size_cap_is_refused_before_parsing() -> None:
    body = json.dumps({"success": True, "data": "x" * 2000}).encode()
    with pytest.raises(APIResponseValidationError) as info:
        decode_envelope(REQ, _resp(200, body), max_bytes=1024)
    assert info.value.message == f"response body is larger than 1024 bytes ({len(body)} bytes)"
    assert info.value.errors == [f"body: is larger than 1024 bytes ({len(body)} bytes)"]
    assert decode_envelope(REQ, _resp(200, body), max_bytes=len(body))["success"] is True


def test_an_error_status_with_an_over_deep_body_keeps_its_class() -> None:
    # The status decides the class (and so retries); the body is kept as text.
    body = b"[" * 100_000
    with pytest.raises(InternalServerError) as info:
        decode_envelope(REQ, _resp(503, body))
    assert info.value.status_code == 503
    assert info.value.body == body.decode()


def test_a_429_with_hostile_headers_still_raises_a_rate_limit_error() -> None:
    resp = _resp(
        429,
        {"success": False, "message": "rate limit exceeded"},
        **{
            "Retry-After": "Wed, 21 Oct 2015 07:28:00 -0000",
            "Date": "Wed, 21 Oct 2015 07:28:00 GMT",
            "X-RateLimit-Limit": "inf",
            "X-RateLimit-Remaining": "nan",
        },
    )
    with pytest.raises(RateLimitError) as info:
        decode_envelope(REQ, resp)
    assert (info.value.retry_after, info.value.limit, info.value.remaining) == (0.0, None, None)


@pytest.mark.parametrize(
    ("params", "body", "problem"),
    [
        (None, {"script": "a\ud800"}, "script: must be valid Unicode text"),
        (None, {"scenes": [{"script": "ok"}, {"script": "\udfff"}]}, "scenes[1].script: must"),
        (None, {"metadata": {"k\ud800": 1}}, "metadata: key 'k\\ud800' must be valid Unicode"),
        (None, {"metadata": {"score": float("nan")}}, "metadata.score: must be a finite number"),
        (None, {"metadata": {"x": [float("inf")]}}, "metadata.x[0]: must be a finite number"),
        (None, {"metadata": {"when": object()}}, "metadata.when: must be JSON data, not object"),
        ({"search": "x\ud800"}, None, "search: must be valid Unicode text"),
    ],
)
def test_what_cannot_be_sent_is_a_validation_error_naming_the_field(
    params: dict[str, Any] | None, body: Any, problem: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        build_request("POST", "/v1/x", params=params, json_body=body)
    assert any(e.startswith(problem) for e in caught.value.errors), caught.value.errors


def test_a_body_nested_past_any_limit_is_a_validation_error() -> None:
    deep: list[Any] = []
    inner = deep
    for _ in range(5000):  # past the interpreter's recursion limit
        inner.append([])
        inner = inner[0]
    with pytest.raises(ValidationError, match=r"metadata\.k\[0\].*nested deeper than 64 levels"):
        build_request("POST", "/v1/x", json_body={"metadata": {"k": deep}})


# -- the per-call path: shared headers, the nesting shortcut, one header at a time ----------


def test_a_plain_request_shares_one_read_only_set_of_headers() -> None:
    plain = build_request("get", "/v1/video/v1")
    assert (plain.method, plain.path, plain.params, plain.body) == ("GET", "/v1/video/v1", (), None)
    assert plain.headers is JSON_HEADERS
    assert dict(plain.headers) == {"Content-Type": "application/json", "Accept": "application/json"}
    with pytest.raises(TypeError):
        plain.headers["x-api-key"] = "leaked"  # type: ignore[index]
    # Parameters that all drop out, and a body, take the checked way to the same headers.
    assert build_request("GET", "/v1/video/list", params={"status": None}).params == ()
    assert build_request("POST", "/v1/x", json_body={"a": 1}).headers is JSON_HEADERS


_STRING = re.compile(rb'"[^"\\]*(?:\\.?[^"\\]*)*"?', re.DOTALL)
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _nesting_as_before(body: bytes, limit: int) -> int | None:
    """The nesting measure as first written: the JSON string pattern on the whole body.

    Past ``limit`` it says so (the depth) whether or not the brackets pair up.
    """
    steps = array("b", _STRING.sub(b"", body).translate(_STEPS, _NOT_BRACKETS))
    sums = list(accumulate(steps, initial=0))
    if max(sums) > limit:
        return max(sums)
    return max(sums) if min(sums) == 0 and sums[-1] == 0 else None


def _parse_body_as_before(body: bytes, max_depth: int) -> tuple[Any, str | None]:
    """What _parse_body did before its shortcuts: always measure the nesting first."""
    depth = _nesting_as_before(body, max_depth)
    if depth is not None and depth > max_depth:
        return None, "deep"
    text = body.decode("utf-8", errors="replace")
    if depth is None or not text.strip():
        return None, None
    try:
        return json.loads(text), None
    except (ValueError, RecursionError):
        return None, None


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab[]{}"\\\u00e9 ', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    """JSON texts, some cut short, padded with brackets or broken UTF-8; or any bytes."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=40))
    body = json.dumps(draw(_JSON_VALUES), ensure_ascii=draw(st.booleans())).encode()
    cut = draw(st.integers(0, len(body)))
    tail = draw(st.sampled_from([b"", b"]", b"}", b"[", b"{", b"\xff", b'"', b"\\"]))
    return (body[:cut] if draw(st.booleans()) else body) + tail


@settings(max_examples=500, deadline=None)
@given(body=_bodies(), max_depth=st.integers(0, 6))
def test_the_nesting_shortcut_decides_every_body_as_the_full_measure_did(
    body: bytes, max_depth: int
) -> None:
    text = body.decode("utf-8", errors="replace")
    payload, broken = _parse_body(body, text, max_depth, MAX_BODY_BYTES)
    expected, too_deep = _parse_body_as_before(body, max_depth)
    assert repr(payload) == repr(expected)  # repr: NaN compares unequal to itself
    assert (broken is None) == (too_deep is None)


# Bodies made of what decides nesting: quotes, backslashes (alone and in runs), brackets.
_SKELETAL = st.lists(
    st.sampled_from(["[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "a", "\\u00e9", ":", ","]),
    max_size=40,
).map(lambda parts: "".join(parts).encode())


@pytest.mark.heavy
@settings(max_examples=2000, deadline=None)
@given(body=st.one_of(_SKELETAL, _bodies()), limit=st.integers(0, 6))
@example(body=rb'["\\", "[[[[[[["]', limit=1)  # an escaped backslash, then a closing quote
@example(body=rb'["\"[[[[[[[", 1]', limit=1)  # an escaped quote inside a string
@example(body=rb'[1, \"[[[[[["]', limit=1)  # a backslash outside strings: no JSON
def test_the_nesting_measure_pairs_quotes_and_escapes_as_the_json_string_pattern_does(
    body: bytes, limit: int
) -> None:
    # The skeleton's shortcuts (escaped backslashes and quotes first, then quote pairs)
    # give the depth the pattern gave on the whole body; past the limit, a depth past it.
    depth, before = _nesting(body, limit), _nesting_as_before(body, limit)
    if before is not None and before > limit:
        assert depth is not None and depth > limit
    else:
        assert depth == before


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        '{"a": 1}',
        ' {"a": 1}',
        '{"a": 1} \r\n\t',
        '{"a": 1} x',
        '{"a": 1}\x0c',
        "[1, 2]",
        '"s"',
        "7",
        "-1.5e3",
        "true",
        "null",
        "NaN",
        "-Infinity",
        "{",
        "\ufeff{}",
        "{}{}",
    ],
)
def test_loads_reads_what_json_loads_reads(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    assert repr(_loads(text)) == repr(expected)


_NUMBERS = st.one_of(
    st.integers(-5, 10**20).map(str),
    st.sampled_from(["60", "0060", " 7 ", "2.5", "1e3", "-1", "+4", "inf", "nan", "1_000"]),
    st.sampled_from(["\uff10", "\u00b2", "\u0661\u0662", "9" * 64, "9" * 65, "", " ", "1 2"]),
    st.text(max_size=8),
)
_DATES = st.sampled_from(
    ["Wed, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:28:00 +0100", "junk", "", "-0000"]
)


@settings(max_examples=300, deadline=None)
@given(
    headers=st.fixed_dictionaries(
        {},
        optional={
            "X-RateLimit-Limit": _NUMBERS,
            "X-RateLimit-Remaining": _NUMBERS,
            "X-RateLimit-Reset": st.one_of(_NUMBERS, st.integers(1445400000, 1445413000).map(str)),
            "Date": _DATES,
        },
    )
)
def test_each_header_alone_reads_as_in_the_full_parse(headers: dict[str, str]) -> None:
    full = parse_rate_limit(headers)
    assert parse_limit(headers.get("X-RateLimit-Limit")) == full.limit
    assert parse_remaining(headers.get("X-RateLimit-Remaining")) == full.remaining
    after = parse_reset_after(headers)
    if full.reset_after is None:
        assert after is None
    else:  # without a readable Date both measure from now, a moment apart
        assert after == pytest.approx(full.reset_after, abs=1.0)


@settings(max_examples=500, deadline=None)
@given(
    value=st.one_of(_NUMBERS, st.integers(0, 10**70).map(str), st.text("0123456789", max_size=66))
)
def test_remaining_reads_as_the_general_number_rule_clamped(value: str) -> None:
    number = _number(value)
    expected = None if number is None else int(min(MAX_LIMIT, max(0, number)))
    assert parse_remaining(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("41", 41),
        ("0041", 41),
        ("9" * 64, 10_000_000),  # 64 digits: a number, clamped
        ("9" * 65, None),  # too long to be one
        ("\uff14\uff11", None),  # full-width digits: str.isdigit, but not ASCII
        ("\u00b2", None),  # superscript two
        (" 41 ", 41),  # the regular way still strips
    ],
)
def test_plain_digits_take_the_short_way_to_the_same_number(
    value: str, expected: int | None
) -> None:
    assert parse_remaining(value) == expected
    assert parse_rate_limit({"X-RateLimit-Remaining": value}).remaining == expected
