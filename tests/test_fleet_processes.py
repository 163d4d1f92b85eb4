"""A fleet of real processes: the lease holder is killed (SIGKILL), another takes over.

A worker process (``tests/fleet_worker.py``) creates videos, takes the fleet's lease
and polls; this test's process joins the fleet with jobs of its own and only listens.
Then the worker is SIGKILLed: its lease lapses, this process takes it over and ends
every job it awaits, and the dead process's registrations are dropped.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncclient import AsyncClient, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from asyncclient.fleet.poller import FleetPoller
from asyncclient.fleet.store import FleetStore

pytest.importorskip("redis.asyncio")

WORKER = Path(__file__).with_name("fleet_worker.py")
ROOT = WORKER.parent.parent
INTERVAL = 0.2


async def _line_until(proc: asyncio.subprocess.Process, prefix: str) -> str:
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        if not line:
            raise AssertionError(f"the worker exited before printing {prefix!r}")
        if line.startswith(prefix):
            return line.strip()


@pytest.mark.emulator(processing_seconds=1200.0, jitter=0.0)  # 20 s at 60x: all pending
async def test_a_killed_lease_holder_is_replaced_and_its_jobs_dropped(
    emu: Emulator, redis_url: str, redis: Any
) -> None:
    key = emu.add_team(plan="premium", credits=100_000)
    cat = emu.catalog
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        *("--base-url", emu.url, "--api-key", key, "--redis", redis_url, "--jobs", "3"),
        *("--interval", str(INTERVAL), "--avatar", cat.avatars[0], "--voice", cat.voices[0]),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        dead = (await _line_until(holder, "process ")).split()[1]
        await _line_until(holder, "leading")
        policy = PollPolicy(min_interval=INTERVAL, max_interval=INTERVAL, jitter=0.0)
        rate = Plan.PREMIUM.rate_limit.scaled(emu.clock.time_scale)
        async with AsyncClient(
            key, base_url=emu.url, plan=rate, polling=policy, redis=redis_url
        ) as client:
            poller = client.jobs.poller
            assert isinstance(poller, FleetPoller)
            store = FleetStore(redis, key)
            jobs = [
                await client.projects.create_talking_avatar(
                    script=f"Hi {i}", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
                )
                for i in range(3)
            ]
            waiting = asyncio.gather(*(job.wait(timeout=60) for job in jobs))
            for _ in range(1000):  # both processes' jobs registered
                if len(await store.registrations()) == 6:
                    break
                await asyncio.sleep(0.01)
            assert not poller.leading and poller.stats.requests == 0

            holder.send_signal(signal.SIGKILL)
            await holder.wait()
            emu.advance(2000)  # every video is finished now
            done = await asyncio.wait_for(waiting, 30)

            assert all(d.status == "COMPLETED" for d in done)
            assert poller.fleet.leads == 1 and poller.stats.requests >= 1
            # The dead process's registrations were dropped from the shared set.
            fields = [f.decode() for f in await redis.hkeys(store.key("jobs"))]
            assert not [f for f in fields if f.startswith(f"{dead}/")]
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
