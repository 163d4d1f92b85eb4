"""``asyncclient.asgi.NotificationApp``: the aiohttp receiver's cases, answered by the ASGI one.

Each case runs the application under a real uvicorn server on loopback (in this process,
on its event loop) and sends real HTTP to it, as ``tests/test_webhooks.py`` does for
``WebhookReceiver.handle``: hostile and oversized bodies, missing and wrong tokens,
duplicates, a forged copy in flight, confirmation through the API (409, 503).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import uvicorn

import asyncclient
from asyncclient.asgi import NotificationApp, lifespan
from asyncclient.asgi.receiver import Scope
from asyncclient.errors import APIConnectionError, ValidationError
from asyncclient.webhooks import WebhookEvent, WebhookReceiver
from tests.test_webhooks import (
    FORM_A,
    FORM_B,
    HOSTILE,
    FakeClient,
    Post,
    form_a,
    json_bytes,
)


@asynccontextmanager
async def uvicorn_serving(
    app: Any, sock: socket.socket | None = None, **options: Any
) -> AsyncIterator[str]:
    """``app`` served by uvicorn on ``sock`` (bound, by default to a free loopback port),
    in this event loop; its base URL (``https`` when ``ssl_certfile`` is given). Its
    lifespan runs (``lifespan="on"``)."""
    if sock is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, lifespan="on", log_config=None, access_log=False, ws="none", **options
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()  # raises what stopped it
                raise AssertionError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        scheme = "https" if options.get("ssl_certfile") else "http"
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        sock.close()


@pytest_asyncio.fixture
async def post() -> AsyncIterator[Post]:
    """POST a body (bytes, or JSON) to a URL; returns the status and the decoded answer."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:

        async def send(url: str, body: object, **options: Any) -> tuple[int, dict[str, Any]]:
            data = body if isinstance(body, bytes) else json_bytes(body)
            async with session.post(url, data=data, **options) as resp:
                return resp.status, await resp.json(content_type=None)

        yield send


