"""AiohttpTransport alone: what it sends, what it hands back, how it fails.

Against real aiohttp servers on loopback (the ``serve`` fixture) and tiny raw
socket servers; no caller, no retries, no decoding.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web

from asyncclient.errors import APIConnectionError, APITimeoutError
from asyncclient.http.attempts import Attempt, Deadlines
from asyncclient.http.protocol import Request, build_request
from asyncclient.http.transport import _SENDING, AiohttpTransport, Timeouts
from tests.conftest import Serve

KEY = "sk-transport-key-789"


def echo_app(seen: list[web.Request]) -> web.Application:
    """Answers with what it received; ``/v1/status/{code}`` answers that status."""

    async def echo(request: web.Request) -> web.Response:
        seen.append(request)
        body = await request.read()
        return web.json_response(
            {
                "method": request.method,
                "path": request.path,
                "query": sorted(request.query.items()),
                "body": body.decode(),
            },
            headers={"X-RateLimit-Remaining": "41"},
        )

    async def status(request: web.Request) -> web.Response:
        seen.append(request)
        code = int(request.match_info["code"])
        return web.Response(
            status=code, body=b'{"success":false,"message":"no"}', headers={"X-Thing": str(code)}
        )

    app = web.Application()
    app.router.add_route("*", "/v1/echo", echo)
    app.router.add_route("*", "/v1/status/{code}", status)
    return app


async def test_send_carries_method_path_query_body_and_the_key(serve: Serve) -> None:
    seen: list[web.Request] = []
    url = await serve(echo_app(seen))
    transport = AiohttpTransport(url + "/", KEY)
    try:
        request = build_request("POST", "/v1/echo", params={"q": "a b", "n": 2}, json_body={"x": 1})
        response = await transport.send(request)
    finally:
        await transport.aclose()
    assert response.status == 200
    assert response.headers["X-RateLimit-Remaining"] == "41"
    assert response.headers["x-ratelimit-remaining"] == "41"  # case-insensitive
    assert json.loads(response.body) == {
        "method": "POST",
        "path": "/v1/echo",
        "query": [["n", "2"], ["q", "a b"]],
        "body": '{"x":1}',
    }
    (received,) = seen
    assert received.headers["x-api-key"] == KEY
    assert received.headers["User-Agent"] == "asyncclient"
    assert received.headers["Content-Type"] == "application/json"


async def test_the_key_and_user_agent_are_set_by_the_transport(serve: Serve) -> None:
    seen: list[web.Request] = []
    url = await serve(echo_app(seen))
    transport = AiohttpTransport(url, KEY, user_agent="my-app/1.0")
    try:
        # A request that carries its own (wrong) key header: the transport's wins.
        await transport.send(Request("GET", "/v1/echo", headers={"X-Api-Key": "other"}))
    finally:
        await transport.aclose()
    assert seen[0].headers.getall("x-api-key") == [KEY]
    assert seen[0].headers["User-Agent"] == "my-app/1.0"


@pytest.mark.parametrize("code", [400, 401, 404, 429, 500, 503])
async def test_error_statuses_are_returned_not_raised(serve: Serve, code: int) -> None:
    seen: list[web.Request] = []
    url = await serve(echo_app(seen))
    transport = AiohttpTransport(url, KEY)
    try:
        response = await transport.send(Request("GET", f"/v1/status/{code}"))
    finally:
        await transport.aclose()
    assert response.status == code
    assert response.headers["X-Thing"] == str(code)
    assert response.body == b'{"success":false,"message":"no"}'
    assert len(seen) == 1  # one attempt: retrying is not the transport's business


async def test_redirects_are_returned_not_followed(serve: Serve) -> None:
    stolen: list[web.Request] = []
    other = await serve(echo_app(stolen))

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{other}/v1/echo")

    app = web.Application()
    app.router.add_get("/v1/video/{vid}", moved)
    url = await serve(app)
    transport = AiohttpTransport(url, KEY)
    try:
        response = await transport.send(Request("GET", "/v1/video/x"))
    finally:
        await transport.aclose()
    assert response.status == 302
    assert response.headers["Location"] == f"{other}/v1/echo"
    assert stolen == []  # the key never went to the other origin


async def test_own_session_is_lazy_and_closed_a_callers_is_left_open(serve: Serve) -> None:
    seen: list[web.Request] = []
    url = await serve(echo_app(seen))
    own = AiohttpTransport(url, KEY)
    assert own._session is None
    await own.send(Request("GET", "/v1/echo"))
    session = own._session
    assert session is not None and not session.closed
    await own.aclose()
    assert session.closed
    with pytest.raises(RuntimeError, match="closed"):
        await own.send(Request("GET", "/v1/echo"))

    async with aiohttp.ClientSession() as theirs:
        borrowed = AiohttpTransport(url, KEY, session=theirs)
        assert (await borrowed.send(Request("GET", "/v1/echo"))).status == 200
        await borrowed.aclose()
        assert not theirs.closed
    assert seen[-1].headers["x-api-key"] == KEY


# -- failures: ours, with whether the request left ------------------------------------------


@pytest.mark.parametrize("own_session", [True, False], ids=["own-session", "callers-session"])
async def test_a_refused_connection_is_known_unsent(
    unused_tcp_port: int, own_session: bool
) -> None:
    # Even on a caller's session (no trace hooks: "possibly sent" by default), a
    # connection that was never made sent nothing.
    async with aiohttp.ClientSession() as theirs:
        session = None if own_session else theirs
        transport = AiohttpTransport(f"http://127.0.0.1:{unused_tcp_port}", KEY, session=session)
        try:
            with pytest.raises(APIConnectionError) as info:
                await transport.send(Request("POST", "/v1/project/create", body=b"{}"))
        finally:
            await transport.aclose()
    error = info.value
    assert error.request_sent is False and not isinstance(error, APITimeoutError)
    assert (error.method, error.path) == ("POST", "/v1/project/create")
    assert KEY not in str(error)


async def test_a_reset_after_sending_is_possibly_sent() -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.transport.abort()

    server = await asyncio.start_server(drop, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = AiohttpTransport(f"http://127.0.0.1:{port}", KEY)
    try:
        with pytest.raises(APIConnectionError) as info:
            await transport.send(Request("POST", "/v1/project/create", body=b"{}"))
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert info.value.request_sent is True
    assert not isinstance(info.value, APITimeoutError)


async def test_no_answer_in_time_is_a_timeout_after_sending() -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await release.wait()
        writer.close()

    server = await asyncio.start_server(stall, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = AiohttpTransport(
        f"http://127.0.0.1:{port}", KEY, timeouts=Timeouts(connect=1.0, read=0.01, total=5.0)
    )
    try:
        with pytest.raises(APITimeoutError) as info:
            await transport.send(Request("GET", "/v1/video/v1"))
    finally:
        release.set()
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert info.value.request_sent is True
    assert (info.value.method, info.value.path) == ("GET", "/v1/video/v1")


# -- the per-request path: shared headers, the request class, the read timer --------------


async def test_a_built_get_carries_the_key_the_user_agent_and_json_headers(serve: Serve) -> None:
    seen: list[web.Request] = []
    url = await serve(echo_app(seen))
    transport = AiohttpTransport(url, KEY, user_agent="ua/2")
    try:
        for _ in range(2):  # the prepared headers serve every request alike
            assert (await transport.send(build_request("GET", "/v1/echo"))).status == 200
    finally:
        await transport.aclose()
    for received in seen:
        assert received.headers.getall("x-api-key") == [KEY]
        assert received.headers["User-Agent"] == "ua/2"
        assert received.headers["Accept"] == "application/json"


async def test_whether_a_request_left_is_forgotten_once_it_is_answered(serve: Serve) -> None:
    url = await serve(echo_app([]))
    transport = AiohttpTransport(url, KEY)
    try:
        await transport.send(Request("GET", "/v1/echo"))
        assert _SENDING.get() is None
    finally:
        await transport.aclose()
    dead = AiohttpTransport("http://127.0.0.1:9", KEY)  # discard port: refused
    try:
        with pytest.raises(APIConnectionError):
            await dead.send(Request("POST", "/v1/project/create", body=b"{}"))
        assert _SENDING.get() is None
    finally:
        await dead.aclose()


async def http_server(
    respond: Callable[[asyncio.StreamWriter, int], Awaitable[None]],
) -> tuple[asyncio.Server, str, list[int]]:
    """A raw HTTP/1.1 server: ``respond(writer, n)`` answers the n-th request of a connection.

    Returns the server, its URL and the count of requests per connection.
    """
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(0)
        index = len(connections) - 1
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                connections[index] += 1
                await respond(writer, connections[index])
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", connections


def head(length: int) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {length}\r\n\r\n".encode()
    )


async def test_a_body_that_keeps_coming_is_read_however_long_it_takes() -> None:
    body = b'{"success":true,"data":"' + b"x" * 8 + b'"}'

    async def drip(writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(head(len(body)))
        for i in range(0, len(body), 4):  # a pause shorter than `read` between chunks
            await writer.drain()
            await asyncio.sleep(0.03)
            writer.write(body[i : i + 4])
        await writer.drain()

    server, url, _ = await http_server(drip)
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=0.1, total=10.0))
    try:
        response = await transport.send(Request("GET", "/v1/video/v1"))  # 9 pauses: 0.27 s
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert response.body == body


Respond = Callable[[asyncio.StreamWriter, int], Awaitable[None]]


def head_then_stall(release: asyncio.Event) -> Respond:
    """A server's answer: the head and the first bytes of a body, then nothing until
    ``release`` is set."""

    async def stall(writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(head(100) + b'{"success":')
        await writer.drain()
        await release.wait()

    return stall


async def test_a_body_that_stops_coming_is_a_timeout() -> None:
    release = asyncio.Event()

    server, url, _ = await http_server(head_then_stall(release))
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=0.05, total=10.0))
    try:
        with pytest.raises(APITimeoutError) as info:
            await transport.send(Request("GET", "/v1/video/v1"))
    finally:
        release.set()
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert info.value.request_sent is True


async def test_a_connection_idle_longer_than_read_is_reused_without_a_timeout() -> None:
    body = b'{"success":true}'

    async def quick(writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(head(len(body)) + body)
        await writer.drain()

    server, url, connections = await http_server(quick)
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=0.05, total=10.0))
    try:
        for _ in range(3):
            assert (await transport.send(Request("GET", "/v1/video/v1"))).body == body
            await asyncio.sleep(0.12)  # the read timer of the last request comes and goes
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert connections == [3]  # one keep-alive connection answered all three


async def test_a_shorter_read_timeout_on_a_later_request_is_kept() -> None:
    release = asyncio.Event()
    body = b'{"success":true}'

    async def once_then_stall(writer: asyncio.StreamWriter, n: int) -> None:
        if n == 1:
            writer.write(head(len(body)) + body)
            await writer.drain()
        else:
            await release.wait()

    server, url, connections = await http_server(once_then_stall)
    # The second request, on the same connection, times out after its own 0.05 s.
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=30.0, total=60.0))
    try:
        await transport.send(Request("GET", "/v1/video/v1"))
        with pytest.raises(APITimeoutError):
            await asyncio.wait_for(
                transport.send(
                    Request("GET", "/v1/video/v1"),
                    timeouts=Timeouts(connect=1.0, read=0.05, total=60.0),
                ),
                timeout=10.0,  # far beyond 0.05 s, far below 30 s
            )
    finally:
        release.set()
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert connections == [2]


# -- total and read: one loop timer per transport, not aiohttp's three per attempt ---------


async def test_a_body_that_keeps_coming_past_total_is_a_timeout() -> None:
    body = b'{"success":true,"data":"' + b"x" * 40 + b'"}'

    async def drip(writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(head(len(body)))
        for i in range(0, len(body), 2):  # every pause well within `read`
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(body[i : i + 2])
        await writer.drain()

    server, url, _ = await http_server(drip)
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=0.5, total=0.2))
    try:
        with pytest.raises(APITimeoutError) as info:
            await transport.send(Request("GET", "/v1/video/v1"))
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    assert info.value.request_sent is True


async def test_a_timeout_leaves_the_task_uncancelled_and_a_cancel_stays_a_cancel() -> None:
    release = asyncio.Event()

    async def stall(writer: asyncio.StreamWriter, n: int) -> None:
        await release.wait()

    server, url, _ = await http_server(stall)
    transport = AiohttpTransport(url, KEY, timeouts=Timeouts(connect=1.0, read=0.05, total=5.0))
    try:
        with pytest.raises(APITimeoutError):
            await transport.send(Request("GET", "/v1/video/v1"))
        task = asyncio.current_task()
        assert task is not None
        if hasattr(task, "cancelling"):  # 3.11+: the timeout took its cancel back
            assert task.cancelling() == 0
        await asyncio.sleep(0)  # and nothing is left to cancel the task later
        # The caller's own cancel is a cancel, not a timeout, even once the deadline is past.
        sending = asyncio.create_task(transport.send(Request("GET", "/v1/video/v1")))
        await asyncio.sleep(0.01)
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sending
        assert transport._deadlines is not None and not transport._deadlines._attempts
    finally:
        release.set()
        await transport.aclose()
        server.close()
        await server.wait_closed()


async def test_many_attempts_share_one_loop_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"success":true}'

    async def quick(writer: asyncio.StreamWriter, n: int) -> None:  # sets no timers itself
        writer.write(head(len(body)) + body)
        await writer.drain()

    server, url, _ = await http_server(quick)
    transport = AiohttpTransport(url, KEY)
    loop = asyncio.get_running_loop()
    timers: list[float] = []
    call_at = loop.call_at

    def counting_call_at(when: float, *args: object, **kwargs: object) -> asyncio.TimerHandle:
        timers.append(when)
        return call_at(when, *args, **kwargs)  # type: ignore[arg-type]

    try:
        await asyncio.gather(*(transport.send(Request("GET", "/v1/a")) for _ in range(10)))
        monkeypatch.setattr(loop, "call_at", counting_call_at)
        for _ in range(3):  # on the connections made above
            await asyncio.gather(*(transport.send(Request("GET", "/v1/a")) for _ in range(10)))
    finally:
        monkeypatch.undo()
        await transport.aclose()
        server.close()
        await server.wait_closed()
    # aiohttp's total, connect and read timers would be 3 or 4 an attempt: 90 or more.
    assert len(timers) <= 1


async def test_a_callers_session_keeps_the_read_timeout() -> None:
    # Without our request class nothing says when the request is written: aiohttp
    # keeps every timeout of such an attempt, as before.
    release = asyncio.Event()

    server, url, _ = await http_server(head_then_stall(release))
    session = aiohttp.ClientSession()
    transport = AiohttpTransport(
        url, KEY, session=session, timeouts=Timeouts(connect=1.0, read=0.05, total=10.0)
    )
    try:
        with pytest.raises(APITimeoutError):
            await transport.send(Request("GET", "/v1/video/v1"))
        assert transport._deadlines is None  # nothing of ours was watched
    finally:
        release.set()
        await transport.aclose()
        await session.close()
        server.close()
        await server.wait_closed()


async def test_read_runs_only_once_the_request_is_written() -> None:
    # No total: while the attempt is not written (connecting: aiohttp's connect timeout
    # keeps that), read does not run; once written, it does.
    loop = asyncio.get_running_loop()
    waiting = asyncio.create_task(asyncio.sleep(10))
    watch = Deadlines(loop)
    attempt = Attempt(waiting, math.inf, 0.05)
    watch.add(attempt, loop.time() + 0.05)
    try:
        await asyncio.sleep(0.15)
        assert not waiting.done() and not attempt.expired
        attempt.started_sending()
        await asyncio.sleep(0.15)
        assert attempt.expired and waiting.cancelled()
        assert not watch._attempts and watch._handle is None  # nothing left to watch
    finally:
        waiting.cancel()
        watch.close()
