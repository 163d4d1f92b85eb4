"""Spec part 6: deliveries to an HTTPS receiver, forms A and B, the retry schedule."""

from __future__ import annotations

import asyncio
from typing import Any

from asyncclient.emulator import RETRY_DELAYS, Emulator

from .conftest import Api, Receiver

UGC = {"script": "Hi", "avatarId": "avatar_001", "voiceId": "voice_001", "media": ["media_vid_001"]}


async def _create(emu: Emulator, api: Api, receiver: Receiver, **extra: Any) -> str:
    key = emu.add_team(credits=1000)
    body = {**UGC, "webhook": receiver.url, "metadata": {"order": 7}, **extra}
    status, _, data = await Api(api.session, emu.url, key).post("/v1/project/create/ugc-ads", body)
    assert status == 200, data
    return str(data["data"]["videoId"])


async def test_completion_form_a(hook_emu: Emulator, api: Api, receiver: Receiver) -> None:
    video_id = await _create(hook_emu, api, receiver)
    await hook_emu.settle()
    assert receiver.calls == []  # not done yet
    hook_emu.advance(400)
    await hook_emu.settle()
    assert len(receiver.calls) == 1
    payload = receiver.calls[0]
    assert payload["status"] == "COMPLETED"
    assert payload["message"] == "Video completed"
    data = payload["data"]
    assert (data["videoId"], data["status"]) == (video_id, "COMPLETED")
    assert data["url"].startswith(hook_emu.url + "/_files/")
    assert data["shareUrl"]
    project_id = hook_emu.store.videos[video_id].project_id
    assert data["metadata"] == {"projectId": project_id, "order": 7}
    attempt = hook_emu.webhook_attempts[0]
    assert (attempt.attempt, attempt.status, attempt.error) == (1, 200, None)
    assert hook_emu.counters.webhook_attempts == 1


async def test_failure_form_a(hook_emu: Emulator, api: Api, receiver: Receiver) -> None:
    video_id = await _create(hook_emu, api, receiver)
    hook_emu.fail_video(video_id, "out of GPUs")
    await hook_emu.settle()
    assert len(receiver.calls) == 1
    payload = receiver.calls[0]
    assert payload["status"] == "FAILED"
    assert payload["data"]["error"] == "out of GPUs"
    assert payload["data"]["metadata"]["order"] == 7
    hook_emu.advance(400)  # the original completion time passes: no second notification
    await hook_emu.settle()
    assert len(receiver.calls) == 1


async def test_retry_schedule_500_then_200(
    hook_emu: Emulator, api: Api, receiver: Receiver
) -> None:
    receiver.plan = [500, 500]
    await _create(hook_emu, api, receiver)
    hook_emu.advance(400)
    await hook_emu.settle()
    assert [a.status for a in hook_emu.webhook_attempts] == [500]
    hook_emu.advance(RETRY_DELAYS[0] - 5)
    await hook_emu.settle()
    assert len(hook_emu.webhook_attempts) == 1  # 1 minute not yet over
    hook_emu.advance(10)
    await hook_emu.settle()
    assert [a.status for a in hook_emu.webhook_attempts] == [500, 500]
    hook_emu.advance(RETRY_DELAYS[1] + 1)
    await hook_emu.settle()
    attempts = hook_emu.webhook_attempts
    assert [(a.attempt, a.status) for a in attempts] == [(1, 500), (2, 500), (3, 200)]
    assert attempts[1].time - attempts[0].time >= RETRY_DELAYS[0]
    assert attempts[2].time - attempts[1].time >= RETRY_DELAYS[1]
    hook_emu.advance(10_000)
    await hook_emu.settle()
    assert len(receiver.calls) == 3


async def test_dropped_after_three_retries(
    hook_emu: Emulator, api: Api, receiver: Receiver
) -> None:
    receiver.plan = [503] * 10
    await _create(hook_emu, api, receiver)
    hook_emu.advance(400)
    await hook_emu.settle()
    for delay in RETRY_DELAYS:
        hook_emu.advance(delay + 1)
        await hook_emu.settle()
    hook_emu.advance(100_000)
    await hook_emu.settle()
    assert [a.attempt for a in hook_emu.webhook_attempts] == [1, 2, 3, 4]
    assert len(receiver.calls) == 4


async def test_retries_fire_in_real_time(hook_emu: Emulator, api: Api, receiver: Receiver) -> None:
    """The scheduler task delivers on its own: no settle() needed."""
    receiver.plan = [500]
    await _create(hook_emu, api, receiver)
    hook_emu.advance(400)
    for _ in range(200):
        if len(receiver.calls) >= 1:
            break
        await asyncio.sleep(0.01)
    assert len(receiver.calls) == 1
    hook_emu.advance(RETRY_DELAYS[0])
    for _ in range(200):
        if len(receiver.calls) >= 2:
            break
        await asyncio.sleep(0.01)
    assert len(receiver.calls) == 2


async def test_unreachable_receiver_is_recorded(hook_emu: Emulator, api: Api) -> None:
    key = hook_emu.add_team()
    body = {**UGC, "webhook": "https://127.0.0.1:9/hook"}
    await Api(api.session, hook_emu.url, key).post("/v1/project/create/ugc-ads", body)
    hook_emu.advance(400)
    await hook_emu.settle()
    attempt = hook_emu.webhook_attempts[0]
    assert attempt.status is None
    assert attempt.error


async def test_template_generation_uses_form_b(
    hook_emu: Emulator, api: Api, receiver: Receiver
) -> None:
    key = hook_emu.add_team()
    body = {
        "type": "class",
        "templateId": "tpl_promo",
        "title": "Promo",
        "caption": False,
        "language": "en",
        "scenes": [
            {"script": "Save {{discount}}", "variables": [{"key": "discount", "value": "5%"}]}
        ],
        "webhook": receiver.url,
        "metadata": {"batch": "b1"},
    }
    _, _, created = await Api(api.session, hook_emu.url, key).post("/v1/project/create", body)
    hook_emu.advance(400)
    await hook_emu.settle()
    payload = receiver.calls[0]
    assert payload["event"] == "project.completed"
    assert payload["status"] == "completed"
    assert payload["projectId"] == created["data"]["projectId"]
    assert payload["video"]["url"]
    assert payload["video"]["resolution"] == "1080x1920"
    assert payload["completedAt"]
    assert payload["metadata"]["batch"] == "b1"


async def test_form_is_configurable(client_ssl: Any, api: Api, receiver: Receiver) -> None:
    async with Emulator(webhook_ssl=client_ssl, webhook_form="B") as emu:
        video_id = await _create(emu, api, receiver)
        emu.fail_video(video_id, "boom")
        await emu.settle()
        assert receiver.calls[0]["event"] == "project.failed"
        assert receiver.calls[0]["message"] == "boom"
        assert "video" not in receiver.calls[0]
