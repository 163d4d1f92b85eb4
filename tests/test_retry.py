"""RetryPolicy decisions, and retry sequences on the wire (aioresponses)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from asyncclient import (
    AmbiguousCreationError,
    APIConnectionError,
    AsyncClient,
    BadRequestError,
    InternalServerError,
    Plan,
    RateLimitError,
    RetryPolicy,
)
from asyncclient.errors import APIStatusError
from asyncclient.retry import is_ambiguous, may_retry
from tests.virtual_time import FastForward
from tests.wire import mocked as aioresponses

BASE = "https://api.example.test"
CREATE = f"{BASE}/v1/project/create/talking-avatar"
VIDEO = re.compile(rf"^{re.escape(BASE)}/v1/video/v1$")
OK_VIDEO = {"success": True, "data": {"id": "v1", "status": "STARTED"}}
OK_CREATE = {"success": True, "data": {"videoId": "v9", "projectId": "p9", "status": "STARTED"}}


def status_error(status: int, method: str = "GET", **kw: object) -> APIStatusError:
    from asyncclient.errors import status_error_class

    cls = status_error_class(status, "boom")
    return cls("boom", status_code=status, method=method, path="/v1/x", **kw)  # type: ignore[arg-type]


def top(low: float, high: float) -> float:
    return high


# --- the policy -----------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_get_is_retried_on_transient_statuses(status: int) -> None:
    assert may_retry(status_error(status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 501])
def test_get_is_not_retried_on_client_errors(status: int) -> None:
    assert not may_retry(status_error(status))


@pytest.mark.parametrize(
    ("status", "retry"),
    [(429, True), (503, False), (501, False), (500, False), (502, False), (504, False)],
)
def test_post_is_retried_only_when_unprocessed(status: int, retry: bool) -> None:
    # Only the service's own limiter (429) says nothing was processed; a 503 may come
    # from a proxy that forwarded the creation.
    assert may_retry(status_error(status, "POST")) is retry


def test_post_connection_errors_depend_on_whether_bytes_left() -> None:
    unsent = APIConnectionError(method="POST", path="/v1/p", request_sent=False)
    sent = APIConnectionError(method="POST", path="/v1/p", request_sent=True)
    assert may_retry(unsent) and not may_retry(sent)
    assert is_ambiguous(sent) and not is_ambiguous(unsent)
    assert is_ambiguous(status_error(502, "POST")) and is_ambiguous(status_error(504, "POST"))
    # Any 5xx may come after the project was made (a proxy's 503 too); a 4xx is a refusal.
    assert all(is_ambiguous(status_error(s, "POST")) for s in (500, 501, 503, 599))
    assert not any(is_ambiguous(status_error(s, "POST")) for s in (400, 402, 403, 404, 429))


def test_full_jitter_bounds_grow_and_are_capped() -> None:
    policy = RetryPolicy(attempts=10, base=0.5, cap=4.0, random=top, deadline=None)
    err = status_error(503)
    assert [policy(n, err) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    low = RetryPolicy(attempts=10, random=lambda lo, hi: lo)
    assert low(3, err) == 0.0


def test_jitter_draws_within_the_bound() -> None:
    import random

    rng = random.Random(7)
    policy = RetryPolicy(attempts=100, base=1.0, cap=8.0, random=rng.uniform, deadline=None)
    draws = [policy(4, status_error(500)) for _ in range(500)]
    assert all(d is not None and 0.0 <= d <= 8.0 for d in draws)
    assert max(d for d in draws if d is not None) > 6.0  # it does spread out


def test_retry_after_is_a_floor_jitter_never_shortens() -> None:
    policy = RetryPolicy(random=lambda lo, hi: lo, deadline=None)
    err = status_error(429, retry_after=7.0)
    assert policy(1, err) == 7.0
    big = RetryPolicy(random=top, base=30, cap=30, deadline=None)
    assert big(1, err) == 30.0


def test_retry_after_beyond_the_longest_wait_raises_at_once() -> None:
    policy = RetryPolicy(max_retry_after=60)
    err = status_error(429, retry_after=600.0)
    with pytest.raises(RateLimitError) as info:
        policy(1, err)
    assert info.value.retry_after == 600.0


def test_attempts_and_deadline_end_the_retries() -> None:
    err = status_error(500)
    assert RetryPolicy(attempts=3, random=top)(2, err) is not None
    assert RetryPolicy(attempts=3, random=top)(3, err) is None
    assert RetryPolicy(deadline=10, random=top, base=4)(1, err, elapsed=5.0) == 4.0
    assert RetryPolicy(deadline=10, random=top, base=4)(1, err, elapsed=7.0) is None


# --- on the wire ----------------------------------------------------------------------


@pytest_asyncio.fixture
async def client() -> AsyncIterator[AsyncClient]:
    # Instant time: sleeping only moves the clock that the bucket and the retries read.
    clock = FastForward()
    async with AsyncClient(
        api_key="k", base_url=BASE, plan=Plan.PREMIUM, retry=RetryPolicy(random=top), clock=clock
    ) as c:
        c.slept = clock.sleeps  # type: ignore[attr-defined]
        yield c


def calls(mock: aioresponses, method: str, url: str) -> int:
    from yarl import URL

    return len(mock.requests.get((method, URL(url)), []))


async def test_get_500_500_200_succeeds_on_the_third_attempt(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.get(VIDEO, status=500, payload={"success": False, "message": "oops"})
        m.get(VIDEO, status=500, payload={"success": False, "message": "oops"})
        m.get(VIDEO, payload=OK_VIDEO)
        video = await client.videos.get("v1")
        assert calls(m, "GET", f"{BASE}/v1/video/v1") == 3
    assert video.id == "v1"
    assert client.slept == [0.5, 1.0]  # type: ignore[attr-defined]


async def test_get_gives_up_after_the_policys_attempts(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.get(VIDEO, status=503, payload={"success": False, "message": "busy"}, repeat=True)
        with pytest.raises(InternalServerError, match="busy"):
            await client.videos.get("v1")
        assert calls(m, "GET", f"{BASE}/v1/video/v1") == 5


async def test_429_waits_at_least_retry_after_and_pauses_the_client(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.get(
            VIDEO,
            status=429,
            headers={"Retry-After": "3", "X-RateLimit-Remaining": "0"},
            payload={"success": False, "message": "rate limit exceeded"},
        )
        m.get(VIDEO, payload=OK_VIDEO)
        await client.videos.get("v1")
    # The retry waited Retry-After; the bucket was paused for the same span, so the
    # retry found the pause over and did not wait again.
    assert client.slept == [3.0]  # type: ignore[attr-defined]
    assert client.limiter._paused_until == 3.0  # type: ignore[attr-defined]


async def test_post_429_is_resent_because_it_was_not_processed(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.post(CREATE, status=429, headers={"Retry-After": "1"}, payload={"success": False})
        m.post(CREATE, payload=OK_CREATE)
        created = await client.projects.create_talking_avatar(
            script="Hi", avatar_id="a", voice_id="v"
        )
        assert calls(m, "POST", CREATE) == 2
    assert created.video_id == "v9"


async def test_post_500_is_ambiguous_not_resent(client: AsyncClient) -> None:
    # The service may have made the project before failing: the user is told so.
    with aioresponses() as m:
        m.post(CREATE, status=500, payload={"success": False, "message": "server error"})
        with pytest.raises(AmbiguousCreationError) as info:
            await client.projects.create_talking_avatar(script="Hi", avatar_id="a", voice_id="v")
        assert calls(m, "POST", CREATE) == 1
    assert isinstance(info.value.cause, InternalServerError)


@pytest.mark.parametrize("status", [501, 503])
async def test_post_503_and_501_are_ambiguous_not_resent(client: AsyncClient, status: int) -> None:
    with aioresponses() as m:
        m.post(CREATE, status=status, payload={"success": False, "message": "unavailable"})
        m.post(CREATE, payload={"success": True, "data": {"videoId": "v1", "projectId": "p1"}})
        with pytest.raises(AmbiguousCreationError) as info:
            await client.projects.create_talking_avatar(script="Hi", avatar_id="a", voice_id="v")
        assert calls(m, "POST", CREATE) == 1
    assert isinstance(info.value.cause, InternalServerError)


@pytest.mark.parametrize("status", [502, 504])
async def test_post_gateway_errors_are_ambiguous(client: AsyncClient, status: int) -> None:
    with aioresponses() as m:
        m.post(CREATE, status=status, body="gateway")
        with pytest.raises(AmbiguousCreationError) as info:
            await client.projects.create_talking_avatar(
                script="Hi", avatar_id="a", voice_id="v", name="n1", metadata={"row": 3}
            )
        assert calls(m, "POST", CREATE) == 1
    err = info.value
    assert err.cause.__class__ is InternalServerError
    assert (err.format, err.name, err.metadata) == ("talking_avatar", "n1", {"row": 3})
    assert err.sent_at.tzinfo is not None


async def test_post_unreadable_success_is_ambiguous(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.post(CREATE, status=200, body="{not json")
        with pytest.raises(AmbiguousCreationError):
            await client.projects.create_talking_avatar(script="Hi", avatar_id="a", voice_id="v")
        assert calls(m, "POST", CREATE) == 1


async def test_post_failure_before_sending_is_resent(client: AsyncClient) -> None:
    # aioresponses raises before our trace hooks see a byte leave: nothing was sent.
    with aioresponses() as m:
        m.post(CREATE, exception=aiohttp.ServerDisconnectedError())
        m.post(CREATE, payload=OK_CREATE)
        created = await client.projects.create_talking_avatar(
            script="Hi", avatar_id="a", voice_id="v"
        )
        assert calls(m, "POST", CREATE) == 2
    assert created.project_id == "p9"


async def test_400_is_never_retried(client: AsyncClient) -> None:
    with aioresponses() as m:
        m.get(VIDEO, status=400, payload={"success": False, "message": "videoId: bad"})
        with pytest.raises(BadRequestError):
            await client.videos.get("v1")
        assert calls(m, "GET", f"{BASE}/v1/video/v1") == 1
