"""``asyncclient.asgi.lifespan`` and ``get_client`` in a FastAPI application under uvicorn.

The emulator notifies the application over HTTPS (a trustme certificate); the client is
made by the lifespan at startup, reached by handlers through ``Depends(get_client)``,
receives its notifications through ``NotificationApp()`` (a route of the app), and is
closed at shutdown.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
import trustme
from fastapi import Depends, FastAPI

from asyncclient import AsyncClient, Plan
from asyncclient.asgi import STATE_KEY, NotificationApp, get_client, lifespan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from asyncclient.webhooks import WebhookEvent
from tests.test_asgi_receiver import uvicorn_serving

NEVER = PollPolicy(min_interval=3600.0, max_interval=3600.0, jitter=0.0)
"""Polling that never comes within a test: a job can only finish by its notification."""


class TrackedClient(AsyncClient):
    """A client that says when it was closed."""

    closed = 0

    async def aclose(self) -> None:
        TrackedClient.closed += 1
        await super().aclose()


def video_app(make_client: Any) -> FastAPI:
    app = FastAPI(lifespan=lifespan(make_client))

    @app.post("/videos")
    async def create(client: AsyncClient = Depends(get_client)) -> dict[str, Any]:
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id="avatar_001", voice_id="voice_001"
        )
        return {"id": job.video_id}

    @app.get("/videos/{video_id}")
    async def wait(video_id: str, client: AsyncClient = Depends(get_client)) -> dict[str, Any]:
        detail = await client.jobs.from_video_id(video_id).wait(timeout=30)
        return {"id": detail.id, "status": str(detail.status), "url": detail.url}

    app.add_route("/hooks/video", NotificationApp(), methods=["POST"])
    return app


async def test_the_lifespan_opens_the_client_handlers_get_it_and_notifications_end_waits(
    ca: trustme.CA, tmp_path: Path
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    cert = ca.issue_cert("127.0.0.1")
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    cert.private_key_pem.write_to_path(str(keyfile))
    seen: list[WebhookEvent] = []
    made: list[AsyncClient] = []
    TrackedClient.closed = 0
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"https://127.0.0.1:{sock.getsockname()[1]}"
    async with Emulator(time_scale=60.0, webhook_ssl=trust) as emu:
        key = emu.add_team(plan="premium", credits=1000)

        def make_client() -> AsyncClient:
            client = TrackedClient(
                key,
                base_url=emu.url,
                plan=Plan.PREMIUM.rate_limit.scaled(60.0),
                polling=NEVER,
                webhook_url=base + "/hooks/video",
            )
            client.webhooks.on_event(seen.append)
            made.append(client)
            return client

        app = video_app(make_client)
        options = {"ssl_certfile": str(certfile), "ssl_keyfile": str(keyfile)}
        async with (
            uvicorn_serving(app, sock, **options),
            aiohttp.ClientSession() as http,
        ):
            (client,) = made
            assert getattr(app.state, STATE_KEY) is client
            async with http.post(base + "/videos", ssl=trust) as resp:
                assert resp.status == 200, await resp.text()
                video_id = (await resp.json())["id"]
            waiting = asyncio.ensure_future(http.get(f"{base}/videos/{video_id}", ssl=trust))
            await asyncio.sleep(0.2)
            emu.advance(1000)
            await emu.settle()
            async with await asyncio.wait_for(waiting, 10) as resp:
                assert resp.status == 200, await resp.text()
                assert (await resp.json())["status"] == "COMPLETED"
            (attempt,) = emu.webhook_attempts
            assert attempt.status == 200
            async with http.post(attempt.url, json=attempt.payload, ssl=trust) as resp:
                assert (resp.status, await resp.json()) == (
                    200,
                    {"success": True, "message": "duplicate ignored"},
                )
            async with http.post(base + "/hooks/video", json=attempt.payload, ssl=trust) as resp:
                assert resp.status == 401  # no token
            assert client.webhooks.jobs_finished == 1
            assert [e.video_id for e in seen] == [video_id]
            assert TrackedClient.closed == 0
    assert TrackedClient.closed == 1  # closed with the application
    assert not hasattr(app.state, STATE_KEY)


async def test_a_handler_of_an_app_started_without_the_lifespan_is_told_why() -> None:
    app = FastAPI()

    @app.get("/")
    async def view(client: AsyncClient = Depends(get_client)) -> str:
        return repr(client)

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        with pytest.raises(RuntimeError, match=r"lifespan=asyncclient\.asgi\.lifespan"):
            await http.get("/")
