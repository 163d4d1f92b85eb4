"""The control API under ``/_emulator/`` (no key, not rate limited, not logged)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from asyncclient.emulator._clock import iso
from asyncclient.emulator._context import CTX, error, ok, read_json
from asyncclient.emulator._ratelimit import PLANS

__all__ = ["add_control_routes"]

JSON = dict[str, Any]


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


def add_control_routes(app: web.Application) -> None:
    """Register the control API."""
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
