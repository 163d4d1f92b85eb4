"""``with_raw_response``: a call's reply (status, headers, rate-limit state, request id)
beside its parsed value, against the emulator over loopback, on both faces."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from asyncclient import AsyncClient, Client, SyncVideoJob
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.emulator import Emulator, EmulatorThread, serve_in_thread
from asyncclient.errors import NotFoundError
from asyncclient.http.options import RawResponse
from asyncclient.models.pages import Page
from asyncclient.models.videos import VideoDetail
from tests.conftest import FAST_POLLING


async def test_a_read_gives_status_headers_rate_limit_request_id_and_value(
    client: AsyncClient,
) -> None:
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert job.video_id is not None
    raw = await client.with_raw_response.videos.get(job.video_id)
    assert isinstance(raw, RawResponse)
    assert raw.status == 200
    assert raw.headers["Content-Type"].startswith("application/json")
    assert raw.request_id == raw.headers["X-Request-Id"]  # the emulator echoed the id sent
    assert raw.request_id.startswith("req_")
    assert raw.rate_limit.limit == int(raw.headers["X-RateLimit-Limit"])
    assert raw.rate_limit.remaining == int(raw.headers["X-RateLimit-Remaining"])
    assert raw.rate_limit.reset is not None
    video = raw.parse()
    assert video is raw.value and isinstance(video, VideoDetail) and video.id == job.video_id
    assert video.request_id == raw.request_id


async def test_a_page_and_a_creation_raw(client: AsyncClient) -> None:
    raw_page = await client.with_raw_response.videos.list_page(limit=5)
    assert isinstance(raw_page.value, Page) and raw_page.value.request_id == raw_page.request_id
    made = await client.with_raw_response.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    assert made.status == 200 and isinstance(made.value, VideoJob)  # the POST's reply, last
    assert made.value.created is not None and made.value.created.request_id == made.request_id
    assert made.rate_limit.remaining is not None


async def test_an_error_raises_as_without_raw_response(client: AsyncClient) -> None:
    with pytest.raises(NotFoundError) as caught:
        await client.with_raw_response.videos.get("no_such_video")
    assert caught.value.request_id is not None


async def test_what_sends_no_request_has_no_raw_form(client: AsyncClient) -> None:
    with pytest.raises(AttributeError, match="list_page, not list"):
        client.with_raw_response.videos.list  # noqa: B018
    with pytest.raises(AttributeError, match="not a namespace"):
        client.with_raw_response.base_url  # noqa: B018


async def test_raw_responses_of_a_client_with_options(emu: Emulator, client: AsyncClient) -> None:
    raw = await client.with_options(max_retries=0).with_raw_response.integrations.list()
    assert raw.status == 200 and isinstance(raw.value, list)


# -- the synchronous client -------------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[EmulatorThread]:
    with serve_in_thread(time_scale=600.0, seed=5) as emu:
        yield emu


def test_the_sync_client_with_raw_response(served: EmulatorThread) -> None:
    key = served.add_team("premium", 1_000_000)
    catalog = served.emulator.catalog
    with Client(key, base_url=served.url, polling=FAST_POLLING) as client:
        made = client.with_raw_response.projects.create_talking_avatar(
            script="Hi", avatar_id=catalog.avatars[0], voice_id=catalog.voices[0]
        )
        assert made.status == 200 and isinstance(made.value, SyncVideoJob)
        video_id = made.value.video_id
        assert video_id is not None
        raw = client.with_raw_response.videos.get(video_id)
        assert raw.status == 200 and raw.request_id == raw.headers["X-Request-Id"]
        assert raw.rate_limit.limit is not None
        assert raw.parse().id == video_id and raw.value.request_id == raw.request_id
        with pytest.raises(NotFoundError) as caught:
            client.with_raw_response.videos.get("no_such_video")
        assert caught.value.request_id is not None
        assert made.value.wait(timeout=60).id == video_id
