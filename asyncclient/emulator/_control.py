"""The control API under ``/_emulator/`` (no key, not rate limited, not logged).

Besides teams, faults, the clock and the logs, it can note when each video was first
served finished (``POST /_emulator/served``, off until asked) and tell every video's
creation, finishing and first-served times in pages (``GET /_emulator/timeline``): what
a benchmark needs to time a client's detection of finished videos against the service.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from asyncclient.emulator._clock import iso
from asyncclient.emulator._context import CTX, Context, error, ok, read_json
from asyncclient.emulator._ratelimit import PLANS

__all__ = ["Served", "add_control_routes"]

JSON = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_FINISHED = frozenset({"COMPLETED", "FAILED"})
_VIDEO_READS = "/v1/video/"
TIMELINE_PAGE = 100_000
"""The most videos ``GET /_emulator/timeline`` tells in one page."""


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


async def create_team(request: web.Request) -> web.Response:
    """POST /_emulator/teams {plan, credits, perMinute?, burst?, permitted?, name?}."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    plan = body.get("plan", "free")
    if plan not in PLANS:
        return error(400, f"plan: unknown plan (use {', '.join(PLANS)})")
    try:
        credits = _int_or_none(body.get("credits", 1000))
        per_minute = _int_or_none(body.get("perMinute", body.get("per_minute")))
        burst = _int_or_none(body.get("burst"))
    except ValueError as exc:
        return error(400, f"credits, perMinute, burst: {exc}")
    key = ctx.store.add_team(
        plan,
        credits if credits is not None else 1000,
        per_minute=per_minute,
        burst=burst,
        permitted=bool(body.get("permitted", True)),
        name=body.get("name") if isinstance(body.get("name"), str) else None,
    )
    return ok({"apiKey": key.secret, "teamId": key.team.id, "keyId": key.id}, status=201)


async def list_teams(request: web.Request) -> web.Response:
    """GET /_emulator/teams: teams and their balances."""
    teams = [
        {
            "id": t.id,
            "name": t.name,
            "plan": t.plan,
            "credits": t.credits,
            "perMinute": t.per_minute,
            "burst": t.burst,
            "permitted": t.permitted,
        }
        for t in request.app[CTX].store.teams.values()
    ]
    return ok({"teams": teams})


async def catalog(request: web.Request) -> web.Response:
    """GET /_emulator/catalog."""
    return ok(request.app[CTX].catalog.to_json())


async def requests_log(request: web.Request) -> web.Response:
    """GET /_emulator/requests[?limit=N]: the most recent requests, oldest first."""
    log = request.app[CTX].requests
    try:
        limit = int(request.query.get("limit", len(log)))
    except ValueError:
        return error(400, "limit: must be an integer")
    records = log[-limit:] if limit > 0 else []
    return ok({"requests": [r.to_json() for r in records], "total": len(log)})


async def counters(request: web.Request) -> web.Response:
    """GET /_emulator/counters."""
    ctx = request.app[CTX]
    out = ctx.counters.to_json()
    out["webhookAttempts"] = len(ctx.dispatcher.attempts)
    return ok(out)


async def webhooks(request: web.Request) -> web.Response:
    """GET /_emulator/webhooks: every delivery attempt."""
    attempts = request.app[CTX].dispatcher.attempts
    return ok({"attempts": [a.to_json() for a in attempts]})


async def add_fault(request: web.Request) -> web.Response:
    """POST /_emulator/faults {route, kind, status?, message?, latency?, times?, ...}.

    Also ``probability``, ``sequence``, ``retryAfter`` (or ``retry_after``), ``headers``
    and ``size`` (of ``gzip_bomb``).
    """
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    if "retryAfter" in body:
        body["retry_after"] = body.pop("retryAfter")
    allowed = {
        "route",
        "kind",
        "status",
        "message",
        "latency",
        "times",
        "probability",
        "sequence",
        "retry_after",
        "headers",
        "size",
    }
    unknown = sorted(set(body) - allowed)
    if unknown:
        return error(400, f"{unknown[0]}: unknown field")
    try:
        fault = request.app[CTX].faults.add(**body)
    except (TypeError, ValueError) as exc:
        return error(400, f"fault: {exc}")
    return ok(fault.to_json(), status=201)


async def list_faults(request: web.Request) -> web.Response:
    """GET /_emulator/faults."""
    return ok({"faults": [f.to_json() for f in request.app[CTX].faults.rules]})


async def clear_faults(request: web.Request) -> web.Response:
    """DELETE /_emulator/faults."""
    request.app[CTX].faults.clear()
    return ok({"faults": []})


async def fail_video(request: web.Request) -> web.Response:
    """POST /_emulator/videos/{videoId}/fail {message}."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    try:
        video = ctx.store.fail_video(
            request.match_info["videoId"], str(body.get("message") or "generation failed")
        )
    except KeyError:
        return error(404, "Video not found")
    except ValueError as exc:
        return error(409, str(exc))
    ctx.dispatcher.watch(video)
    return ok({"videoId": video.id, "status": "FAILED", "message": video.error})


async def advance(request: web.Request) -> web.Response:
    """POST /_emulator/clock/advance {seconds}: move the service clock, deliver what is due."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    seconds = body.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        return error(400, "seconds: must be a number of at least 0")
    ctx.clock.advance(float(seconds))
    await ctx.dispatcher.settle()
    return await clock(request)


