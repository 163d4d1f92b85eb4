"""Schedule, integration and social research routes (spec 4.12 to 4.18)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web

from asyncclient.emulator._clock import iso
from asyncclient.emulator._context import CTX, Context, error, ok, read_json
from asyncclient.emulator._routes_video import page_params
from asyncclient.emulator._social import account_record, search_analytics, social_videos
from asyncclient.emulator._state import Post, Search
from asyncclient.emulator._validate import Checker
from asyncclient.emulator._views import post_view
from asyncclient.models import enums

__all__ = ["add_social_routes"]

JSON = dict[str, Any]
_DESCRIPTION_MAX = {"videosite": 5000, "clipsite": 2200, "photosite": 2200}
_PRIVACY = ["public", "unlisted", "private"]


def _parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return dt.timestamp() if dt.tzinfo is not None else None


def _platform_data(c: Checker, raw: JSON, platform: str, video_name: str) -> JSON:
    """Apply the platform rules of spec 4.12 and return the stored platformData.

    Title (max 100), tags (max 30) and privacyStatus are checked for videosite only,
    the platform the spec gives them for; the description limit applies to the
    description as sent, before the tags are appended as hashtags (README, choices).
    """
    videosite = platform == "videosite"
    title = c.string(raw, "title", "platformData.title", max_len=100 if videosite else None)
    limit = _DESCRIPTION_MAX[platform]
    desc = c.string(raw, "description", "platformData.description", max_len=limit, min_len=0)
    tags = raw.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        c.add("platformData.tags", "must be an array of strings")
        tags = []
    elif videosite and len(tags) > 30:
        c.add("platformData.tags", "cannot have more than 30 tags")
    privacy = None
    if videosite:
        privacy = c.enum(raw, "privacyStatus", "platformData.privacyStatus", _PRIVACY)
    c.boolean(raw, "madeForKids", "platformData.madeForKids")
    if platform == "videosite":
        return {
            "title": title or video_name[:100],
            "description": desc or "",
            "tags": tags,
            "privacyStatus": privacy or "public",
            "madeForKids": bool(raw.get("madeForKids", False)),
        }
    hashtags = " ".join("#" + t.lstrip("#") for t in tags)
    text = " ".join(part for part in (desc or "", hashtags) if part)
    out: JSON = {"description": text, "tags": tags}
    if title is not None:  # spec 2.4, 4.12: a string when there is one, never null
        out["title"] = title
    return out


async def create_schedule(request: web.Request) -> web.Response:
    """POST /v1/schedule/create (spec 4.12); 201 on success."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    c = Checker(ctx.catalog)
    video_id = c.string(body, "videoId", "videoId", required=True)
    integration_id = c.string(body, "integrationId", "integrationId", required=True)
    when = _parse_time(body.get("scheduledDateTime"))
    if body.get("scheduledDateTime") is None:
        c.add("scheduledDateTime", "scheduledDateTime is required")
    elif when is None:
        c.add("scheduledDateTime", "must be an ISO 8601 date-time with a timezone")
    raw_data = c.obj(body, "platformData", "platformData") or {}
    if c.problems:
        return error(400, "; ".join(c.problems))
    team = ctx.key_of(request).team
    now = ctx.clock.now()
    video = ctx.store.videos.get(str(video_id))
    integration = next(
        (i for i in ctx.catalog.records["integrations"] if i["id"] == integration_id), None
    )
    if video is None:
        return error(404, "Video not found")
    if video.team_id != team.id:
        return error(403, "Video does not belong to your team")
    if integration is None:
        return error(404, "Integration not found")
    if video.status(now) != "COMPLETED":
        return error(400, "Video must be completed")
    assert when is not None
    if when <= now:
        return error(400, "Scheduled time must be in the future")
    data = _platform_data(c, raw_data, integration["type"], video.name)
    if c.problems:
        return error(400, "; ".join(c.problems))
    post = Post(
        id=ctx.store.new_id("sched"),
        team_id=team.id,
        video=video,
        integration=integration,
        scheduled_at=when,
        platform_data=data,
        created_at=now,
    )
    ctx.store.posts[post.id] = post
    out = {
        "scheduleId": post.id,
        "status": "pending",
        "scheduledDateTime": iso(when),
        "platform": integration["type"],
        "videoId": video.id,
    }
    return ok({"success": True, "message": "Post scheduled", "data": out}, status=201)


