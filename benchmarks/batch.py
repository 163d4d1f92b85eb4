"""A batch's makespan and pacing against their lower bounds, with the 429 count (issues 5
and 28).

``generate_many`` over N template rows against the emulator on a plan. The batch sends
N + 1 requests before its last submission (the template is read once, then N
creations): they cannot end sooner than the plan refills past its burst
((N + 1 - burst) / rate), nor than the spacing allows ((N - 1) x spacing); the whole
batch not sooner than that plus one video's processing. Time is the emulator's
(``--scale`` times faster than real), and so are the client's plan and poll intervals.
The process is warm (the creation modules imported before the clock starts), as in a
service that has made a creation before.

Pacing counts every request: from the emulator's request log (its own clock), the
submission span runs from the batch's first request to its last creation, and holds the
template read, the creations and the poller's list and detail reads. Its bound is the
plan's refill past its burst for all of them ((requests - burst) / rate), or the
spacing's N - 1 intervals after the first creation, whichever is longer. The plan binds
from the first request that left the service's bucket (replayed from the log) below one
token; polling's share is counted from there to the last creation.
Run from the repository root:

    python benchmarks/batch.py [--rows 100] [--plan free] [--scale 60]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient import AsyncClient, BatchProgress, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from benchmarks._report import Figure

PROCESSING = 90.0  # service seconds a template video takes (no jitter)
CREATE = "/v1/project/create"


def rows(n: int) -> list[dict[str, str]]:
    return [
        {"title": f"Row {i}", "first_name": f"N{i}", "product": "Acme", "logo": ""}
        for i in range(n)
    ]


@dataclass(frozen=True)
class Pace:
    """A batch's submission span in the service's request log (service seconds)."""

    seconds: float  # from the first request to the last creation
    requests: int  # every request in the span
    reads: int  # the poller's, of them
    lead: float  # from the first request (the template read) to the first creation
    bound: float  # the least time the plan and the spacing allow the span
    binding: int  # requests from the first one that left the bucket below one token
    binding_reads: int

    @property
    def ratio(self) -> float:
        """The span over its bound (1: the plan's pace, or the spacing's)."""
        return self.seconds / self.bound if self.bound > 0 else math.nan

    @property
    def share(self) -> float:
        """Polling's part of the requests while the plan binds (NaN: it never did)."""
        return self.binding_reads / self.binding if self.binding else math.nan

    @property
    def span_share(self) -> float:
        """Polling's part of every request in the span."""
        return self.reads / self.requests


def pace(log: Sequence[Any], plan: Plan, n: int, spacing: float) -> Pace:
    """The pacing of a batch of ``n`` rows, the only client of its team, from the
    emulator's request log."""
    limit = plan.rate_limit
    api = [r for r in log if r.path.startswith("/v1/")]
    posts = [r.time for r in api if r.method == "POST" and r.path == CREATE]
    first, last = api[0].time, max(posts)
    span = [r for r in api if r.time <= last]
    reads = [r.path.startswith("/v1/video") for r in span]
    lead = min(posts) - first
    tokens, at, binding = float(limit.burst), first, len(span)
    for index, record in enumerate(span):  # the service's bucket, replayed
        tokens = min(float(limit.burst), tokens + (record.time - at) * limit.per_second) - 1
        at = record.time
        if tokens < 1.0:
            binding = index
            break
    plan_bound = (len(span) - limit.burst) / limit.per_second
    spaced = lead + (n - 1) * spacing if spacing > 0 else 0.0  # none: the CPU sets the pace
    return Pace(
        seconds=last - first,
        requests=len(span),
        reads=sum(reads),
        lead=lead,
        bound=max(plan_bound, spaced),
        binding=len(span) - binding,
        binding_reads=sum(reads[binding:]),
    )


async def run(n: int, plan: Plan, scale: float, spacing: float) -> dict[str, Any]:
    async with Emulator(time_scale=scale, seed=3, processing_seconds=PROCESSING, jitter=0.0) as emu:
        key = emu.add_team(plan=plan.value, credits=10**6)
        rate = plan.rate_limit.scaled(scale)
        default = PollPolicy()
        polling = PollPolicy(
            min_interval=default.min_interval / scale, max_interval=default.max_interval / scale
        )
        async with AsyncClient(key, base_url=emu.url, plan=rate, polling=polling) as client:
            warm(client)
            last_submit = [0.0]

            def seen(p: BatchProgress) -> None:
                if p.submitted == n and not last_submit[0]:
                    last_submit[0] = time.perf_counter()

            started = time.perf_counter()
            batch = client.templates.generate_many(
                "tpl_welcome", rows(n), spacing=spacing / scale, on_progress=seen
            )
            results = await batch
            ended = time.perf_counter()
        ok = sum(r.ok for r in results)
        return {
            "ok": ok,
            "submit": (last_submit[0] - started) * scale,
            "total": (ended - started) * scale,
            "429": emu.counters.rate_limited,
            "requests": client.stats.requests,
            "pace": pace(emu.requests, plan, n, spacing),
        }


def warm(client: AsyncClient) -> None:
    """Load what a first creation loads on first use, before the clock starts."""
    import asyncclient.batch.journal
    import asyncclient.batch.runner
    import asyncclient.batch.template_rows
    import asyncclient.models.requests  # noqa: F401

    assert client.templates is not None and client.projects is not None


