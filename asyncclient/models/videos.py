"""Video records (spec 2.3) and the result of a creation request."""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from asyncclient.models.enums import AspectRatio, CaptionPreset, VideoStatus

__all__ = [
    "CreatedProject",
    "Video",
    "VideoCaptionSettings",
    "VideoDetail",
    "VideoSettings",
]

TERMINAL_STATUSES = frozenset({VideoStatus.COMPLETED, VideoStatus.FAILED})


@frozen(kw_only=True)
class Video:
    """A video as the list endpoint shows it (spec 2.3, list view)."""

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
    """A video as ``GET /v1/video/{id}`` shows it (spec 2.3, detail view)."""

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


@frozen(kw_only=True)
class CreatedProject:
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
