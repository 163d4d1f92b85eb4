"""A receiver without a token or confirmation (issue "Money-safe, proven", item 8): it
remembers an event with what it said, so a forged copy naming the same video with another
URL or status cannot make the genuine notification, delivered by the emulator over
loopback, be dropped as a duplicate; and it warns, once, that it accepts anyone's."""

from __future__ import annotations

import json
import logging
import ssl
from typing import Any

import aiohttp
import pytest
import trustme

from asyncclient.webhooks import WebhookEvent, WebhookReceiver
from tests.test_webhooks import served, service

EVIL = "https://evil.example/v.mp4"
WARNING = "accepts anyone's notifications"


def forged(video_id: str, project_id: str, *, status: str, url: str) -> dict[str, Any]:
    return {
        "status": status,
        "data": {
            "videoId": video_id,
            "status": status,
            "url": url,
            "shareUrl": "https://evil.example/s",
            "metadata": {"projectId": project_id},
        },
        "message": "Video completed",
    }


async def send(url: str, body: object, trust: ssl.SSLContext) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=json.dumps(body).encode(), ssl=trust) as resp,
    ):
        return resp.status


async def test_a_forged_copy_does_not_suppress_the_genuine_notification(
    ca: trustme.CA, caplog: pytest.LogCaptureFixture
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    received: list[WebhookEvent] = []
    with caplog.at_level(logging.WARNING, "asyncclient"):
        async with service(ca) as (emu, client):
            receiver = WebhookReceiver(received.append)  # no token, no confirmation
            async with served(receiver, ca) as url:
                cat = emu.catalog
                job = await client.projects.create_talking_avatar(
                    script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], webhook=url
                )
                assert job.video_id is not None and job.project_id is not None
                ids = (job.video_id, job.project_id)
                # Whoever knows the URL and the ids gets in first: another URL, and
                # another status. Nothing tells this receiver they are forged.
                assert await send(url, forged(*ids, status="COMPLETED", url=EVIL), trust) == 200
                assert await send(url, forged(*ids, status="FAILED", url=EVIL), trust) == 200
                emu.advance(1000)
                await emu.settle()  # the genuine notification
                (attempt,) = emu.webhook_attempts
                assert attempt.status == 200
                # The service sends it again (duplicates are possible): that one is dropped.
                assert await send(url, attempt.payload, trust) == 200
    genuine = [e for e in received if e.url != EVIL]
    assert len(genuine) == 1, [e.url for e in received]
    assert (genuine[0].status, genuine[0].video_id) == ("COMPLETED", job.video_id)
    assert genuine[0].url == attempt.payload["data"]["url"]
    assert len(received) == 3 and receiver.duplicates == 1
    assert caplog.text.count(WARNING) == 1  # once per receiver, not per notification


def test_each_open_receiver_warns_once_a_guarded_one_never(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "asyncclient"):
        WebhookReceiver(lambda event: None, token="t0ken")
        WebhookReceiver(lambda event: None, confirm_with=object())  # type: ignore[arg-type]
        assert WARNING not in caplog.text
        WebhookReceiver(lambda event: None)
        WebhookReceiver(lambda event: None)
    assert caplog.text.count(WARNING) == 2
