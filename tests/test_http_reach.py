"""The client's record of the service's answers: how long it has gone unanswered."""

from __future__ import annotations

import pytest

from asyncclient.errors import APIConnectionError, APIError, APITimeoutError
from asyncclient.http.reach import Reach
from asyncclient.retry import RetryPolicy
from tests.test_http_caller import answer, ceiling, rig
from tests.virtual_time import FastForward


def test_silence_counts_from_the_first_miss_after_the_last_answer() -> None:
    clock = FastForward(10.0)
    reach = Reach(clock)
    assert reach.silent_for() == 0.0  # nothing tried yet
    reach.missed()
    clock.time += 30
    reach.missed()
    clock.time += 30
    assert reach.silent_for() == 60.0
    reach.heard()
    assert reach.silent_for() == 0.0
    assert (reach.heard_count, reach.missed_count) == (1, 2)


@pytest.mark.parametrize(
    ("error", "missed"),
    [
        (APIConnectionError("cannot connect", request_sent=False), True),
        (APITimeoutError("timed out"), True),
        (None, False),  # a 400: the service answered (a refusal)
    ],
)
async def test_the_request_path_tells_the_reach_of_every_attempt(
    error: APIError | None, missed: bool
) -> None:
    script = error if error is not None else answer(400)
    caller, _, _, clock = rig(script, retry=RetryPolicy(attempts=1, random=ceiling))
    with pytest.raises(APIError):
        await caller.call("GET", "/v1/video/list")
    clock.time += 5
    assert (caller.reach.silent_for() == 5.0) is missed


async def test_a_gateways_503_is_a_miss_and_a_later_answer_ends_the_silence() -> None:
    caller, _, _, _ = rig(answer(503), answer(502), answer(200, data=[]), retry=random_retry())
    await caller.call("GET", "/v1/video/list")
    assert caller.reach.missed_count == 2 and caller.reach.heard_count == 1
    assert caller.reach.silent_for() == 0.0


def random_retry() -> RetryPolicy:
    return RetryPolicy(attempts=5, random=ceiling)
