"""The backend's routes, on one :class:`asyncclient.AsyncClient` per uvicorn worker process.

- ``POST /videos`` ``{"script", "avatar_id", "voice_id"}``: starts a talking-avatar video
  and answers 202 at once with its id; the video is not awaited here.
- ``GET /videos/{id}?wait=SECONDS``: the video's status; with ``wait`` (at most 60) it
  answers as soon as the video is finished, or after ``wait`` seconds with what is known.
- ``POST /hooks/video``: the service's notifications (:class:`asyncclient.asgi.NotificationApp`):
  checked, confirmed through the API, deduplicated across the fleet, then handed to the
  jobs any worker awaits and to :meth:`Recorder.on_video`.

The client lives as long as the application: :func:`asyncclient.asgi.lifespan` opens it at
startup (in the worker, after uvicorn started it) and closes it at shutdown, when the
worker prints its report line. Handlers get it with ``Depends(get_client)``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import redis.asyncio as aioredis
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

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
from asyncclient.asgi import STATE_KEY, NotificationApp, get_client, lifespan
from asyncclient.webhooks import WebhookEvent

from .config import HOOK_PATH, Settings, from_environment

__all__ = ["MAX_WAIT", "NOTIFIED_KEY", "Recorder", "app_from_environment", "create_app"]

MAX_WAIT = 60.0
"""The longest ``GET /videos/{id}?wait=`` in seconds; a longer one is cut to it."""

NOTIFIED_KEY = "webbackend:notified"
"""The Redis hash counting, per event key, the notifications this fleet handled."""

Client = Annotated[AsyncClient, Depends(get_client)]


def _say(line: str) -> None:
    """One whole line on stdout, written at once (the workers share the parent's stdout)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


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


class Recorder:
    """What one worker records of notifications, and counts for its report.

    Args:
        client: This worker's client; its ``webhook_url`` ends with ``/hooks/video``.
        store: A ``redis.asyncio.Redis`` of the fleet, where handled notifications are
            recorded (:data:`NOTIFIED_KEY`).
    """

    def __init__(self, client: AsyncClient, store: aioredis.Redis) -> None:
        self.client = client
        self.store: Any = store  # (redis 5 types its commands for both faces at once)
        self.notifications_handled = 0
        """Notifications whose callback ran to its end in this process."""
        client.webhooks.on_event(self.on_video)

    async def on_video(self, event: WebhookEvent) -> None:
        """Each genuine notification, once across the fleet: record it as a result.

        If this raises, the receiver answers 500 and the service notifies again later.
        """
        await self.store.hincrby(NOTIFIED_KEY, event.key, 1)
        self.notifications_handled += 1

    def report(self, pid: int) -> dict[str, int]:
        """What this process did: its one JSON line at shutdown."""
        return {
            "worker": pid,
            "poller_requests": self.client.jobs.poller.stats.requests,
            "notifications_handled": self.notifications_handled,
            "duplicates": self.client.webhooks.receiver.duplicates,
            "jobs_finished_by_notification": self.client.webhooks.jobs_finished,
        }


def _listening(settings: Settings) -> str:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"worker {os.getpid()} listening on {settings.scheme}://{host}:{settings.port}"


def create_app(settings: Settings) -> FastAPI:
    """The application of one worker: its lifespan, routes and notification receiver."""

    @asynccontextmanager
    async def run(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        from_url: Any = aioredis.from_url  # typed from redis 6 on, not before (arq wants < 6)
        store = from_url(settings.redis_url)  # one pool: the client's and the recorder's
        recorder: Recorder | None = None
        try:
            with_client = lifespan(
                lambda: AsyncClient(
                    settings.api_key,
                    base_url=settings.base_url,
                    plan=settings.rate_limit(),
                    polling=settings.polling(),
                    redis=store,
                    webhook_url=settings.webhook_url,
                )
            )
            async with with_client(app) as state:
                recorder = Recorder(state[STATE_KEY], store)
                _say(_listening(settings))
                yield state
        finally:
            await store.aclose()
        if recorder is not None:
            _say(json.dumps(recorder.report(os.getpid())))

    app = FastAPI(lifespan=run, openapi_url=None)
    app.post("/videos", status_code=202)(create_video)
    app.get("/videos/{video_id}")(get_video)
    # A route whose endpoint is an ASGI application (app.add_route does the same, but its
    # type takes request handlers only).
    app.router.routes.append(Route(HOOK_PATH, NotificationApp(), methods=["POST"]))
    return app


async def create_video(request: Request, client: Client) -> Any:
    """``POST /videos``: start a talking-avatar video; 202 with its id, not awaited.

    400 with the SDK's validation message for bad input (no request is sent then) or
    with the service's message when it refuses the input (an unknown avatar id); 502
    with the error's text for any other failure of the service.
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
        job = await client.projects.create_talking_avatar(
            script=script, avatar_id=avatar_id, voice_id=voice_id
        )
    except ValidationError as exc:
        return _error(400, str(exc))
    except BadRequestError as exc:  # input the service refused (an unknown avatar id)
        return _error(400, exc.message)
    except APIError as exc:
        return _error(502, str(exc))
    return {"id": job.video_id, "project_id": job.project_id, "status": _text(job.status)}


async def get_video(video_id: str, client: Client, wait: str = "0") -> Any:
    """``GET /videos/{id}?wait=SECONDS``: ``{id, status, progress, url}`` (url once
    completed; ``error`` when failed).

    Without ``wait`` it reads the video once. With it, the job is awaited: a
    notification to any worker of the fleet (or, late, the safety-net polling) ends the
    wait; after ``wait`` seconds the status known so far is the answer.
    """
    try:
        seconds = _wait_seconds(wait)
    except ValueError as exc:
        return _error(400, str(exc))
    job = client.jobs.from_video_id(video_id)
    try:
        detail = await (job.wait(timeout=seconds) if seconds > 0 else job.read())
    except JobTimeoutError as exc:
        return _view(video_id, exc.status, exc.progress, None)
    except VideoFailedError as exc:
        return {**_view(video_id, "FAILED", job.progress, None), "error": exc.message}
    except NotFoundError as exc:
        return _error(404, exc.message)
    except APIError as exc:
        return _error(502, str(exc))
    return _detail_view(detail)


def app_from_environment() -> FastAPI:
    """The application factory uvicorn calls in each worker (``factory=True``)."""
    return create_app(from_environment())
