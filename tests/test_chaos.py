"""Money-safe under every fault: a small, seeded chaos batch, judged by the service's records.

A template batch of 30 rows meets a fixed schedule of faults on its creation requests
(every kind that processes the request and then spoils or loses the reply, a 429 burst,
garbage rate-limit headers, errors before processing), then runs again with the same
journal and no faults. What counts is the emulator's own records: one project per row,
no row without a project, and no row reported ``rejected`` that the service created.
``benchmarks/chaos.py`` is the large version.
"""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path
from typing import Any

import pytest

from asyncclient import AsyncClient, Plan, RowResult, Timeouts
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator

SCALE = 600.0
N = 30
CREATE = "POST /v1/project/create"
HOLD = 0.6  # real seconds a held reply waits; the client's timeout is shorter
TIMEOUT = 0.3
SETTLE = 600.0  # service seconds before a lost creation is taken as never made

# The i-th creation request meets SCHEDULE[i] (None: no fault).
SCHEDULE: list[dict[str, Any] | None] = [None] * 40
for at, spec in {
    2: {"kind": "drop_after"},
    5: {"kind": "hold_reply", "latency": HOLD},
    8: {"kind": "rate_burst", "retry_after": 1},
    9: {"kind": "rate_burst", "retry_after": 1},
    10: {"kind": "rate_burst", "retry_after": 1},
    12: {"kind": "status_after", "status": 502},
    15: {"kind": "garbage_headers"},
    18: {"kind": "malformed"},
    21: {"kind": "status", "status": 503},
    24: {"kind": "drop_before"},
    27: {"kind": "status_after", "status": 504},
    30: {"kind": "status_after", "status": 500},
}.items():
    SCHEDULE[at] = spec

pytestmark = pytest.mark.emulator(time_scale=SCALE, seed=11, processing_seconds=60, jitter=0.0)


def rows(n: int) -> list[dict[str, str]]:
    return [
        {
            "title": f"Welcome {i}",
            "first_name": f"Name{i}",
            "product": "Acme",
            "logo": "https://cdn.example/logo.png",
        }
        for i in range(n)
    ]


async def run(emu: Emulator, key: str, journal: Path) -> list[RowResult]:
    rate = Plan.PREMIUM.rate_limit.scaled(SCALE)
    async with AsyncClient(
        key,
        base_url=emu.url,
        plan=rate,
        timeouts=Timeouts(connect=TIMEOUT, read=TIMEOUT, total=TIMEOUT),
        polling=PollPolicy(min_interval=0.02, max_interval=0.1),
    ) as client:
        batch = client.templates.generate_many(
            "tpl_welcome",
            rows(N),
            journal=journal,
            spacing=1.0 / SCALE,
            concurrency=1,
            settle_window=SETTLE / SCALE,  # ten service minutes
        )
        return await asyncio.wait_for(batch, 60)


def projects_by_title(emu: Emulator, key: str) -> dict[str, list[str]]:
    team = emu.team_id(key)
    out: dict[str, list[str]] = collections.defaultdict(list)
    for project in emu.store.projects.values():
        if project.team_id == team:
            out[project.videos[0].name].append(project.id)
    return out


@pytest.mark.heavy
async def test_chaos_batch_is_money_safe(emu: Emulator, tmp_path: Path) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    emu.faults.add_schedule(CREATE, SCHEDULE)
    journal = tmp_path / "chaos.journal.jsonl"
    titles = [row["title"] for row in rows(N)]

    first = await run(emu, key, journal)
    injected = dict(emu.counters.faults)
    emu.faults.clear()
    second = await run(emu, key, journal)
    projects = projects_by_title(emu, key)

    # The schedule was met: every new kind was injected at least once.
    for kind in ("hold_reply", "rate_burst", "status_after", "garbage_headers"):
        assert injected.get(kind, 0) >= 1, injected
    duplicates = {t: ids for t, ids in projects.items() if len(ids) > 1}
    lost = [t for t in titles if t not in projects]
    rejected_yet_created = [
        (run_no, r.index)
        for run_no, results in ((1, first), (2, second))
        for r in results
        if r.status == "rejected" and titles[r.index] in projects
    ]
    # May fail until the batch fixes land: a creation whose reply was lost, spoiled
    # (5xx after processing, malformed) or held past the timeout is ambiguous, and a
    # batch that resends it (or its resumed run) makes a second project for the row.
    assert duplicates == {}, f"rows with more than one project: {duplicates}"
    # May fail until the batch fixes land: a row reported "rejected" after an ambiguous
    # creation is not resubmitted by the second run, though it may have no project.
    assert lost == [], f"rows with no project at the service: {lost}"
    # May fail until the batch fixes land: an ambiguous creation reported "rejected"
    # although the service made (and charged) the project.
    assert rejected_yet_created == [], f"reported rejected, yet created: {rejected_yet_created}"
    assert len(second) == N