async def list_schedule(request: web.Request) -> web.Response:
    """GET /v1/schedule/list (spec 4.13), ordered by scheduled time."""
    ctx = request.app[CTX]
    page = page_params(request.query)
    if isinstance(page, str):
        return error(400, page)
    limit, offset = page
    status, platform = request.query.get("status"), request.query.get("platform")
    if status is not None and status not in list(enums.ScheduleStatus):
        return error(400, "status: invalid status (use pending, published, failed or draft)")
    if platform is not None and platform not in list(enums.Platform):
        return error(400, "platform: invalid platform (use videosite, clipsite or photosite)")
    now, team_id = ctx.clock.now(), ctx.key_of(request).team.id
    posts = sorted(
        (
            p
            for p in ctx.store.posts.values()
            if p.team_id == team_id
            and (status is None or p.status(now) == status)
            and (platform is None or p.integration["type"] == platform)
        ),
        key=lambda p: p.scheduled_at,
    )
    items = [post_view(p, now, ctx.base_url, ctx.secret) for p in posts[offset : offset + limit]]
    data = {"scheduledPosts": items, "total": len(posts), "limit": limit, "offset": offset}
    return ok({"success": True, "message": "Scheduled posts retrieved", "data": data})


async def list_integrations(request: web.Request) -> web.Response:
    """GET /v1/integration/list (spec 4.14)."""
    records = request.app[CTX].catalog.records["integrations"]
    data = {"integrations": records, "total": len(records)}
    return ok({"success": True, "message": "Integrations retrieved", "data": data})


