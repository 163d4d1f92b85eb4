"""Receiving the service's notifications (spec part 6): parse them, answer them, dedupe them.

The service POSTs a notification to the ``webhook`` URL of a creation when its
video completes or fails, in one of two forms: form A (``{status, data:{videoId,
url, shareUrl, metadata}, message}``) or form B (``{event: "project.completed",
projectId, status, video:{...}}``). :func:`parse_event` reads either into one
:class:`WebhookEvent` (pure, no I/O). :class:`WebhookReceiver` is an aiohttp
handler: it answers 200 once your handler has taken the event, 500 if your
handler raised (the service then retries 1, 5 and 15 minutes later), 400 for a
body that is no notification, and drops duplicates, which the spec says happen.

Notifications carry no signature (spec 6: "not shown"): treat one as a hint and
read the truth with ``await event.job(client)`` before acting on it.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web
from attrs import field, frozen

from asyncclient._convert import DecodeError, decode

if TYPE_CHECKING:
    from asyncclient.jobs import Jobs, VideoJob


class _HasJobs(Protocol):
    """An ``AsyncClient``, as far as a notification needs one."""

    @property
    def jobs(self) -> Jobs: ...

__all__ = ["WebhookEvent", "WebhookPayloadError", "WebhookReceiver", "parse_event"]

logger = logging.getLogger("asyncclient")


class WebhookPayloadError(ValueError):
    """A body that is not a notification of spec part 6."""


@frozen(kw_only=True)
class WebhookEvent:
    """One notification, whichever form it came in."""

    form: str
    """``A`` (creation endpoints, spec 6.1) or ``B`` (event-named, spec 6.2)."""
    status: str
    """``COMPLETED`` or ``FAILED``."""
    event: str | None = None
    """``project.completed`` or ``project.failed`` (form B)."""
    video_id: str | None = None
    project_id: str | None = None
    url: str | None = None
    """Download URL (form A: as the detail's; form B: valid 7 days)."""
    share_url: str | None = None
    message: str | None = None
    """The failure's reason, or the notification's message."""
    metadata: dict[str, Any] = field(factory=dict)
    """The creation's metadata, with ``projectId`` (form A, spec 6.1)."""
    duration: float | None = None
    thumbnail: str | None = None
    aspect_ratio: str | None = None
    resolution: str | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None
    raw: dict[str, Any] = field(factory=dict, repr=False)
    """The body as received."""

    @property
    def succeeded(self) -> bool:
        return self.status == "COMPLETED"

    @property
    def key(self) -> str:
        """What a duplicate shares: the project (or video) and the outcome."""
        return f"{self.project_id or ''}/{self.video_id or ''}/{self.status}"

    def job(self, client: _HasJobs) -> VideoJob:
        """A job for the notified video: ``await`` it to read the service's own record."""
        if self.video_id is not None:
            return client.jobs.from_video_id(self.video_id, project_id=self.project_id)
        if self.project_id is None:
            raise WebhookPayloadError("the notification names neither a video nor a project")
        return client.jobs.from_project_id(self.project_id)


def _load(body: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(body, Mapping):
        return dict(body)
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise WebhookPayloadError(f"body: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise WebhookPayloadError("body: expected a JSON object")
    return data


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _when(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    try:
        return decode(value, datetime, path=path)
    except DecodeError as exc:
        raise WebhookPayloadError("; ".join(exc.errors)) from None


def _status(value: Any) -> str:
    status = str(value or "").upper()
    if status not in ("COMPLETED", "FAILED"):
        raise WebhookPayloadError(f"status: expected COMPLETED or FAILED, got {value!r}")
    return status


def _form_a(data: dict[str, Any]) -> WebhookEvent:
    inner = data.get("data")
    if not isinstance(inner, dict):
        raise WebhookPayloadError("data: expected an object")
    metadata = _object(inner.get("metadata"))
    status = _status(inner.get("status") or data.get("status"))
    return WebhookEvent(
        form="A",
        status=status,
        video_id=_text(inner, "videoId"),
        project_id=_text(metadata, "projectId") or _text(inner, "projectId"),
        url=_text(inner, "url"),
        share_url=_text(inner, "shareUrl"),
        message=_text(inner, "error") or _text(data, "message"),
        metadata=dict(metadata),
        raw=data,
    )


def _form_b(data: dict[str, Any]) -> WebhookEvent:
    video = _object(data.get("video"))
    duration = video.get("duration")
    metadata = _object(data.get("metadata"))
    return WebhookEvent(
        form="B",
        status=_status(data.get("status")),
        event=_text(data, "event"),
        video_id=_text(video, "id"),
        project_id=_text(data, "projectId"),
        url=_text(video, "url"),
        message=_text(data, "message"),
        metadata=dict(metadata),
        duration=float(duration) if isinstance(duration, (int, float)) else None,
        thumbnail=_text(video, "thumbnail"),
        aspect_ratio=_text(video, "aspectRatio"),
        resolution=_text(video, "resolution"),
        created_at=_when(data.get("createdAt"), "createdAt"),
        completed_at=_when(data.get("completedAt"), "completedAt"),
        raw=data,
    )


def parse_event(body: bytes | str | Mapping[str, Any]) -> WebhookEvent:
    """Read a notification of either form (spec 6.1, 6.2).

    Args:
        body: The request body (bytes or text), or its decoded JSON.

    Raises:
        WebhookPayloadError: The body is not a notification; the message names the field.
    """
    data = _load(body)
    if "event" in data:
        return _form_b(data)
    if "data" in data:
        return _form_a(data)
    raise WebhookPayloadError("body: neither form A (data) nor form B (event)")


Handler = Callable[[WebhookEvent], "Awaitable[None] | None"]


class WebhookReceiver:
    """An aiohttp handler for notifications: parse, dedupe, hand over, answer.

    Args:
        handler: Called with each new :class:`WebhookEvent` (a function or a coroutine
            function). If it raises, the answer is 500 and the service retries later.
        remember: How many event keys to remember for deduplication.

    ``app = receiver.app("/hooks/video")`` gives an application to run or to mount;
    ``app.router.add_post(path, receiver.handle)`` adds it to yours.
    """

    def __init__(self, handler: Handler, *, remember: int = 10_000) -> None:
        self._handler = handler
        self._remember = remember
        self._seen: OrderedDict[str, None] = OrderedDict()
        self.duplicates = 0
        """Notifications dropped as duplicates."""

    def app(self, path: str = "/webhook") -> web.Application:
        """An application that receives notifications at ``path``."""
        application = web.Application()
        application.router.add_post(path, self.handle)
        return application

    async def handle(self, request: web.Request) -> web.Response:
        """The aiohttp handler: answer one notification."""
        try:
            event = parse_event(await request.read())
        except WebhookPayloadError as exc:
            return web.json_response({"success": False, "message": str(exc)}, status=400)
        if event.key in self._seen:
            self.duplicates += 1
            return web.json_response({"success": True, "message": "duplicate ignored"})
        self._seen[event.key] = None  # before the handler runs: a concurrent copy is a duplicate
        try:
            result = self._handler(event)
            if inspect.isawaitable(result):
                await result
        except Exception:
            del self._seen[event.key]  # not taken: let the service's retry through
            logger.exception("webhook handler failed for %s; the service will retry", event.key)
            return web.json_response({"success": False, "message": "handler failed"}, status=500)
        while len(self._seen) > self._remember:
            self._seen.popitem(last=False)
        return web.json_response({"success": True})
