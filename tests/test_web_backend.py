"""examples/web_backend end to end: four worker processes, real Redis, real HTTPS.

The emulator runs in this process (its clock 60 times faster); the backend runs as
``python -m examples.web_backend --workers 4`` in a real subprocess, serving HTTPS with a
certificate of a throwaway trustme CA that the emulator's notifications and this test's
requests trust. 200 videos are created through the backend, then awaited through it
(``GET /videos/{id}?wait=60``, on whichever worker the kernel picks); every notification
must be handled once across the fleet, and no request may meet a 429.

When redis-server is missing this test skips on a developer's machine and fails in CI.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import trustme

from asyncclient.emulator import Emulator

pytest.importorskip("redis.asyncio")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="SO_REUSEPORT spreads connections on Linux"
)

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 4
VIDEOS = 200
PROCESSING = 30.0
"""Service seconds a video takes on average: half a real second at the time scale of 60."""
NOTIFIED_KEY = "webbackend:notified"  # examples.web_backend.app.NOTIFIED_KEY


def reserve_port() -> socket.socket:
    """A loopback port held for the backend: bound with SO_REUSEPORT (as the backend binds
    it), never listening, so no other program takes it and no connection reaches it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


async def read_line(stream: asyncio.StreamReader, timeout: float) -> str:
    line = await asyncio.wait_for(stream.readline(), timeout)
    if not line:
        raise AssertionError("the backend closed its output")
    return line.decode().rstrip("\n")


@asynccontextmanager
async def backend(*args: str, env: dict[str, str]) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m examples.web_backend ...`` from the repository's root, in its own
    process group (so that a failed test can end its workers too)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "examples.web_backend",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()


def backend_env(api_key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["ASYNCCLIENT_API_KEY"] = api_key  # as in production: the key stays out of argv
    return env


@pytest.mark.heavy
async def test_a_fleet_of_four_workers_handles_each_notification_once(
    redis_url: str,
    redis: Any,
    ca: trustme.CA,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    cert_file = tmp_path / "backend.pem"  # key and certificate chain in one file
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    with reserve_port() as held:
        port = held.getsockname()[1]
        url = f"https://127.0.0.1:{port}"
        async with Emulator(
            time_scale=60.0, webhook_ssl=trust, processing_seconds=PROCESSING
        ) as emu:
            key = emu.add_team(plan="premium", credits=100_000)
            # No --time-scale: the safety-net polling keeps its real minute before its
            # first round, so the waits below end only by notifications, across workers;
            # the plan's burst (2,000) covers this test's requests at the real rate.
            options = ["--workers", str(WORKERS), "--plan", "premium"]
            options += ["--base-url", emu.url, "--redis-url", redis_url]
            options += ["--host", "127.0.0.1", "--port", str(port), "--public-url", url]
            options += ["--certfile", str(cert_file)]
            async with backend(*options, env=backend_env(key)) as proc:
                assert proc.stdout is not None
                ready = [await read_line(proc.stdout, 30) for _ in range(WORKERS)]
                pids = sorted(int(line.split()[1]) for line in ready)
                assert all(line.endswith(f" listening on {url}") for line in ready), ready
                assert len(set(pids)) == WORKERS

                connector = aiohttp.TCPConnector(ssl=trust, limit=VIDEOS)
                async with aiohttp.ClientSession(url, connector=connector) as http:

                    async def create(i: int) -> dict[str, Any]:
                        body = {
                            "script": f"Video number {i}, made by a fleet.",
                            "avatar_id": emu.catalog.avatars[i % len(emu.catalog.avatars)],
                            "voice_id": emu.catalog.voices[i % len(emu.catalog.voices)],
                        }
                        async with http.post("/videos", json=body) as resp:
                            assert resp.status == 202, await resp.text()
                            created: dict[str, Any] = await resp.json()
                            return created

                    async def await_video(video_id: str) -> dict[str, Any]:
                        async with http.get(f"/videos/{video_id}", params={"wait": "60"}) as resp:
                            assert resp.status == 200, await resp.text()
                            seen: dict[str, Any] = await resp.json()
                            return seen

                    created = await asyncio.gather(*(create(i) for i in range(VIDEOS)))
                    assert {c["status"] for c in created} == {"STARTED"}
                    ids = [c["id"] for c in created]
                    assert len(set(ids)) == VIDEOS
                    seen = await asyncio.gather(*(await_video(v) for v in ids))

                not_completed = [s for s in seen if s["status"] != "COMPLETED"]
                assert not_completed == [], (
                    f"{len(not_completed)} not completed: {not_completed[:3]}"
                )
                assert [s["id"] for s in seen] == ids and all(s["url"] for s in seen)

                # Every notification due is delivered before the counts are read.
                await emu.settle()
                assert [r for r in emu.requests if r.status == 429] == []
                assert emu.counters.rate_limited == 0
                attempts = emu.webhook_attempts
                assert sorted(a.video_id for a in attempts) == sorted(ids)
                assert [a for a in attempts if a.status != 200] == []
                notified = await redis.hgetall(NOTIFIED_KEY)
                assert len(notified) == VIDEOS and set(notified.values()) == {b"1"}
                assert {k.decode().split("/")[1] for k in notified} == set(ids)

                proc.send_signal(signal.SIGTERM)
                rest = (await asyncio.wait_for(proc.stdout.read(), 90)).decode()
                assert await asyncio.wait_for(proc.wait(), 30) == 0

    reports = [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert sorted(r["worker"] for r in reports) == pids, rest
    polling = sum(r["poller_requests"] for r in reports)
    finished = sum(r["jobs_finished_by_notification"] for r in reports)
    line = (
        f"polling requests per completed job: {polling / VIDEOS:.3f} "
        f"(jobs finished by a notification: {finished} of {VIDEOS}; "
        f"duplicates dropped: {sum(r['duplicates'] for r in reports)})"
    )
    with capsys.disabled():
        print("\n" + line)
    assert sum(r["notifications_handled"] for r in reports) == VIDEOS, line
