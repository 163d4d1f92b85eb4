"""AsyncClient: configuration, session lifecycle, security rules, logging, transport errors.

These run against real aiohttp servers on loopback (the ``serve`` fixture).
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest
from aiohttp import web

from asyncclient import (
    AmbiguousCreationError,
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AsyncClient,
    AuthenticationError,
    RetryPolicy,
    TalkingAvatarRequest,
    Timeouts,
)
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL

KEY = "sk-very-secret-key-123"


def video_app(seen: list[web.Request] | None = None) -> web.Application:
    async def get_video(request: web.Request) -> web.Response:
        if seen is not None:
            seen.append(request)
        if request.headers.get("x-api-key") != KEY:
            return web.json_response(
                {"success": False, "message": "Authentication required: a valid x-api-key"},
                status=401,
            )
        vid = request.match_info["vid"]
        return web.json_response(
            {"success": True, "message": "ok", "data": {"id": vid, "status": "STARTED"}}
        )

    app = web.Application()
    app.router.add_get("/v1/video/{vid}", get_video)
    return app


# --- configuration -------------------------------------------------------------------


def test_missing_key_says_how_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_API_KEY, raising=False)
    with pytest.raises(ValueError, match="ASYNCCLIENT_API_KEY"):
        AsyncClient(base_url="https://api.example.test")


BLANK_KEYS = [" ", "\t", " \n "]


@pytest.mark.parametrize("blank", BLANK_KEYS, ids=repr)
def test_blank_key_is_refused_like_an_empty_one(
    monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    # Sent, a blank key is an empty x-api-key header: refused up front, as "" is, naming
    # where it came from.
    with pytest.raises(ValueError, match=r"^no API key: api_key is blank; pass api_key=\.\.\."):
        AsyncClient(api_key=blank, base_url="https://api.example.test")
    monkeypatch.setenv(ENV_API_KEY, blank)
    with pytest.raises(ValueError, match=r"^no API key: ASYNCCLIENT_API_KEY is blank; pass"):
        AsyncClient(base_url="https://api.example.test")
    with pytest.raises(ValueError, match=r"^no API key: pass api_key=\.\.\."):
        AsyncClient(api_key="", base_url="https://api.example.test")


def test_blank_previous_key_is_left_out_like_an_empty_one() -> None:
    # A token derived from a blank key would be no secret: no notification carrying one
    # is accepted.
    from asyncclient.awaiting.tokens import notification_tokens

    client = AsyncClient(
        api_key=KEY, base_url="https://api.example.test", previous_api_keys=["old", " ", ""]
    )
    assert client._notification_tokens == notification_tokens(KEY, previous_api_keys=["old"])


def test_missing_base_url_points_at_the_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    with pytest.raises(ValueError, match="asyncclient emulator") as info:
        AsyncClient(api_key=KEY)
    assert ENV_BASE_URL in str(info.value)


def test_environment_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_API_KEY, KEY)
    monkeypatch.setenv(ENV_BASE_URL, "https://api.example.test/")
    client = AsyncClient()
    assert client.base_url == "https://api.example.test"
    assert client._transport._api_key == KEY


@pytest.mark.parametrize(
    "url",
    ["http://api.example.test", "http://10.0.0.8:8080", "ftp://127.0.0.1", "https://", "x"],
)
def test_unsafe_or_bad_base_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        AsyncClient(api_key=KEY, base_url=url)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "https://a.test"]
)
def test_loopback_http_and_any_https_are_allowed(url: str) -> None:
    assert AsyncClient(api_key=KEY, base_url=url).base_url == url


# --- lifecycle -----------------------------------------------------------------------


def test_client_can_be_built_outside_a_running_loop() -> None:
    # A notebook builds the client in one cell and awaits in the next.
    client = AsyncClient(api_key=KEY, base_url="http://127.0.0.1:9")
    assert client._transport._session is None


async def test_session_is_created_lazily_and_closed(serve) -> None:  # type: ignore[no-untyped-def]
    url = await serve(video_app())
    client = AsyncClient(api_key=KEY, base_url=url)
    assert client._transport._session is None
    video = await client.videos.get("v1")
    session = client._transport._session
    assert video.id == "v1"
    assert session is not None and not session.closed
    await client.aclose()
    assert session.closed
    await client.aclose()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        await client.videos.get("v1")


async def test_callers_session_is_used_and_never_closed(serve) -> None:  # type: ignore[no-untyped-def]
    seen: list[web.Request] = []
    url = await serve(video_app(seen))
    async with aiohttp.ClientSession(headers={"X-Trace": "mine"}) as session:
        async with AsyncClient(api_key=KEY, base_url=url, session=session) as client:
            await client.videos.get("v2")
        assert not session.closed
        assert seen[0].headers["X-Trace"] == "mine"  # the caller's session was used


# --- security ------------------------------------------------------------------------


async def test_key_is_in_no_repr_error_or_log_line(serve, caplog) -> None:  # type: ignore[no-untyped-def]
    url = await serve(video_app())
    caplog.set_level(logging.DEBUG, logger="asyncclient")
    async with AsyncClient(api_key="sk-wrong-key-456", base_url=url) as client:
        with pytest.raises(AuthenticationError) as info:
            await client.videos.get("v1")
        texts = [repr(client), repr(client._transport), str(info.value), repr(info.value)]
        texts += [r.getMessage() for r in caplog.records]
    assert not any("sk-wrong-key-456" in t for t in texts)
    assert info.value.status_code == 401
    assert "x-api-key" in info.value.message


async def test_debug_log_line_per_request(serve, caplog) -> None:  # type: ignore[no-untyped-def]
    url = await serve(video_app())
    caplog.set_level(logging.DEBUG, logger="asyncclient")
    async with AsyncClient(api_key=KEY, base_url=url) as client:
        await client.videos.get("v7")
    lines = [r.getMessage() for r in caplog.records if r.name == "asyncclient"]
    assert len(lines) == 1
    assert lines[0].startswith("GET /v1/video/v7 -> 200 in ")
    assert "ms (attempt 1, " in lines[0] and "waiting for the limiter" in lines[0]
    assert KEY not in lines[0]
    record = next(r for r in caplog.records if r.name == "asyncclient")
    assert KEY not in repr(vars(record))  # nor in the record's attributes


async def test_redirects_are_not_followed_so_the_key_stays_home(serve) -> None:  # type: ignore[no-untyped-def]
    stolen: list[web.Request] = []
    other = await serve(video_app(stolen))

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{other}/v1/video/x")

    app = web.Application()
    app.router.add_get("/v1/video/{vid}", redirect)
    url = await serve(app)
    async with AsyncClient(api_key=KEY, base_url=url) as client:
        with pytest.raises(APIStatusError) as info:
            await client.videos.get("x")
    assert info.value.status_code == 302
    assert "not followed" in info.value.message
    assert stolen == []


# --- transport errors ----------------------------------------------------------------


NO_RETRY = RetryPolicy(attempts=1)


async def test_refused_connection_is_known_unsent(unused_tcp_port: int) -> None:
    url = f"http://127.0.0.1:{unused_tcp_port}"
    async with AsyncClient(api_key=KEY, base_url=url, retry=NO_RETRY) as c:
        with pytest.raises(APIConnectionError) as info:
            await c.videos.get("v1")
    assert info.value.request_sent is False
    assert not isinstance(info.value, APITimeoutError)


async def test_reset_after_sending_is_possibly_processed() -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.transport.abort()

    server = await asyncio.start_server(drop, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with AsyncClient(api_key=KEY, base_url=f"http://127.0.0.1:{port}") as client:
            with pytest.raises(AmbiguousCreationError) as info:
                await client.projects.create_talking_avatar(
                    script="Hello", avatar_id="a1", voice_id="v1", name="hello-1"
                )
    finally:
        server.close()
        await server.wait_closed()
    # The POST reached the server, so it is not resent: the caller must reconcile.
    cause = info.value.cause
    assert isinstance(cause, APIConnectionError) and cause.request_sent is True
    assert info.value.__cause__ is cause
    assert (info.value.method, info.value.path) == ("POST", "/v1/project/create/talking-avatar")
    assert isinstance(info.value.request, TalkingAvatarRequest)
    assert (info.value.format, info.value.name) == ("talking_avatar", "hello-1")


async def test_read_timeout_raises_api_timeout_error() -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await release.wait()
        writer.close()

    server = await asyncio.start_server(stall, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = AsyncClient(
            api_key=KEY,
            base_url=f"http://127.0.0.1:{port}",
            timeouts=Timeouts(connect=1.0, read=0.05, total=5.0),
            retry=NO_RETRY,
        )
        async with client:
            with pytest.raises(APITimeoutError) as info:
                await client.videos.get("v1")
    finally:
        release.set()
        server.close()
        await server.wait_closed()
    assert info.value.request_sent is True


async def test_request_escape_hatch_returns_data(serve) -> None:  # type: ignore[no-untyped-def]
    async def voices(request: web.Request) -> web.Response:
        assert request.headers["x-api-key"] == KEY
        return web.json_response({"success": True, "data": {"voices": [{"id": "v1"}]}})

    app = web.Application()
    app.router.add_get("/v1/voice/list", voices)
    url = await serve(app)
    async with AsyncClient(api_key=KEY, base_url=url) as client:
        assert await client.request("GET", "/v1/voice/list") == {"voices": [{"id": "v1"}]}
        with pytest.raises(ValueError, match="must start with '/'"):
            await client.request("GET", "v1/voice/list")
