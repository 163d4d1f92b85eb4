"""Notifications: both forms parsed, and the receiver end to end with the emulator over TLS."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from datetime import timezone

import aiohttp
import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan
from asyncclient.emulator import Emulator
from asyncclient.poller import PollPolicy
from asyncclient.webhooks import WebhookEvent, WebhookPayloadError, WebhookReceiver, parse_event

FORM_A = {
    "status": "COMPLETED",
    "data": {
        "videoId": "vid_1",
        "status": "COMPLETED",
        "url": "https://cdn.example/v1.mp4?sig=x",
        "shareUrl": "https://share.example/v1",
        "metadata": {"projectId": "proj_1", "order": 7},
    },
    "message": "Video completed",
}
FORM_B = {
    "event": "project.completed",
    "projectId": "proj_2",
    "status": "completed",
    "video": {
        "id": "vid_2",
        "url": "https://cdn.example/v2.mp4",
        "duration": 12.5,
        "thumbnail": "https://cdn.example/v2.jpg",
        "aspectRatio": "ratio_9_16",
        "resolution": "1080x1920",
    },
    "createdAt": "2026-11-22T10:00:00Z",
    "completedAt": "2026-11-22T10:02:00.5Z",
}


def test_form_a_completed() -> None:
    event = parse_event(FORM_A)
    assert (event.form, event.status, event.succeeded) == ("A", "COMPLETED", True)
    assert (event.video_id, event.project_id) == ("vid_1", "proj_1")
    assert event.share_url == "https://share.example/v1"
    assert event.metadata == {"projectId": "proj_1", "order": 7}


def test_form_b_completed_and_failed() -> None:
    event = parse_event(json_bytes(FORM_B))
    assert (event.form, event.event, event.status) == ("B", "project.completed", "COMPLETED")
    assert (event.video_id, event.project_id, event.duration) == ("vid_2", "proj_2", 12.5)
    assert event.completed_at is not None and event.completed_at.tzinfo == timezone.utc
    failed = parse_event(
        {"event": "project.failed", "projectId": "p3", "status": "failed", "message": "no voice"}
    )
    assert (failed.succeeded, failed.message, failed.video_id) == (False, "no voice", None)


def test_a_failure_in_form_a_carries_its_reason() -> None:
    event = parse_event(
        {"status": "FAILED", "data": {"videoId": "v", "status": "FAILED", "error": "bad media"}}
    )
    assert (event.status, event.message) == ("FAILED", "bad media")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "body: not JSON"),
        (b"[1]", "body: expected a JSON object"),
        (b"{}", "neither form A"),
        (b'{"data": 3}', "data: expected an object"),
        (b'{"event": "x", "status": "weird"}', "status: expected COMPLETED or FAILED"),
        (b'{"event": "x", "status": "completed", "createdAt": "soon"}', "createdAt"),
    ],
)
def test_malformed_bodies_name_the_field(body: bytes, message: str) -> None:
    with pytest.raises(WebhookPayloadError, match=message):
        parse_event(body)


def test_duplicates_share_a_key() -> None:
    assert parse_event(FORM_A).key == parse_event(dict(FORM_A)).key
    assert parse_event(FORM_A).key != parse_event(FORM_B).key


def json_bytes(data: object) -> bytes:
    import json

    return json.dumps(data).encode()


# --- end to end -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest_asyncio.fixture
async def receiver_url(ca: trustme.CA) -> AsyncIterator[tuple[str, list[WebhookEvent]]]:
    """Our WebhookReceiver served over HTTPS on loopback; the first call to it fails."""
    received: list[WebhookEvent] = []
    calls = [0]

    async def handle(event: WebhookEvent) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError("database unavailable")  # the service must retry
        received.append(event)

    receiver = WebhookReceiver(handle)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    runner = web.AppRunner(receiver.app("/hooks"), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
    await site.start()
    port = runner.addresses[0][1]
    yield f"https://127.0.0.1:{port}/hooks", received
    await runner.cleanup()


async def test_receiver_gets_each_notification_once(
    ca: trustme.CA, receiver_url: tuple[str, list[WebhookEvent]]
) -> None:
    url, received = receiver_url
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    async with Emulator(time_scale=60.0, webhook_ssl=trust) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        rate = Plan.PREMIUM.rate_limit.scaled(60.0)
        fast = PollPolicy(min_interval=0.01)
        async with AsyncClient(key, base_url=emu.url, plan=rate, polling=fast) as client:
            cat = emu.catalog
            job = await client.projects.create_talking_avatar(
                script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0],
                webhook=url, metadata={"order": 42},
            )  # fmt: skip
            emu.advance(1000)
            await emu.settle()  # first delivery: our handler fails, we answer 500
            assert received == []
            emu.advance(60)  # the service's first retry, a minute later
            await emu.settle()
            assert len(received) == 1
            event = received[0]
            assert (event.form, event.status, event.video_id) == ("A", "COMPLETED", job.video_id)
            assert event.metadata["order"] == 42 and event.project_id == job.project_id
            # The truth, read with the API (notifications are not signed):
            video = await asyncio.wait_for(event.job(client), 5)
            assert video.url and video.id == job.video_id
            # A duplicate of the same notification is answered 200 and dropped.
            async with aiohttp.ClientSession() as session:
                resp = await session.post(url, json=event.raw, ssl=trust)
                assert resp.status == 200
                resp.release()
                bad = await session.post(url, data=b"{}", ssl=trust)
                assert bad.status == 400
                bad.release()
    assert len(received) == 1
    statuses = [a.status for a in emu.webhook_attempts]
    assert statuses[:2] == [500, 200]
