"""The token bucket on virtual time: accounting, refill, FIFO, cancellation, header sync, pause."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncclient import Plan, RateLimit, TokenBucket
from asyncclient.ratelimit import plan_for_limit, resolve_rate_limit, tokens_from_headers
from tests.virtual_time import VirtualTime


def bucket(vt: VirtualTime, rate: RateLimit = Plan.FREE.rate_limit) -> TokenBucket:
    return TokenBucket(rate, clock=vt, sleep=vt.sleep)


@pytest.mark.parametrize(
    ("plan", "per_minute", "burst"),
    [("free", 10, 20), ("starter", 60, 100), ("pro", 300, 500), ("premium", 1000, 2000)],
)
def test_plan_presets_match_spec_8_1(plan: str, per_minute: int, burst: int) -> None:
    assert Plan(plan).rate_limit == RateLimit(per_minute=per_minute, burst=burst)
    assert resolve_rate_limit(plan.upper()) == RateLimit(per_minute=per_minute, burst=burst)


def test_custom_limits_and_bad_ones() -> None:
    assert resolve_rate_limit(RateLimit(per_minute=5, burst=1)) == RateLimit(5, 1)
    assert resolve_rate_limit(None) is None
    with pytest.raises(ValueError, match="plan: unknown plan 'gold'"):
        resolve_rate_limit("gold")
    with pytest.raises(ValueError, match="per_minute"):
        RateLimit(per_minute=0, burst=1)
    with pytest.raises(ValueError, match="burst"):
        RateLimit(per_minute=1, burst=0)
    assert plan_for_limit(300) == Plan.PRO.rate_limit
    assert plan_for_limit(42) == RateLimit(per_minute=42, burst=42)


@pytest.mark.parametrize(
    ("per_minute", "burst", "capacity"),
    [
        (60, 1, 1.0),  # a single token is never held back
        (60, 2, 1.95),  # one a second: 50 ms of refill is 0.05 of a token
        (10, 20, 20 - 10 / 60 * 0.05),  # Free: the reserve is a small fraction of a token
        (1000, 2000, 2000 - 1000 / 60 * 0.05),
        (6000, 20, 15.0),  # 100 a second: 50 ms of jitter is 5 tokens
        (600_000, 20, 1.0),  # more than the burst in 50 ms: one token is still allowed
    ],
)
def test_client_keeps_50_ms_of_refill_in_reserve(
    per_minute: float, burst: int, capacity: float
) -> None:
    rate = RateLimit(per_minute=per_minute, burst=burst)
    assert rate.client_capacity == pytest.approx(capacity)
    assert rate.reserve == pytest.approx(burst - capacity)


async def test_burst_is_free_then_one_token_per_refill_interval() -> None:
    vt = VirtualTime()
    b = bucket(vt)  # Free: the 20 tokens less 50 ms of refill (1/120 of a token)
    for _ in range(19):
        assert await b.acquire() == 0.0
    assert vt.sleeps == []
    twentieth = asyncio.create_task(b.acquire())
    await vt.settle()
    assert vt.sleeps == [pytest.approx(0.05)]  # the reserve: 50 ms of refill
    await vt.advance(0.05)
    assert twentieth.done()
    task = asyncio.create_task(b.acquire())
    await vt.settle()
    assert vt.sleeps[-1] == pytest.approx(6.0)
    await vt.advance(5.9)
    assert not task.done()
    await vt.advance(0.1)
    assert task.done() and task.result() == pytest.approx(6.0)
    assert b.tokens == pytest.approx(0.0)


async def test_refill_is_exact_and_capped_at_burst() -> None:
    vt = VirtualTime()
    rate = RateLimit(per_minute=60, burst=6)  # capacity 5.95: 0.05 of a token in reserve
    b = bucket(vt, rate)
    for _ in range(5):
        await b.acquire()
    assert b.tokens == pytest.approx(0.95)
    await vt.advance(2.5)
    assert b.tokens == pytest.approx(3.45)
    await vt.advance(100)
    assert b.tokens == pytest.approx(rate.client_capacity) == pytest.approx(5.95)


async def test_waiters_are_served_first_come_first_served() -> None:
    vt = VirtualTime()
    b = bucket(vt, RateLimit(per_minute=60, burst=1))
    await b.acquire()
    order: list[int] = []

    async def worker(i: int) -> None:
        await b.acquire()
        order.append(i)

    tasks = []
    for i in range(6):
        tasks.append(asyncio.create_task(worker(i)))
        await vt.settle()
    await vt.run_until_idle()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4, 5]
    assert vt.now == pytest.approx(6.0)  # one a second, no time lost, none gained
    assert len(vt.sleeps) == 6  # the head sleeps once per token: no busy waiting


async def test_a_cancelled_waiter_takes_no_token() -> None:
    vt = VirtualTime()
    b = bucket(vt, RateLimit(per_minute=60, burst=1))
    await b.acquire()
    first = asyncio.create_task(b.acquire())
    await vt.settle()
    second = asyncio.create_task(b.acquire())
    await vt.settle()
    first.cancel()
    await vt.settle()
    assert first.cancelled()
    await vt.advance(1.0)
    # The token due at t=1 goes to the second waiter, not to the cancelled one.
    assert second.done()
    assert b.tokens == pytest.approx(0.0)


async def test_service_remaining_lowers_our_tokens_but_never_raises_them() -> None:
    vt = VirtualTime()
    b = bucket(vt)
    r = Plan.FREE.rate_limit.reserve  # 1/120 of a token
    b.observe(3)  # the service holds 3 to 4 tokens: a full bucket drops to 3, less the reserve
    assert b.tokens == pytest.approx(3 - r)
    b.observe(15)
    assert b.tokens == pytest.approx(3 - r)
    b.observe(None)
    assert b.tokens == pytest.approx(3 - r)
    b.observe(0)  # nothing left: the reserve is rebuilt on the service's side first
    task = asyncio.create_task(b.acquire())
    await vt.advance(6.0)
    assert not task.done()
    await vt.advance(0.1)  # 6 s for the token, 0.05 s for the reserve
    assert task.done()


async def test_the_fraction_the_header_cannot_show_is_kept() -> None:
    """Remaining is a whole number: a bucket whose own count lies in the header's band
    keeps its fraction; one above the band drops to the header (spec 8.1)."""
    vt = VirtualTime()
    b = bucket(vt)
    r = Plan.FREE.rate_limit.reserve
    b.observe(3)
    await vt.advance(3.0)  # half a token refilled: 3.5 on the service's side
    await b.acquire()
    b.observe(2)  # "2": the service holds 2 to 3, and so 2.5 agrees
    assert b.tokens == pytest.approx(2.5 - r)
    await b.acquire()
    b.observe(0)  # 1.5 is above the band: something else spent tokens of the key
    assert b.tokens == pytest.approx(0 - r)


async def test_an_answer_a_round_trip_old_costs_no_token() -> None:
    """The service counted 2.99 when the request reached it (header: 2); the answer
    comes 0.1 s later, when the bucket has refilled past 3 less the reserve. That is
    the round trip, not tokens spent elsewhere: kept (before, dropped to 2, six seconds
    of the Free plan lost)."""
    vt = VirtualTime()
    b = bucket(vt)
    r = Plan.FREE.rate_limit.reserve
    for _ in range(17):
        await b.acquire()  # 3 less the reserve left, as the service's 3
    await vt.advance(0.99 * 6)
    await b.acquire()  # 2.99 less the reserve
    await vt.advance(0.1)  # the round trip: 1/60 of a token refilled
    b.observe(2)
    assert b.tokens == pytest.approx(2.99 + 0.1 / 6 - r)


async def test_a_count_a_latency_ahead_of_the_service_is_trimmed_not_dropped() -> None:
    """The service began refilling when the first request reached it, a little after the
    bucket did: the bucket may count a few milliseconds of refill more than the header
    allows. Less than the reserve over the band is trimmed to its top, no more."""
    vt = VirtualTime()
    b = bucket(vt)
    r = Plan.FREE.rate_limit.reserve  # 50 ms of refill
    for _ in range(17):
        await b.acquire()
    await vt.advance(0.03)  # 30 ms of refill on top of 3 less the reserve
    await b.acquire()
    b.observe(1)  # the service holds less than 2: 2.005 less the reserve is 5 ms over
    assert b.tokens == pytest.approx(2 - r)
    await vt.advance(0.6)  # 0.1 token
    await b.acquire()
    b.observe(0)  # 1.1 less the reserve is far over "less than 1": dropped to the header
    assert b.tokens == pytest.approx(0 - r)


async def test_reset_in_whole_seconds_adds_no_wait_to_a_bucket_that_agrees() -> None:
    """With none remaining, Reset (rounded up) and Date (rounded down) may lie two seconds
    apart for a token due in 0.1 s: a bucket whose count agrees keeps it and waits 0.1 s
    (before, it waited the second, a minute of the Free plan at time scale 60)."""
    vt = VirtualTime()
    rate = RateLimit(per_minute=600, burst=20)  # 10 a second; a reserve of half a token
    b = bucket(vt, rate)
    for _ in range(19):
        await b.acquire()
    await vt.advance(0.05)  # one token, less the reserve kept back
    await b.acquire()
    b.observe(0, reset_after=2.0)
    started = vt.now
    task = asyncio.create_task(b.acquire())
    await vt.run_until_idle()
    await task
    assert vt.now - started == pytest.approx(0.1)


async def test_pause_holds_every_request_until_it_ends() -> None:
    vt = VirtualTime()
    b = bucket(vt, Plan.PREMIUM.rate_limit)
    b.pause(10.0)
    tasks = [asyncio.create_task(b.acquire()) for _ in range(3)]
    await vt.advance(9.99)
    assert not any(t.done() for t in tasks)
    # After the pause the bucket is empty and refills at 1000/min.
    await vt.advance(0.01 + 3 * 0.06)
    assert all(t.done() for t in tasks)


async def test_set_rate_keeps_tokens_within_the_new_burst() -> None:
    vt = VirtualTime()
    b = bucket(vt, Plan.PREMIUM.rate_limit)
    b.set_rate(Plan.FREE.rate_limit)
    assert b.tokens == pytest.approx(Plan.FREE.rate_limit.client_capacity)
    assert b.rate == Plan.FREE.rate_limit


async def test_reset_with_none_remaining_sets_when_the_next_token_comes() -> None:
    vt = VirtualTime()
    b = bucket(vt)  # Free: one token every 6 s
    b.observe(0, reset_after=9.0)  # the service: nothing for 9 s (another process used it)
    task = asyncio.create_task(b.acquire())
    # Reset and Date are whole seconds, so 9 s is trusted as 8; then the reserve
    # (50 ms of refill) is rebuilt: 8.05 s.
    await vt.advance(8.0)
    assert not task.done()
    await vt.advance(0.1)
    assert task.done()


async def test_reset_never_makes_the_bucket_more_generous() -> None:
    vt = VirtualTime()
    b = bucket(vt)
    for _ in range(19):
        await b.acquire()
    twentieth = asyncio.create_task(b.acquire())
    await vt.advance(0.05)
    assert twentieth.done() and b.tokens == pytest.approx(0.0)
    b.observe(0, reset_after=1.0)  # sooner than our own refill: we keep our 6 s
    task = asyncio.create_task(b.acquire())
    await vt.advance(5.9)
    assert not task.done()
    await vt.advance(0.1)
    assert task.done()


# -- the lock-free way in: only when nobody is ahead --------------------------------------


async def test_a_token_free_with_nobody_queued_is_taken_without_waiting() -> None:
    vt = VirtualTime()
    b = bucket(vt, Plan.PREMIUM.rate_limit)
    task = asyncio.create_task(b.acquire())
    await asyncio.sleep(0)  # one step of the loop: no lock, no sleep
    assert task.done() and task.result() == 0.0
    assert b.tokens == pytest.approx(Plan.PREMIUM.rate_limit.client_capacity - 1)
    assert vt.sleeps == []


async def test_a_newcomer_never_overtakes_a_queued_waiter() -> None:
    vt = VirtualTime()
    b = bucket(vt, RateLimit(per_minute=60, burst=1))
    await b.acquire()
    first = asyncio.create_task(b.acquire())
    await vt.settle()  # asleep until t=1
    vt.now = 1.0  # the token is due, but the first waiter has not woken yet
    second = asyncio.create_task(b.acquire())
    await asyncio.sleep(0)
    assert not second.done()  # a token is there, yet someone is ahead: it queues
    await vt.advance(0.0)
    assert first.done() and not second.done()
    await vt.advance(1.0)
    assert second.done()


async def test_after_a_cancelled_waiter_the_next_free_token_is_taken_at_once() -> None:
    vt = VirtualTime()
    b = bucket(vt, RateLimit(per_minute=60, burst=1))
    await b.acquire()
    waiter = asyncio.create_task(b.acquire())
    await vt.settle()
    waiter.cancel()
    await vt.settle()
    assert waiter.cancelled()
    vt.now = 5.0
    task = asyncio.create_task(b.acquire())
    await asyncio.sleep(0)
    assert task.done()  # nobody is counted as queued any more


@settings(max_examples=300, deadline=None)
@given(
    per_minute=st.floats(1, 1e6),
    burst=st.integers(1, 5000),
    before=st.integers(-5, 6000),
    elapsed=st.floats(0, 100),
    remaining=st.integers(-5, 10_000_000),
    reset_after=st.none() | st.floats(0, 3600),
)
def test_observe_lowers_the_tokens_exactly_as_the_formula_says(
    per_minute: float,
    burst: int,
    before: int,
    elapsed: float,
    remaining: int,
    reset_after: float | None,
) -> None:
    vt = VirtualTime()
    rate = RateLimit(per_minute=per_minute, burst=burst)
    b = bucket(vt, rate)
    b.observe(before)  # some level to start from
    start = b.tokens
    vt.now = elapsed
    refilled = min(rate.client_capacity, start + elapsed * rate.per_second)
    b.observe(remaining, reset_after)
    cap = tokens_from_headers(remaining, reset_after, rate)
    if remaining <= 0 and reset_after is not None:  # Reset and Date: two seconds of doubt
        most = 1.0 - max(0.0, reset_after - 2.0) * rate.per_second
    else:  # a whole number: less than one more
        most = max(0, remaining) + 1.0
    top = most - rate.reserve + (refilled - start)  # raised by what refilled since
    if cap >= rate.client_capacity:
        expected = refilled  # more than the bucket ever holds
    elif refilled - top >= rate.reserve:
        expected = cap  # above the band by more than latency explains
    elif refilled >= top:
        expected = top  # a latency's worth above: trimmed
    else:
        expected = refilled  # within it: the bucket's own fraction is kept
    assert b.tokens == pytest.approx(expected)
