"""Video records and the result of a creation request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from attrs import define, field, frozen

from asyncclient.models.enums import AspectRatio, CaptionPreset, VideoStatus
from asyncclient.models.identified import Identified

__all__ = [
    "CreatedProject",
    "SentCreation",
    "Video",
    "VideoCaptionSettings",
    "VideoDetail",
    "VideoSettings",
]

TERMINAL_STATUSES = frozenset({VideoStatus.COMPLETED, VideoStatus.FAILED})


@frozen(kw_only=True)
class Video(Identified):
    """A video as the list endpoint shows it."""

    id: str
    """Video identifier."""
    status: VideoStatus | str
    """``STARTED``, ``COMPLETED`` or ``FAILED``."""
    name: str | None = None
    """Video name."""
    url: str | None = None
    """Signed download URL, only when completed; valid for 24 hours."""
    thumbnail: str | None = None
    """Image URL."""
    progress: int | None = None
    """0 to 100."""
    message: str | None = None
    """Status text or failure detail."""
    duration_in_frames: int | None = None
    """Length in frames at 25 fps."""
    size: int | None = None
    """File size in bytes."""
    project_id: str | None = None
    """Owning project."""
    team_id: str | None = None
    """Owning team."""
    created_at: datetime | None = None
    """Creation time (timezone-aware)."""
    updated_at: datetime | None = None
    """Last update (timezone-aware)."""

    @property
    def is_terminal(self) -> bool:
        """True once the video is ``COMPLETED`` or ``FAILED``."""
        return self.status in TERMINAL_STATUSES


@frozen(kw_only=True)
class VideoCaptionSettings:
    """Caption part of a video's settings."""

    disabled: bool | None = None
    preset: CaptionPreset | str | None = None


@frozen(kw_only=True)
class VideoSettings:
    """Settings a video was made with (detail view)."""

    aspect_ratio: AspectRatio | str | None = None
    caption: VideoCaptionSettings | None = None


@frozen(kw_only=True)
class VideoDetail(Video):
    """A video as ``GET /v1/video/{id}`` shows it."""

    type: str | None = None
    """Project type."""
    duration_in_seconds: float | None = None
    """durationInFrames / 25."""
    avatar_id: str | None = None
    voice_id: str | None = None
    music_id: str | None = None
    video_settings: VideoSettings | None = None
    script: str | None = None
    used_credits: int | None = None
    """Credits this video cost."""
    webhook: str | None = None


@define(kw_only=True)
class SentCreation:
    """A creation request as it left, whose answer is not known: what a look for its
    project (``client.projects.reconcile``) needs. ``AmbiguousCreationError`` carries
    one; a batch builds one from its journal for a row an earlier run sent.

    ``service_sent_after`` is a time the service's own clock had reached before the
    request left (the ``Date`` of its earlier replies): a project the request made has a
    ``createdAt`` no earlier than it. None when no reply had told it.
    """

    request: Any
    """The creation request that was sent."""
    sent_at: datetime
    """When it was sent, by this client's clock (timezone-aware, UTC)."""
    service_sent_after: datetime | None = None
    looked: Any = field(default=None, init=False, repr=False, eq=False)
    """What earlier looks for it read (kept by the look; not part of its value)."""

    @property
    def name(self) -> str | None:
        """The project's name (a template's title), if it had one."""
        name = getattr(self.request, "name", None)
        return name if isinstance(name, str) else None

    @property
    def format(self) -> str | None:
        """Which creation endpoint (``ugc_ads``, ``template``, ...)."""
        fmt = getattr(self.request, "FORMAT", None)
        return fmt if isinstance(fmt, str) else None


@frozen(kw_only=True)
class CreatedProject(Identified):
    """What a creation request answered.

    ``video_id`` is ``None`` for formats whose response carries no video id
    (multi-scene, template generation): the video is then found by project id.
    """

    project_id: str | None
    """The project the video belongs to."""
    video_id: str | None = None
    """The video, when the response names it."""
    status: str | None = None
    """``STARTED``, ``COMPLETED`` (hook plus demo) or ``processing`` (templates)."""
    message: str | None = None
    """The service's message, when there is one."""
    format: str | None = None
    """Which creation endpoint made it (``ugc_ads``, ``template``, ...)."""
