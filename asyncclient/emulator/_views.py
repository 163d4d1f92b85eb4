"""JSON views of the records (spec 2.3, 2.4, 2.9) and signed download URLs."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Any

from asyncclient.emulator._clock import iso
from asyncclient.emulator._records import Profile
from asyncclient.emulator._state import Post, Video

__all__ = [
    "SAMPLE_MP4",
    "URL_VALIDITY",
    "download_url",
    "post_view",
    "sign",
    "template_detail",
    "template_item",
    "video_view",
]

JSON = dict[str, Any]
SAMPLE_MP4 = Path(__file__).with_name("data") / "sample.mp4"
SAMPLE_SIZE = SAMPLE_MP4.stat().st_size if SAMPLE_MP4.exists() else 0
URL_VALIDITY = 24 * 3600  # spec 2.3: stated validity 24 hours
_LIST_ONLY_OMITS = (
    "type",
    "durationInSeconds",
    "avatarId",
    "voiceId",
    "musicId",
    "videoSettings",
    "script",
    "usedCredits",
    "webhook",
)


def sign(secret: bytes, video_id: str, expires: int) -> str:
    """Return the signature of a download URL."""
    msg = f"{video_id}:{expires}".encode()
    return hmac.new(secret, msg, hashlib.sha256).hexdigest()[:32]


def download_url(
    base: str, secret: bytes, video_id: str, now: float, *, validity: int = URL_VALIDITY
) -> str:
    """Return a download URL valid for ``validity`` service seconds (24 hours) from ``now``."""
    expires = int(now) + validity
    return f"{base}/_files/{video_id}.mp4?expires={expires}&sig={sign(secret, video_id, expires)}"


def _used_ids(profile: Profile) -> JSON:
    """The avatar, voice and music ids a project used (spec 2.3, detail view).

    The spec types them as strings, never null (unlike thumbnail, projectId or webhook,
    "string or null"): an id the project did not use is left out.
    """
    used = {"avatarId": profile.avatar_id, "voiceId": profile.voice_id, "musicId": profile.music_id}
    return {key: value for key, value in used.items() if isinstance(value, str) and value}


def video_view(video: Video, now: float, base: str, secret: bytes, *, detail: bool) -> JSON:
    """Return the detail or list view of a video (spec 2.3)."""
    status = video.status(now)
    done = status == "COMPLETED"
    profile = video.profile
    video_id = video.id
    frames = profile.duration_s * 25 if done else 0
    done_at = video.done_at
    out: JSON = {
        "id": video_id,
        "name": video.name,
        "type": profile.type,
        "status": status,
        "thumbnail": f"{base}/_files/{video_id}.jpg" if done else None,
        "progress": video.progress(now),
        "message": {
            "STARTED": "Video is being generated",
            "COMPLETED": "Video completed",
            "FAILED": video.error,
        }[status],
        "durationInFrames": frames,
        "durationInSeconds": frames / 25,
        "size": SAMPLE_SIZE if done else 0,
        "projectId": video.project_id,
        "teamId": video.team_id,
        **(_used_ids(profile) if detail else {}),
        "videoSettings": {
            "aspectRatio": profile.aspect_ratio,
            "caption": {
                "disabled": profile.caption_disabled,
                "preset": profile.caption_preset,
            },
        },
        "script": profile.script,
        "usedCredits": profile.used_credits,
        "webhook": profile.webhook,
        "createdAt": iso(video.created_at),
        "updatedAt": iso(min(now, done_at)),
    }
    if done:
        out["url"] = download_url(base, secret, video_id, now)
    if not detail:
        for key in _LIST_ONLY_OMITS:
            out.pop(key, None)
    return out


def post_view(post: Post, now: float, base: str, secret: bytes) -> JSON:
    """Return a scheduled post (spec 2.4)."""
    status = post.status(now)
    data = dict(post.platform_data)
    if status == "failed":
        data["error"] = post.error
    video = post.video
    return {
        "id": post.id,
        "status": status,
        "scheduledDateTime": iso(post.scheduled_at),
        "platform": post.integration["type"],
        "integration": {
            "id": post.integration["id"],
            "type": post.integration["type"],
            "account": post.integration["account"],
        },
        "video": {
            "id": video.id,
            "name": video.name,
            "url": download_url(base, secret, video.id, now),
            "thumbnail": f"{base}/_files/{video.id}.jpg",
            "durationInSeconds": video.duration_s,
        },
        "platformData": data,
        "createdAt": iso(post.created_at),
        "updatedAt": iso(min(now, post.scheduled_at) if status != "pending" else post.created_at),
    }


def template_item(record: JSON) -> JSON:
    """Return the list item of a template (spec 2.9)."""
    return {
        "id": record["id"],
        "name": record["name"],
        "type": record["type"],
        "script": record["script"],
        "variables": record["variables"],
        "avatarId": record["avatarId"],
        "voiceId": record["voiceId"],
        "scenes": [
            {
                "script": s["script"],
                "variables": [{"key": v["key"], "value": v["value"]} for v in s["variables"]],
            }
            for s in record["scenes"]
        ],
        "createdAt": record["createdAt"],
    }


def template_detail(record: JSON) -> JSON:
    """Return the detail of a template (spec 2.9)."""
    keys = ("id", "name", "type", "thumbnail", "isTemplate", "videoSettings", "scenes", "webhook")
    out = {k: record[k] for k in keys}
    out["createdAt"] = record["createdAt"]
    out["updatedAt"] = record["updatedAt"]
    return out