async def raw_post(url: str, head: bytes, chunks: list[bytes]) -> int:
    """POST ``chunks`` with headers ``head`` over a plain socket; the answer's status."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"POST /hooks HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n")
        for chunk in chunks:
            writer.write(chunk)
        await writer.drain()
        status = await reader.readline()
        return int(status.split()[1])
    finally:
        writer.close()
        await writer.wait_closed()


# -- the same answers as the aiohttp receiver ---------------------------------------------


async def test_the_receiver_answers_400_to_any_body_it_cannot_read(post: Post) -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, max_body=4096)
    async with uvicorn_serving(NotificationApp(receiver)) as base:
        url = base + "/hooks"
        oversized = json_bytes({**FORM_B, "pad": "x" * 5000})
        for body in [*HOSTILE.values(), b"", b"\x00" * 10, oversized]:
            status, answer = await post(url, body)
            assert (status, answer["success"]) == (400, False), (body[:40], answer)
        # Announced larger than max_body: refused before a byte of it is read.
        assert await raw_post(base, b"Content-Length: 100000\r\n", []) == 400
        # Sent in chunks, with no length announced: refused once past max_body.
        chunk = b"1000\r\n" + b"x" * 4096 + b"\r\n"
        chunked = b"Transfer-Encoding: chunked\r\n"
        assert await raw_post(base, chunked, [chunk, chunk, b"0\r\n\r\n"]) == 400
        assert received == []
        assert (await post(url, FORM_A))[0] == 200 and len(received) == 1


async def test_a_missing_token_is_401_a_wrong_one_403_and_neither_is_remembered(
    post: Post,
) -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, token="right-token")
    async with uvicorn_serving(NotificationApp(receiver)) as base:
        url = base + "/hooks/video"
        assert (await post(url, FORM_A))[0] == 401
        wrongs = ["=wrong", "=", "=right-toke", "=%C3%A9", "=%FF", "=right-token&token=x"]
        for wrong in wrongs:
            assert (await post(url + "?token" + wrong, FORM_A))[0] == 403, wrong
        assert (await post(url + "?token=right-token", b"not json"))[0] == 400
        assert received == [] and receiver.refused == 7
        status, answer = await post(receiver.url_for(url), FORM_A)
        assert (status, answer) == (200, {"success": True})  # not a duplicate of a refused one
        assert [e.video_id for e in received] == ["vid_1"] and receiver.duplicates == 0
        assert (await post(receiver.url_for(url), FORM_A)) == (
            200,
            {"success": True, "message": "duplicate ignored"},
        )
        assert len(received) == 1 and receiver.duplicates == 1


async def test_a_copy_in_flight_does_not_shadow_the_genuine_notification(post: Post) -> None:
    entered = asyncio.Event()
    release = asyncio.Event()
    handled: list[str | None] = []

    async def handle(event: WebhookEvent) -> None:
        if event.url == "https://evil.example/v.mp4":
            entered.set()
            await release.wait()
            raise RuntimeError("the handler's own check: not our video")
        handled.append(event.url)

    receiver = WebhookReceiver(handle)
    async with uvicorn_serving(NotificationApp(receiver)) as base:
        forgery = asyncio.create_task(post(base, form_a(url="https://evil.example/v.mp4")))
        await entered.wait()
        genuine = asyncio.create_task(post(base, FORM_A))
        await asyncio.sleep(0.05)
        release.set()
        assert (await forgery)[0] == 500
        assert (await genuine)[0] == 200
    assert handled == ["https://cdn.example/v1.mp4?sig=x"] and receiver.duplicates == 0


async def test_what_the_service_contradicts_is_409_and_a_failed_read_503(post: Post) -> None:
    api = FakeClient()
    api.set("vid_1", "proj_1", "STARTED")
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, confirm_with=api)  # type: ignore[arg-type]
    async with uvicorn_serving(NotificationApp(receiver)) as url:
        status, answer = await post(url, FORM_A)  # claims COMPLETED; the service says STARTED
        assert (status, answer["message"]) == (409, "not confirmed by the service")
        api.set("vid_1", "proj_1", "COMPLETED")
        api.error = APIConnectionError("connection reset")
        assert (await post(url, FORM_A))[0] == 503
        api.error = None
        assert (await post(url, FORM_A))[0] == 200  # the genuine one, confirmed at last
        assert (await post(url, FORM_A))[0] == 200  # a duplicate: no read, not handed over
    (event,) = received
    assert event.confirmed is not None and event.confirmed.url == "https://cdn.example/real.mp4"
    assert receiver.refused == 1 and receiver.duplicates == 1
    assert api.reads == ["get vid_1"] * 3


async def test_only_post_is_answered_and_alone_it_runs_under_any_server(post: Post) -> None:
    received: list[WebhookEvent] = []
    async with (
        uvicorn_serving(NotificationApp(WebhookReceiver(received.append))) as url,
        aiohttp.ClientSession() as http,
        http.get(url + "/anything") as resp,
    ):
        assert (resp.status, resp.headers["Allow"]) == (405, "POST")
        assert (await post(url + "/anything", FORM_A))[0] == 200  # the path is the mount's
    assert len(received) == 1


# -- where the receiver finds its client -----------------------------------------------------


async def test_without_a_client_the_answer_is_503_so_the_service_retries(
    post: Post, caplog: pytest.LogCaptureFixture
) -> None:
    async with uvicorn_serving(NotificationApp()) as url:  # no lifespan opened a client
        assert (await post(url, FORM_A)) == (
            503,
            {"success": False, "message": "receiver not ready; retry later"},
        )
        assert (await post(url, FORM_A))[0] == 503
    assert caplog.text.count("NotificationApp: no client") == 1


def test_bad_sources_and_factories_are_named() -> None:
    with pytest.raises(ValidationError, match="source: must be an AsyncClient"):
        NotificationApp("https://example.com")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="make_client: must be a callable"):
        lifespan(None)  # type: ignore[arg-type]


async def test_a_factory_that_makes_no_client_fails_the_startup() -> None:
    run = lifespan(lambda: "not a client")  # type: ignore[arg-type,return-value]
    with pytest.raises(ValidationError, match="make_client: must return an AsyncClient, not str"):
        async with run(None):
            pass


# -- what importing costs ---------------------------------------------------------------------


def loaded_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout))


def among(loaded: set[str], *roots: str) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in roots or m in roots)


def test_importing_asyncclient_never_imports_starlette_nor_the_asgi_face() -> None:
    loaded = loaded_after("import asyncclient")
    assert among(loaded, "starlette", "fastapi", "uvicorn") == []
    assert not any(m.startswith("asyncclient.asgi") for m in loaded)


def test_the_receiver_and_the_lifespan_need_neither_starlette_nor_aiohttp_s_server() -> None:
    loaded = loaded_after(
        "from asyncclient import AsyncClient\n"
        "from asyncclient.asgi import NotificationApp, lifespan\n"
        "client = AsyncClient(api_key='k', base_url='http://127.0.0.1:1')\n"
        "NotificationApp(client), NotificationApp(), lifespan(lambda: client)\n"
        "client.webhooks"
    )
    assert {"asyncclient.asgi.receiver", "asyncclient.webhooks"} <= loaded
    assert among(loaded, "starlette", "fastapi") == []
    assert "aiohttp.web" not in loaded
    assert "starlette" in loaded_after("from asyncclient.asgi import get_client")


# -- the ASGI scope, read as the aiohttp request is -------------------------------------------


@pytest.mark.parametrize(
    ("query", "tokens"),
    [
        (b"", []),
        (b"token=", [""]),
        (b"tenant=7&token=a%26b", ["a&b"]),
        (b"token=a&token=b", ["a", "b"]),
    ],
)
def test_the_query_is_read_with_every_value(query: bytes, tokens: list[str]) -> None:
    from asyncclient.asgi.receiver import _query

    scope: Scope = {"type": "http", "query_string": query}
    assert _query(scope).get("token", []) == tokens


def test_the_face_is_not_among_the_package_s_names() -> None:
    assert not any("asgi" in name.lower() for name in asyncclient.__all__)
