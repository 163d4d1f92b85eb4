"""examples/fastapi_backend end to end: uvicorn with four worker processes, real Redis.

The emulator runs in this process (its clock 60 times faster). The backend runs as
``python -m examples.fastapi_backend --workers 4`` in a real subprocess, serving plain
HTTP behind a TLS proxy of this test (the address the service notifies, with a trustme
certificate): the proxy delivers each notification twice, at once, each copy on a
connection of its own, so that the kernel hands them to any of the workers. 200 videos
are created concurrently through the backend, then awaited through it
(``GET /videos/{id}?wait=60``); every notification must be handled once across the fleet
(the other copy answered as a duplicate), every wait end by a notification, and no
request meet a 429.

When redis-server is missing this test skips on a developer's machine and fails in CI.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import trustme
from aiohttp import web

from asyncclient.emulator import Emulator
from tests.redis_server import free_port
from tests.test_web_backend import backend_env, read_line

pytest.importorskip("redis.asyncio")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 4
VIDEOS = 200
PROCESSING = 30.0
"""Service seconds a video takes on average: half a real second at the time scale of 60."""
NOTIFIED_KEY = "webbackend:notified"  # examples.fastapi_backend.app.NOTIFIED_KEY


@asynccontextmanager
async def backend(*args: str, env: dict[str, str]) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m examples.fastapi_backend ...`` from the repository's root, in its own
    process group (so that a failed test can end its workers too)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "examples.fastapi_backend",
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


class DoublingProxy:
    """The TLS proxy in front of the backend: each notification it gets, it sends to the
    backend twice at once, each on a new connection; it answers with the worse status."""

    def __init__(self, backend_url: str) -> None:
        self.backend_url = backend_url
        self.answers: list[tuple[int, str | None]] = []
        self._http: aiohttp.ClientSession | None = None

    async def forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        body = await request.read()

        async def once() -> tuple[int, str | None]:
            assert self._http is not None
            url = self.backend_url + request.path_qs
            async with self._http.post(url, data=body, headers=request.headers) as resp:
                answer = await resp.json(content_type=None)
                return resp.status, answer.get("message")

        copies = await asyncio.gather(once(), once())
        self.answers.extend(copies)
        return web.Response(status=max(status for status, _ in copies))

    @asynccontextmanager
    async def serving(self, port: int, ca: trustme.CA) -> AsyncIterator[str]:
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
        app = web.Application()
        app.router.add_post("/{tail:.*}", self.forward)
        runner = web.AppRunner(app, access_log=None)
        # A new connection per copy: the kernel picks the worker that accepts it.
        connector = aiohttp.TCPConnector(force_close=True, limit=0)
        async with aiohttp.ClientSession(connector=connector) as self._http:
            await runner.setup()
            try:
                await web.TCPSite(runner, "127.0.0.1", port, ssl_context=server_ctx).start()
                yield f"https://127.0.0.1:{port}"
            finally:
                await runner.cleanup()


@pytest.mark.heavy
async def test_four_uvicorn_workers_handle_each_notification_once_though_it_came_twice(
    redis_url: str,
    redis: Any,
    ca: trustme.CA,
    capsys: pytest.CaptureFixture[str],
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proxy = DoublingProxy(url)
    async with (
        proxy.serving(free_port(), ca) as public_url,
        Emulator(time_scale=60.0, webhook_ssl=trust, processing_seconds=PROCESSING) as emu,
    ):
        key = emu.add_team(plan="premium", credits=100_000)
        # No --time-scale: the safety-net polling keeps its real minute before its first
        # round, so the waits below end only by notifications, across workers; the plan's
        # burst (2,000) covers this test's requests at the real rate.
        options = ["--workers", str(WORKERS), "--plan", "premium"]
        options += ["--base-url", emu.url, "--redis-url", redis_url]
        options += ["--host", "127.0.0.1", "--port", str(port), "--public-url", public_url]
        async with backend(*options, env=backend_env(key)) as proc:
            assert proc.stdout is not None
            ready = [await read_line(proc.stdout, 60) for _ in range(WORKERS)]
            pids = sorted(int(line.split()[1]) for line in ready)
            assert all(line.endswith(f" listening on {url}") for line in ready), ready
            assert len(set(pids)) == WORKERS

            connector = aiohttp.TCPConnector(limit=VIDEOS)
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
            assert not_completed == [], f"{len(not_completed)} not completed: {not_completed[:3]}"
            assert [s["id"] for s in seen] == ids and all(s["url"] for s in seen)

            await emu.settle()  # every notification due is delivered before the counts
            assert [r for r in emu.requests if r.status == 429] == []
            assert emu.counters.rate_limited == 0
            attempts = emu.webhook_attempts
            assert sorted(a.video_id for a in attempts) == sorted(ids)
            assert [a for a in attempts if a.status != 200] == []
            # Each notification came twice: one copy handled, the other a duplicate.
            assert len(proxy.answers) == 2 * VIDEOS
            assert {status for status, _ in proxy.answers} == {200}
            duplicates = [m for _, m in proxy.answers if m == "duplicate ignored"]
            assert len(duplicates) == VIDEOS
            notified = await redis.hgetall(NOTIFIED_KEY)
            assert len(notified) == VIDEOS and set(notified.values()) == {b"1"}
            assert {k.decode().split("/")[1] for k in notified} == set(ids)

            proc.send_signal(signal.SIGTERM)
            rest = (await asyncio.wait_for(proc.stdout.read(), 60)).decode()
            assert await asyncio.wait_for(proc.wait(), 30) == 0

    reports = [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert sorted(r["worker"] for r in reports) == pids, rest
    handled = [r["notifications_handled"] for r in reports]
    finished = sum(r["jobs_finished_by_notification"] for r in reports)
    line = (
        f"fastapi_backend: notifications handled per worker {handled}; duplicates dropped "
        f"{sum(r['duplicates'] for r in reports)}; jobs finished by a notification "
        f"{finished} of {VIDEOS}; polling requests {sum(r['poller_requests'] for r in reports)}"
    )
    with capsys.disabled():
        print("\n" + line)
    assert sum(handled) == VIDEOS, line
    assert sum(r["duplicates"] for r in reports) == VIDEOS, line
    assert sum(r["poller_requests"] for r in reports) == 0, line  # every wait: a notification
