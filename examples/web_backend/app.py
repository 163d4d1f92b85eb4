"""The backend's routes, on one :class:`asyncclient.AsyncClient` per worker process.

- ``POST /videos`` ``{"script", "avatar_id", "voice_id"}``: starts a talking-avatar video
  and answers 202 at once with its id; the video is not awaited here.
- ``GET /videos/{id}?wait=SECONDS``: the video's status; with ``wait`` (at most 60) it
  answers as soon as the video is finished, or after ``wait`` seconds with what is known.
- ``POST /hooks/video``: the service's notifications (``client.webhooks.handle``): checked,
  confirmed through the API, deduplicated across the fleet, then handed to the jobs this
  process awaits and to :meth:`VideoBackend.on_video`.
"""

from __future__ import annotations

import math
from typing import Any

import redis.asyncio as aioredis
from aiohttp import web

from asyncclient import (
    APIError,
    AsyncClient,
    BadRequestError,
    JobTimeoutError,
    NotFoundError,
    ValidationError,
    VideoDetail,
    VideoFailedError,
)
from asyncclient.webhooks import WebhookEvent

from .config import HOOK_PATH

__all__ = ["MAX_WAIT", "NOTIFIED_KEY", "VideoBackend"]

MAX_WAIT = 60.0
"""The longest ``GET /videos/{id}?wait=`` in seconds; a longer one is cut to it."""

NOTIFIED_KEY = "webbackend:notified"
"""The Redis hash counting, per event key, the notifications this fleet handled."""


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _text(value: object) -> str | None:
    """A status as plain text (the SDK's statuses are ``str`` enums)."""
    return None if value is None else str(getattr(value, "value", value))


def _view(video_id: str, status: object, progress: int | None, url: str | None) -> dict[str, Any]:
    return {"id": video_id, "status": _text(status), "progress": progress, "url": url}


def _detail_view(detail: VideoDetail) -> dict[str, Any]:
    status = _text(detail.status)
    view = _view(detail.id, status, detail.progress, detail.url if status == "COMPLETED" else None)
    if status == "FAILED":
        view["error"] = detail.message
    return view


def _wait_seconds(raw: str) -> float:
    """``?wait=`` as seconds from 0 to :data:`MAX_WAIT`.

    Raises:
        ValueError: Not a finite number of at least 0.
    """
    try:
        wait = float(raw)
    except ValueError:
        raise ValueError("wait: must be a number of seconds") from None
    if not math.isfinite(wait) or wait < 0:
        raise ValueError("wait: must be a number of seconds, at least 0")
    return min(wait, MAX_WAIT)


class VideoBackend:
    """The routes of one worker process, and what it counts.

    Args:
        client: This process's client; its ``webhook_url`` ends with ``/hooks/video``.
        store: A ``redis.asyncio.Redis`` of the fleet, where handled notifications are
            recorded (:data:`NOTIFIED_KEY`).
    """

    def __init__(self, client: AsyncClient, store: aioredis.Redis) -> None:
        self.client = client
        self.store: Any = store  # (redis 5 types its commands for both faces at once)
        self.notifications_handled = 0
        """Notifications whose callback ran to its end in this process."""
        client.webhooks.on_event(self.on_video)

    def app(self) -> web.Application:
        """The aiohttp application of these routes."""
        app = web.Application()
        app.router.add_post("/videos", self.create_video)
        app.router.add_get("/videos/{id}", self.get_video)
        app.router.add_post(HOOK_PATH, self.client.webhooks.handle)
        return app

    def report(self, pid: int) -> dict[str, int]:
        """What this process did: its one JSON line at shutdown."""
        return {
            "worker": pid,
            "poller_requests": self.client.jobs.poller.stats.requests,
            "notifications_handled": self.notifications_handled,
            "duplicates": self.client.webhooks.receiver.duplicates,
            "jobs_finished_by_notification": self.client.webhooks.jobs_finished,
        }

    async def create_video(self, request: web.Request) -> web.Response:
        """``POST /videos``: start a talking-avatar video; 202 with its id, not awaited.

        400 with the SDK's validation message for bad input (no request is sent then) or
        with the service's message when it refuses the input (an unknown avatar id); 502
        with the error's text for any other failure of the service (its 5xx, a refused
        key, no credits left, no answer, or an answer lost after sending).
        """
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "body: invalid JSON")
        if not isinstance(body, dict):
            return _error(400, "body: must be a JSON object")
        # Passed as sent: the SDK checks each field (presence, type, length) before any
        # request and names every problem in one ValidationError.
        fields: dict[str, Any] = body
        script: Any = fields.get("script")
        avatar_id: Any = fields.get("avatar_id")
        voice_id: Any = fields.get("voice_id")
        try:
            job = await self.client.projects.create_talking_avatar(
                script=script, avatar_id=avatar_id, voice_id=voice_id
            )
        except ValidationError as exc:
            return _error(400, str(exc))
        except BadRequestError as exc:  # input the service refused (an unknown avatar id)
            return _error(400, exc.message)
        except APIError as exc:
            return _error(502, str(exc))
        answer = {"id": job.video_id, "project_id": job.project_id, "status": _text(job.status)}
        return web.json_response(answer, status=202)

    async def get_video(self, request: web.Request) -> web.Response:
        """``GET /videos/{id}?wait=SECONDS``: ``{id, status, progress, url}`` (url once
        completed; ``error`` when failed).

        Without ``wait`` it reads the video once. With it, the job is awaited: a
        notification to any worker of the fleet (or, late, the safety-net polling)
        ends the wait; after ``wait`` seconds the status known so far is the answer.
        """
        video_id = request.match_info["id"]
        try:
            wait = _wait_seconds(request.query.get("wait", "0"))
        except ValueError as exc:
            return _error(400, str(exc))
        job = self.client.jobs.from_video_id(video_id)
        try:
            detail = await (job.wait(timeout=wait) if wait > 0 else job.read())
        except JobTimeoutError as exc:
            return web.json_response(_view(video_id, exc.status, exc.progress, None))
        except VideoFailedError as exc:
            view = _view(video_id, "FAILED", job.progress, None)
            return web.json_response({**view, "error": exc.message})
        except NotFoundError as exc:
            return _error(404, exc.message)
        except APIError as exc:
            return _error(502, str(exc))
        return web.json_response(_detail_view(detail))

    async def on_video(self, event: WebhookEvent) -> None:
        """Each genuine notification, once across the fleet: record it as a result.

        If this raises, the receiver answers 500 and the service notifies again later.
        """
        await self.store.hincrby(NOTIFIED_KEY, event.key, 1)
        self.notifications_handled += 1
