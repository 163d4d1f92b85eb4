"""Priority lanes: interactive creations beside a batch that saturates the plan.

A 2,000-row template batch on Premium (time-scaled) runs from an empty bucket (as once
its burst is spent), so the plan's refill sets its pace; 50 interactive creations (a
request handler's talking-avatar videos, unmarked) start at random moments of its
submission span. Each run is made twice, side by side, the order alternating:

- **lanes**: as the SDK does by default (the batch's work bulk, the handler's calls
  interactive: they go ahead of the batch);
- **one queue**: the same calls made in the bulk lane, first come, first served behind
  the batch's waiting requests (what the SDK did before lanes).

Figures, in service seconds:

- an interactive creation's **wait for its token**: what the client's limiter made it
  wait (``acquire``'s own answer), in token intervals (1 / the plan's rate); p95 over
  the 50. Goal: <= 1 (its own latency comes on top: its time from call to answer, less
  the median of the same creation made with nothing else running, is shown beside).
- the **batch's rate**: every request of the batch's work (creations, template read,
  polling) from the moment the bucket was emptied to the batch's last creation, from
  the emulator's request log, over what the plan allows in that span. Goal: >= 0.95.

Run from the repository root (``--quick``: 300 rows, 10 creations):

    python benchmarks/lanes.py [--quick] [--rows 2000] [--clicks 50] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent.parent))

from asyncclient import AsyncClient, Lane, Plan, lane  # noqa: E402
from asyncclient.awaiting.poller import PollPolicy  # noqa: E402
from asyncclient.emulator import Emulator  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402

SCALE = 2.0
"""Service seconds a real second: Premium's 1,000 a minute become 33 requests a second
(a token every 30 ms: the event loop's own lag, a few milliseconds with the emulator
in the same process, stays small beside it). ``--quick`` runs at 5 (12 ms)."""
scale = SCALE
PLAN = Plan.PREMIUM
CLICK = "click"


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Row {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


_WAITED: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("waited", default=None)


def timed(limiter: Any) -> None:
    """Make the limiter tell each click the seconds its ``acquire`` waited."""
    acquire = limiter.acquire

    async def acquire_timed() -> float:
        waited = await acquire()
        seen = _WAITED.get()
        if seen is not None:
            seen.append(waited)
        return float(waited)

    limiter.acquire = acquire_timed


async def click(client: AsyncClient, emu: Emulator, name: str) -> tuple[float, float]:
    """One interactive creation: its time from call to answer and its token waits,
    service seconds."""
    cat = emu.catalog
    waited: list[float] = []
    _WAITED.set(waited)
    started = time.perf_counter()
    await client.projects.create_talking_avatar(
        script="Hello there", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name=name
    )
    return (time.perf_counter() - started) * scale, sum(waited) * scale


async def run(n: int, clicks: int, lanes: bool, seed: int) -> dict[str, Any]:
    """One batch with ``clicks`` interactive creations sprinkled over it."""
    rate = PLAN.rate_limit.scaled(scale)
    span = n / rate.per_second  # real seconds the batch's submissions take at the plan
    default = PollPolicy()
    polling = PollPolicy(
        min_interval=default.min_interval / scale, max_interval=default.max_interval / scale
    )
    async with (
        Emulator(time_scale=scale, seed=seed, processing_seconds=60.0, jitter=0.0) as emu,
        AsyncClient(
            emu.add_team(plan=PLAN.value, credits=10**7),
            base_url=emu.url,
            plan=rate,
            polling=polling,
        ) as client,
    ):
        timed(client.limiter)
        alone = [(await click(client, emu, f"alone-{i}"))[0] for i in range(10)]
        client.limiter.pause(0.0)  # the burst spent: the plan's refill sets the pace
        first = emu.clock.now()
        batch = asyncio.ensure_future(
            client.templates.generate_many("tpl_welcome", rows(n), spacing=0, concurrency=16)
        )
        pick = random.Random(seed)
        moments = sorted(pick.uniform(0.1, 0.9) * span for _ in range(clicks))

        async def later(at: float, i: int) -> tuple[float, float]:
            await asyncio.sleep(at)
            if lanes:
                return await click(client, emu, f"{CLICK}-{i}")
            with lane(Lane.BULK):
                return await click(client, emu, f"{CLICK}-{i}")

        made = await asyncio.gather(*(later(at, i) for i, at in enumerate(moments)))
        results = await batch
    creations = [r for r in emu.requests if r.method == "POST" and r.path == "/v1/project/create"]
    last = max(r.time for r in creations if r.name and r.name.startswith("Row "))
    work = [
        r
        for r in emu.requests
        if first <= r.time <= last and not (r.name or "").startswith((CLICK, "alone"))
    ]
    allowed = (last - first) * PLAN.rate_limit.per_second + 1
    interval = 1.0 / PLAN.rate_limit.per_second
    latency = statistics.median(alone)
    waits = sorted(w / interval for _, w in made)
    extra = sorted(max(0.0, took - latency) / interval for took, _ in made)
    return {
        "p95": _p95(waits),
        "worst": waits[-1],
        "call": _p95(extra),
        "rate": len(work) / allowed,
        "ok": sum(r.ok for r in results),
        "429": emu.counters.rate_limited,
        "latency": latency,
    }


def _p95(values: list[float]) -> float:
    return values[max(0, round(0.95 * len(values)) - 1)]


async def figures(
    quick: bool = False, repeats: int = 2, n: int = 2000, clicks: int = 50
) -> list[Figure]:
    """Lanes against one queue, interleaved: the interactive p95 wait in token intervals
    (goal <= 1) and the batch's share of the plan (goal >= 0.95)."""
    global scale
    if quick:
        n, clicks, repeats, scale = 300, 10, 1, 5.0
    lanes: list[dict[str, Any]] = []
    fifo: list[dict[str, Any]] = []
    for i in range(repeats):
        order = (True, False) if i % 2 == 0 else (False, True)
        for with_lanes in order:
            r = await run(n, clicks, with_lanes, seed=11 + i)
            (lanes if with_lanes else fifo).append(r)
    refused = sum(r["429"] for r in lanes + fifo)
    made = (
        f"{n} rows and {clicks} interactive creations a run, emulator at {scale:g}x, "
        f"{refused} x 429 in all"
    )
    return [
        Figure(
            name=f"an interactive creation's token wait beside a batch, p95, intervals ({n} rows)",
            values=[r["p95"] for r in lanes],
            goal="<= 1.0",
            baseline=(
                "the limiter's wait over 1 / the plan's rate; one queue (the calls in the "
                "bulk lane, as before lanes): p95 "
                f"{statistics.median(r['p95'] for r in fifo):.2f}, worst "
                f"{max(r['worst'] for r in fifo):.2f}; lanes worst "
                f"{max(r['worst'] for r in lanes):.2f}; call to answer less the median "
                "of 10 alone, p95, intervals: lanes "
                f"{statistics.median(r['call'] for r in lanes):.2f}, one queue "
                f"{statistics.median(r['call'] for r in fifo):.2f}; {made}"
            ),
        ),
        Figure(
            name=f"the batch's requests / the plan's allowance over its span ({n} rows)",
            values=[r["rate"] for r in lanes],
            goal=">= 0.95",
            baseline=(
                "every request of the batch's work (creations, polling) from the bucket "
                "emptied to the batch's last creation, in the emulator's log, over the "
                "plan's rate times that span, plus one; one queue: "
                f"{statistics.median(r['rate'] for r in fifo):.3f}; rows completed "
                f"{min(r['ok'] for r in lanes + fifo)} of {n} at least"
            ),
        ),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--clicks", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2)
    opts = parser.parse_args()
    found = await figures(opts.quick, opts.repeat, opts.rows, opts.clicks)
    print(table(found))
    print()
    print(machine())


if __name__ == "__main__":
    asyncio.run(main())
