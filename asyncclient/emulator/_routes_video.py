"""Creation, video, template and file routes (spec 4.1 to 4.11, 4.19 to 4.21)."""

from __future__ import annotations

import hmac
import math
import re
from typing import Any

from aiohttp import web

from asyncclient.emulator._context import CTX, PROJECT, Context, error, ok, read_json
from asyncclient.emulator._records import Project, Video
from asyncclient.emulator._rules import RULES, check_template_generation
from asyncclient.emulator._state import Team
from asyncclient.emulator._validate import Checker
from asyncclient.emulator._views import (
    SAMPLE_MP4,
    sign,
    template_detail,
    template_item,
    video_view,
)
from asyncclient.models import enums

__all__ = ["add_video_routes", "page_params"]

JSON = dict[str, Any]
# Creation path -> project type of the list filter (spec 4.10). The spec has no type for a
# talking avatar; it is listed as ``ugc_video`` (documented).
PROJECT_TYPES = {
    "ugc-ads": "ugc_ads",
    "script-to-video": "script_to_video",
    "product-ads": "product_ads",
    "scenes": "scenes",
    "hook-demo": "hook_demo",
    "talking-avatar": "ugc_video",
    "ugc-video": "ugc_video",
    "add-captions": "add_captions",
}
_PLACEHOLDER = re.compile(r"\{\{([^{}]+)\}\}")
_INT64_MAX = 2**63 - 1
"""The largest integer of the OpenAPI document (``format: int64``)."""


def page_params(
    query: Any, *, default: int = 50, high: int = 100, low: int = 1
) -> tuple[int, int] | str:
    """Return ``(limit, offset)`` from a query, or the problem message."""
    problems = []
    values = {"limit": default, "offset": 0}
    for name in values:
        raw = query.get(name)
        if raw is None:
            continue
        try:
            values[name] = int(raw)
        except ValueError:
            problems.append(f"{name}: must be an integer")
    if not problems:
        if not low <= values["limit"] <= high:
            problems.append(f"limit: must be between {low} and {high}")
        if values["offset"] < 0:
            problems.append("offset: must be 0 or more")
        elif values["offset"] > _INT64_MAX:  # the document's int64; the page echoes it
            problems.append(f"offset: must be at most {_INT64_MAX}")
    return "; ".join(problems) if problems else (values["limit"], values["offset"])


def cost_of(ctx: Context, ptype: str, body: JSON) -> int:
    """Return the credits a creation costs (spec 4.4 rules for scenes)."""
    costs = ctx.store.costs
    if ptype != "scenes":
        return costs.get(ptype, 0)
    total = costs["scenes"]
    for scene in body.get("scenes") or []:
        if scene.get("type") in ("avatar", "picture_in_picture"):
            chars = len(str(scene.get("script") or ""))
            total += costs["scene_avatar_per_100_chars"] * max(1, math.ceil(chars / 100))
        elif scene.get("type") == "start_end_frame":
            total += costs["scene_start_end_frame"]
    return total


def _auto_name(fmt: str, body: JSON) -> str:
    if fmt == "scenes":
        text = " ".join(str(s.get("script") or "") for s in body["scenes"]).strip()
    elif fmt == "add-captions":
        text = f"Captions for {body['media']}"
    else:
        text = str(body.get("script") or body.get("text") or "")
    return text[:100] or f"{PROJECT_TYPES[fmt]} video"


def _start(
    ctx: Context,
    team: Team,
    ptype: str,
    body: JSON,
    name: str,
    form: str,
    error: str | None = None,
) -> Project:
    cost = cost_of(ctx, ptype, body)
    project = ctx.store.create_project(
        team, ptype, body, name=name, cost=cost, form=form, error=error
    )
    ctx.counters.projects[team.id] += 1
    ctx.counters.credits_spent[team.id] += cost
    ctx.dispatcher.watch(project.videos[0])
    return project


