"""Request ids: every request sends one, every model and error carries it, logs tell it.

Against the emulator over loopback (it echoes the ``X-Request-Id`` it is sent), so that
the id the SDK sent, the one the service answered, the one on the model or error and the
one in the log record are seen to be one; a service that names ids of its own is a
wire-level case.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from asyncclient import AsyncClient, RetryPolicy
from asyncclient.emulator import Emulator
from asyncclient.errors import (
    AmbiguousCreationError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    VideoFailedError,
)
from asyncclient.http.transport import Timeouts
from tests.conftest import connect

ID = re.compile(r"req_[0-9a-f]{24}")
VIDEO = "GET /v1/video/*"
ONE_TRY = RetryPolicy(attempts=1)


def recording(client: AsyncClient) -> list[str]:
    """The ``X-Request-Id`` of every attempt the client sends, in order."""
    sent: list[str] = []
    transport = client._transport
    real = transport.send

    async def send(request: Any, **options: Any) -> Any:
        sent.append(request.headers["X-Request-Id"])
        return await real(request, **options)

    transport.send = send  # type: ignore[method-assign]
    return sent


@pytest_asyncio.fixture
async def sdk(emu: Emulator) -> AsyncIterator[AsyncClient]:
    async with connect(emu, retry=ONE_TRY) as client:
        yield client


async def a_video(client: AsyncClient) -> str:
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert job.video_id is not None
    return job.video_id


async def test_a_model_carries_the_id_sent_and_echoed_and_logged(
    sdk: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    video_id = await a_video(sdk)
    sent = recording(sdk)
    with caplog.at_level(logging.DEBUG, logger="asyncclient"):
        video = await sdk.videos.get(video_id)
    assert len(sent) == 1 and ID.fullmatch(sent[0])
    assert video.request_id == sent[0]
    (record,) = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert record.request_id == sent[0]  # type: ignore[attr-defined]
    assert f"request id {sent[0]}" in record.getMessage()
    again = await sdk.videos.get(video_id)
    assert again.id == video.id and again.request_id == sent[1] != sent[0]  # each its own


async def test_pages_their_items_and_a_creation_carry_their_request_ids(sdk: AsyncClient) -> None:
    sent = recording(sdk)
    job = await sdk.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert job.created is not None and job.created.request_id == sent[-1]
    page = await sdk.videos.list_page(limit=10)
    assert page.request_id == sent[-1]
    assert page.items and all(item.request_id == sent[-1] for item in page.items)
    integrations = await sdk.integrations.list()
    assert all(item.request_id == sent[-1] for item in integrations)


async def test_every_retry_sends_the_same_id_and_the_retry_line_tells_it(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(emu, retry=RetryPolicy(base=0.001, cap=0.001)) as client:
        video_id = await a_video(client)
        emu.faults.add(VIDEO, "status", status=503, times=2)
        sent = recording(client)
        with caplog.at_level(logging.INFO, logger="asyncclient"):
            video = await client.videos.get(video_id)
    assert len(sent) == 3 and len(set(sent)) == 1
    assert video.request_id == sent[0]
    retries = [r for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2
    assert all(r.request_id == sent[0] for r in retries)  # type: ignore[attr-defined]
    assert all(sent[0] in r.getMessage() for r in retries)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, BadRequestError),
        (429, RateLimitError),
        (500, InternalServerError),
        (503, InternalServerError),
    ],
)
async def test_a_status_error_carries_the_id_sent(
    emu: Emulator, sdk: AsyncClient, status: int, error: type[APIError]
) -> None:
    emu.faults.add(VIDEO, "status", status=status, times=1)
    sent = recording(sdk)
    with pytest.raises(error) as caught:
        await sdk.videos.get("video_x")
    assert caught.value.request_id == sent[0]
    assert caught.value.headers["X-Request-Id"] == sent[0]  # type: ignore[attr-defined]


async def test_not_found_carries_the_id_sent(sdk: AsyncClient) -> None:
    sent = recording(sdk)
    with pytest.raises(NotFoundError) as caught:
        await sdk.videos.get("no_such_video")
    assert caught.value.request_id == sent[0] and ID.fullmatch(sent[0])


async def test_a_refused_key_carries_the_id_sent(emu: Emulator) -> None:
    async with connect(emu, key="sk-not-a-key", retry=ONE_TRY) as client:
        sent = recording(client)
        with pytest.raises(AuthenticationError) as caught:
            await client.videos.get("video_x")
    assert caught.value.request_id == sent[0]


async def test_a_team_without_permission_carries_the_id_sent(emu: Emulator) -> None:
    key = emu.add_team(plan="premium", credits=10, permitted=False)
    async with connect(emu, key=key, retry=ONE_TRY) as client:
        sent = recording(client)
        with pytest.raises(PermissionDeniedError) as caught:
            await client.videos.get("video_x")
    assert caught.value.request_id == sent[0]


def closed_port() -> str:
    """The URL of a loopback port nothing listens on (a refused connection)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_a_refused_connection_carries_the_id_sent() -> None:
    async with AsyncClient("sk-test", base_url=closed_port(), retry=ONE_TRY) as client:
        sent = recording(client)
        with pytest.raises(APIConnectionError) as caught:
            await client.videos.get("video_x")
    assert caught.value.request_id == sent[0] and ID.fullmatch(sent[0])


