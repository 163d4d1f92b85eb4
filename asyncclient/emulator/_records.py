"""Videos and projects, stored column by column: a million of them fit in ~150 MB.

Every creation makes one project with one video, so a video and its project share a row
of :class:`VideoTable`. A row holds only what differs per video (the counters and random
parts of its two ids, its times, its name, its team); what a creation's body decides for
the views (avatar, voice, caption, script, webhook, metadata, ...) is a :class:`Profile`,
kept once for all the videos that share it (every video of a template batch does). Ids
are formatted on read and parsed on lookup, so no id string is kept per video.

:class:`Video` and :class:`Project` are views of a row, made on read; they read and write
the table, so they behave as records did.
"""

from __future__ import annotations

import contextlib
import json
import math
from array import array
from collections.abc import Iterator, Mapping, ValuesView
from typing import Any, NamedTuple

__all__ = [
    "COMPLETED",
    "FAILED",
    "NOTIFIED",
    "PROCESSING",
    "Profile",
    "Project",
    "ProjectMap",
    "Video",
    "VideoMap",
    "VideoTable",
    "profile_of",
]

JSON = dict[str, Any]

# Row flags: the list status a row is indexed under (spec 4.10), and whether it was notified.
PROCESSING, COMPLETED, FAILED = 0, 1, 2
SETTLED_MASK = 3
NOTIFIED = 4


class Profile(NamedTuple):
    """What a creation's body decides of its video's views and notifications (spec 2.3)."""

    type: str
    avatar_id: Any
    voice_id: Any
    music_id: Any
    aspect_ratio: Any
    """``aspectRatio``, or ``ratio_9_16`` when the body gave none."""
    caption_disabled: bool
    caption_preset: Any
    script: str
    duration_s: int
    used_credits: int
    webhook: str | None
    metadata: str
    """The request metadata as JSON text, ``""`` when there is none."""
    form: str
    """The webhook form, ``A`` or ``B`` (spec 6)."""


def profile_of(ptype: str, body: JSON, *, cost: int, form: str) -> Profile:
    """Return the profile of a creation of type ``ptype`` with request ``body``."""
    caption = body.get("caption")
    caption = caption if isinstance(caption, dict) else {}
    script = str(body.get("script") or body.get("text") or "")
    webhook = body.get("webhook")
    metadata = dict(body.get("metadata") or {})
    return Profile(
        ptype,
        body.get("avatarId"),
        body.get("voiceId"),
        body.get("musicId"),
        body.get("aspectRatio") or "ratio_9_16",
        bool(caption.get("disabled", False)),
        caption.get("preset") or "classic",
        script,
        max(5, min(180, math.ceil(len(script) / 15))),
        cost,
        webhook if isinstance(webhook, str) else None,
        json.dumps(metadata) if metadata else "",
        form,
    )


def _format(prefix: str, counter: int, rand: int) -> str:
    return f"{prefix}_{counter:04d}{rand:08x}"  # as Store.new_id makes them


