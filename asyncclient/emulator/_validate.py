"""Field checks shared by the request rules (spec parts 2.2, 7 and 8.2).

Every problem is a message ``<field path>: <reason>`` (spec 7); a request's
problems are collected together and joined with ``"; "`` into one 400 message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from asyncclient.emulator._seed import Catalog
from asyncclient.models import enums

__all__ = ["Checker"]

_MISSING = object()
METADATA_MAX_BYTES = 5 * 1024
_HEX = frozenset("0123456789abcdefABCDEF")


def _choices(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


def is_https_url(value: str) -> bool:
    """Return whether ``value`` is an absolute https URL with a host."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname) and " " not in value


def is_web_url(value: str) -> bool:
    """Return whether ``value`` is an absolute http or https URL with a host (spec 2.9)."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in value


class Checker:
    """Collects the problems of one request body."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.problems: list[str] = []

    def add(self, path: str, reason: str) -> None:
        """Record one problem."""
        self.problems.append(f"{path}: {reason}")

    # -- primitives ---------------------------------------------------------

    def string(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        required: bool = False,
        max_len: int | None = None,
        min_len: int = 1,
    ) -> str | None:
        """Check an optional or required string field; return it when valid.

        An optional string sent as ``""`` counts as omitted (README, choices).
        """
        value = obj.get(key, _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.add(path, f"{key} is required")
            return None
        if not isinstance(value, str):
            self.add(path, "must be a string")
            return None
        if value == "" and not required:
            return None
        if len(value) < min_len:
            self.add(path, f"{key} must be at least {min_len} character" + "s" * (min_len > 1))
            return None
        if max_len is not None and len(value) > max_len:
            self.add(path, f"{key} cannot exceed {max_len} characters")
            return None
        return value

    def enum(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        allowed: Iterable[str],
        *,
        required: bool = False,
        reason: str | None = None,
    ) -> str | None:
        """Check a field whose value must be one of ``allowed``."""
        value = obj.get(key, _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.add(path, f"{key} is required")
            return None
        values = [str(v) for v in allowed]
        if not isinstance(value, str) or value not in values:
            self.add(path, reason or f"invalid value {value!r} (use {_choices(values)})")
            return None
        return value

    def boolean(self, obj: dict[str, Any], key: str, path: str, *, required: bool = False) -> None:
        """Check a boolean field."""
        value = obj.get(key, _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.add(path, f"{key} is required")
        elif not isinstance(value, bool):
            self.add(path, "must be a boolean")

    def number(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        low: float | None = None,
        high: float | None = None,
    ) -> None:
        """Check an optional number field, with inclusive bounds."""
        value = obj.get(key, _MISSING)
        if value is _MISSING or value is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.add(path, "must be a number")
        elif low is not None and high is not None and not low <= value <= high:
            self.add(path, f"number must be between {low:g} and {high:g}")

    def obj(
        self, parent: dict[str, Any], key: str, path: str, *, required: bool = False
    ) -> dict[str, Any] | None:
        """Check an object field; return it when it is an object."""
        value = parent.get(key, _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.add(path, f"{key} is required")
            return None
        if not isinstance(value, dict):
            self.add(path, "must be an object")
            return None
        return value

    # -- catalogue references -----------------------------------------------

    def ref(
        self, obj: dict[str, Any], key: str, path: str, kind: str, *, required: bool = False
    ) -> str | None:
        """Check an avatar, voice or music id: max 30 characters, present in the catalogue."""
        value = self.string(obj, key, path, required=required, max_len=30)
        if value is None:
            return None
        known = {"avatar": self.catalog.avatars, "voice": self.catalog.voices}.get(
            kind, self.catalog.music
        )
        if value not in known:
            self.add(path, f"{kind} {value} not found")
            return None
        return value

    def media_id(self, value: Any, path: str) -> None:
        """Check one media id against the catalogue."""
        if not isinstance(value, str):
            self.add(path, "must be a string")
        elif value not in self.catalog.media_videos and value not in self.catalog.media_images:
            self.add(path, f"media {value} not found")

    def media_list(self, body: dict[str, Any], *, required: bool, min_items: int = 0) -> None:
        """Check ``media``: an array of at most 50 known media ids (spec 8.2)."""
        value = body.get("media", _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.add("media", "media is required")
            return
        if not isinstance(value, list):
            self.add("media", "must be an array of media ids")
            return
        if len(value) < min_items:
            self.add("media", "at least one media item is required")
        if len(value) > 50:
            self.add("media", "cannot have more than 50 media items")
            return
        for i, item in enumerate(value):
            self.media_id(item, f"media[{i}]")

    # -- shared objects (spec 2.2) ------------------------------------------

    def caption(self, body: dict[str, Any], *, required: bool = False) -> None:
        """Check the ``caption`` object."""
        cap = self.obj(body, "caption", "caption", required=required)
        if cap is None:
            return
        self.enum(cap, "preset", "caption.preset", list(enums.CaptionPreset))
        self.alignment(cap, "caption.alignment")
        self.boolean(cap, "disabled", "caption.disabled")

    def alignment(self, obj: dict[str, Any], path: str) -> None:
        """Check an alignment value (spec 7: bad alignment)."""
        self.enum(
            obj,
            "alignment",
            path,
            list(enums.TextAlignment),
            reason="alignment value invalid (use top, middle or bottom)",
        )

    def audio(self, body: dict[str, Any]) -> None:
        """Check the ``audio`` object (bounds are not in the spec)."""
        audio = self.obj(body, "audio", "audio")
        if audio is None:
            return
        for key in ("speed", "stability", "similarityBoost", "style"):
            self.number(audio, key, f"audio.{key}")
        self.boolean(audio, "useSpeakerBoost", "audio.useSpeakerBoost")

    def aspect_ratio(self, body: dict[str, Any], *, required: bool = False) -> None:
        """Check ``aspectRatio``."""
        self.enum(body, "aspectRatio", "aspectRatio", list(enums.AspectRatio), required=required)

    def lipsync(self, body: dict[str, Any]) -> None:
        """Check ``lipsyncModel`` (spec 7: bad lipsync model)."""
        self.enum(
            body,
            "lipsyncModel",
            "lipsyncModel",
            list(enums.LipsyncModel),
            reason="invalid lipsync model (use base or pro)",
        )

    def script(self, body: dict[str, Any], *, max_len: int = 10000, path: str = "script") -> None:
        """Check a required script of 1 to ``max_len`` characters."""
        self.string(body, "script", path, required=True, max_len=max_len)

    def common(self, body: dict[str, Any]) -> None:
        """Check ``name``, ``musicId``, ``webhook`` and ``metadata`` (spec 4, 8.2)."""
        self.string(body, "name", "name", max_len=100)
        self.ref(body, "musicId", "musicId", "music")
        self.webhook(body)
        self.metadata(body)

    def webhook(self, body: dict[str, Any]) -> None:
        """Check ``webhook``: an HTTPS URL of at most 500 characters."""
        value = body.get("webhook")
        if value is None or value == "":  # "" counts as omitted (README, choices)
            return
        if not isinstance(value, str) or not is_https_url(value):
            self.add("webhook", "must be a valid HTTPS URL")
        elif len(value) > 500:
            self.add("webhook", "webhook cannot exceed 500 characters")

    def metadata(self, body: dict[str, Any]) -> None:
        """Check ``metadata``: an object of at most 5KB of JSON (spec 4, 8.2).

        5KB is 5120 bytes of the compact JSON text in UTF-8, non-ASCII characters
        unescaped (what ``Buffer.byteLength(JSON.stringify(metadata))`` gives).
        """
        value = body.get("metadata")
        if value is None:
            return
        if not isinstance(value, dict):
            self.add("metadata", "must be an object")
            return
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        if len(text.encode("utf-8", "surrogatepass")) > METADATA_MAX_BYTES:
            self.add("metadata", "metadata cannot exceed 5KB")

    def hex_colour(self, obj: dict[str, Any], key: str, path: str, *, also: str = "") -> None:
        """Check a hex colour: '#' optional, then 3, 4, 6 or 8 hex digits (spec 2.2)."""
        value = self.string(obj, key, path)
        if value is None or (also and value == also):
            return
        digits = value.removeprefix("#")
        if len(digits) not in (3, 4, 6, 8) or any(c not in _HEX for c in digits):
            extra = f" or '{also}'" if also else ""
            self.add(path, f"must be a hex colour{extra}")
