"""client.videos.download against the emulator and tiny loopback servers (spec 2.3)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from asyncclient import (
    APIConnectionError,
    APIResponseValidationError,
    AsyncClient,
    InternalServerError,
    PermissionDeniedError,
    VideoStatus,
)
from asyncclient.emulator import Emulator
from asyncclient.http.download import download_video, target_path
from asyncclient.models.videos import Video
from tests.conftest import Serve

SCALE = 60.0
SAMPLE = (Path(__file__).parents[1] / "asyncclient/emulator/data/sample.mp4").read_bytes()


pytestmark = pytest.mark.emulator(seed=3)


async def started_video(emu: Emulator, client: AsyncClient) -> str:
    cat = emu.catalog
    made = await client.projects.create_talking_avatar(
        script="Hello", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
    )
    assert made.video_id is not None
    return made.video_id


async def completed_video(emu: Emulator, client: AsyncClient) -> str:
    video_id = await started_video(emu, client)
    emu.advance(1000)
    return video_id


def video_gets(emu: Emulator, video_id: str) -> int:
    return sum(1 for r in emu.requests if r.method == "GET" and r.path == f"/v1/video/{video_id}")


def files_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- against the emulator ------------------------------------------------------


async def test_completed_video_downloads_by_id(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    target = tmp_path / "out.mp4"
    result = await client.videos.download(video_id, target)
    assert result == target
    assert target.read_bytes() == SAMPLE
    video = await client.videos.get(video_id)
    assert video.size == len(SAMPLE) == target.stat().st_size
    assert files_in(tmp_path) == ["out.mp4"]  # no .part left behind


async def test_progress_counts_up_to_the_total(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    calls: list[tuple[int, int | None]] = []
    await client.videos.download(
        video_id, tmp_path / "v.mp4", progress=lambda d, t: calls.append((d, t)), chunk_size=500
    )
    done = [d for d, _ in calls]
    assert len(calls) == 5  # 2130 bytes in chunks of at most 500
    assert done == sorted(set(done)) and done[-1] == len(SAMPLE)
    assert {t for _, t in calls} == {len(SAMPLE)}


async def test_directory_path_gets_the_video_id_as_name(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    result = await client.videos.download(video_id, tmp_path)
    assert result == tmp_path / f"{video_id}.mp4"
    assert result.read_bytes() == SAMPLE


@pytest.mark.parametrize("separator", sorted({"/", os.sep}))
async def test_a_path_ending_in_a_separator_is_a_folder_made_if_missing(
    emu: Emulator, client: AsyncClient, tmp_path: Path, separator: str
) -> None:
    video_id = await completed_video(emu, client)
    result = await client.videos.download(video_id, f"{tmp_path / 'new' / 'dir'}{separator}")
    assert result == tmp_path / "new" / "dir" / f"{video_id}.mp4"
    assert result.read_bytes() == SAMPLE
    assert files_in(tmp_path / "new" / "dir") == [f"{video_id}.mp4"]


async def test_any_other_path_is_the_file_its_folders_made(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    result = await client.videos.download(video_id, str(tmp_path / "newdir"))
    assert result == tmp_path / "newdir" and result.is_file()  # no separator: a file
    result = await client.videos.download(video_id, tmp_path / "a" / "b" / "clip.mp4")
    assert result.read_bytes() == SAMPLE and files_in(tmp_path / "a" / "b") == ["clip.mp4"]


def test_target_path_rule(tmp_path: Path) -> None:
    (tmp_path / "there").mkdir()
    assert target_path(f"{tmp_path}/out/", "vid_1") == tmp_path / "out" / "vid_1.mp4"
    assert target_path(tmp_path / "there", "vid_1") == tmp_path / "there" / "vid_1.mp4"
    assert target_path(str(tmp_path / "there"), "vid_1") == tmp_path / "there" / "vid_1.mp4"
    assert target_path(tmp_path / "out", "vid_1") == tmp_path / "out"
    assert target_path(tmp_path / "v.mp4", "vid_1") == tmp_path / "v.mp4"
    with pytest.raises(ValueError, match="file name"):
        target_path(tmp_path, "../x")
    assert not (tmp_path / "out").exists()  # deciding makes nothing


async def test_a_folder_is_not_made_for_a_video_that_cannot_be_downloaded(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await started_video(emu, client)
    with pytest.raises(ValueError, match="STARTED"):
        await client.videos.download(video_id, f"{tmp_path}/new/")
    assert files_in(tmp_path) == []


async def test_record_with_url_is_not_read_again(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    video = await client.videos.get(video_id)
    await client.videos.download(video, tmp_path)
    assert video_gets(emu, video_id) == 1
    assert (tmp_path / f"{video_id}.mp4").read_bytes() == SAMPLE


async def test_expired_url_is_refreshed_by_reading_the_video_again(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await completed_video(emu, client)
    video = await client.videos.get(video_id)
    assert video.url is not None
    emu.advance(25 * 3600)  # spec 2.3: the URL is valid 24 hours
    async with aiohttp.ClientSession() as raw, raw.get(video.url) as resp:
        assert resp.status == 403  # the URL held really expired
    result = await client.videos.download(video, tmp_path / "v.mp4")
    assert result.read_bytes() == SAMPLE
    assert video_gets(emu, video_id) == 2
    assert files_in(tmp_path) == ["v.mp4"]


async def test_started_video_raises_before_writing(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await started_video(emu, client)
    with pytest.raises(ValueError, match="STARTED"):
        await client.videos.download(video_id, tmp_path)
    assert files_in(tmp_path) == []


async def test_failed_video_raises_naming_the_status(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await started_video(emu, client)
    emu.fail_video(video_id, "no voice")
    with pytest.raises(ValueError, match=r"FAILED.*no voice"):
        await client.videos.download(video_id, tmp_path / "v.mp4")
    assert files_in(tmp_path) == []


async def test_record_without_url_is_read_first(
    emu: Emulator, client: AsyncClient, tmp_path: Path
) -> None:
    video_id = await started_video(emu, client)
    stale = await client.videos.get(video_id)
    assert stale.status == VideoStatus.STARTED and stale.url is None
    emu.advance(1000)
    result = await client.videos.download(stale, tmp_path)
    assert result.read_bytes() == SAMPLE
    assert video_gets(emu, video_id) == 2


# -- against tiny servers -----------------------------------------------------------


def record(url: str, size: int | None = len(SAMPLE), video_id: str = "vid_1") -> Video:
    return Video(id=video_id, status=VideoStatus.COMPLETED, url=url, size=size)


async def no_read(video_id: str) -> Video:
    raise AssertionError(f"unexpected read of {video_id}")


@pytest_asyncio.fixture
async def sdk() -> AsyncIterator[AsyncClient]:
    async with AsyncClient("secret-key-123", base_url="http://127.0.0.1:9") as c:
        yield c


def file_app(seen: list[Any], body: bytes = SAMPLE) -> web.Application:
    async def start(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        raise web.HTTPFound("/file.mp4?sig=abc")

    async def file(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.Response(body=body, content_type="video/mp4")

    app = web.Application()
    app.router.add_get("/start", start)
    app.router.add_get("/file.mp4", file)
    return app


async def test_api_key_is_never_sent_to_the_file_url(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    seen: list[dict[str, str]] = []
    base = await serve(file_app(seen))
    result = await sdk.videos.download(record(f"{base}/start"), tmp_path)
    assert result.read_bytes() == SAMPLE
    assert len(seen) == 2  # the redirect was followed
    for headers in seen:
        assert not {k.lower() for k in headers} & {"x-api-key", "authorization"}
        assert "secret-key-123" not in repr(headers)


async def test_size_mismatch_with_content_length_leaves_nothing(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    base = await serve(file_app([], body=SAMPLE[:1000]))
    with pytest.raises(APIResponseValidationError, match="size mismatch"):
        await sdk.videos.download(record(f"{base}/file.mp4"), tmp_path / "v.mp4")
    assert files_in(tmp_path) == []


def chunked_app(body: bytes) -> web.Application:
    """Serves ``body`` without Content-Length (chunked), in pieces."""

    async def file(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        for i in range(0, len(body), 700):
            await resp.write(body[i : i + 700])
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/file.mp4", file)
    return app


@pytest.mark.parametrize(
    ("body", "match"),
    [(SAMPLE[:1500], "got 1500 bytes, expected 2130"), (SAMPLE * 2, "more than the expected")],
)
async def test_size_mismatch_while_streaming_deletes_the_part_file(
    serve: Serve, sdk: AsyncClient, tmp_path: Path, body: bytes, match: str
) -> None:
    base = await serve(chunked_app(body))
    calls: list[int] = []
    with pytest.raises(APIResponseValidationError, match=match):
        await sdk.videos.download(
            record(f"{base}/file.mp4"),
            tmp_path / "v.mp4",
            progress=lambda d, t: calls.append(d),
            chunk_size=500,
        )
    assert calls  # some chunks were written to the .part file before the check
    assert files_in(tmp_path) == []


async def test_unknown_size_and_length_downloads_whatever_comes(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    base = await serve(chunked_app(SAMPLE))
    totals: list[int | None] = []
    result = await sdk.videos.download(
        record(f"{base}/file.mp4", size=None), tmp_path, progress=lambda d, t: totals.append(t)
    )
    assert result == tmp_path / "vid_1.mp4" and result.read_bytes() == SAMPLE
    assert set(totals) == {None}


def status_app(status: int, hits: list[str]) -> web.Application:
    async def file(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"success": False, "message": f"nope {status}"}, status=status)

    app = web.Application()
    app.router.add_get("/{name}", file)
    return app


async def test_second_403_after_a_refresh_raises_the_status(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    hits: list[str] = []
    base = await serve(status_app(403, hits))
    reads: list[str] = []

    async def read(video_id: str) -> Video:
        reads.append(video_id)
        return record(f"{base}/fresh.mp4")

    transport = sdk._transport
    with pytest.raises(PermissionDeniedError, match="nope 403") as info:
        await download_video(read, transport, record(f"{base}/old.mp4"), tmp_path)
    assert info.value.status_code == 403
    assert reads == ["vid_1"] and hits == ["/old.mp4", "/fresh.mp4"]
    assert files_in(tmp_path) == []


async def test_server_error_is_not_refreshed(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    hits: list[str] = []
    base = await serve(status_app(500, hits))
    with pytest.raises(InternalServerError) as info:
        await download_video(no_read, sdk._transport, record(f"{base}/f.mp4"), tmp_path)
    assert info.value.status_code == 500 and hits == ["/f.mp4"]
    assert files_in(tmp_path) == []


async def test_connection_dropped_mid_body_leaves_nothing(
    serve: Serve, sdk: AsyncClient, tmp_path: Path
) -> None:
    async def file(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_length = len(SAMPLE)
        await resp.prepare(request)
        await resp.write(SAMPLE[:1000])
        assert request.transport is not None
        request.transport.close()
        return resp

    app = web.Application()
    app.router.add_get("/file.mp4", file)
    base = await serve(app)
    with pytest.raises(APIConnectionError) as info:
        await sdk.videos.download(record(f"{base}/file.mp4"), tmp_path / "v.mp4")
    assert "sig" not in str(info.value)
    assert files_in(tmp_path) == []


async def test_caller_session_sending_the_key_by_default_is_refused(tmp_path: Path) -> None:
    async with (
        aiohttp.ClientSession(headers={"x-api-key": "k"}) as session,
        AsyncClient("k", base_url="http://127.0.0.1:9", session=session) as sdk,
    ):
        with pytest.raises(ValueError, match="x-api-key"):
            await sdk.videos.download(record("http://127.0.0.1:9/f.mp4"), tmp_path)
    assert files_in(tmp_path) == []


async def test_bad_chunk_size_is_refused(sdk: AsyncClient, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        await sdk.videos.download(record("http://127.0.0.1:9/f.mp4"), tmp_path, chunk_size=0)
