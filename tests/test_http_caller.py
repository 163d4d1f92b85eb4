"""Caller, the one request path, over a fake Sender and a TokenBucket on virtual time.

No HTTP here: :class:`FakeSender` answers each request with the next scripted
:class:`Response` (or raises the next scripted error) and records what was sent,
and when by the :class:`FastForward` clock, which every wait goes through.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncclient.errors import (
    AmbiguousCreationError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    InternalServerError,
    RateLimitError,
    ValidationError,
)
from asyncclient.http import headers as _headers
from asyncclient.http.caller import Caller
from asyncclient.http.gate import Gate
from asyncclient.http.headers import MAX_LIMIT
from asyncclient.http.protocol import Request, Response, parse_rate_limit
from asyncclient.models import TalkingAvatarRequest
from asyncclient.ratelimit import Plan, RateLimit, TokenBucket, plan_for_limit, spare_tokens_of
from asyncclient.retry import RetryPolicy
from tests.virtual_time import FastForward

CREATE = "/v1/project/create/talking-avatar"


def answer(status: int = 200, data: Any = None, **headers: str) -> Response:
    """A response; ``success`` follows the status, like the service's envelopes."""
    body = {"success": status < 400, "message": "ok" if status < 400 else "failed", "data": data}
    named = {k.replace("_", "-"): v for k, v in headers.items()}
    return Response(status, named, json.dumps(body).encode())


class FakeSender:
    """Answers with the scripted responses or errors, in order; records each request."""

    def __init__(self, clock: FastForward, *script: Response | APIError) -> None:
        self.clock = clock
        self.script = list(script)
        self.requests: list[Request] = []
        self.times: list[float] = []

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        self.times.append(self.clock.monotonic())
        step = self.script.pop(0)
        if isinstance(step, APIError):
            raise step
        return step


def ceiling(low: float, high: float) -> float:
    """Full jitter drawn at its ceiling: the retry delays are known in advance."""
    return high


def rig(
    *script: Response | APIError,
    rate: RateLimit = Plan.PREMIUM.rate_limit,
    retry: RetryPolicy | None = None,
    adopt_limit: bool = False,
) -> tuple[Caller, FakeSender, TokenBucket, FastForward]:
    clock = FastForward(100.0)
    sender = FakeSender(clock, *script)
    bucket = TokenBucket(rate, clock=clock.monotonic, sleep=clock.sleep)
    caller = Caller(
        sender,
        limiter=bucket,
        retry=retry or RetryPolicy(random=ceiling),
        clock=clock,
        adopt_limit=adopt_limit,
    )
    return caller, sender, bucket, clock


def creation() -> TalkingAvatarRequest:
    return TalkingAvatarRequest(script="Hello", avatar_id="a1", voice_id="v1", name="hello-1")


def stats(caller: Caller) -> tuple[int, int, int, int]:
    s = caller.stats
    return (s.requests, s.attempts, s.retries, s.rate_limited)


# -- retries --------------------------------------------------------------------------------


async def test_get_retried_on_500_then_succeeds_sleeping_on_the_clock() -> None:
    caller, sender, _, clock = rig(answer(500), answer(500), answer(200, {"id": "v1"}))
    started = time.perf_counter()
    envelope = await caller.call("GET", "/v1/video/v1", params={"a": 1, "b": None})
    assert time.perf_counter() - started < 0.05
    assert envelope["data"] == {"id": "v1"}
    assert (envelope.method, envelope.path, envelope.status) == ("GET", "/v1/video/v1", 200)
    # The same request three times; None params left out.
    assert [(r.method, r.path, r.params) for r in sender.requests] == 3 * [
        ("GET", "/v1/video/v1", (("a", "1"),))
    ]
    # Full jitter at its ceiling: base 0.5, then doubled; slept on the injected clock.
    assert clock.sleeps == [0.5, 1.0]
    assert sender.times == [100.0, 100.5, 101.5]
    assert stats(caller) == (1, 3, 2, 0)


def test_a_request_that_cannot_be_sent_is_refused_when_called_counting_nothing() -> None:
    # call() builds the request at once and hands back send() itself to await: what
    # cannot be sent raises then, with no coroutine left unawaited and nothing counted.
    caller, sender, _, _ = rig()
    with pytest.raises(ValidationError, match="x: must be a finite number"):
        caller.call("POST", "/v1/x", json={"x": float("nan")})
    assert sender.requests == [] and stats(caller) == (0, 0, 0, 0)


