"""Scenes of the multi-scene format and of template generation."""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen

from asyncclient.models.enums import FrameModel, TemplateVariableType

__all__ = [
    "AvatarBox",
    "AvatarScene",
    "PictureInPictureScene",
    "Point",
    "Scene",
    "StartEndFrameScene",
    "TemplateScene",
    "TemplateVariable",
    "VideoScene",
]


@frozen(kw_only=True)
class AvatarScene:
    """An avatar speaking a script."""

    TYPE: ClassVar[str] = "avatar"
    script: str
    """What the avatar says."""
    avatar_id: str
    """Avatar id (max 30)."""
    voice_id: str
    """Voice id (max 30)."""


@frozen(kw_only=True)
class VideoScene:
    """A clip or image, optionally with a voiceover."""

    TYPE: ClassVar[str] = "video"
    media_id: str
    """Id of uploaded media."""
    script: str | None = None
    """Optional voiceover script."""
    voice_id: str | None = None
    """Voice of the voiceover."""


@frozen(kw_only=True)
class PictureInPictureScene:
    """The avatar overlaid on media."""

    TYPE: ClassVar[str] = "picture_in_picture"
    script: str
    """What the avatar says."""
    avatar_id: str
    """Avatar id (max 30)."""
    voice_id: str
    """Voice id (max 30)."""
    media_id: str
    """Id of uploaded media behind the avatar."""


@frozen(kw_only=True)
class StartEndFrameScene:
    """A generated transition between two images."""

    TYPE: ClassVar[str] = "start_end_frame"
    start_frame_media_id: str
    """First image."""
    end_frame_media_id: str
    """Last image."""
    frame_prompt: str
    """What happens in between."""
    frame_model: FrameModel | str | None = None
    """Generation model."""
    frame_duration: float | None = None
    """Unit and bounds not shown in the spec."""


Scene = AvatarScene | VideoScene | PictureInPictureScene | StartEndFrameScene
"""Any scene of ``create_scenes``; each is sent with its ``type``."""


@frozen(kw_only=True)
class Point:
    """A point of a box, in the template's coordinates."""

    x: float
    y: float


@frozen(kw_only=True)
class AvatarBox:
    """The avatar of a template scene and where it stands."""

    id: str | None = None
    """Avatar id."""
    top_left: Point | None = None
    """Top-left corner."""
    bottom_right: Point | None = None
    """Bottom-right corner."""


@frozen(kw_only=True)
class TemplateVariable:
    """A value for one ``{{key}}`` of a template scene."""

    key: str
    """The placeholder name, case-sensitive (max 100)."""
    value: str
    """Text, or a URL for a media variable (max 2000; ``""`` is valid)."""
    type: TemplateVariableType | str = TemplateVariableType.TEXT
    """``text`` or ``media``."""


@frozen(kw_only=True)
class TemplateScene:
    """One scene of a template-generation request."""

    script: str
    """The scene script; may contain ``{{placeholders}}`` (max 5000)."""
    variables: list[TemplateVariable]
    """A value for every placeholder of the scene."""
    avatar: AvatarBox | None = None
    """The scene's avatar and its box."""
    voice: str | None = None
    """Voice id."""
