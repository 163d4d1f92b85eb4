"""The service middleware: auth (spec 5), rate limits (8.1), faults, the request log, and
the ``X-Request-Id`` of every reply (the client's echoed, else one of its own)."""

from __future__ import annotations

import asyncio
import json
import math
import secrets
from collections.abc import Awaitable, Callable
from email.utils import formatdate

from aiohttp import web

from asyncclient.emulator._bomb import gzip_bomb
from asyncclient.emulator._context import CTX, KEY, PROJECT, Context, RequestRecord, error
from asyncclient.emulator._faults import GARBAGE_HEADERS, Fault
from asyncclient.emulator._ratelimit import Decision, unmetered
from asyncclient.emulator._state import Key

__all__ = ["ANONYMOUS_PLAN", "AUTH_MESSAGE", "service_middleware"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
AUTH_MESSAGE = "Authentication required: provide a valid API key in the x-api-key header"
MALFORMED_BODY = b'{"success": true, "data": {"videoId": "'
CREATION_PREFIX = "/v1/project/create"
ANONYMOUS_PLAN = "free"
"""The plan whose rate-limit headers a request without a valid key is answered with."""
PROXY_503_BODY = (
    b"<html><head><title>503 Service Temporarily Unavailable</title></head>"
    b"<body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>"
)
"""What a reverse proxy answers for an upstream that did not answer in time."""


def route_of(request: web.Request) -> str:
    """Return ``"METHOD /path-pattern"`` of a request, for counters."""
    resource = request.match_info.route.resource
    pattern = resource.canonical if resource is not None else request.path
    return f"{request.method} {pattern}"


async def _call(handler: Handler, request: web.Request) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        reason = {404: "Not found", 405: "Method not allowed"}.get(exc.status, exc.reason)
        return error(exc.status, reason)


def _drop(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


async def _apply(fault: Fault | None, handler: Handler, request: web.Request) -> web.StreamResponse:
    if fault is None:
        return await _call(handler, request)
    if fault.kind == "status":
        return error(fault.status, fault.message)
    if fault.kind == "rate_burst":
        return error(429, "rate limit exceeded")
    if fault.kind == "latency":
        await asyncio.sleep(fault.latency)
        return await _call(handler, request)
    if fault.kind == "drop_before":
        _drop(request)
        return web.Response(status=499)
    response = await _call(handler, request)  # every other kind processes the request
    if fault.kind == "drop_after":
        _drop(request)
        return response
    if fault.kind == "status_after":
        return error(fault.status, fault.message)
    if fault.kind == "hold_reply":
        await asyncio.sleep(fault.latency)
        return response
    if fault.kind == "garbage_headers":
        return response
    if fault.kind == "ok_without_ids":
        return web.json_response({"success": True, "message": "ok"})
    if fault.kind == "proxy_503":
        return web.Response(status=503, body=PROXY_503_BODY, content_type="text/html")
    if fault.kind == "gzip_bomb":
        return await gzip_bomb(request, fault.size)
    # malformed: processed, but the body is not valid JSON
    return web.Response(status=200, body=MALFORMED_BODY, content_type="application/json")


def _headers(ctx: Context, key: Key, decision: Decision, fault: Fault | None) -> dict[str, str]:
    """The rate-limit headers of a reply, as the fault (if any) makes them."""
    headers = decision.headers()
    if fault is None:
        return headers
    if fault.kind == "rate_burst":
        seconds = fault.retry_after
        wait = seconds if isinstance(seconds, (int, float)) else 1
        headers = {
            "X-RateLimit-Limit": decision.headers()["X-RateLimit-Limit"],  # per real minute
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(math.ceil(ctx.clock.now() + max(0.0, float(wait)))),
            "Retry-After": _seconds_text(seconds),
        }
    elif fault.kind == "garbage_headers":
        headers = dict(GARBAGE_HEADERS[(fault.applied - 1) % len(GARBAGE_HEADERS)])
    headers.update(fault.headers or {})
    return headers


def request_id_of(request: web.Request) -> str:
    """The id a reply names: the client's ``X-Request-Id`` when it sent a usable one (at
    most 128 printable ASCII characters), else one of the service's own."""
    given = request.headers.get("X-Request-Id", "")
    if 0 < len(given) <= 128 and given.isascii() and given.isprintable():
        return given
    return f"emu_{secrets.token_hex(12)}"


def _seconds_text(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else str(value)


async def _creation_name(request: web.Request) -> str | None:
    """The title (template) or name of a creation request's body, for the log."""
    if request.method != "POST" or not request.path.startswith(CREATION_PREFIX):
        return None
    try:
        body = json.loads(await request.read() or b"{}")  # cached: the handler reads it again
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    name = body.get("title", body.get("name"))
    return name if isinstance(name, str) else None


def _record(
    ctx: Context,
    request: web.Request,
    key: Key | None,
    status: int,
    fault: Fault | None,
    name: str | None = None,
) -> None:
    route = route_of(request)
    ctx.counters.requests[route] += 1
    ctx.counters.statuses[status] += 1
    ctx.requests.append(
        RequestRecord(
            time=ctx.clock.now(),
            team=key.team.id if key else None,
            key=key.id if key else None,
            method=request.method,
            path=request.path,
            route=route,
            status=status,
            fault=fault.kind if fault else None,
            name=name,
            project=request.get(PROJECT),
        )
    )


@web.middleware
async def service_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Authenticate, rate-limit, inject faults and record every ``/v1`` request."""
    ctx = request.app[CTX]
    if not ctx.base_url:  # the app is mounted without Emulator.start()
        ctx.base_url = f"{request.scheme}://{request.host}"
    if not request.path.startswith("/v1/"):
        return await handler(request)
    key = ctx.store.keys.get(request.headers.get("x-api-key", ""))
    if key is None:
        # spec 5.3; a refused key consumes no tokens, and the response carries the
        # rate-limit headers all the same (spec 8.1: each response does): those of the
        # Free plan's untouched bucket, as no key names a plan
        response: web.StreamResponse = error(401, AUTH_MESSAGE)
        response.headers["Date"] = formatdate(ctx.clock.now(), usegmt=True)
        response.headers["X-Request-Id"] = request_id_of(request)
        response.headers.update(unmetered(ANONYMOUS_PLAN, ctx.clock).headers())
        _record(ctx, request, None, 401, None)
        return response
    request[KEY] = key
    name = await _creation_name(request)
    decision = key.bucket.take()
    fault: Fault | None = None
    if not decision.allowed:
        ctx.counters.rate_limited += 1
        response = error(429, "rate limit exceeded")
    elif not key.team.permitted:
        response = error(403, "subscription required")
    else:
        fault = ctx.faults.pick(request.method, request.path)
        if fault is not None:
            ctx.counters.faults[fault.kind] += 1
        try:
            response = await _apply(fault, handler, request)
        except asyncio.CancelledError:  # the client went away while a reply was held
            _record(ctx, request, key, 499, fault, name)
            raise
    if not response.prepared:
        # One clock, as a service has: Date is the service's time, as createdAt and
        # X-RateLimit-Reset are (Reset - Date is real seconds to wait).
        response.headers["Date"] = formatdate(ctx.clock.now(), usegmt=True)
        response.headers["X-Request-Id"] = request_id_of(request)  # echoed: logs meet
        response.headers.update(_headers(ctx, key, decision, fault))
    _record(ctx, request, key, response.status, fault, name)
    return response
