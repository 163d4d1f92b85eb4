"""One worker process: its client, its HTTPS server on the shared port, its report.

Every worker binds the same address with ``SO_REUSEPORT``: the kernel spreads the
connections (the service's notifications among them) over the workers. Each holds one
``AsyncClient`` whose token bucket and notification deduplication live in the fleet's
Redis, so four workers together keep to the plan's rate limit and handle each
notification once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any

import redis.asyncio as aioredis
from aiohttp import web

from asyncclient import AsyncClient

from .app import VideoBackend
from .config import Settings

__all__ = ["run_worker", "serve"]


def _say(line: str) -> None:
    """One whole line on stdout, written at once (the workers share the parent's stdout)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def serve(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, then close everything and print the report line."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ssl_context = settings.server_context()
    from_url: Any = aioredis.from_url  # typed from redis 6 on, not before (arq wants < 6)
    store = from_url(settings.redis_url)
    try:
        # One Redis pool for the client (shared rate limit, deduplication) and the app.
        client = AsyncClient(
            settings.api_key,
            base_url=settings.base_url,
            plan=settings.rate_limit(),
            polling=settings.polling(),
            redis=store,
            webhook_url=settings.webhook_url,
        )
        try:
            backend = VideoBackend(client, store)
            # No access log: notification URLs carry the receiver's secret token.
            runner = web.AppRunner(backend.app(), access_log=None)
            await runner.setup()
            try:
                site = web.TCPSite(
                    runner,
                    settings.host,
                    settings.port,
                    ssl_context=ssl_context,
                    reuse_port=True,
                )
                await site.start()
                host = f"[{settings.host}]" if ":" in settings.host else settings.host
                port = runner.addresses[0][1]
                _say(f"worker {os.getpid()} listening on {settings.scheme}://{host}:{port}")
                await stop.wait()
            finally:
                await runner.cleanup()  # lets the requests in flight finish first
        finally:
            await client.aclose()
    finally:
        await store.aclose()
    _say(json.dumps(backend.report(os.getpid())))


def run_worker(settings: Settings) -> None:
    """The entry point of a worker process (started by the parent with "spawn")."""
    # A Ctrl-C that reaches the process before its loop handles signals ends it quietly.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings))