async def create(request: web.Request) -> web.Response:
    """POST /v1/project/create/{format} (spec 4.1 to 4.8)."""
    ctx = request.app[CTX]
    fmt = request.match_info["format"]
    rule = RULES.get(fmt)
    if rule is None:
        return error(404, "Not found")
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    checker = Checker(ctx.catalog)
    rule(checker, body)
    checker.common(body)  # name, musicId, webhook, metadata (spec 4)
    if checker.problems:
        return error(400, "; ".join(checker.problems))
    team = ctx.key_of(request).team
    ptype = PROJECT_TYPES[fmt]
    if team.credits < cost_of(ctx, ptype, body):
        return error(402, "not enough credits")
    name = body.get("name") or _auto_name(fmt, body)
    project = _start(ctx, team, ptype, body, name, ctx.form_for("A"))
    request[PROJECT] = project.id
    video = project.videos[0]
    if fmt == "scenes":  # spec 4.4: no data object
        return ok({"success": True, "projectId": project.id, "message": "Video creation started"})
    data = {"videoId": video.id, "projectId": project.id, "status": video.status(ctx.clock.now())}
    if fmt == "add-captions":  # spec 4.8: no message
        return ok({"success": True, "data": data})
    if fmt == "hook-demo":  # spec 4.5: COMPLETED at once, top-level projectId
        return ok(
            {"success": True, "message": "Video created", "projectId": project.id, "data": data}
        )
    return ok({"success": True, "message": "Video creation started", "data": data})


def missing_variables(scenes: list[JSON]) -> str | None:
    """Return the failure message of spec 4.9 rule 2, or None if every value is given."""
    for i, scene in enumerate(scenes):
        keys = {v.get("key") for v in scene.get("variables") or [] if isinstance(v, dict)}
        for name in _PLACEHOLDER.findall(str(scene.get("script") or "")):
            if name not in keys:
                return f"scenes[{i}].variables: missing value for variable '{name}'"
    return None


