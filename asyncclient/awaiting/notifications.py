"""Notifications read into events: the pure half of :mod:`asyncclient.webhooks`.

:func:`parse_event` reads form A or form B into a :class:`WebhookEvent` with no I/O and
raises nothing but :class:`WebhookPayloadError`, whatever its input (size and nesting
are bounded before ``json.loads``). :meth:`WebhookEvent.confirm` checks an event against
the service's own record, read through the API. The aiohttp receiver lives in
``webhooks.py``, the one module of the two that may import aiohttp.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Protocol

from attrs import evolve, field, frozen

from asyncclient._convert import DecodeError, decode
from asyncclient.errors import NotFoundError
from asyncclient.models.videos import VideoDetail

if TYPE_CHECKING:
    from asyncclient.awaiting.jobs import Jobs, VideoJob


__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "HasJobs",
    "WebhookEvent",
    "WebhookMismatchError",
    "WebhookPayloadError",
    "WebhookReply",
    "answer",
    "parse_event",
    "tokens_in",
]


class HasJobs(Protocol):
    """An ``AsyncClient``, as far as a notification needs one."""

    @property
    def jobs(self) -> Jobs: ...


MAX_BODY = 1024 * 1024
"""The largest body :func:`parse_event` reads by default, in bytes (a notification is ~1 KB
plus its metadata, at most 5 KB)."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects :func:`parse_event` reads by default."""


class WebhookPayloadError(ValueError):
    """A body that is not a notification of the service (form A or form B)."""


class WebhookMismatchError(WebhookPayloadError):
    """The service's own record of the video contradicts the notification (or knows no such
    video): the notification is not genuine, or not yet true."""


@frozen(kw_only=True)
class WebhookEvent:
    """One notification, whichever form it came in."""

    form: str
    """``A`` (``{status, data: {videoId, ...}, message}``, as the creation endpoints
    send) or ``B`` (``{event: "project.completed", projectId, ...}``, event-named)."""
    status: str
    """``COMPLETED`` or ``FAILED``."""
    event: str | None = None
    """``project.completed`` or ``project.failed`` (form B)."""
    video_id: str | None = None
    project_id: str | None = None
    url: str | None = None
    """Download URL (form A: as the detail's; form B: valid 7 days). Unchecked: with
    ``confirmed``, use ``confirmed.url``."""
    share_url: str | None = None
    message: str | None = None
    """The failure's reason, or the notification's message."""
    metadata: dict[str, Any] = field(factory=dict)
    """The creation's metadata, with ``projectId`` (form A)."""
    duration: float | None = None
    thumbnail: str | None = None
    aspect_ratio: str | None = None
    resolution: str | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None
    raw: dict[str, Any] = field(factory=dict, repr=False)
    """The body as received."""
    confirmed: VideoDetail | None = field(default=None, repr=False)
    """The service's own record of the video, read through the API when the event was
    confirmed (:meth:`confirm`, ``WebhookReceiver(confirm_with=...)``); else None."""

    @property
    def succeeded(self) -> bool:
        return self.status == "COMPLETED"

    @property
    def key(self) -> str:
        """What a duplicate shares: the project (or video) and the outcome."""
        return f"{self.project_id or ''}/{self.video_id or ''}/{self.status}"

    @property
    def digest(self) -> str:
        """A digest of all the notification says (every field but ``raw`` and
        ``confirmed``): two copies that differ in anything a handler reads (a URL, a
        message, the metadata) differ in it."""
        said = {name: getattr(self, name) for name in _SAID}
        try:
            text = json.dumps(said, sort_keys=True, default=str, separators=(",", ":"))
        except (TypeError, ValueError):  # a mapping given in code, keys of mixed types
            text = repr(said)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def job(self, client: HasJobs) -> VideoJob:
        """A job for the notified video: ``await`` it to read the service's own record."""
        if self.video_id is not None:
            return client.jobs.from_video_id(self.video_id, project_id=self.project_id)
        if self.project_id is None:
            raise WebhookPayloadError("the notification names neither a video nor a project")
        return client.jobs.from_project_id(self.project_id)

    async def confirm(self, client: HasJobs) -> WebhookEvent:
        """Read the video through the API and check the notification against it.

        One GET of the video's detail; a notification naming only its project (form B,
        failed) first reads the video list to find the project's video.

        Returns:
            This event with ``confirmed`` set to the service's record.

        Raises:
            WebhookMismatchError: The record's status, video or project differs from
                the notification's, or the service knows no such video.
            APIError: The read failed (the notification is neither confirmed nor refuted).
        """
        job = self.job(client)
        if job.video_id is None:
            await job.refresh()
            if job.video_id is None:
                raise WebhookMismatchError(f"the service knows no video of {self.project_id}")
        try:
            detail = await job.read()
        except NotFoundError:
            raise WebhookMismatchError(f"the service knows no video {job.video_id}") from None
        status = str(getattr(detail.status, "value", detail.status)).upper()
        if status != self.status:
            raise WebhookMismatchError(f"claims {self.status}; the service says {status}")
        if self.video_id is not None and detail.id != self.video_id:
            raise WebhookMismatchError(f"names video {self.video_id}; the service {detail.id}")
        if self.project_id and detail.project_id and detail.project_id != self.project_id:
            raise WebhookMismatchError(
                f"names project {self.project_id}; the service {detail.project_id}"
            )
        return evolve(self, confirmed=detail)


