"""Deterministic social research data (spec 2.6, 2.7, 2.8)."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from asyncclient.emulator._clock import iso

__all__ = ["account_record", "search_analytics", "social_videos"]

JSON = dict[str, Any]
_TAGS = ["fyp", "viral", "howto", "daily", "tips", "trend", "learn", "fun", "review", "life"]


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def social_videos(
    source: str, platform: str, count: int, now: float, *, search: bool
) -> list[JSON]:
    """Return ``count`` generated social videos for a niche or search ``source``."""
    out = []
    for i in range(count):
        r = _rng(source, platform, i)
        views = r.randint(1_000, 5_000_000)
        likes = views // r.randint(5, 40)
        user = f"creator_{r.randint(1, 999):03d}"
        video: JSON = {
            "id": f"sv_{hashlib.sha1(f'{source}{platform}{i}'.encode()).hexdigest()[:12]}",
            "externalId": str(r.getrandbits(40)),
            "platform": platform,
            "title": f"{source.title()} video #{i + 1}",
            "thumbnailUrl": f"https://cdn.emulator.invalid/social/{platform}/{i}.jpg",
            "videoUrl": f"https://{platform}.invalid/{user}/{i}",
            "creator": {
                "username": user,
                "displayName": user.replace("_", " ").title(),
                "avatarUrl": f"https://cdn.emulator.invalid/social/{user}.jpg",
                "followers": r.randint(100, 2_000_000),
                "isVerified": r.random() < 0.2,
            },
            "stats": {
                "views": views,
                "likes": likes,
                "comments": likes // 20,
                "shares": likes // 50,
            },
            "viralScore": round(r.uniform(0, 100), 1),
            "engagementRate": round(r.uniform(0.5, 15), 2),
            "hashtags": r.sample(_TAGS, 3),
            "publishedAt": iso(now - r.randint(3600, 90 * 86400)),
        }
        if search:
            video["description"] = f"All about {source} ({i + 1})"
            video["duration"] = r.randint(7, 180)
            video["music"] = {"title": f"Track {r.randint(1, 50)}", "artist": "Emulated Artist"}
        out.append(video)
    return out


def search_analytics(videos: list[JSON]) -> JSON:
    """Return the averages of a search (spec 2.7)."""
    n = max(1, len(videos))

    def avg(key: str) -> float:
        total: float = sum(v["stats"][key] for v in videos)
        return round(total / n, 1)

    return {
        "avgViews": avg("views"),
        "avgLikes": avg("likes"),
        "avgComments": avg("comments"),
        "avgShares": avg("shares"),
        "engagementRate": round(sum(v["engagementRate"] for v in videos) / n, 2),
    }


def account_record(account_id: str, username: str, platform: str, now: float) -> JSON:
    """Return an analyzed account (spec 2.6)."""
    r = _rng("account", username, platform)
    return {
        "id": account_id,
        "username": username,
        "platform": platform,
        "displayName": username.replace("_", " ").title(),
        "bio": f"Emulated {platform} creator",
        "avatarUrl": f"https://cdn.emulator.invalid/social/{username}.jpg",
        "isVerified": r.random() < 0.5,
        "stats": {
            "followers": r.randint(1_000, 3_000_000),
            "following": r.randint(10, 2_000),
            "videos": r.randint(10, 900),
            "likes": r.randint(10_000, 90_000_000),
        },
        "analytics": {
            "engagementRate": round(r.uniform(1, 12), 2),
            "viralityScore": round(r.uniform(0, 100), 1),
            "avgViews": float(r.randint(1_000, 900_000)),
        },
        "topHashtags": r.sample(_TAGS, 4),
        "keywords": r.sample(_TAGS, 3),
        "lastAnalyzed": iso(now),
        "createdAt": iso(now),
        "profileUrl": f"https://{platform}.invalid/@{username}",
    }
