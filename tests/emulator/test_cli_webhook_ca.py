"""``asyncclient emulator --webhook-ca FILE``: notifications to an HTTPS receiver of that CA.

The emulator runs as a real subprocess; the receiver is a real aiohttp server on loopback
serving a certificate of a throwaway trustme CA. Without the flag the same delivery fails
certificate verification: the flag is what makes it work.
"""

from __future__ import annotations

import asyncio
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

from asyncclient.emulator.__main__ import main

TALKING_AVATAR = {"script": "Hello", "avatarId": "avatar_001", "voiceId": "voice_001"}


@asynccontextmanager
async def https_receiver(ca: trustme.CA, received: list[Any]) -> AsyncIterator[str]:
    """Serve ``POST /hook`` over HTTPS with a certificate of ``ca``; yield the hook's URL."""
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)

    async def hook(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx).start()
        yield f"https://127.0.0.1:{runner.addresses[0][1]}/hook"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def emulator_process(*options: str) -> AsyncIterator[tuple[str, str]]:
    """``python -m asyncclient.emulator --port 0 ...``; yield its URL and demo key."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asyncclient.emulator",
        "--port",
        "0",
        *options,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert first.startswith("asyncclient emulator listening on http://127.0.0.1:"), first
        second = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert second.startswith("demo API key: "), second
        yield first.rsplit(" ", 1)[1].strip(), second.split(": ", 1)[1].strip()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def deliver_one(url: str, key: str, webhook: str) -> dict[str, Any]:
    """Create a video notifying ``webhook``, move the clock past its end; its first attempt."""
    async with aiohttp.ClientSession() as session:
        body = {**TALKING_AVATAR, "webhook": webhook}
        async with session.post(
            url + "/v1/project/create/talking-avatar", json=body, headers={"x-api-key": key}
        ) as resp:
            assert resp.status == 200, await resp.text()
        # The control API delivers every notification due before it answers.
        async with session.post(url + "/_emulator/clock/advance", json={"seconds": 3600}) as resp:
            assert resp.status == 200
        async with session.get(url + "/_emulator/webhooks") as resp:
            attempts: list[dict[str, Any]] = (await resp.json())["attempts"]
    assert len(attempts) == 1 and attempts[0]["url"] == webhook
    return attempts[0]


async def test_webhook_ca_makes_the_emulator_trust_the_receivers_certificate(
    ca: trustme.CA, tmp_path: Path
) -> None:
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    received: list[Any] = []
    async with (
        https_receiver(ca, received) as hook,
        emulator_process("--webhook-ca", str(ca_file), "--time-scale", "600") as (url, key),
    ):
        attempt = await deliver_one(url, key, hook)
    assert (attempt["status"], attempt["error"]) == (200, None)
    assert len(received) == 1 and received[0]["status"] == "COMPLETED"
    assert received[0]["data"]["videoId"] == attempt["videoId"]


async def test_without_webhook_ca_the_test_certificate_is_refused(ca: trustme.CA) -> None:
    received: list[Any] = []
    async with (
        https_receiver(ca, received) as hook,
        emulator_process("--time-scale", "600") as (url, key),
    ):
        attempt = await deliver_one(url, key, hook)
    assert attempt["status"] is None and "certificate" in attempt["error"].lower()
    assert received == []


@pytest.mark.parametrize("content", [None, "not a certificate\n"])
def test_an_unreadable_webhook_ca_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    ca_file = tmp_path / "ca.pem"
    if content is not None:
        ca_file.write_text(content)
    with pytest.raises(SystemExit) as info:
        main(["--webhook-ca", str(ca_file)])
    assert info.value.code == 2
    assert "--webhook-ca" in capsys.readouterr().err
