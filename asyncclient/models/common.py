"""Nested objects of creation requests.

Every field is optional and defaults to ``None``; a ``None`` field is not sent.
Enum-typed fields accept the enum or its plain string value.
"""

from __future__ import annotations

from attrs import frozen

from asyncclient.models.enums import (
    BRollType,
    CaptionPreset,
    ScrollMode,
    TextAlignment,
    TextPreset,
    VisualPreset,
)

__all__ = [
    "AdSettings",
    "Audio",
    "Caption",
    "GameplaySettings",
    "PresetSettings",
    "ProductAdSettings",
    "TextSettings",
]


@frozen(kw_only=True)
class Caption:
    """Caption styling of a video."""

    preset: CaptionPreset | str | None = None
    """One of the 22 caption presets."""
    alignment: TextAlignment | str | None = None
    """``top``, ``middle`` or ``bottom``."""
    disabled: bool | None = None
    """When true, no captions are rendered."""


@frozen(kw_only=True)
class Audio:
    """Voice settings. Bounds and defaults are not shown in the spec."""

    speed: float | None = None
    """Voice speed."""
    stability: float | None = None
    """Voice stability."""
    similarity_boost: float | None = None
    """Voice similarity boost."""
    style: float | None = None
    """Voice style."""
    use_speaker_boost: bool | None = None
    """Speaker boost on or off."""


@frozen(kw_only=True)
class AdSettings:
    """Layout of a UGC ad."""

    b_roll_type: BRollType | str | None = None
    """Where the b-roll goes relative to the avatar (default ``down``)."""
    remove_avatar_background: bool | None = None
    """Cut the avatar out of its background."""


@frozen(kw_only=True)
class ProductAdSettings:
    """The web page captured behind the avatar of a product ad."""

    website_url: str
    """Required: an HTTPS URL, publicly reachable, not behind authentication."""
    avatar_intro_seconds: float | None = None
    """1 to 30 seconds of avatar before the page appears."""
    scroll_interval: float | None = None
    """Units not shown in the spec."""
    scroll_duration: float | None = None
    """Units not shown in the spec."""
    scroll_delay: float | None = None
    """Units not shown in the spec."""
    scroll_mode: ScrollMode | str | None = None
    """``restart``, ``loop``, ``once`` or ``fixed``."""


@frozen(kw_only=True)
class PresetSettings:
    """Visual style of generated media (script to video)."""

    preset: VisualPreset | str | None = None
    """Required when mediaType is ``ai-images`` or ``ai-videos``."""
    quality: str | None = None
    """``base`` or ``pro`` in the spec's examples."""


@frozen(kw_only=True)
class GameplaySettings:
    """Gameplay footage for script to video with mediaType ``gameplay``."""

    selected_game: str | None = None
    """Game name, e.g. ``blockgame``."""
    selected_video: str | None = None
    """Gameplay clip identifier."""


@frozen(kw_only=True)
class TextSettings:
    """Styling of the hook text (hook plus demo)."""

    preset: TextPreset | str | None = None
    """One of the 15 text presets (default ``modern``)."""
    alignment: TextAlignment | str | None = None
    """``top``, ``middle`` or ``bottom``."""
    text_color: str | None = None
    """A hex colour; overrides the preset's colour."""
    background_color: str | None = None
    """A hex colour or ``transparent``."""
    disabled: bool | None = None
    """Hide the text."""
