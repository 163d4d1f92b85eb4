"""In-memory records of the emulator: teams, keys, projects, videos, posts, searches.

Video status is computed lazily from the service clock on every read (no task per
video), so many thousands of pending videos cost nothing while they wait. Videos and
projects are rows of one :class:`VideoTable` (see ``_records``), indexed for the video
list by :class:`Listing`; ``Store.videos`` and ``Store.projects`` map ids to views of them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._listing import Listing
from asyncclient.emulator._ratelimit import PLANS, Bucket
from asyncclient.emulator._records import (
    Project,
    ProjectMap,
    Video,
    VideoMap,
    VideoTable,
    profile_of,
)

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
        self.table = VideoTable()
        """Every video and its project, one row each, oldest first."""
        self.listing = Listing(self.table)
        """The video list's indexes (spec 4.10)."""
        self.projects: ProjectMap = ProjectMap(self.table)
        """Project id -> project (read-only)."""
        self.videos: VideoMap = VideoMap(self.table)
        """Video id -> video (read-only)."""
        self.posts: dict[str, Post] = {}
        self.searches: dict[str, Search] = {}
        self.analyzed: dict[tuple[str, str, str], JSON] = {}
        self._counter = 0

    def new_id(self, prefix: str) -> str:
        """Return a new deterministic id such as ``vid_0001a3f4c2d1``."""
        counter, rand = self._new_number()
        return f"{prefix}_{counter:04d}{rand:08x}"

    def _new_number(self) -> tuple[int, int]:
        """The counter and random part of a new id (see :meth:`new_id`)."""
        self._counter += 1
        return self._counter, self.rng.getrandbits(32)

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
        self,
        team: Team,
        ptype: str,
        body: JSON,
        *,
        name: str,
        cost: int,
        form: str,
        error: str | None = None,
    ) -> Project:
        """Charge ``cost`` credits and create a project with one started video.

        ``error`` makes the video fail when its processing ends (spec 4.9 rule 2).
        """
        now = self.clock.now()
        team.credits -= cost
        project_ids = self._new_number()
        done = now if ptype == "hook_demo" else now + self.processing_time(ptype)
        rate = self.failure_rate.get(ptype, self.failure_rate.get("*", 0.0))
        drawn = bool(rate) and self.rng.random() < rate  # drawn alike for every type
        # spec 3.1: hook plus demo is generated in real time, COMPLETED in its creation
        # response, so no failure rate applies to it
        if drawn and error is None and ptype != "hook_demo":
            error = "generation failed (simulated)"
        row = self.table.add(
            (*project_ids, *self._new_number()),
            now,
            done,
            name,
            profile_of(ptype, body, cost=cost, form=form),
            team.id,
            error,
        )
        self.listing.add(row)
        self.listing.settle(now)  # keeps the heap of processing rows to those processing
        return Project(self.table, row)

    def fail_video(self, video_id: str, message: str) -> Video:
        """Make a started video fail now; raise KeyError or ValueError if impossible."""
        video = self.videos[video_id]
        now = self.clock.now()
        if video.status(now) != "STARTED":
            raise ValueError(f"video {video_id} is already {video.status(now)}")
        self.table.done[video.row] = now
        self.table.errors[video.row] = message
        self.listing.reschedule(video.row)
        return video
