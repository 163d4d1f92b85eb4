"""The request log: every ``/v1`` request, kept column by column (~50 bytes a request).

A million creations and the reads that follow them are millions of records; as objects
they would weigh more than the videos. The log keeps each field in an ``array`` (the
few distinct teams, keys, methods, routes, faults and fixed paths once, by number), a
video's detail path and a creation's project as the row of its video, and a creation's
name as the video's own string. :class:`RequestRecord` objects are made on read.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from asyncclient.emulator._clock import iso
from asyncclient.emulator._records import VideoTable

__all__ = ["RequestLog", "RequestRecord"]

JSON = dict[str, Any]
_VIDEO_PATH = "/v1/video/"
_OTHER = -1  # a path kept as it is, in ``_paths``


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request to the service API (never the raw key).

    ``fault`` is the kind of the fault applied to it; for creation requests ``name`` is the
    body's ``title`` (templates) or ``name``, and ``project`` the id of the project the
    request created (also when a fault then spoiled or lost the reply).
    """

    time: float
    team: str | None
    key: str | None
    method: str
    path: str
    route: str
    status: int
    fault: str | None = None
    name: str | None = None
    project: str | None = None

    def to_json(self) -> JSON:
        """Return the record as JSON."""
        return {
            "time": iso(self.time),
            "team": self.team,
            "key": self.key,
            "method": self.method,
            "path": self.path,
            "route": self.route,
            "status": self.status,
            "fault": self.fault,
            "name": self.name,
            "project": self.project,
        }


class RequestLog(Sequence[RequestRecord]):
    """Every request to the service API, oldest first; ``append`` adds one."""

    def __init__(self, table: VideoTable) -> None:
        self._table = table
        self._time = array("d")
        self._status = array("H")
        self._words: list[str | None] = []
        self._word_of: dict[str | None, int] = {}
        self._team = array("I")
        self._key = array("I")
        self._method = array("I")
        self._route = array("I")
        self._fault = array("I")
        self._path = array("i")  # a word; -2 - row: a video's detail; _OTHER: in _paths
        self._paths: dict[int, str] = {}
        self._project = array("i")  # the row of the project made, -1 for none
        self._projects: dict[int, str] = {}  # a project the table does not know (none)
        self._names: list[str | None] = []

    def _word(self, text: str | None) -> int:
        at = self._word_of.get(text)
        if at is None:
            at = self._word_of[text] = len(self._words)
            self._words.append(text)
        return at

    def _encode_path(self, record: RequestRecord) -> int:
        if record.route == f"{record.method} {record.path}":  # a fixed path: one of a few
            return self._word(record.path)
        if record.path.startswith(_VIDEO_PATH):
            row = self._table.find(record.path[len(_VIDEO_PATH) :], video=True)
            if row >= 0:
                return -2 - row
        self._paths[len(self._time)] = record.path
        return _OTHER

    def append(self, record: RequestRecord) -> None:
        """Add a record (the newest)."""
        name, row = record.name, -1
        if record.project is not None:
            row = self._table.find(record.project, video=False)
            if row < 0:
                self._projects[len(self._time)] = record.project
            elif name is not None and self._table.names[row] == name:
                name = self._table.names[row]  # one string for the video and its request
        self._path.append(self._encode_path(record))
        self._project.append(row)
        self._names.append(name)
        self._time.append(record.time)
        self._status.append(record.status)
        self._team.append(self._word(record.team))
        self._key.append(self._word(record.key))
        self._method.append(self._word(record.method))
        self._route.append(self._word(record.route))
        self._fault.append(self._word(record.fault))

    def __len__(self) -> int:
        return len(self._time)

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another log) of the same records, as the list it was."""
        if isinstance(other, RequestLog):
            other = list(other)
        if not isinstance(other, list):
            return NotImplemented
        return len(self) == len(other) and list(self) == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def _record(self, at: int) -> RequestRecord:
        words, code, row = self._words, self._path[at], self._project[at]
        if code >= 0:
            path = words[code]
        elif code == _OTHER:
            path = self._paths[at]
        else:
            path = _VIDEO_PATH + self._table.video_id(-2 - code)
        project = self._table.project_id(row) if row >= 0 else self._projects.get(at)
        method, route = words[self._method[at]], words[self._route[at]]
        assert path is not None and method is not None and route is not None
        return RequestRecord(
            time=self._time[at],
            team=words[self._team[at]],
            key=words[self._key[at]],
            method=method,
            path=path,
            route=route,
            status=self._status[at],
            fault=words[self._fault[at]],
            name=self._names[at],
            project=project,
        )

    @overload
    def __getitem__(self, at: int) -> RequestRecord: ...

    @overload
    def __getitem__(self, at: slice) -> list[RequestRecord]: ...

    def __getitem__(self, at: int | slice) -> RequestRecord | list[RequestRecord]:
        if isinstance(at, slice):
            return [self._record(i) for i in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError("request log index out of range")
        return self._record(at)

    def __iter__(self) -> Iterator[RequestRecord]:
        return (self._record(i) for i in range(len(self)))