async def clock(request: web.Request) -> web.Response:
    """GET /_emulator/clock: the service time."""
    ctx = request.app[CTX]
    now = ctx.clock.now()
    return ok({"now": iso(now), "unix": now, "timeScale": ctx.clock.time_scale})


class Served:
    """When each video was first served finished (``COMPLETED`` or ``FAILED``) in a reply
    of the service API: a list page or its detail read; service time, by row of the
    video table (8 bytes a video), NaN while not yet. Notes nothing until ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.first = array("d")

    def at(self, row: int) -> float | None:
        """The service time ``row`` was first served finished, or None."""
        if row >= len(self.first) or math.isnan(self.first[row]):
            return None
        return self.first[row]

    def note(self, ctx: Context, body: bytes, now: float) -> None:
        """Note the finished videos of one reply's ``body`` (a list page or a detail)."""
        try:
            data = json.loads(body).get("data")
        except (ValueError, AttributeError):
            return
        if not isinstance(data, dict):
            return
        videos = data.get("videos") if "videos" in data else [data]
        table, first = ctx.store.table, self.first
        for view in videos if isinstance(videos, list) else ():
            if not isinstance(view, dict) or view.get("status") not in _FINISHED:
                continue
            row = table.find(view.get("id"), video=True)
            if row < 0:
                continue
            if row >= len(first):  # grown by doubling: appends stay cheap
                first.extend(array("d", [math.nan]) * max(row + 1 - len(first), len(first)))
            if math.isnan(first[row]):
                first[row] = now


SERVED = web.AppKey("asyncclient.emulator.served", Served)


@web.middleware
async def served_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost: note the finished videos of each reply the service API serves
    (a reply a fault spoiled, a 429 or an error is not served)."""
    response = await handler(request)
    served = request.app[SERVED]
    if (
        served.on
        and request.method == "GET"
        and request.path.startswith(_VIDEO_READS)
        and response.status == 200
        and isinstance(response, web.Response)
        and isinstance(response.body, bytes)
    ):
        ctx = request.app[CTX]
        served.note(ctx, response.body, ctx.clock.now())
    return response


async def record_served(request: web.Request) -> web.Response:
    """POST /_emulator/served {record: bool}: start (or stop) noting when each video is
    first served finished; what is noted is kept."""
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    record = body.get("record", True)
    if not isinstance(record, bool):
        return error(400, "record: must be true or false")
    served = request.app[SERVED]
    served.on = record
    return ok({"record": served.on})


async def timeline(request: web.Request) -> web.Response:
    """GET /_emulator/timeline[?team=ID&offset=N&limit=N]: videos in creation order.

    One page of the video table's rows ``offset`` to ``offset + limit`` (at most
    :data:`TIMELINE_PAGE`), those of ``team`` only if given, as columns: ``names``,
    ``created`` and ``done`` (service Unix seconds: created, finishes or fails),
    ``failed``, ``served`` (first served finished, or null; see ``POST
    /_emulator/served``). ``next`` is the offset of the next page (null after the last);
    ``now`` (service) and ``wall`` (real Unix seconds) are read at the same moment, so
    that a service time converts to real time: ``wall - (now - t) / timeScale``.
    """
    ctx = request.app[CTX]
    team = request.query.get("team")
    try:
        offset = int(request.query.get("offset", "0"))
        limit = int(request.query.get("limit", str(TIMELINE_PAGE)))
    except ValueError:
        return error(400, "offset, limit: must be integers")
    if offset < 0 or not 1 <= limit <= TIMELINE_PAGE:
        return error(400, f"offset: at least 0; limit: 1 to {TIMELINE_PAGE}")
    table, served = ctx.store.table, request.app[SERVED]
    end = min(len(table), offset + limit)
    rows = [r for r in range(offset, end) if team is None or table.team_id(r) == team]
    return ok(
        {
            "total": len(table),
            "next": end if end < len(table) else None,
            "now": ctx.clock.now(),
            "wall": ctx.clock.wall(),
            "timeScale": ctx.clock.time_scale,
            "recording": served.on,
            "names": [table.names[r] for r in rows],
            "created": [table.created[r] for r in rows],
            "done": [table.done[r] for r in rows],
            "failed": [r in table.errors for r in rows],
            "served": [served.at(r) for r in rows],
        }
    )


def add_control_routes(app: web.Application) -> None:
    """Register the control API, and the middleware that notes what was served finished
    (first in line: it sees each reply as it leaves)."""
    app[SERVED] = Served()
    app.middlewares.insert(0, served_middleware)
    app.router.add_post("/_emulator/teams", create_team)
    app.router.add_get("/_emulator/teams", list_teams)
    app.router.add_get("/_emulator/catalog", catalog)
    app.router.add_get("/_emulator/requests", requests_log)
    app.router.add_get("/_emulator/counters", counters)
    app.router.add_get("/_emulator/webhooks", webhooks)
    app.router.add_post("/_emulator/faults", add_fault)
    app.router.add_get("/_emulator/faults", list_faults)
    app.router.add_delete("/_emulator/faults", clear_faults)
    app.router.add_post("/_emulator/videos/{videoId}/fail", fail_video)
    app.router.add_post("/_emulator/clock/advance", advance)
    app.router.add_get("/_emulator/clock", clock)
    app.router.add_post("/_emulator/served", record_served)
    app.router.add_get("/_emulator/timeline", timeline)
