"""Pacing: a batch on a plan it saturates keeps the plan's pace, polling included.

The client and the emulator share one virtual time (:class:`Lockstep`): the client's
sleeps wait on it, and it moves to the next deadline only once no request is in flight
and the loop has settled, taking the emulator's clock along. Each request takes a
seeded latency each way. What the service saw is read from its request log, by its own
clock: no real second is measured, and a slow machine changes nothing but how long the
test takes.

The bound of a span of requests on a plan: the bucket is full at the first one, so the
``n`` requests of the span (every one the client made: the template read, the
creations, the list and detail reads) cannot end sooner than ``(n - burst) / rate``
after it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import random
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from typing import TypeVar

import aiohttp
import pytest
from attrs import frozen

from asyncclient import AsyncClient, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from asyncclient.emulator._requestlog import RequestRecord

T = TypeVar("T")

CREATE = "/v1/project/create"
_SETTLE = 30  # turns of the loop given to what is runnable before time moves


class Lockstep:
    """A :class:`~asyncclient._clock.Clock` on virtual time that the emulator follows.

    ``sleep`` waits until :meth:`run` moves time past its deadline; :meth:`run` does so
    only while no request of the client is in flight (:meth:`trace` counts them) and
    after the loop has settled, and first sets the emulator's clock to the same time (a
    virtual second is ``time_scale`` of the emulator's, as a real one is: its rate-limit
    headers speak in the client's seconds). Real time is taken out of the emulator's
    clock (as ``test_emulator_scale`` does), so nothing else moves it.

    Args:
        emu: The emulator, before any request.
        latency: Each request's mean latency each way, in virtual seconds: from none to
            twice that, seeded.
        phase: Where in its second the service's clock stands at the start.
        seed: Seeds the latencies.
    """

    def __init__(
        self, emu: Emulator, *, latency: float = 0.0, phase: float = 0.0, seed: int = 7
    ) -> None:
        still = emu.clock._mono()
        emu.clock._mono = lambda: still  # type: ignore[method-assign]
        self.emu = emu
        self.scale = emu.clock.time_scale
        self.latency = latency
        self.phase = phase
        self.time = 0.0
        self.in_flight = 0
        self._spread = random.Random(seed)
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._ids = itertools.count()
        self._origin = emu.clock.now()

    # -- the Clock protocol --------------------------------------------------------------

    def monotonic(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        deadline = self.time + max(0.0, seconds)
        if seconds > 0:  # a real clock moves on, however little was asked
            deadline = max(deadline, math.nextafter(self.time, math.inf))
        heapq.heappush(self._heap, (deadline, next(self._ids), future))
        await future

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.emu.clock.now(), timezone.utc)

    # -- requests ----------------------------------------------------------------------

    def trace(self) -> aiohttp.TraceConfig:
        """The client's session's trace: each request takes its latency on the way to
        the service and again on the way back; in between it is in flight."""
        config = aiohttp.TraceConfig()

        async def started(_: object, request: object, __: object) -> None:
            await self.sleep(self._leg())
            self.in_flight += 1
            request.flying = True  # type: ignore[attr-defined]

        async def landed(_: object, request: object, __: object) -> None:
            if getattr(request, "flying", False):
                request.flying = False  # type: ignore[attr-defined]
                self.in_flight -= 1

        async def answered(session: object, request: object, params: object) -> None:
            await landed(session, request, params)
            await self.sleep(self._leg())

        config.on_request_start.append(started)
        config.on_request_end.append(answered)
        config.on_request_exception.append(landed)
        return config

    def _leg(self) -> float:
        return self._spread.uniform(0.0, 2.0 * self.latency)

    # -- moving time -------------------------------------------------------------------

    async def _settle(self) -> None:
        while True:
            for _ in range(_SETTLE):
                await asyncio.sleep(0)
            if not self.in_flight:
                return
            await asyncio.sleep(0.0005)  # a request on its way over loopback

    def _follow(self) -> None:
        """The emulator's clock to this time."""
        behind = self._origin + self.time * self.scale - self.emu.clock.now()
        if behind > 0:
            self.emu.clock.advance(behind)

    async def run(self, work: Awaitable[T], *, limit: float = 1e5) -> T:
        """Await ``work`` while moving time from deadline to deadline (at most ``limit``
        virtual seconds)."""
        clock = self.emu.clock
        clock.advance(math.ceil(clock.now()) + self.phase - clock.now())
        self._origin = clock.now() - self.time * self.scale
        task = asyncio.ensure_future(work)
        try:
            while not task.done():
                await self._settle()
                if task.done():
                    break
                while self._heap and self._heap[0][2].done():
                    heapq.heappop(self._heap)  # a sleep cancelled
                if not self._heap:
                    await asyncio.sleep(0.001)  # only I/O to wait for
                    continue
                deadline = self._heap[0][0]
                if deadline > limit:
                    raise AssertionError(f"still running after {limit:g} virtual seconds")
                self.time = max(self.time, deadline)
                self._follow()
                while self._heap and self._heap[0][0] <= self.time:
                    future = heapq.heappop(self._heap)[2]
                    if not future.done():
                        future.set_result(None)
            return await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


