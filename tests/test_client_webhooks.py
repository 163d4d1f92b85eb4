"""``client.webhooks``: the token, the URL creations carry, and notifications that finish jobs."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan, VideoFailedError
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.awaiting.tokens import derive_token, notification_tokens
from asyncclient.emulator import Emulator
from asyncclient.webhooks import WebhookEvent

# Polling that never comes within a test: a job can only finish by its notification.
NEVER = PollPolicy(min_interval=3600.0, max_interval=3600.0, jitter=0.0)


def test_the_derived_token_is_the_same_for_a_key_and_tells_nothing_of_it() -> None:
    token = derive_token("key-one")
    assert token == derive_token("key-one")  # every process of a fleet agrees
    assert token != derive_token("key-two")
    assert len(token) == 43 and "key" not in token
    assert token.replace("-", "").replace("_", "").isalnum()  # safe in a URL as it is
    with pytest.raises(ValueError, match="api_key"):
        derive_token("")


def test_accepted_tokens_put_the_one_urls_carry_first() -> None:
    assert notification_tokens("k") == [derive_token("k")]
    assert notification_tokens("k", "explicit") == ["explicit"]
    rotated = notification_tokens("new", previous_api_keys=["old", "new", ""])
    assert rotated == [derive_token("new"), derive_token("old")]
    with pytest.raises(ValueError, match="webhook_token"):
        notification_tokens("k", "")
    with pytest.raises(ValueError, match="webhook_token"):
        notification_tokens("k", "  ")  # a blank token is no secret either


def test_webhook_url_must_be_https_and_carries_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="webhook_url must be an https:// URL"):
        AsyncClient("k", base_url="http://127.0.0.1:1", webhook_url="http://example.com/h")
    client = AsyncClient(
        "k", base_url="http://127.0.0.1:1", webhook_url="https://api.example.com/hooks?x=1"
    )
    assert client.notification_url == f"https://api.example.com/hooks?x=1&token={derive_token('k')}"
    assert AsyncClient("k", base_url="http://127.0.0.1:1").notification_url is None
    blank = AsyncClient(
        "k", base_url="http://127.0.0.1:1", webhook_url="https://h.example/h", webhook_token=" "
    )  # a blank token is as if none was given: the derived one, never " "
    assert blank.notification_url == f"https://h.example/h?token={derive_token('k')}"
    monkeypatch.setenv("ASYNCCLIENT_WEBHOOK_URL", "https://env.example/h")
    monkeypatch.setenv("ASYNCCLIENT_WEBHOOK_TOKEN", "from-env")
    assert AsyncClient("k", base_url="http://127.0.0.1:1").notification_url == (
        "https://env.example/h?token=from-env"
    )


# -- end to end: the emulator notifies the client's own receiver over HTTPS --------------


@asynccontextmanager
async def fleet_of_one(
    ca: trustme.CA, *, polling: PollPolicy | None = NEVER, **client_options: Any
) -> AsyncIterator[tuple[Emulator, AsyncClient, str]]:
    """The emulator (trusting our CA), and a client whose receiver it notifies over HTTPS."""
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}/hooks"
    async with Emulator(time_scale=60.0, webhook_ssl=trust) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        rate = Plan.PREMIUM.rate_limit.scaled(60.0)
        async with AsyncClient(
            key, base_url=emu.url, plan=rate, polling=polling, webhook_url=url, **client_options
        ) as client:
            app = web.Application()
            app.router.add_post("/hooks", client.webhooks.handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            try:
                await web.SockSite(runner, sock, ssl_context=server_ctx).start()
                yield emu, client, url
            finally:
                await runner.cleanup()


async def test_a_notification_finishes_the_awaited_job_without_polling(ca: trustme.CA) -> None:
    seen: list[WebhookEvent] = []
    async with fleet_of_one(ca) as (emu, client, _):
        client.webhooks.on_event(seen.append)
        cat = emu.catalog
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        waiting = asyncio.ensure_future(job.wait(timeout=30))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        emu.advance(1000)  # the video completes: its notification goes out
        await emu.settle()
        detail = await asyncio.wait_for(waiting, 5)
        assert detail.id == job.video_id and detail.status == "COMPLETED" and detail.url
        assert [a.status for a in emu.webhook_attempts] == [200]
        assert client.webhooks.jobs_finished == 1
        assert [e.video_id for e in seen] == [job.video_id]
        poller = client.jobs.poller.stats
        assert poller.list_requests == 0  # a single first round at most, by id
        assert poller.detail_requests <= 1


async def test_a_failure_notification_fails_the_job_with_the_services_message(
    ca: trustme.CA,
) -> None:
    async with fleet_of_one(ca) as (emu, client, _):
        cat = emu.catalog
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        waiting = asyncio.ensure_future(job.wait(timeout=30))
        await asyncio.sleep(0.05)
        assert job.video_id is not None
        emu.fail_video(job.video_id, "the avatar could not be rendered")
        await emu.settle()
        with pytest.raises(VideoFailedError, match="the avatar could not be rendered"):
            await asyncio.wait_for(waiting, 5)


async def test_a_creation_passing_its_own_webhook_keeps_it(ca: trustme.CA) -> None:
    async with fleet_of_one(ca) as (emu, client, url):
        cat = emu.catalog
        own = f"{url}?token=someone-elses"
        await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], webhook=own
        )
        emu.advance(1000)
        await emu.settle()
        # Not this receiver's token: refused (and retried by the service, spec 6).
        assert [a.status for a in emu.webhook_attempts] == [403]
        assert client.webhooks.receiver.refused == 1


async def test_a_rotated_out_keys_token_is_still_accepted(ca: trustme.CA) -> None:
    async with fleet_of_one(ca, previous_api_keys=["the-old-key"]) as (emu, client, url):
        cat = emu.catalog
        old = f"{url}?token={derive_token('the-old-key')}"
        job = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], webhook=old
        )
        waiting = asyncio.ensure_future(job.wait(timeout=30))
        await asyncio.sleep(0.05)
        emu.advance(1000)
        await emu.settle()
        await asyncio.wait_for(waiting, 5)
        assert [a.status for a in emu.webhook_attempts] == [200]


async def test_a_template_batch_carries_the_clients_notification_url(ca: trustme.CA) -> None:
    async with fleet_of_one(ca, polling=PollPolicy(min_interval=0.01)) as (emu, client, _):
        rows = [{"title": f"T{i}", "first_name": "A", "product": "B", "logo": ""} for i in range(3)]
        batch = client.templates.generate_many("tpl_welcome", rows, spacing=0)
        task = asyncio.ensure_future(batch)
        while not task.done():
            await asyncio.sleep(0.02)
            emu.advance(30)
            await emu.settle()
        results = await task
        assert [r.status for r in results] == ["completed"] * 3
        await emu.settle()
        assert [a.status for a in emu.webhook_attempts] == [200] * 3


async def test_the_receiver_answers_401_without_the_token(ca: trustme.CA) -> None:
    async with fleet_of_one(ca) as (_, client, url):
        trust = ssl.create_default_context()
        ca.configure_trust(trust)
        connector = aiohttp.TCPConnector(force_close=True)
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.post(url, json={"status": "COMPLETED"}, ssl=trust) as resp,
        ):
            assert resp.status == 401
        assert client.webhooks.receiver.refused == 1


async def test_with_notifications_polling_is_a_slow_safety_net(ca: trustme.CA) -> None:
    """No polling policy given: jobs end by their notifications, and the poller's first
    round comes only a minute after it starts (PollPolicy.safety_net)."""
    async with fleet_of_one(ca, polling=None) as (emu, client, _):
        assert client.jobs.poller.policy == PollPolicy.safety_net()
        cat = emu.catalog
        jobs = [
            await client.projects.create_talking_avatar(
                script=f"Hi {i}", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
            )
            for i in range(5)
        ]
        waiting = asyncio.ensure_future(asyncio.gather(*(job.wait(timeout=30) for job in jobs)))
        await asyncio.sleep(0.05)
        emu.advance(1000)
        await emu.settle()
        details = await asyncio.wait_for(waiting, 5)
        assert [d.status for d in details] == ["COMPLETED"] * 5
        assert client.jobs.poller.stats.requests == 0  # not one polling request
        assert client.webhooks.jobs_finished == 5


def test_a_client_without_webhook_url_polls_as_before() -> None:
    client = AsyncClient("k", base_url="http://127.0.0.1:1")
    assert client.jobs.poller.policy == PollPolicy()