async def test_a_timeout_carries_the_id_sent(emu: Emulator) -> None:
    emu.faults.add(VIDEO, "latency", latency=2.0, times=1)
    async with connect(emu, retry=ONE_TRY, timeouts=Timeouts(total=0.2)) as client:
        sent = recording(client)
        with pytest.raises(APITimeoutError) as caught:
            await client.videos.get("video_x")
    assert caught.value.request_id == sent[0]


async def test_a_bad_response_carries_the_id_sent(emu: Emulator, sdk: AsyncClient) -> None:
    video_id = await a_video(sdk)
    emu.faults.add(VIDEO, "malformed", times=1)
    sent = recording(sdk)
    with pytest.raises(APIResponseValidationError) as caught:
        await sdk.videos.get(video_id)
    assert caught.value.request_id == sent[0]


async def test_an_ambiguous_creation_carries_the_id_sent(emu: Emulator, sdk: AsyncClient) -> None:
    emu.faults.add("POST /v1/project/create/*", "status_after", status=502, times=1)
    sent = recording(sdk)
    with pytest.raises(AmbiguousCreationError) as caught:
        await sdk.projects.create_talking_avatar(
            script="Hi", avatar_id="avatar_001", voice_id="voice_001"
        )
    assert caught.value.request_id == sent[-1]  # after a read of the service's clock
    assert caught.value.cause.request_id == sent[-1]


async def test_a_failed_attempt_is_logged_with_the_id_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with AsyncClient("sk-test", base_url=closed_port(), retry=ONE_TRY) as client:
        sent = recording(client)
        logs = caplog.at_level(logging.DEBUG, logger="asyncclient")
        with logs, pytest.raises(APIConnectionError):
            await client.videos.get("video_x")
    (record,) = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert record.request_id == sent[0]  # type: ignore[attr-defined]
    assert record.getMessage().startswith("GET /v1/video/video_x -> APIConnectionError")


async def test_the_services_own_id_wins(mock: Any) -> None:
    """A service that names a request id of its own (not the one sent): that one is the
    request's id on the model, the error and the log record."""
    base = "http://127.0.0.1:9"
    body = {"success": True, "data": {"id": "v1", "status": "STARTED"}}
    mock.get(f"{base}/v1/video/v1", payload=body, headers={"X-Request-Id": "svc-1"})
    mock.get(f"{base}/v1/video/v2", status=404, payload={"success": False, "message": "no"},
             headers={"Request-Id": "svc-2"})  # fmt: skip
    async with AsyncClient("sk-test", base_url=base, retry=ONE_TRY) as client:
        video = await client.videos.get("v1")
        with pytest.raises(NotFoundError) as caught:
            await client.videos.get("v2")
    assert video.request_id == "svc-1"
    assert caught.value.request_id == "svc-2"


async def test_an_id_given_by_hand_is_sent_and_kept(mock: Any) -> None:
    from asyncclient.http.protocol import JSON_HEADERS, Request

    base = "http://127.0.0.1:9"
    mock.get(f"{base}/v1/video/v1", payload={"success": True, "data": {}})
    async with AsyncClient("sk-test", base_url=base, retry=ONE_TRY) as client:
        request = Request("GET", "/v1/video/v1", headers={**JSON_HEADERS, "X-Request-Id": "mine"})
        envelope = await client._caller.send(request)
    assert envelope.request_id == "mine"
    ((_, calls),) = mock.requests.items()
    assert calls[0].kwargs["headers"]["X-Request-Id"] == "mine"


def test_a_model_made_by_hand_has_no_request_id() -> None:
    from asyncclient.models.videos import Video

    assert Video(id="v1", status="STARTED").request_id is None


async def test_a_failed_video_carries_the_id_of_the_read_that_saw_it_fail(
    emu: Emulator, sdk: AsyncClient
) -> None:
    job = await sdk.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert job.video_id is not None
    emu.fail_video(job.video_id, message="avatar rendering failed")
    with pytest.raises(VideoFailedError) as info:
        await asyncio.wait_for(job, 10)
    assert info.value.request_id is not None and ID.fullmatch(info.value.request_id)
    assert info.value.request_id == info.value.video.request_id
    assert info.value.request_id != job.created.request_id  # a read's, not the creation's
