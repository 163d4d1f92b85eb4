"""Response bodies are capped while they stream, compressed and inflated bytes both
(issue "Money-safe, proven", item 7), over loopback to the emulator's ``gzip_bomb``.

Memory is measured with ``tracemalloc`` in this process (the emulator's allocations
included, which are small: it makes the bomb a piece at a time), never with timings.
"""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest
from aiohttp import web

from asyncclient import AmbiguousCreationError, AsyncClient
from asyncclient.emulator import Emulator
from asyncclient.errors import APIError, APIResponseValidationError
from asyncclient.http.protocol import MAX_BODY_BYTES, build_request
from asyncclient.http.transport import AiohttpTransport, Timeouts
from tests.conftest import Serve, connect

MiB = 1024 * 1024
T = TypeVar("T")


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


async def peak_of(work: Callable[[], Awaitable[T]]) -> tuple[T | APIError, int]:
    """What ``work`` returned or raised (an APIError), and the peak of traced memory."""
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        outcome: T | APIError = await work()
    except APIError as exc:
        outcome = exc
    return outcome, tracemalloc.get_traced_memory()[1] - base


@pytest.mark.usefixtures("traced")
async def test_a_gib_gzip_bomb_fails_early_under_twice_a_small_cap(emu: Emulator) -> None:
    key = emu.add_team(plan="premium")
    emu.faults.add("GET /v1/video/list", "gzip_bomb", times=1)  # 1 GiB inflated
    transport = AiohttpTransport(emu.url, key, max_body_size=4 * MiB)
    try:
        error, peak = await peak_of(
            lambda: asyncio.wait_for(transport.send(build_request("GET", "/v1/video/list")), 60)
        )
    finally:
        await transport.aclose()
    assert isinstance(error, APIResponseValidationError), error
    assert "max_body_size of 4194304 bytes" in str(error)
    assert error.status_code == 200 and error.errors
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB"


@pytest.mark.usefixtures("traced")
async def test_the_client_refuses_a_bomb_past_its_default_cap_without_inflating_it(
    emu: Emulator,
) -> None:
    emu.faults.add("GET /v1/video/list", "gzip_bomb", size=4 * MAX_BODY_BYTES, times=1)
    async with connect(emu) as client:
        error, peak = await peak_of(lambda: client.videos.list_page())
    assert peak < 2 * MAX_BODY_BYTES, f"peak {peak / MiB:.1f} MiB"
    assert isinstance(error, APIResponseValidationError), error
    assert f"max_body_size of {MAX_BODY_BYTES} bytes" in str(error)


@pytest.mark.usefixtures("traced")
async def test_a_bomb_answering_a_creation_is_ambiguous_and_made_once(emu: Emulator) -> None:
    route = "POST /v1/project/create/talking-avatar"
    emu.faults.add(route, "gzip_bomb", size=4 * MAX_BODY_BYTES, times=1)
    cat = emu.catalog
    async with connect(emu) as client:
        error, peak = await peak_of(
            lambda: client.projects.create_talking_avatar(
                script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="n"
            )
        )
    assert peak < 2 * MAX_BODY_BYTES, f"peak {peak / MiB:.1f} MiB"
    assert isinstance(error, AmbiguousCreationError), error
    assert isinstance(error.cause, APIResponseValidationError)
    assert len(emu.store.projects) == 1


async def test_a_content_length_over_the_cap_is_refused_before_reading(serve: Serve) -> None:
    release = asyncio.Event()

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": str(1 << 40)})
        await response.prepare(request)
        await response.write(b'{"success": true, "data": "')
        await release.wait()  # the rest never comes (until the test is over)
        return response

    app = web.Application()
    app.router.add_get("/v1/huge", huge)
    base = await serve(app)
    transport = AiohttpTransport(base, "k", timeouts=Timeouts(read=5, total=5))
    try:
        with pytest.raises(APIResponseValidationError) as info:
            await asyncio.wait_for(transport.send(build_request("GET", "/v1/huge")), 30)
    finally:
        release.set()
        await transport.aclose()
    assert "Content-Length 1099511627776: refused unread" in str(info.value)


async def test_the_client_takes_its_body_cap() -> None:
    """``AsyncClient(max_body_size=...)`` reaches the transport: a page larger than it
    is refused with our error, while the default cap reads it."""
    async with Emulator(seed=3) as emu:
        key = emu.add_team(plan="premium", credits=1_000)
        async with AsyncClient(key, base_url=emu.url) as roomy:
            page = await roomy.templates.list_page()
        assert page.items
        async with AsyncClient(key, base_url=emu.url, max_body_size=256) as tight:
            with pytest.raises(APIResponseValidationError, match="256"):
                await tight.templates.list_page()
