"""The sans-I/O layer: request building, header parsing, envelope decoding."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from asyncclient._protocol import (
    Request,
    Response,
    build_request,
    decode_envelope,
    parse_rate_limit,
    parse_retry_after,
)
from asyncclient.errors import (
    APIResponseValidationError,
    APIStatusError,
    InsufficientCreditsError,
    RateLimitError,
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