async def create_from_template(request: web.Request) -> web.Response:
    """POST /v1/project/create (spec 4.9)."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    checker = Checker(ctx.catalog)
    check_template_generation(ctx.catalog, checker, body)
    if checker.problems:
        return error(400, "; ".join(checker.problems))
    team = ctx.key_of(request).team
    if team.credits < cost_of(ctx, "class", body):
        return error(402, "not enough credits")
    # spec 4.9 rule 2: accepted, then generation fails
    problem = missing_variables(body["scenes"])
    project = _start(ctx, team, "class", body, str(body["title"]), ctx.form_for("B"), problem)
    request[PROJECT] = project.id
    return ok(
        {
            "success": True,
            "message": "Project creation started",
            "data": {"projectId": project.id, "status": "processing"},
        }
    )


def _video_page(ctx: Context, team_id: str, query: Any) -> JSON | str:
    page = page_params(query)
    if isinstance(page, str):
        return page
    limit, offset = page
    ptype = query.get("type", "all")
    status = query.get("status")
    problems = []
    if ptype not in list(enums.ProjectType):
        problems.append(f"type: invalid project type {ptype!r}")
    if status is not None and status not in list(enums.VideoListStatus):
        problems.append("status: invalid status (use draft, processing, completed or failed)")
    if problems:
        return "; ".join(problems)
    now = ctx.clock.now()
    # spec 4.10: newest first; limit and offset count projects (each has one video)
    total, rows = ctx.store.listing.page(team_id, ptype, status, offset, limit, now)
    table = ctx.store.table
    videos = [
        video_view(Video(table, row), now, ctx.base_url, ctx.secret, detail=False) for row in rows
    ]
    return {"videos": videos, "total": total, "limit": limit, "offset": offset}


async def list_videos(request: web.Request) -> web.Response:
    """GET /v1/video/list (spec 4.10): limit and offset count projects, newest first."""
    ctx = request.app[CTX]
    data = _video_page(ctx, ctx.key_of(request).team.id, request.query)
    if isinstance(data, str):
        return error(400, data)
    return ok({"success": True, "data": data})


async def get_video(request: web.Request) -> web.Response:
    """GET /v1/video/{videoId} (spec 4.11, 5.5)."""
    ctx = request.app[CTX]
    video = ctx.store.videos.get(request.match_info["videoId"])
    if video is None:
        return error(404, "Video not found")
    if video.team_id != ctx.key_of(request).team.id:
        return error(403, "Video does not belong to your team")
    view = video_view(video, ctx.clock.now(), ctx.base_url, ctx.secret, detail=True)
    return ok({"success": True, "message": "Video retrieved", "data": view})


async def list_templates(request: web.Request) -> web.Response:
    """GET /v1/template/list (spec 4.19): query ``type``, ``limit``, ``offset``."""
    ctx = request.app[CTX]
    page = page_params(request.query)
    if isinstance(page, str):
        return error(400, page)
    limit, offset = page
    ptype = request.query.get("type")
    if ptype is not None and ptype not in list(enums.ProjectType):  # as the video list does
        return error(400, f"type: invalid project type {ptype!r}")
    records = [
        t for t in ctx.catalog.records["templates"] if ptype in (None, "all") or t["type"] == ptype
    ]
    items = [template_item(t) for t in records[offset : offset + limit]]
    data = {"templates": items, "total": len(records), "limit": limit, "offset": offset}
    return ok({"success": True, "data": data})


async def get_template(request: web.Request) -> web.Response:
    """GET /v1/template/{templateId} (spec 4.20)."""
    ctx = request.app[CTX]
    for record in ctx.catalog.records["templates"]:
        if record["id"] == request.match_info["templateId"]:
            return ok({"success": True, "data": template_detail(record)})
    return error(404, "Template not found")


def _simple_list(kind: str, field: str) -> Any:
    async def handler(request: web.Request) -> web.Response:
        records = request.app[CTX].catalog.records[kind]
        return ok({"success": True, "data": {field: records, "total": len(records)}})

    handler.__doc__ = f"GET list of {kind} (spec 4.21; shape chosen by the emulator)."
    return handler


async def get_file(request: web.Request) -> web.StreamResponse:
    """GET /_files/{videoId}.mp4?expires=&sig=: the signed download URL (spec 2.3)."""
    ctx = request.app[CTX]
    video_id = request.match_info["videoId"]
    video = ctx.store.videos.get(video_id)
    if video is None or video.status(ctx.clock.now()) != "COMPLETED":
        return error(404, "File not found")
    try:
        expires = int(request.query.get("expires", ""))
    except ValueError:
        return error(403, "invalid signature")
    if not hmac.compare_digest(sign(ctx.secret, video_id, expires), request.query.get("sig", "")):
        return error(403, "invalid signature")
    if ctx.clock.now() > expires:
        return error(403, "URL expired")
    return web.Response(body=SAMPLE_MP4.read_bytes(), content_type="video/mp4")


def add_video_routes(app: web.Application) -> None:
    """Register the routes of this module."""
    app.router.add_post("/v1/project/create", create_from_template)
    app.router.add_post("/v1/project/create/{format}", create)
    app.router.add_get("/v1/video/list", list_videos)
    app.router.add_get("/v1/video/{videoId}", get_video)
    app.router.add_get("/v1/template/list", list_templates)
    app.router.add_get("/v1/template/{templateId}", get_template)
    app.router.add_get("/v1/avatar/list", _simple_list("avatars", "avatars"))
    app.router.add_get("/v1/voice/list", _simple_list("voices", "voices"))
    app.router.add_get("/v1/music/list", _simple_list("music", "music"))
    app.router.add_get("/v1/niche/list", _simple_list("niches", "niches"))
    app.router.add_get("/v1/media/list", _simple_list("media", "media"))
    app.router.add_get("/_files/{videoId}.mp4", get_file)