async def analyze_account(request: web.Request) -> web.Response:
    """POST /v1/social/account/analyze (spec 4.15); 201 on success."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    c = Checker(ctx.catalog)
    username = c.string(body, "username", "username", required=True, min_len=0)
    if username is not None:  # spec 4.15: normalized automatically (a leading @, spaces)
        username = username.strip().removeprefix("@").lower()
        if not username:
            c.add("username", "username is required")
    platform = c.enum(body, "platform", "platform", list(enums.SocialPlatform), required=True)
    if c.problems or not username or platform is None:
        return error(400, "; ".join(c.problems))
    team = ctx.key_of(request).team
    if username not in ctx.catalog.accounts.get(platform, []):
        return error(404, f"Account not found: {username}")
    if (team.id, platform, username) in ctx.store.analyzed:
        return error(
            400,
            "Account already analyzed: use the refresh endpoint "
            "(POST /v1/social/account/refresh) to update it",
        )
    cost = ctx.store.costs["social_analyze"]
    if team.credits < cost:
        return error(402, "not enough credits")
    team.credits -= cost
    ctx.counters.credits_spent[team.id] += cost
    account = account_record(ctx.store.new_id("acct"), username, platform, ctx.clock.now())
    ctx.store.analyzed[(team.id, platform, username)] = account
    return ok({"success": True, "message": "Account analyzed", "data": {"account": account}}, 201)


def _search_view(ctx: Context, search: Search, *, full: bool, limit: int, offset: int) -> JSON:
    now = ctx.clock.now()
    videos = social_videos(
        search.term, search.platform, search.limit, search.searched_at, search=True
    )
    done = now >= search.keywords_at
    out: JSON = {
        "id": search.id,
        "searchTerm": search.term,
        "platform": search.platform,
        "totalResults": len(videos),
        "analytics": search_analytics(videos),
        "topHashtags": sorted({h for v in videos for h in v["hashtags"]})[:5],
        "keywords": search.term.lower().split()[:5] if done else [],
        "keywordsStatus": "completed" if done else "pending",
        "lastSearched": iso(search.searched_at),
        "createdAt": iso(search.created_at),
    }
    if full:
        out["music"] = sorted({v["music"]["title"] for v in videos})[:5]
        out["videos"] = videos[offset : offset + limit]
        out["pagination"] = {
            "total": len(videos),
            "limit": limit,
            "offset": offset,
            "hasMore": offset + limit < len(videos),
        }
    return out


async def create_search(request: web.Request) -> web.Response:
    """POST /v1/social/search/create (spec 4.16); 201, same term and platform updated."""
    ctx = request.app[CTX]
    body = await read_json(request)
    if isinstance(body, web.Response):
        return body
    c = Checker(ctx.catalog)
    term = body.get("searchTerm")
    if isinstance(term, str):
        body["searchTerm"] = term.strip()
    term = c.string(body, "searchTerm", "searchTerm", required=True, max_len=200)
    platform = c.enum(body, "platform", "platform", list(enums.SocialPlatform), required=True)
    limit = body.get("limit", 20)
    if isinstance(limit, float) and limit.is_integer() and 1 <= limit <= 50:
        limit = int(limit)  # JSON has one number type: 20.0 is the integer 20 (spec 4.16)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        c.add("limit", "must be an integer between 1 and 50")
    if c.problems or term is None or platform is None:
        return error(400, "; ".join(c.problems))
    team, now = ctx.key_of(request).team, ctx.clock.now()
    cost = ctx.store.costs["social_search_per_video"] * limit
    if team.credits < cost:
        return error(402, "not enough credits")
    team.credits -= cost
    ctx.counters.credits_spent[team.id] += cost
    search = next(
        (
            s
            for s in ctx.store.searches.values()
            if s.team_id == team.id and s.term == term and s.platform == platform
        ),
        None,
    )
    if search is None:
        search = Search(ctx.store.new_id("search"), team.id, term, platform, limit, now, now, now)
        ctx.store.searches[search.id] = search
    search.limit, search.searched_at = limit, now
    search.keywords_at = now + ctx.keywords_seconds
    data = {
        "search": _search_view(ctx, search, full=False, limit=0, offset=0),
        "videosFound": limit,
    }
    return ok({"success": True, "message": "Search created", "data": data}, 201)


async def get_search(request: web.Request) -> web.Response:
    """GET /v1/social/search/{searchId} (spec 4.17): ``limit`` (default 10) and ``offset``."""
    ctx = request.app[CTX]
    search = ctx.store.searches.get(request.match_info["searchId"])
    if search is None or search.team_id != ctx.key_of(request).team.id:
        return error(404, "Search not found")
    page = page_params(request.query, default=10, high=50)
    if isinstance(page, str):
        return error(400, page)
    data = _search_view(ctx, search, full=True, limit=page[0], offset=page[1])
    return ok({"success": True, "data": data})


async def niche_videos(request: web.Request) -> web.Response:
    """GET /v1/niche/{nicheId}/videos (spec 4.18)."""
    ctx = request.app[CTX]
    niche = next(
        (n for n in ctx.catalog.records["niches"] if n["id"] == request.match_info["nicheId"]),
        None,
    )
    if niche is None:
        return error(404, "Niche not found")
    page = page_params(request.query, default=20, high=50)
    platform = request.query.get("platform")
    if isinstance(page, str):
        return error(400, page)
    if platform is not None and platform not in list(enums.SocialPlatform):
        return error(400, "platform: invalid platform (use clipsite or videosite)")
    platforms = [platform] if platform else ["clipsite", "videosite"]
    epoch = 1767225600.0  # 2026-01-01: niche data does not move with the clock
    videos = [v for p in platforms for v in social_videos(niche["id"], p, 30, epoch, search=False)]
    limit, offset = page
    data = {
        "niche": niche,
        "videos": videos[offset : offset + limit],
        "total": len(videos),
        "limit": limit,
        "offset": offset,
    }
    return ok({"success": True, "data": data})


def add_social_routes(app: web.Application) -> None:
    """Register the routes of this module."""
    app.router.add_post("/v1/schedule/create", create_schedule)
    app.router.add_get("/v1/schedule/list", list_schedule)
    app.router.add_get("/v1/integration/list", list_integrations)
    app.router.add_post("/v1/social/account/analyze", analyze_account)
    app.router.add_post("/v1/social/search/create", create_search)
    app.router.add_get("/v1/social/search/{searchId}", get_search)
    app.router.add_get("/v1/niche/{nicheId}/videos", niche_videos)
