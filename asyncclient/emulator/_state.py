"""In-memory records of the emulator: teams, keys, projects, videos, posts, searches.

Video status is computed lazily from the service clock on every read (no task per
video), so many thousands of pending videos cost nothing while they wait.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._ratelimit import PLANS, Bucket

__all__ = [
    "DEFAULT_COSTS",
    "DEFAULT_PROCESSING",
    "Key",
    "Post",
    "Project",
    "Store",
    "Team",
    "Video",
]

JSON = dict[str, Any]

# Credits per creation (not in the spec; configurable through Emulator(costs=...)).
DEFAULT_COSTS: dict[str, int] = {
    "ugc_ads": 10,
    "script_to_video": 5,
    "product_ads": 12,
    "scenes": 2,  # base charge per video (spec 4.4)
    "scene_avatar_per_100_chars": 1,  # avatar scenes by script length (spec 4.4)
    "scene_start_end_frame": 3,  # start/end frame scenes add a charge (spec 4.4)
    "hook_demo": 1,
    "talking_avatar": 8,
    "ugc_video": 8,
    "add_captions": 2,
    "class": 5,
    "social_analyze": 0,
    "social_search_per_video": 0,
}
"""Credits per creation, by project type; ``Emulator(costs=...)`` is merged over it."""

# Mean processing time in service seconds per project type; jittered by +-jitter.
DEFAULT_PROCESSING: dict[str, float] = {
    "ugc_ads": 120.0,
    "script_to_video": 90.0,
    "product_ads": 150.0,
    "scenes": 120.0,
    "ugc_video": 90.0,
    "add_captions": 60.0,
    "class": 120.0,
}
"""Mean processing time in service seconds, by project type; ``Emulator(processing_seconds=...)``
is merged over it."""


@dataclass
class Team:
    """A team: owns keys, credits and records."""

    id: str
    name: str
    plan: str
    credits: int
    per_minute: int
    burst: int
    permitted: bool = True


@dataclass
class Key:
    """An API key of a team, with its own rate-limit bucket."""

    id: str
    secret: str
    team: Team
    bucket: Bucket


@dataclass
class Video:
    """A video record; its status follows from ``done_at`` and ``error``."""

    id: str
    project_id: str
    team_id: str
    type: str
    name: str
    created_at: float
    done_at: float
    error: str | None
    duration_s: int
    body: JSON
    used_credits: int
    webhook: str | None
    metadata: JSON
    form: str
    notified: bool = False

    def status(self, now: float) -> str:
        """Return ``STARTED``, ``COMPLETED`` or ``FAILED`` at service time ``now``."""
        if now < self.done_at:
            return "STARTED"
        return "FAILED" if self.error is not None else "COMPLETED"

    def progress(self, now: float) -> int:
        """Return the integer progress 0..100, linear over the processing time."""
        if self.status(now) == "COMPLETED":
            return 100
        span = self.done_at - self.created_at
        if span <= 0:
            return 0
        t = min(now, self.done_at)
        return max(0, min(99, int(100 * (t - self.created_at) / span)))


@dataclass
class Project:
    """A project: one or more videos of one team."""

    id: str
    team_id: str
    type: str
    created_at: float
    videos: list[Video] = field(default_factory=list)


@dataclass
class Post:
    """A scheduled post; pending until ``scheduled_at``, then published or failed."""

    id: str
    team_id: str
    video: Video
    integration: JSON
    scheduled_at: float
    platform_data: JSON
    created_at: float
    error: str | None = None

    def status(self, now: float) -> str:
        """Return the post status at service time ``now`` (spec 3.2)."""
        if now < self.scheduled_at:
            return "pending"
        return "failed" if self.error is not None else "published"


@dataclass
class Search:
    """A social search (spec 2.7); keywords complete ``keywords_after`` seconds later."""

    id: str
    team_id: str
    term: str
    platform: str
    limit: int
    created_at: float
    searched_at: float
    keywords_at: float


class Store:
    """Every record of the emulator, with the seeded RNG used for ids and jitter."""

    def __init__(
        self,
        clock: ServiceClock,
        seed: int,
        *,
        costs: dict[str, int] | None = None,
        processing: dict[str, float] | None = None,
        jitter: float = 0.5,
        failure_rate: dict[str, float] | None = None,
    ) -> None:
        self.clock = clock
        self.rng = random.Random(seed)
        self.costs = {**DEFAULT_COSTS, **(costs or {})}
        self.processing = {**DEFAULT_PROCESSING, **(processing or {})}
        self.jitter = jitter
        self.failure_rate = failure_rate or {}
        self.teams: dict[str, Team] = {}
        self.keys: dict[str, Key] = {}
        self.projects: dict[str, Project] = {}
        self.by_team: dict[str, list[Project]] = {}
        """Each team's projects, oldest first (the video list reads it from the end)."""
        self.videos: dict[str, Video] = {}
        self.posts: dict[str, Post] = {}
        self.searches: dict[str, Search] = {}
        self.analyzed: dict[tuple[str, str, str], JSON] = {}
        self._counter = 0

    def new_id(self, prefix: str) -> str:
        """Return a new deterministic id such as ``vid_0001a3f4c2d1``."""
        self._counter += 1
        return f"{prefix}_{self._counter:04d}{self.rng.getrandbits(32):08x}"

    def add_team(
        self,
        plan: str = "free",
        credits: int = 1000,
        *,
        per_minute: int | None = None,
        burst: int | None = None,
        permitted: bool = True,
        name: str | None = None,
    ) -> Key:
        """Create a team and its first key."""
        if plan not in PLANS:
            raise ValueError(f"unknown plan {plan!r} (use {', '.join(PLANS)})")
        rate, size = PLANS[plan]
        team = Team(
            id=self.new_id("team"),
            name=name or f"Team {len(self.teams) + 1}",
            plan=plan,
            credits=int(credits),
            per_minute=per_minute if per_minute is not None else rate,
            burst=burst if burst is not None else (size if per_minute is None else per_minute),
            permitted=permitted,
        )
        self.teams[team.id] = team
        return self.add_key(team)

    def add_key(self, team: Team) -> Key:
        """Create another key of ``team`` (each key has its own bucket)."""
        secret = f"emu_{self.rng.getrandbits(128):032x}"
        key = Key(
            id=f"key_{len(self.keys) + 1:04d}",
            secret=secret,
            team=team,
            bucket=Bucket(team.per_minute, team.burst, self.clock),
        )
        self.keys[secret] = key
        return key

    def processing_time(self, ptype: str) -> float:
        """Return a jittered processing time in service seconds for ``ptype``."""
        base = self.processing.get(ptype, 120.0)
        return max(0.0, base * self.rng.uniform(1 - self.jitter, 1 + self.jitter))

    def create_project(
        self, team: Team, ptype: str, body: JSON, *, name: str, cost: int, form: str
    ) -> Project:
        """Charge ``cost`` credits and create a project with one started video."""
        now = self.clock.now()
        team.credits -= cost
        project = Project(id=self.new_id("proj"), team_id=team.id, type=ptype, created_at=now)
        done = now if ptype == "hook_demo" else now + self.processing_time(ptype)
        error = None
        rate = self.failure_rate.get(ptype, self.failure_rate.get("*", 0.0))
        if rate and self.rng.random() < rate:
            error = "generation failed (simulated)"
        script = str(body.get("script") or body.get("text") or "")
        video = Video(
            id=self.new_id("vid"),
            project_id=project.id,
            team_id=team.id,
            type=ptype,
            name=name,
            created_at=now,
            done_at=done,
            error=error,
            duration_s=max(5, min(180, math.ceil(len(script) / 15))),
            body=body,
            used_credits=cost,
            webhook=body.get("webhook") if isinstance(body.get("webhook"), str) else None,
            metadata=dict(body.get("metadata") or {}),
            form=form,
        )
        project.videos.append(video)
        self.projects[project.id] = project
        self.by_team.setdefault(project.team_id, []).append(project)
        self.videos[video.id] = video
        return project

    def fail_video(self, video_id: str, message: str) -> Video:
        """Make a started video fail now; raise KeyError or ValueError if impossible."""
        video = self.videos[video_id]
        now = self.clock.now()
        if video.status(now) != "STARTED":
            raise ValueError(f"video {video_id} is already {video.status(now)}")
        video.done_at = now
        video.error = message
        return video