async def test_call_hands_back_the_send_coroutine_itself() -> None:
    caller, _, _, _ = rig(answer(200, {"id": "v1"}))
    pending = caller.call("GET", "/v1/video/v1")
    assert asyncio.iscoroutine(pending) and pending.cr_code is Caller.send.__code__
    assert (await pending)["data"] == {"id": "v1"}


async def test_get_gives_up_after_the_policys_attempts() -> None:
    caller, sender, _, clock = rig(
        answer(503), answer(500), answer(502), retry=RetryPolicy(attempts=3, random=ceiling)
    )
    with pytest.raises(InternalServerError) as info:
        await caller.call("GET", "/v1/video/v1")
    assert info.value.status_code == 502
    assert len(sender.requests) == 3 and clock.sleeps == [0.5, 1.0]
    assert stats(caller) == (1, 3, 2, 0)


async def test_a_get_connection_error_is_retried() -> None:
    reset = APIConnectionError("reset", method="GET", path="/v1/video/v1", request_sent=True)
    caller, sender, _, _ = rig(reset, answer(200, {"id": "v1"}))
    assert (await caller.call("GET", "/v1/video/v1"))["data"] == {"id": "v1"}
    assert len(sender.requests) == 2 and stats(caller) == (1, 2, 1, 0)


async def test_stats_count_requests_attempts_and_retries() -> None:
    caller, _, _, _ = rig(answer(200), answer(503), answer(200), answer(404), answer(200))
    await caller.call("GET", "/v1/a")
    await caller.call("GET", "/v1/b")  # 503, then 200
    with pytest.raises(APIStatusError):
        await caller.call("GET", "/v1/c")  # 404: not retried
    await caller.call("POST", "/v1/d", json={"x": 1})
    assert stats(caller) == (4, 5, 1, 0)
    assert repr(caller.stats) == "<ClientStats requests=4 attempts=5 retries=1 429s=0>"


# -- 429: the limiter pauses -----------------------------------------------------------------


async def test_429_pauses_the_limiter_and_is_counted() -> None:
    # No Retry-After: the limiter pauses 1 s; the retry's own jitter is zero.
    caller, sender, _, clock = rig(
        answer(429), answer(200, {"ok": 1}), retry=RetryPolicy(random=lambda a, b: 0.0)
    )
    assert (await caller.call("GET", "/v1/video/v1"))["data"] == {"ok": 1}
    # The retry waited 0 s; the bucket then held the request until the pause ended.
    assert clock.sleeps == [0.0, 1.0]
    assert sender.times == [100.0, 101.0]
    assert stats(caller) == (1, 2, 1, 1)


async def test_429_retry_after_holds_every_later_request() -> None:
    caller, sender, bucket, clock = rig(
        answer(429, Retry_After="7"), answer(200), retry=RetryPolicy(attempts=1)
    )
    with pytest.raises(RateLimitError) as info:
        await caller.call("GET", "/v1/video/v1")
    assert info.value.retry_after == 7.0
    assert caller.stats.rate_limited == 1
    assert bucket.tokens == 0.0  # emptied by the pause
    await caller.call("GET", "/v1/video/v2")  # another request waits out the pause
    assert sender.times == [100.0, 107.0]
    assert clock.sleeps == [7.0]


async def test_a_creation_post_after_429_is_sent_again() -> None:
    # A 429 says the service did not process it: resending cannot pay twice.
    caller, sender, _, _ = rig(answer(429, Retry_After="2"), answer(200, {"projectId": "p1"}))
    envelope = await caller.call("POST", CREATE, json={"script": "Hello"}, creation=creation())
    assert envelope["data"] == {"projectId": "p1"}
    assert len(sender.requests) == 2 and stats(caller) == (1, 2, 1, 1)


# -- a creation whose outcome is unknown is never resent -------------------------------------


def _sent_reset() -> APIError:
    return APIConnectionError("reset", method="POST", path=CREATE, request_sent=True)


def _sent_timeout() -> APIError:
    return APITimeoutError("timed out", method="POST", path=CREATE, request_sent=True)