class VideoTable:
    """Every video (and its project), one row each, in creation order."""

    def __init__(self) -> None:
        self.counter = array("I")
        """The counter of the project's id; the video's is the next one."""
        self.project_rand = array("I")
        self.video_rand = array("I")
        self.created = array("d")
        self.done = array("d")
        self.names: list[str] = []
        self.profiles: list[Profile] = []
        self.team = array("I")
        self.flags = bytearray()
        self.errors: dict[int, str] = {}
        """Row -> failure message, for the rows that have one."""
        self._row_of = array("i")  # project id counter -> row, -1 for other records' counters
        self._team_ids: list[str] = []
        self._team_pos: dict[str, int] = {}
        self._shared: dict[Profile, Profile] = {}

    def __len__(self) -> int:
        return len(self.names)

    def add(
        self,
        ids: tuple[int, int, int, int],
        created: float,
        done: float,
        name: str,
        profile: Profile,
        team_id: str,
        error: str | None,
    ) -> int:
        """Store a video and return its row; ``ids`` are the project's and the video's
        (counter, random part)."""
        counter, project_rand, video_counter, video_rand = ids
        if video_counter != counter + 1:
            raise ValueError("a video's id counter must follow its project's")
        row = len(self.names)
        with contextlib.suppress(TypeError):  # a body value that is not hashable: kept as is
            profile = self._shared.setdefault(profile, profile)
        if team_id not in self._team_pos:
            self._team_pos[team_id] = len(self._team_ids)
            self._team_ids.append(team_id)
        self.counter.append(counter)
        self.project_rand.append(project_rand)
        self.video_rand.append(video_rand)
        self.created.append(created)
        self.done.append(done)
        self.names.append(name)
        self.profiles.append(profile)
        self.team.append(self._team_pos[team_id])
        self.flags.append(PROCESSING)
        if error is not None:
            self.errors[row] = error
        if len(self._row_of) <= counter:  # grown by doubling: appends stay cheap
            grow = max(counter + 1 - len(self._row_of), len(self._row_of))
            self._row_of.extend(array("i", [-1]) * grow)
        self._row_of[counter] = row
        return row

    def video_id(self, row: int) -> str:
        """Return the id of the video of ``row``."""
        return _format("vid", self.counter[row] + 1, self.video_rand[row])

    def project_id(self, row: int) -> str:
        """Return the id of the project of ``row``."""
        return _format("proj", self.counter[row], self.project_rand[row])

    def team_id(self, row: int) -> str:
        """Return the id of the team of ``row``."""
        return self._team_ids[self.team[row]]

    def find(self, text: object, *, video: bool) -> int:
        """Return the row of a video id (``video``) or a project id, or -1."""
        prefix = "vid_" if video else "proj_"
        if not isinstance(text, str) or not text.startswith(prefix):
            return -1
        digits = text[len(prefix) : -8]
        if not (digits.isascii() and digits.isdigit()):
            return -1
        counter = int(digits) - (1 if video else 0)
        if not 0 <= counter < len(self._row_of):
            return -1
        row = self._row_of[counter]
        if row < 0:
            return -1
        found = self.video_id(row) if video else self.project_id(row)
        return row if found == text else -1

    def status(self, row: int, now: float) -> str:
        """Return ``STARTED``, ``COMPLETED`` or ``FAILED`` at service time ``now``."""
        if now < self.done[row]:
            return "STARTED"
        return "FAILED" if row in self.errors else "COMPLETED"


class Video:
    """A video: a view of its row; its status follows from ``done_at`` and ``error``."""

    __slots__ = ("_row", "_table")

    def __init__(self, table: VideoTable, row: int) -> None:
        self._table = table
        self._row = row

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Video):
            return NotImplemented
        return self._table is other._table and self._row == other._row

    def __hash__(self) -> int:
        return hash((id(self._table), self._row))

    def __repr__(self) -> str:
        return f"Video(id={self.id!r}, project_id={self.project_id!r}, name={self.name!r})"

    @property
    def row(self) -> int:
        """The row of the table."""
        return self._row

    @property
    def id(self) -> str:
        """The video id."""
        return self._table.video_id(self._row)

    @property
    def project_id(self) -> str:
        """The id of its project."""
        return self._table.project_id(self._row)

    @property
    def team_id(self) -> str:
        """The id of its team."""
        return self._table.team_id(self._row)

    @property
    def profile(self) -> Profile:
        """What its creation's body decided (shared with its batch)."""
        return self._table.profiles[self._row]

    @property
    def type(self) -> str:
        """The project type."""
        return self.profile.type

    @property
    def name(self) -> str:
        """The name (a template video's title)."""
        return self._table.names[self._row]

    @property
    def created_at(self) -> float:
        """Service time of the creation."""
        return self._table.created[self._row]

    @property
    def done_at(self) -> float:
        """Service time at which it completes or fails."""
        return self._table.done[self._row]

    @property
    def error(self) -> str | None:
        """The failure message, or None."""
        return self._table.errors.get(self._row)

    @property
    def duration_s(self) -> int:
        """Duration in seconds once completed."""
        return self.profile.duration_s

    @property
    def used_credits(self) -> int:
        """Credits its creation cost."""
        return self.profile.used_credits

    @property
    def webhook(self) -> str | None:
        """The URL notified when it finishes, or None."""
        return self.profile.webhook

    @property
    def metadata(self) -> JSON:
        """The request metadata (a new dict on each read)."""
        text = self.profile.metadata
        return json.loads(text) if text else {}

    @property
    def form(self) -> str:
        """The webhook form, ``A`` or ``B``."""
        return self.profile.form

    @property
    def notified(self) -> bool:
        """Whether its notification was sent."""
        return bool(self._table.flags[self._row] & NOTIFIED)

    @notified.setter
    def notified(self, value: bool) -> None:
        if value:
            self._table.flags[self._row] |= NOTIFIED
        else:
            self._table.flags[self._row] &= ~NOTIFIED & 0xFF

    def status(self, now: float) -> str:
        """Return ``STARTED``, ``COMPLETED`` or ``FAILED`` at service time ``now``."""
        return self._table.status(self._row, now)

    def progress(self, now: float) -> int:
        """Return the integer progress 0..100, linear over the processing time."""
        if self.status(now) == "COMPLETED":
            return 100
        created, done = self.created_at, self.done_at
        span = done - created
        if span <= 0:
            return 0
        t = min(now, done)
        return max(0, min(99, int(100 * (t - created) / span)))


