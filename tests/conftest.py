"""Shared fixtures: a tiny real aiohttp server on loopback for transport-level tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest_asyncio
from aiohttp import web

Serve = Callable[[web.Application], Awaitable[str]]


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start aiohttp apps on free loopback ports; returns each one's base URL."""
    runners: list[web.AppRunner] = []

    async def start(app: web.Application) -> str:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()