@pytest.mark.parametrize(
    ("step", "cause"),
    [
        (answer(502), InternalServerError),
        (answer(504), InternalServerError),
        (_sent_reset(), APIConnectionError),
        (_sent_timeout(), APITimeoutError),
        (Response(200, {}, b"<html>gateway</html>"), APIResponseValidationError),
    ],
    ids=["502", "504", "reset-after-send", "timeout-after-send", "unreadable-200"],
)
async def test_an_ambiguous_creation_raises_and_is_sent_once(
    step: Response | APIError, cause: type[APIError]
) -> None:
    caller, sender, _, clock = rig(step, answer(200, {"projectId": "p1"}))
    request = creation()
    with pytest.raises(AmbiguousCreationError) as info:
        await caller.call("POST", CREATE, json={"script": "Hello"}, creation=request)
    error = info.value
    assert len(sender.requests) == 1 and clock.sleeps == []
    assert type(error.cause) is cause and error.__cause__ is error.cause
    assert error.request is request
    assert (error.method, error.path) == ("POST", CREATE)
    assert (error.format, error.name) == ("talking_avatar", "hello-1")
    assert isinstance(error.sent_at, datetime) and error.sent_at.tzinfo is not None
    assert "reconcile" in str(error)
    assert stats(caller) == (1, 1, 0, 0)


async def test_a_post_that_is_no_creation_raises_its_own_error() -> None:
    caller, sender, _, _ = rig(answer(502), answer(200))
    with pytest.raises(InternalServerError):
        await caller.call("POST", "/v1/other", json={})
    assert len(sender.requests) == 1


async def test_a_creation_answered_500_is_ambiguous_and_not_resent() -> None:
    # A 500 may follow the project's creation: its fate is unknown, never resent.
    caller, sender, _, _ = rig(answer(500), answer(200))
    with pytest.raises(AmbiguousCreationError) as info:
        await caller.call("POST", CREATE, json={}, creation=creation())
    assert isinstance(info.value.cause, InternalServerError)
    assert len(sender.requests) == 1


async def test_a_creation_refused_with_400_is_not_ambiguous_nor_resent() -> None:
    caller, sender, _, _ = rig(answer(400), answer(200))
    with pytest.raises(APIError) as info:
        await caller.call("POST", CREATE, json={}, creation=creation())
    assert not isinstance(info.value, AmbiguousCreationError)
    assert len(sender.requests) == 1


async def test_a_creation_that_never_left_is_sent_again() -> None:
    refused = APIConnectionError("refused", method="POST", path=CREATE, request_sent=False)
    caller, sender, _, _ = rig(refused, answer(200, {"projectId": "p1"}))
    envelope = await caller.call("POST", CREATE, json={}, creation=creation())
    assert envelope["data"] == {"projectId": "p1"}
    assert len(sender.requests) == 2 and stats(caller) == (1, 2, 1, 0)


def _raw(status: int, body: Any) -> Response:
    return Response(status, {}, json.dumps(body).encode())