_SAID = (
    "form", "status", "event", "video_id", "project_id", "url", "share_url", "message",
    "metadata", "duration", "thumbnail", "aspect_ratio", "resolution", "created_at",
    "completed_at",
)  # fmt: skip
"""The fields of a :class:`WebhookEvent` its :attr:`~WebhookEvent.digest` covers."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _depth(text: str) -> int:
    """How deep arrays and objects nest in JSON ``text`` (strings skipped)."""
    brackets = _BRACKET.findall(_STRING.sub("", text))
    return max(accumulate(1 if b in "[{" else -1 for b in brackets), default=0)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _load(body: object, max_size: int, max_depth: int) -> dict[str, Any]:
    if isinstance(body, Mapping):
        return dict(body)
    if isinstance(body, (bytes, bytearray, memoryview)):
        if len(body) > max_size:
            raise WebhookPayloadError(f"body: larger than {max_size} bytes")
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WebhookPayloadError(f"body: not JSON (not UTF-8: {exc})") from None
    elif isinstance(body, str):
        text = body
        if len(text) > max_size:  # characters: at least as many bytes
            raise WebhookPayloadError(f"body: larger than {max_size} bytes")
    else:
        raise WebhookPayloadError(
            f"body: expected bytes, text or a mapping, got {type(body).__name__}"
        )
    if _depth(text) > max_depth:
        raise WebhookPayloadError(f"body: nested deeper than {max_depth} levels")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:  # JSONDecodeError, and an integer of too many digits
        raise WebhookPayloadError(f"body: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise WebhookPayloadError("body: expected a JSON object")
    return data


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _when(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    try:
        return decode(value, datetime, path=path)
    except DecodeError as exc:
        raise WebhookPayloadError("; ".join(exc.errors)) from None
    except (OverflowError, OSError, ValueError):  # a timestamp out of any datetime's range
        raise WebhookPayloadError(f"{path}: timestamp out of range") from None


def _status(value: Any) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise WebhookPayloadError(
            f"status: expected COMPLETED or FAILED, got {type(value).__name__}"
        )
    status = value.upper()
    if status not in ("COMPLETED", "FAILED"):
        raise WebhookPayloadError(f"status: expected COMPLETED or FAILED, got {value[:40]!r}")
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
        duration=_number(video.get("duration")),
        thumbnail=_text(video, "thumbnail"),
        aspect_ratio=_text(video, "aspectRatio"),
        resolution=_text(video, "resolution"),
        created_at=_when(data.get("createdAt"), "createdAt"),
        completed_at=_when(data.get("completedAt"), "completedAt"),
        raw=data,
    )


def parse_event(
    body: bytes | str | Mapping[str, Any], *, max_size: int = MAX_BODY, max_depth: int = MAX_DEPTH
) -> WebhookEvent:
    """Read a notification of either form.

    Args:
        body: The request body (bytes or text), or its decoded JSON.
        max_size: The largest body read, in bytes (text: in characters).
        max_depth: The deepest nesting of arrays and objects read.

    Raises:
        WebhookPayloadError: The body is not a notification; the message names the field.
            Nothing else, whatever ``body`` holds.
    """
    try:
        data = _load(body, max_size, max_depth)
        if "event" in data:
            return _form_b(data)
        if "data" in data:
            return _form_a(data)
    except WebhookPayloadError:
        raise
    except Exception as exc:  # a body is input: nothing in it may raise anything else
        raise WebhookPayloadError(f"body: unreadable ({type(exc).__name__})") from None
    raise WebhookPayloadError("body: neither form A (data) nor form B (event)")


# -- what a receiver answers ------------------------------------------------------------


@frozen
class WebhookReply:
    """The answer to one notification: what a web framework's view sends back.

    ``status`` (200 once taken or a duplicate; 400, 401, 403, 409, 500 or 503 otherwise:
    the service sends again later) and a small JSON ``body`` of ``content_type``.
    """

    status: int
    body: bytes
    content_type: str = "application/json"


def answer(status: int, message: str | None = None) -> WebhookReply:
    """A reply: ``{"success": status == 200, "message": ...}``."""
    body: dict[str, Any] = {"success": status == 200}
    if message is not None:
        body["message"] = message
    return WebhookReply(status, json.dumps(body).encode())


def tokens_in(query: Mapping[str, str | Sequence[str]] | None) -> list[str]:
    """The ``token`` values of a query, as a framework hands its query over."""
    given = (query or {}).get("token")
    if given is None:
        return []
    return [given] if isinstance(given, str) else list(given)
