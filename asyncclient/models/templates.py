"""Templates."""

from __future__ import annotations

import re
from datetime import datetime

from attrs import frozen

from asyncclient.models.enums import AspectRatio, CaptionPreset, TemplateVariableType, TextAlignment
from asyncclient.models.identified import Identified
from asyncclient.models.scenes import Point

__all__ = [
    "PLACEHOLDER",
    "Template",
    "TemplateAvatar",
    "TemplateCaptionBox",
    "TemplateCaptionSettings",
    "TemplateDetail",
    "TemplateSceneInfo",
    "TemplateVariableInfo",
    "TemplateVideoSettings",
]

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")
"""A ``{{variable_name}}`` placeholder of a scene script."""


@frozen(kw_only=True)
class TemplateVariableInfo:
    """A variable of a template scene."""

    key: str
    type: TemplateVariableType | str | None = None
    """``text`` (from the script or text overlays) or ``media`` (a URL)."""
    value: str | None = None
    """The template's own value."""


@frozen(kw_only=True)
class TemplateAvatar:
    """The avatar of a template scene and its box."""

    id: str | None = None
    top_left: Point | None = None
    bottom_right: Point | None = None


@frozen(kw_only=True)
class TemplateCaptionBox:
    """Where a template scene's captions go."""

    top_left: Point | None = None
    bottom_right: Point | None = None


@frozen(kw_only=True)
class TemplateSceneInfo:
    """A scene of a template."""

    script: str | None = None
    """May contain ``{{placeholders}}``."""
    variables: list[TemplateVariableInfo] | None = None
    avatar: TemplateAvatar | None = None
    caption: TemplateCaptionBox | None = None

    def placeholders(self) -> list[str]:
        """The placeholder names of this scene's script, in order, without repeats."""
        return list(dict.fromkeys(PLACEHOLDER.findall(self.script or "")))


@frozen(kw_only=True)
class Template(Identified):
    """A template as the list endpoint shows it."""

    id: str
    name: str | None = None
    type: str | None = None
    script: str | None = None
    variables: list[str] | None = None
    """Names of the template's variables."""
    avatar_id: str | None = None
    voice_id: str | None = None
    scenes: list[TemplateSceneInfo] | None = None
    created_at: datetime | None = None


@frozen(kw_only=True)
class TemplateCaptionSettings:
    """Caption settings of a template."""

    enabled: bool | None = None
    preset: CaptionPreset | str | None = None
    alignment: TextAlignment | str | None = None


@frozen(kw_only=True)
class TemplateVideoSettings:
    """Video settings of a template."""

    aspect_ratio: AspectRatio | str | None = None
    caption: TemplateCaptionSettings | None = None


@frozen(kw_only=True)
class TemplateDetail(Identified):
    """A template as ``GET /v1/template/{id}`` shows it."""

    id: str
    name: str | None = None
    type: str | None = None
    thumbnail: str | None = None
    is_template: bool | None = None
    video_settings: TemplateVideoSettings | None = None
    scenes: list[TemplateSceneInfo] | None = None
    webhook: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def variable_names(self) -> list[str]:
        """Every variable a generation request must give a value for, in order.

        The union of each scene's declared variables and its script's placeholders.
        """
        names: dict[str, None] = {}
        for scene in self.scenes or []:
            for var in scene.variables or []:
                names[var.key] = None
            for name in scene.placeholders():
                names[name] = None
        return list(names)