@pytest.mark.parametrize(
    "step",
    [
        _raw(200, {"success": True, "message": "ok"}),
        _raw(200, {"success": True, "data": None}),
        _raw(201, {"success": True, "data": {"status": "STARTED"}}),
        _raw(200, {"success": True, "data": {"projectId": 12, "videoId": None}}),
        _raw(200, {"success": True, "data": {"projectId": "", "videoId": ""}}),
        _raw(200, {"success": True, "data": {"videoId": "v1", "projectId": ["p1"]}}),
        _raw(200, {"success": True, "data": ["p1"], "projectId": {"id": "p1"}}),
        answer(503),
        answer(501),
    ],
    ids=[
        "no-data", "null-data", "no-ids", "int-id", "empty-ids", "list-id", "object-id",
        "503", "501",
    ],
)  # fmt: skip
@pytest.mark.parametrize("debug", [False, True], ids=["fast", "logged"])
async def test_a_creation_without_ids_or_any_5xx_is_ambiguous_and_sent_once(
    step: Response, debug: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caller, sender, _, clock = rig(step, answer(200, {"projectId": "p1"}))
    caplog.set_level(logging.DEBUG if debug else logging.INFO, "asyncclient")
    with pytest.raises(AmbiguousCreationError) as info:
        await caller.call("POST", CREATE, json={"script": "Hello"}, creation=creation())
    assert len(sender.requests) == 1 and clock.sleeps == []
    cause = info.value.cause
    if step.status < 300:
        assert isinstance(cause, APIResponseValidationError)
        assert cause.status_code == step.status and cause.errors
        assert "names no usable project or video id" in str(cause)
    else:
        assert isinstance(cause, InternalServerError) and cause.status_code == step.status


@pytest.mark.parametrize(
    "data",
    [{"projectId": "p1"}, {"videoId": "v1"}, {"projectId": "p1", "videoId": "v1", "status": "S"}],
)
async def test_a_creation_naming_an_id_is_returned(data: dict[str, str]) -> None:
    caller, sender, _, _ = rig(answer(200, data))
    envelope = await caller.call("POST", CREATE, json={}, creation=creation())
    assert envelope["data"] == data and len(sender.requests) == 1


async def test_a_multi_scene_creation_naming_its_project_at_the_top_is_returned() -> None:
    caller, _, _, _ = rig(_raw(200, {"success": True, "projectId": "p7"}))
    envelope = await caller.call("POST", CREATE, json={}, creation=creation())
    assert envelope["projectId"] == "p7"


async def test_a_post_that_is_no_creation_may_answer_without_ids() -> None:
    caller, _, _, _ = rig(_raw(200, {"success": True, "message": "ok"}))
    assert (await caller.call("POST", "/v1/schedule/create", json={}))["message"] == "ok"


async def test_a_creation_that_never_left_and_is_out_of_attempts_is_not_ambiguous() -> None:
    refused = APIConnectionError("refused", method="POST", path=CREATE, request_sent=False)
    caller, sender, _, _ = rig(refused, retry=RetryPolicy(attempts=1))
    with pytest.raises(APIConnectionError) as info:
        await caller.call("POST", CREATE, json={}, creation=creation())
    assert info.value is refused  # nothing was sent: nothing to reconcile
    assert len(sender.requests) == 1


# -- rate-limit headers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "adopted"),
    [
        ("60", Plan.STARTER.rate_limit),
        ("300", Plan.PRO.rate_limit),
        ("42", RateLimit(per_minute=42, burst=42)),  # no plan: a minute's worth of burst
    ],
)
async def test_x_ratelimit_limit_is_adopted_when_asked(limit: str, adopted: RateLimit) -> None:
    caller, _, bucket, _ = rig(answer(200, X_RateLimit_Limit=limit), adopt_limit=True)
    await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == adopted


async def test_a_higher_limit_never_raises_a_given_plan() -> None:
    caller, _, bucket, _ = rig(answer(200, X_RateLimit_Limit="5000"), adopt_limit=False)
    await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == Plan.PREMIUM.rate_limit


async def test_a_lower_limit_than_the_given_plan_is_adopted_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replies = [answer(200, X_RateLimit_Limit="60"), answer(200, X_RateLimit_Limit="60")]
    caller, _, bucket, _ = rig(*replies, adopt_limit=False)
    with caplog.at_level(logging.WARNING, logger="asyncclient"):
        await caller.call("GET", "/v1/video/v1")
        await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == Plan.STARTER.rate_limit  # the service's 60 a minute
    warnings = [r for r in caplog.records if "fewer than the configured" in r.getMessage()]
    assert len(warnings) == 1


async def test_x_ratelimit_remaining_lowers_the_tokens() -> None:
    caller, _, bucket, _ = rig(answer(200, X_RateLimit_Remaining="3"))
    assert bucket.tokens > 1000
    await caller.call("GET", "/v1/video/v1")
    assert bucket.tokens <= 3


# -- rate-limit headers, read only when they can change something -------------------------


DATE = "Wed, 21 Oct 2015 07:28:00 GMT"
DATE_TS = int(datetime(2015, 10, 21, 7, 28, tzinfo=timezone.utc).timestamp())