class Project:
    """A project: a view of its row (every creation makes one project of one video)."""

    __slots__ = ("_row", "_table")

    def __init__(self, table: VideoTable, row: int) -> None:
        self._table = table
        self._row = row

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Project):
            return NotImplemented
        return self._table is other._table and self._row == other._row

    def __hash__(self) -> int:
        return hash((id(self._table), self._row, "project"))

    def __repr__(self) -> str:
        return f"Project(id={self.id!r}, type={self.type!r})"

    @property
    def id(self) -> str:
        """The project id."""
        return self._table.project_id(self._row)

    @property
    def team_id(self) -> str:
        """The id of its team."""
        return self._table.team_id(self._row)

    @property
    def type(self) -> str:
        """The project type."""
        return self._table.profiles[self._row].type

    @property
    def created_at(self) -> float:
        """Service time of the creation."""
        return self._table.created[self._row]

    @property
    def videos(self) -> list[Video]:
        """Its videos (one)."""
        return [Video(self._table, self._row)]


class _Values(ValuesView[Any]):
    """Values of a table map, row by row (no id is parsed)."""

    def __init__(
        self, mapping: Mapping[str, Any], table: VideoTable, kind: type[Video] | type[Project]
    ) -> None:
        super().__init__(mapping)
        self._table = table
        self._kind = kind

    def __iter__(self) -> Iterator[Any]:
        table, kind = self._table, self._kind
        return (kind(table, row) for row in range(len(table)))


class VideoMap(Mapping[str, Video]):
    """Video id -> :class:`Video`, read-only, in creation order."""

    def __init__(self, table: VideoTable) -> None:
        self._table = table

    def __getitem__(self, key: str) -> Video:
        row = self._table.find(key, video=True)
        if row < 0:
            raise KeyError(key)
        return Video(self._table, row)

    def __contains__(self, key: object) -> bool:
        return self._table.find(key, video=True) >= 0

    def __iter__(self) -> Iterator[str]:
        table = self._table
        return (table.video_id(row) for row in range(len(table)))

    def __len__(self) -> int:
        return len(self._table)

    def values(self) -> ValuesView[Video]:
        """Every video, oldest first."""
        return _Values(self, self._table, Video)


class ProjectMap(Mapping[str, Project]):
    """Project id -> :class:`Project`, read-only, in creation order."""

    def __init__(self, table: VideoTable) -> None:
        self._table = table

    def __getitem__(self, key: str) -> Project:
        row = self._table.find(key, video=False)
        if row < 0:
            raise KeyError(key)
        return Project(self._table, row)

    def __contains__(self, key: object) -> bool:
        return self._table.find(key, video=False) >= 0

    def __iter__(self) -> Iterator[str]:
        table = self._table
        return (table.project_id(row) for row in range(len(table)))

    def __len__(self) -> int:
        return len(self._table)

    def values(self) -> ValuesView[Project]:
        """Every project, oldest first."""
        return _Values(self, self._table, Project)
