"""Fixtures of the emulator's conformance tests: raw aiohttp requests, no SDK.

The emulator itself is the shared ``emu`` fixture of ``tests/conftest.py``.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from asyncclient.emulator import Emulator


class Api:
    """A raw client: ``await api.post(path, json)`` returns ``(status, headers, body)``."""

    def __init__(self, session: aiohttp.ClientSession, base: str, key: str | None) -> None:
        self.session, self.base, self.key = session, base, key

    async def call(
        self, method: str, path: str, body: Any = None, key: str | None = None, **kw: Any
    ) -> tuple[int, Any, Any]:
        headers = {}
        api_key = key if key is not None else self.key
        if api_key is not None:
            headers["x-api-key"] = api_key
        async with self.session.request(
            method, self.base + path, json=body, headers=headers, **kw
        ) as resp:
            raw = await resp.read()
            data = await resp.json(content_type=None) if raw else None
            return resp.status, resp.headers, data

    async def get(self, path: str, **kw: Any) -> tuple[int, Any, Any]:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any, Any]:
        return await self.call("POST", path, body, **kw)


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
def key(emu: Emulator) -> str:
    return emu.add_team(plan="premium", credits=10_000)


@pytest.fixture
def api(emu: Emulator, session: aiohttp.ClientSession, key: str) -> Api:
    return Api(session, emu.url, key)


@pytest.fixture
def ugc_body(emu: Emulator) -> Callable[..., dict[str, Any]]:
    def make(**extra: Any) -> dict[str, Any]:
        body = {
            "script": "Hello there, this is a short ad.",
            "avatarId": emu.catalog.avatars[0],
            "voiceId": emu.catalog.voices[0],
            "media": [emu.catalog.media_videos[0]],
        }
        body.update(extra)
        return body

    return make


@pytest.fixture(scope="session")
def server_ssl(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(ctx)
    return ctx


@pytest.fixture(scope="session")
def client_ssl(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


class Receiver:
    """An HTTPS webhook receiver answering the statuses of ``plan``, then 200."""

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.calls: list[dict[str, Any]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.calls.append(await request.json())
        status = self.plan.pop(0) if self.plan else 200
        return web.Response(status=status, text="ok")


@pytest_asyncio.fixture
async def receiver(server_ssl: ssl.SSLContext) -> AsyncIterator[Receiver]:
    rec = Receiver()
    app = web.Application()
    app.router.add_post("/hook", rec.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl)
    await site.start()
    rec.url = f"https://127.0.0.1:{runner.addresses[0][1]}/hook"
    yield rec
    await runner.cleanup()


@pytest_asyncio.fixture
async def hook_emu(client_ssl: ssl.SSLContext) -> AsyncIterator[Emulator]:
    async with Emulator(time_scale=60.0, seed=0, webhook_ssl=client_ssl) as emulator:
        yield emulator