class CountingDates:
    """Counts the HTTP dates the header parsers read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = _headers.parsedate_to_datetime

        def counted(value: str) -> datetime:
            self.calls += 1
            return real(value)

        monkeypatch.setattr(_headers, "parsedate_to_datetime", counted)


async def test_date_and_reset_are_read_only_once_none_remain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dates = CountingDates(monkeypatch)
    plenty = {"Date": DATE, "X_RateLimit_Reset": str(DATE_TS + 30)}
    caller, _, _, clock = rig(
        *(answer(200, X_RateLimit_Remaining="1500", **plenty) for _ in range(3)),
        answer(200, X_RateLimit_Remaining="0", **plenty),
        answer(200),
    )
    for _ in range(3):
        await caller.call("GET", "/v1/video/v1")
    assert dates.calls == 0  # 1500 remain: nothing in Date or Reset can change the bucket
    await caller.call("GET", "/v1/video/v1")
    assert dates.calls == 1
    # None remain and Reset is 30 s after Date: the next request waits for it (less the
    # second Reset and Date may be off, plus the reserve Premium keeps: 29 s + 50 ms).
    started = clock.monotonic()
    await caller.call("GET", "/v1/video/v1")
    waited = clock.monotonic() - started
    assert waited == pytest.approx(29.05, abs=0.01)


_REMAINING = st.one_of(
    st.integers(-3, 2500).map(str), st.sampled_from(["", "x", "1e3", " 7 ", "\u00b2", "nan"])
)


@settings(max_examples=150, deadline=None)
@given(
    replies=st.lists(
        st.fixed_dictionaries(
            {"gap": st.floats(0, 5)},
            optional={
                "X-RateLimit-Remaining": _REMAINING,
                "X-RateLimit-Reset": st.integers(DATE_TS - 5, DATE_TS + 90).map(str),
                "X-RateLimit-Limit": st.sampled_from(["1000", "60", "junk", "0"]),
            },
        ),
        min_size=1,
        max_size=8,
    )
)
def test_the_bucket_ends_as_a_full_parse_of_every_response_would_leave_it(
    replies: list[dict[str, Any]],
) -> None:
    clock = FastForward(100.0)
    lazy = TokenBucket(Plan.PREMIUM.rate_limit, clock=clock.monotonic, sleep=clock.sleep)
    eager = TokenBucket(Plan.PREMIUM.rate_limit, clock=clock.monotonic, sleep=clock.sleep)
    caller = Caller(FakeSender(clock), limiter=lazy, clock=clock)
    for reply in replies:
        clock.time += reply.pop("gap")
        headers = {"Date": DATE, **reply}
        caller._follow_headers(headers)
        info = parse_rate_limit(headers)  # what the caller did before: everything, always
        if info.limit is not None and info.limit < eager.rate.per_minute:
            eager.set_rate(plan_for_limit(info.limit))
        eager.observe(info.remaining, info.reset_after)
        assert lazy.rate == eager.rate
        assert lazy.tokens == pytest.approx(eager.tokens)


async def test_a_limit_seen_before_is_followed_again_once_the_bucket_changed() -> None:
    caller, _, bucket, _ = rig(*(answer(200, X_RateLimit_Limit="60") for _ in range(3)))
    await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == Plan.STARTER.rate_limit
    await caller.call("GET", "/v1/video/v1")  # the same text again: nothing to do
    bucket.set_rate(Plan.PREMIUM.rate_limit)  # someone raised it meanwhile
    await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == Plan.STARTER.rate_limit  # the service's word holds again


async def test_garbage_rate_limit_headers_change_nothing_and_log_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    junk = "\x00\udcff" + "9" * 100
    replies = [
        answer(
            200,
            X_RateLimit_Limit=junk,
            X_RateLimit_Remaining=junk,
            X_RateLimit_Reset=junk,
            Date=junk,
            Retry_After=junk,
        )
        for _ in range(2)
    ]
    caller, _, bucket, _ = rig(*replies, adopt_limit=True)
    before = bucket.tokens
    with caplog.at_level(logging.WARNING, logger="asyncclient"):
        await caller.call("GET", "/v1/video/v1")
        await caller.call("GET", "/v1/video/v1")
    assert bucket.rate == Plan.PREMIUM.rate_limit
    assert bucket.tokens == pytest.approx(before - 2)
    assert caplog.records == []


class RecordingLimiter:
    """A limiter of the caller's own: it is handed every field, as before."""

    rate = Plan.PREMIUM.rate_limit

    def __init__(self) -> None:
        self.observed: list[tuple[int | None, float | None]] = []

    async def acquire(self) -> float:
        return 0.0

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        self.observed.append((remaining, reset_after))

    def pause(self, seconds: float) -> None:
        pass