@asynccontextmanager
async def on_plan(
    plan: Plan, *, scale: float = 1.0, latency: float = 0.0, phase: float = 0.0, seed: int = 7
) -> AsyncIterator[tuple[Lockstep, AsyncClient]]:
    """The emulator at ``scale`` and a client of a new team on ``plan``, on one virtual
    time; the client's plan and poll intervals scaled with it (polling by the default
    policy), each request ``latency`` virtual seconds each way on average."""
    emulator = Emulator(time_scale=scale, seed=3, processing_seconds=90.0, jitter=0.0)
    async with emulator as emu:
        key = emu.add_team(plan=plan.value, credits=10**6)
        time = Lockstep(emu, latency=latency, phase=phase, seed=seed)
        default = PollPolicy()
        polling = PollPolicy(
            min_interval=default.min_interval / scale, max_interval=default.max_interval / scale
        )
        async with aiohttp.ClientSession(trace_configs=[time.trace()]) as session:
            rate = plan.rate_limit.scaled(scale)
            client = AsyncClient(
                key, base_url=emu.url, plan=rate, clock=time, session=session, polling=polling
            )
            async with client:
                yield time, client


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Row {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


@frozen
class Pacing:
    """A batch's submission span in the service's log: from its first request to its
    last creation."""

    seconds: float
    requests: int
    """Every request in the span."""
    bound: float
    """The least time the plan allows them (service seconds)."""
    reads: int
    """Polling's requests in the span."""
    binding: int
    """Requests while the plan binds: from the first one that left the service's bucket
    less than one token."""
    binding_reads: int

    @property
    def ratio(self) -> float:
        """The span over its bound (1: the plan's pace)."""
        return self.seconds / self.bound if self.bound else math.nan

    @property
    def share(self) -> float:
        """Polling's part of the requests while the plan binds."""
        return self.binding_reads / self.binding if self.binding else 0.0


def pacing(requests: Sequence[RequestRecord], plan: Plan) -> Pacing:
    """The submission span of a batch on ``plan`` (the only client of its team)."""
    limit = plan.rate_limit
    api = [r for r in requests if r.path.startswith("/v1/")]
    last = max(r.time for r in api if r.method == "POST" and r.path == CREATE)
    span = [r for r in api if r.time <= last]
    tokens, at, binding = float(limit.burst), span[0].time, len(span)
    for index, record in enumerate(span):  # the service's bucket, replayed
        tokens = min(float(limit.burst), tokens + (record.time - at) * limit.per_second) - 1
        at = record.time
        if tokens < 1.0:
            binding = index
            break
    reads = [r.path.startswith("/v1/video") for r in span]
    return Pacing(
        seconds=last - span[0].time,
        requests=len(span),
        bound=max(0.0, (len(span) - limit.burst) / limit.per_second),
        reads=sum(reads),
        binding=len(span) - binding,
        binding_reads=sum(reads[binding:]),
    )


@pytest.mark.parametrize(
    ("scale", "seed"),
    [
        pytest.param(1.0, 0, id="the-plan-itself"),
        *(pytest.param(60.0, seed, id=f"time-scale-60-seed-{seed}") for seed in range(4)),
    ],
)
async def test_a_batch_on_the_free_plan_keeps_the_plans_pace_with_polling_on(
    scale: float, seed: int
) -> None:
    """100 template rows on the Free plan (10 a minute, burst 20), 1 s spacing, polling
    by the default policy, 0 to 40 ms of latency each way (of the client's time: at
    time scale 60, as in ``benchmarks/batch.py``, they stand for a busy loop's jitter):
    every request in the submission span counted, the span is within 2% of what the
    plan allows, and while the plan binds polling takes at most 5% of its requests.

    Before: 1.002 x the bound at scale 1; at scale 60 1.112, 1.119, 1.017 and 1.012 with
    seeds 0 to 3 (a Reset rounded to a whole second held the bucket a minute of service
    time); polling 10% of the requests while the plan bound."""
    async with on_plan(Plan.FREE, scale=scale, latency=0.02, seed=seed) as (time, client):
        batch = client.templates.generate_many("tpl_welcome", rows(100), spacing=1.0 / scale)
        results = await time.run(batch)
        log = list(time.emu.requests)
        limited = time.emu.counters.rate_limited
    assert [r.status for r in results] == ["completed"] * 100
    assert limited == 0
    paced = pacing(log, Plan.FREE)
    assert paced.reads >= 1, "polling was kept out of the submission span"
    assert paced.ratio <= 1.02, paced
    assert paced.share <= 0.05, paced