def bound(n: int, plan: Plan, spacing: float) -> float:
    """The least time, in service seconds, the plan lets a batch of ``n`` rows take to
    send its last creation: the template read and ``n`` creations."""
    limit = plan.rate_limit
    return max((n - 1) * spacing, max(0.0, (n + 1 - limit.burst) / limit.per_second))


async def figures(quick: bool = False, repeats: int = 3) -> list[Figure]:
    """A batch on the Free plan and one on Premium, 1 s spacing, interleaved: bound / time
    of the submissions (goal >= 0.90 with 0 x 429; polling keeps one turn in 25 while
    the submissions saturate the plan, and this bound leaves its reads out), the pacing
    counting every request (goal <= 1.02 at both plans) and polling's share while the
    plan binds (goal <= 5%). Quick: 60 rows (at 30 the reserve and the start alone are
    2% of the bound)."""
    n = 60 if quick else 100
    ratios, makespans, lags, limited = [], [], [], 0
    free: list[Pace] = []
    premium: list[Pace] = []
    interval = PollPolicy().max_interval
    for _ in range(1 if quick else repeats):
        r = await run(n, Plan.FREE, 60.0, 1.0)
        least = bound(n, Plan.FREE, 1.0)
        ratios.append(least / r["submit"] if r["submit"] else float("nan"))
        makespans.append((least + PROCESSING) / r["total"])
        lags.append((r["total"] - r["submit"] - PROCESSING) / interval)
        limited += int(r["429"])
        free.append(r["pace"])
        p = await run(n, Plan.PREMIUM, 60.0, 1.0)
        limited += int(p["429"])
        premium.append(p["pace"])
    f, p = free[-1], premium[-1]
    return [
        Figure(
            name=f"batch submissions: the plan's bound / their time ({n} rows, Free plan)",
            values=ratios,
            goal=">= 0.90",
            baseline=(
                "the plan's own bound for the batch's requests, (rows + 1 template read - "
                "burst) / rate: polling's reads not counted (see the pacing rows); "
                f"{limited} x 429 in all, both plans"
            ),
        ),
        Figure(
            name="batch makespan: bound + one video's processing / the makespan",
            values=makespans,
            goal="-",
            baseline="the plan's bound for the submissions plus one video's processing",
        ),
        Figure(
            name="batch makespan past its last submission + that video's processing, in poll "
            "intervals",
            values=lags,
            goal="<= 1",
            baseline=f"the poller's longest interval ({interval:g} s, service time)",
        ),
        Figure(
            name=f"pacing, Free: the submission span / the plan's bound, every request counted "
            f"({n} rows)",
            values=[x.ratio for x in free],
            goal="<= 1.02",
            baseline=(
                "(requests from the template read to the last creation - burst) / rate, "
                "by the emulator's request log; last run: "
                f"{f.requests} requests ({f.reads} polling) in {f.seconds:.1f} s, "
                f"bound {f.bound:.0f} s"
            ),
        ),
        Figure(
            name="polling's share of the requests while the plan binds, Free",
            values=[x.share for x in free],
            goal="<= 5%",
            baseline=(
                "list and detail reads / every request, from the first request that left "
                f"the service's bucket below one token to the last creation; last run: "
                f"{f.binding_reads} of {f.binding}"
            ),
        ),
        Figure(
            name=f"pacing, Premium: the submission span / its bound, every request counted "
            f"({n} rows)",
            values=[x.ratio for x in premium],
            goal="<= 1.02",
            baseline=(
                f"the 1 s spacing's {n - 1} intervals after the first creation, plus the "
                f"{p.lead:.1f} s from the template read to it (last run); the plan's "
                "2,000-request burst is never spent"
            ),
        ),
        Figure(
            name="polling's share of the submission span's requests, Premium",
            values=[x.span_share for x in premium],
            goal="-",
            baseline=(
                "the plan never binds, so polling reads at its own pace (a round every 2 s "
                f"while videos move); last run: {p.reads} of {p.requests}"
            ),
        ),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--plan", default="free", choices=[p.value for p in Plan])
    parser.add_argument("--scale", type=float, default=60.0)
    opts = parser.parse_args()
    plan = Plan(opts.plan)
    limit = plan.rate_limit
    print(
        f"{opts.rows} template videos, plan {plan.value} ({limit.per_minute:g}/min, "
        f"burst {limit.burst}), {PROCESSING:g} s of processing each; service seconds"
    )
    print()
    print(
        "| spacing | submissions done | bound | total makespan | bound "
        "| span, every request | its bound | span / bound | polling while the plan binds "
        "| 429s | ok |"
    )
    print(
        "|--------:|-----------------:|------:|---------------:|------:"
        "|-------------------:|----------:|-------------:|----------------------------:"
        "|-----:|---:|"
    )
    for spacing in (1.0, 0.0):
        r = await run(opts.rows, plan, opts.scale, spacing)
        least = bound(opts.rows, plan, spacing)
        q: Pace = r["pace"]
        share = f"{q.binding_reads} of {q.binding} ({q.share:.1%})" if q.binding else "never binds"
        ratio = "-" if math.isnan(q.ratio) else f"{q.ratio:.3f}"
        print(
            f"| {spacing:>5.1f} s | {r['submit']:>14.0f} s | {least:>4.0f} s "
            f"| {r['total']:>12.0f} s | {least + PROCESSING:>4.0f} s "
            f"| {q.seconds:>8.1f} s, {q.requests} requests | {q.bound:>7.1f} s "
            f"| {ratio:>12} | {share:>27} "
            f"| {r['429']:>4.0f} | {r['ok']:>3.0f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
