"""The seeded catalogue: avatars, voices, music, media, templates, integrations, niches."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["Catalog", "build_catalog"]

JSON = dict[str, Any]


@attrs.frozen(kw_only=True)
class Catalog:
    """The identifiers every team of the emulator can use.

    The ``*_ids``-style lists hold plain ids; ``records`` hold the JSON records served.
    """

    avatars: list[str]
    voices: list[str]
    music: list[str]
    media_videos: list[str]
    media_images: list[str]
    templates: list[str]
    integrations: list[str]
    niches: list[str]
    accounts: dict[str, list[str]]
    records: dict[str, list[JSON]] = attrs.field(repr=False)

    def to_json(self) -> JSON:
        """Return the catalogue as served by ``GET /_emulator/catalog``."""
        return {
            "avatars": self.avatars,
            "voices": self.voices,
            "music": self.music,
            "mediaVideos": self.media_videos,
            "mediaImages": self.media_images,
            "templates": self.templates,
            "integrations": self.integrations,
            "niches": self.niches,
            "accounts": self.accounts,
        }


_AVATARS = ["Ava", "Ben", "Chloe", "Dev", "Emma", "Finn"]
_VOICES = ["Aria", "Blake", "Cora", "Drew", "Elena"]
_MUSIC = ["Upbeat Pop", "Calm Piano", "Epic Drums", "Lo-fi Beats"]
_NICHES = [
    ("fitness", "Fitness", "\U0001f4aa", "Workouts, routines and healthy habits"),
    ("cooking", "Cooking", "\U0001f373", "Recipes and kitchen tips"),
    ("tech", "Tech", "\U0001f4bb", "Gadgets, software and reviews"),
    ("travel", "Travel", "\u2708\ufe0f", "Destinations and travel hacks"),
]
_ACCOUNTS = ["creator_one", "daily_chef", "tech_tips", "wander_lust"]
_EPOCH = "2026-01-01T00:00:00.000Z"


def _named(prefix: str, names: list[str]) -> list[JSON]:
    return [
        {"id": f"{prefix}_{i + 1:03d}", "name": name, "createdAt": _EPOCH}
        for i, name in enumerate(names)
    ]


def _avatar_records() -> list[JSON]:
    out = _named("avatar", _AVATARS)
    for i, rec in enumerate(out):
        rec["type"] = "library"
        rec["gender"] = "female" if i % 2 == 0 else "male"
        rec["defaultVoiceId"] = f"voice_{i % len(_VOICES) + 1:03d}"
        rec["thumbnail"] = f"https://cdn.emulator.invalid/avatars/{rec['id']}.jpg"
    return out


def _media_records() -> tuple[list[JSON], list[JSON]]:
    videos = [
        {"id": f"media_vid_{i:03d}", "type": "video", "name": f"clip {i}.mp4"} for i in range(1, 7)
    ]
    images = [
        {"id": f"media_img_{i:03d}", "type": "image", "name": f"image {i}.png"} for i in range(1, 7)
    ]
    return videos, images


def _template_scene(script: str, variables: list[tuple[str, str, str]]) -> JSON:
    return {
        "script": script,
        "variables": [{"key": k, "type": t, "value": v} for k, t, v in variables],
        "avatar": {
            "id": "avatar_001",
            "topLeft": {"x": 0, "y": 0},
            "bottomRight": {"x": 1, "y": 1},
        },
        "caption": {"topLeft": {"x": 0, "y": 0.7}, "bottomRight": {"x": 1, "y": 0.9}},
    }


def _template_records() -> list[JSON]:
    specs = [
        (
            "tpl_welcome",
            "Welcome",
            [
                _template_scene(
                    "Hi {{first_name}}, welcome to {{product}}!",
                    [("first_name", "text", "Sam"), ("product", "text", "Acme")],
                ),
                _template_scene(
                    "This is {{product}}.",
                    [("product", "text", "Acme"), ("logo", "media", "https://x.invalid/l.png")],
                ),
            ],
        ),
        (
            "tpl_promo",
            "Promo",
            [_template_scene("Save {{discount}} today!", [("discount", "text", "20%")])],
        ),
        (
            "tpl_thanks",
            "Thank you",
            [_template_scene("Thanks {{first_name}}!", [("first_name", "text", "Sam")])],
        ),
    ]
    out = []
    for tid, name, scenes in specs:
        names = sorted({v["key"] for s in scenes for v in s["variables"]})
        out.append(
            {
                "id": tid,
                "name": name,
                "type": "class",
                "script": " ".join(s["script"] for s in scenes),
                "variables": names,
                "avatarId": "avatar_001",
                "voiceId": "voice_001",
                "thumbnail": f"https://cdn.emulator.invalid/templates/{tid}.jpg",
                "isTemplate": True,
                "videoSettings": {
                    "aspectRatio": "ratio_9_16",
                    "caption": {"enabled": True, "preset": "classic", "alignment": "bottom"},
                },
                "scenes": scenes,
                "webhook": None,
                "createdAt": _EPOCH,
                "updatedAt": _EPOCH,
            }
        )
    return out


def _integration_records() -> list[JSON]:
    out = []
    for i, platform in enumerate(["videosite", "clipsite", "photosite"], start=1):
        out.append(
            {
                "id": f"int_{platform}_1",
                "type": platform,
                "identifier": f"{platform}-channel-{i}",
                "account": {
                    "id": f"acct_{platform}_1",
                    "name": f"Emulated {platform.title()}",
                    "username": f"emulated_{platform}",
                    "avatarUrl": f"https://cdn.emulator.invalid/accounts/{platform}.jpg",
                },
            }
        )
    return out


def build_catalog() -> Catalog:
    """Build the deterministic catalogue (the same for every seed)."""
    avatars = _avatar_records()
    voices = _named("voice", _VOICES)
    music = _named("music", _MUSIC)
    media_videos, media_images = _media_records()
    templates = _template_records()
    integrations = _integration_records()
    niches = [
        {"id": n, "label": label, "emoji": emoji, "description": desc}
        for n, label, emoji, desc in _NICHES
    ]
    records = {
        "avatars": avatars,
        "voices": voices,
        "music": music,
        "media": media_videos + media_images,
        "templates": templates,
        "integrations": integrations,
        "niches": niches,
    }
    return Catalog(
        avatars=[r["id"] for r in avatars],
        voices=[r["id"] for r in voices],
        music=[r["id"] for r in music],
        media_videos=[r["id"] for r in media_videos],
        media_images=[r["id"] for r in media_images],
        templates=[r["id"] for r in templates],
        integrations=[r["id"] for r in integrations],
        niches=[r["id"] for r in niches],
        accounts={"clipsite": list(_ACCOUNTS), "videosite": list(_ACCOUNTS)},
        records=records,
    )