async def test_another_limiter_still_gets_every_header_of_every_response() -> None:
    clock = FastForward(100.0)
    limiter = RecordingLimiter()
    reply = answer(200, X_RateLimit_Remaining="7", X_RateLimit_Reset=str(DATE_TS + 12), Date=DATE)
    caller = Caller(FakeSender(clock, reply, answer(200)), limiter=limiter, clock=clock)
    await caller.call("GET", "/v1/video/v1")
    await caller.call("GET", "/v1/video/v1")
    assert limiter.observed == [(7, 12.0), (None, None)]


class CountingLimiter(RecordingLimiter):
    """A limiter of one's own that tells its spare tokens and takes announced limits."""

    def __init__(self) -> None:
        super().__init__()
        self.adopted: list[RateLimit] = []

    def spare(self) -> float:
        return 0.5

    def adopt(self, rate: RateLimit) -> bool:
        self.adopted.append(rate)
        self.rate = rate
        return True

    @property
    def observes_every_header(self) -> bool:
        return False


async def test_a_limiter_is_asked_through_its_protocol_not_its_type() -> None:
    """Any limiter that can count its tokens and take a limit is treated as the bucket is:
    the announced limit is adopted, only what can change it is read, and the gate counts
    its spare tokens (issue "Walls for the wings": seams by protocol)."""
    clock = FastForward(100.0)
    limiter = CountingLimiter()
    reply = answer(
        200,
        X_RateLimit_Limit="300",
        X_RateLimit_Remaining="7",
        X_RateLimit_Reset=str(DATE_TS + 12),
        Date=DATE,
    )
    caller = Caller(
        FakeSender(clock, reply),
        limiter=limiter,
        clock=clock,
        adopt_limit=True,
        gate=Gate(spare=spare_tokens_of(limiter)),
    )
    await caller.call("GET", "/v1/video/v1")
    assert [r.per_minute for r in limiter.adopted] == [300]
    assert limiter.observed == [(7, None)]  # reset_after is read only once none remain
    caller.gate.expect(1)
    assert caller.gate.held()  # 0.5 spare tokens do not cover one announced creation


async def test_a_limiter_without_the_optional_members_keeps_its_limit() -> None:
    clock = FastForward(100.0)
    limiter = RecordingLimiter()
    reply = answer(200, X_RateLimit_Limit="300", X_RateLimit_Remaining="7")
    caller = Caller(FakeSender(clock, reply), limiter=limiter, clock=clock, adopt_limit=True)
    await caller.call("GET", "/v1/video/v1")
    assert limiter.rate == Plan.PREMIUM.rate_limit and spare_tokens_of(limiter) is None


