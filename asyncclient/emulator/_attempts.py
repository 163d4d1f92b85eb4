"""Webhook delivery attempts, kept column by column (~30 bytes an attempt).

A notification's payload follows from its video and the service time it was made at
(spec 6: the URL's expiry counts from then), so an attempt keeps that time, not the
payload: a million notified videos keep no million payloads. :class:`Attempt` objects,
their payload made again, are made on read.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from asyncclient.emulator._clock import iso
from asyncclient.emulator._records import Video, VideoTable

__all__ = ["Attempt", "AttemptLog"]

JSON = dict[str, Any]
_NO_STATUS = -1


@dataclass(frozen=True, slots=True)
class Attempt:
    """One delivery attempt: ``status`` is None when the connection failed."""

    time: float
    video_id: str
    url: str
    attempt: int
    status: int | None
    error: str | None
    payload: JSON = field(repr=False)

    def to_json(self) -> JSON:
        """Return the attempt as JSON."""
        return {
            "time": iso(self.time),
            "videoId": self.video_id,
            "url": self.url,
            "attempt": self.attempt,
            "status": self.status,
            "error": self.error,
            "payload": self.payload,
        }


class AttemptLog(Sequence[Attempt]):
    """Every delivery attempt, oldest first; ``add`` adds one."""

    def __init__(self, table: VideoTable, payload: Callable[[Video, float], JSON]) -> None:
        self._table = table
        self._payload = payload
        self._time = array("d")
        self._made = array("d")
        self._row = array("I")
        self._attempt = array("H")
        self._status = array("h")
        self._error = array("I")  # in _errors: None first, then each text once
        self._errors: list[str | None] = [None]
        self._error_of: dict[str | None, int] = {None: 0}

    def add(
        self,
        time: float,
        video: Video,
        attempt: int,
        status: int | None,
        error: str | None,
        made: float,
    ) -> None:
        """Add an attempt to notify ``video``, whose payload was made at ``made``."""
        if error not in self._error_of:  # a refused host's attempts fail with one text
            self._error_of[error] = len(self._errors)
            self._errors.append(error)
        self._error.append(self._error_of[error])
        self._time.append(time)
        self._made.append(made)
        self._row.append(video.row)
        self._attempt.append(attempt)
        self._status.append(_NO_STATUS if status is None else status)

    def __len__(self) -> int:
        return len(self._time)

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another log) of the same records, as the list it was."""
        if isinstance(other, AttemptLog):
            other = list(other)
        if not isinstance(other, list):
            return NotImplemented
        return len(self) == len(other) and list(self) == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def _attempt_at(self, at: int) -> Attempt:
        video = Video(self._table, self._row[at])
        status = self._status[at]
        assert video.webhook is not None
        return Attempt(
            time=self._time[at],
            video_id=video.id,
            url=video.webhook,
            attempt=self._attempt[at],
            status=None if status == _NO_STATUS else status,
            error=self._errors[self._error[at]],
            payload=self._payload(video, self._made[at]),
        )

    @overload
    def __getitem__(self, at: int) -> Attempt: ...

    @overload
    def __getitem__(self, at: slice) -> list[Attempt]: ...

    def __getitem__(self, at: int | slice) -> Attempt | list[Attempt]:
        if isinstance(at, slice):
            return [self._attempt_at(i) for i in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError("attempt index out of range")
        return self._attempt_at(at)

    def __iter__(self) -> Iterator[Attempt]:
        return (self._attempt_at(i) for i in range(len(self)))