async def test_each_attempt_is_logged_at_debug_with_its_status(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caller, _, _, _ = rig(answer(500), answer(200, {"id": "v1"}))
    with caplog.at_level(logging.DEBUG, logger="asyncclient"):
        await caller.call("GET", "/v1/video/v1")
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(lines) == 2
    assert lines[0].startswith("GET /v1/video/v1 -> 500 in ")
    assert "(attempt 1, 0.0 ms waiting for the limiter)" in lines[0]
    assert lines[1].startswith("GET /v1/video/v1 -> 200 in ")
    assert "(attempt 2, " in lines[1]


async def test_a_logged_attempt_tells_the_limiter_wait_and_the_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Observability for backends (issue 12): method, path, status, attempt, the time
    spent waiting for a token and the service's request id, as text and as attributes."""
    one_a_second = RateLimit(per_minute=60, burst=1)
    replies = [answer(200, {"id": "v1"}, X_Request_Id="req-7f3a") for _ in range(2)]
    caller, _, _, _ = rig(*replies, rate=one_a_second)
    with caplog.at_level(logging.DEBUG, logger="asyncclient"):
        await caller.call("GET", "/v1/video/v1")
        await caller.call("GET", "/v1/video/v2")  # waits a second for its token
    first, second = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert "request id req-7f3a" in second.getMessage()
    assert second.http_method == "GET" and second.http_path == "/v1/video/v2"  # type: ignore[attr-defined]
    assert second.http_status == 200 and second.attempt == 1  # type: ignore[attr-defined]
    assert second.request_id == "req-7f3a"  # type: ignore[attr-defined]
    assert first.limiter_wait_ms == 0.0  # type: ignore[attr-defined]
    assert second.limiter_wait_ms == pytest.approx(1000.0)  # type: ignore[attr-defined]
    assert "1000.0 ms waiting for the limiter" in second.getMessage()


async def test_a_failed_attempt_is_logged_with_what_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caller, _, _, _ = rig(APIConnectionError("reset", request_sent=False), answer(200, {}))
    with caplog.at_level(logging.DEBUG, logger="asyncclient"):
        await caller.call("GET", "/v1/video/v1")
    first = next(r for r in caplog.records if r.levelno == logging.DEBUG)
    assert first.getMessage().startswith("GET /v1/video/v1 -> APIConnectionError in ")


class NoWallClock(FastForward):
    def now(self) -> datetime:
        raise AssertionError("only a creation needs the time it was sent")


async def test_only_a_creation_reads_the_wall_clock() -> None:
    clock = NoWallClock(100.0)
    bucket = TokenBucket(Plan.PREMIUM.rate_limit, clock=clock.monotonic, sleep=clock.sleep)
    sender = FakeSender(clock, answer(200, {"id": "v1"}))
    caller = Caller(sender, limiter=bucket, clock=clock)
    envelope = await caller.call("GET", "/v1/video/v1")
    assert envelope["data"] == {"id": "v1"}


# -- submissions first -----------------------------------------------------------------------


class HeldLimiter:
    """A limiter whose tokens come only when the test says so."""

    def __init__(self) -> None:
        self.rate = Plan.FREE.rate_limit
        self.granted = asyncio.Event()

    async def acquire(self) -> float:
        await self.granted.wait()
        return 0.0

    def observe(self, remaining: int | None, reset_after: float | None = None) -> None:
        pass

    def pause(self, seconds: float) -> None:
        pass


async def test_a_creation_waiting_for_a_token_holds_the_gate_a_read_does_not() -> None:
    clock = FastForward(100.0)
    limiter = HeldLimiter()
    sender = FakeSender(clock, answer(200, {"id": "v1"}), answer(200, {"projectId": "p1"}))
    caller = Caller(sender, limiter=limiter, clock=clock)
    read = asyncio.ensure_future(caller.call("GET", "/v1/video/v1"))
    await asyncio.sleep(0)
    assert caller.gate.waiting == 0  # a read waiting for its token holds nothing back
    made = asyncio.ensure_future(
        caller.call("POST", CREATE, json={"script": "Hello"}, creation=creation())
    )
    await asyncio.sleep(0)
    assert caller.gate.waiting == 1  # the poller's next read waits for this creation
    limiter.granted.set()
    await asyncio.gather(read, made)
    assert caller.gate.waiting == 0


async def test_a_limit_above_the_bound_is_adopted_as_the_bound_not_ignored() -> None:
    """Issue "A million rows": a client without a plan stayed at the Free plan's pace
    when the service announced more than the SDK's bound (10,000,000 a minute)."""
    caller, _, bucket, _ = rig(
        answer(200, {"id": "v1"}, X_RateLimit_Limit="20000000"),
        rate=Plan.FREE.rate_limit,
        adopt_limit=True,
    )
    await caller.call("GET", "/v1/video/v1")
    assert bucket.rate.per_minute == MAX_LIMIT


# -- the send guard: asked right before each attempt of a creation leaves -------------------


async def test_the_send_guard_stops_a_creation_before_any_byte_leaves() -> None:
    """``SEND_GUARD`` (a batch on a Redis journal: is the lease still ours?) is asked
    after the token is taken, before each attempt of a creation: raising sends nothing;
    a retry after a 429 asks again; a read is never asked."""
    from asyncclient.http.caller import SEND_GUARD

    class Lost(Exception):
        pass

    asked: list[int] = []

    def guard() -> None:
        asked.append(1)
        if len(asked) > 1:
            raise Lost("the lease is another run's")

    caller, sender, _, _ = rig(answer(429, Retry_After="1"), answer(200, {"videos": []}))
    token = SEND_GUARD.set(guard)
    try:
        with pytest.raises(Lost):
            await caller.call("POST", CREATE, json={"script": "Hello"}, creation=creation())
        assert len(asked) == 2 and len(sender.requests) == 1  # the retry never left
        await caller.call("GET", "/v1/video/list")
        assert len(asked) == 2 and len(sender.requests) == 2  # a read is not asked
    finally:
        SEND_GUARD.reset(token)
