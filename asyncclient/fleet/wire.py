"""What the processes of a fleet write to each other through Redis, as typed records.

- A *registration* (``jobs`` hash): a job's key (:func:`job_key`) and what it follows
  (:func:`spec_of`, read back by :func:`read_spec`).
- A *message* on the fleet's channel (:class:`Message`, written by
  :func:`encode_message`, read by :func:`read_message`): who sent it and its changes,
  each a :class:`Record` (a list record of a registered job's video), a :class:`Detail`
  (a detail record), a :class:`Failure` (an error that ends the job everywhere) or a
  :class:`Notified` (a notification's confirmed record, for whichever job awaits its
  video or project).
- A *kept outcome* (``done:v:*``, ``done:p:*``): a finished video's record
  (:func:`kept`, read back by :func:`unkept`).

Records travel as the service's own JSON (camelCase), decoded as any response is.

The message layout, version 2: ``{"v": 2, "from": process, "j": [[job key, kind,
payload], ...]}`` with kind ``r`` (:class:`Record`), ``d`` (:class:`Detail`), ``f``
(:class:`Failure`, payload ``{"e": class name, "m": message, "s": status}``) or ``n``
(:class:`Notified`, no job key). Version 1 (the first release of the fleet) wrote the
same layout without ``"v"``: a message without a version is read as version 1, at no
cost. A message of a version this one does not know is dropped whole; so is one of
another shape; an entry it cannot read is dropped alone (the others are still taken).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from attrs import field, frozen

from asyncclient._convert import converter, decode
from asyncclient.awaiting.state import JobState
from asyncclient.errors import (
    APIStatusError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
)
from asyncclient.models.videos import Video, VideoDetail

__all__ = [
    "READ_VERSIONS",
    "WIRE_VERSION",
    "Change",
    "Detail",
    "Failure",
    "Message",
    "Notified",
    "Record",
    "apply",
    "encode_message",
    "job_key",
    "kept",
    "read_message",
    "read_spec",
    "spec_of",
    "unkept",
]

logger = logging.getLogger("asyncclient")

WIRE_VERSION = 2
"""The version of the messages this code writes."""
READ_VERSIONS = frozenset({1, 2})
"""The versions of the messages this code reads (1: written without ``"v"``)."""

# Errors a lease holder tells the fleet, by class name: they end the job everywhere.
_TOLD_ERRORS: dict[str, type[APIStatusError]] = {
    cls.__name__: cls for cls in (NotFoundError, AuthenticationError, PermissionDeniedError)
}


@frozen
class Record:
    """A list record of a video of the registered job ``job`` (kind ``r``)."""

    job: str
    video: Video


@frozen
class Detail:
    """A detail record of a video of the registered job ``job`` (kind ``d``)."""

    job: str
    detail: VideoDetail


@frozen(kw_only=True)
class Failure:
    """An error that ends the registered job ``job`` everywhere (kind ``f``)."""

    job: str
    error: str
    """The error's class name (an unknown one is rebuilt as ``APIStatusError``)."""
    message: str
    status: int

    @classmethod
    def of(cls, job: str, error: APIStatusError) -> Failure:
        """The failure ``error`` tells of ``job``."""
        return cls(
            job=job, error=type(error).__name__, message=error.message, status=error.status_code
        )

    def rebuilt(self) -> APIStatusError:
        """The error this failure tells."""
        error_class = _TOLD_ERRORS.get(self.error, APIStatusError)
        return error_class(
            self.message or "the lease holder's read failed", status_code=self.status
        )


@frozen
class Notified:
    """A notification's confirmed record, for whichever job awaits its video or project
    (kind ``n``)."""

    detail: VideoDetail


Change = Record | Detail | Failure | Notified
"""One change a message carries."""


@frozen(kw_only=True)
class Message:
    """A message of process ``sender`` to the fleet."""

    sender: str
    changes: tuple[Change, ...]
    version: int = WIRE_VERSION
    dropped: int = field(default=0, eq=False)
    """Entries of it that could not be read (read messages only)."""


def job_key(state: JobState) -> str:
    """A job's key in the fleet: the project and (first) video it follows, and whether
    it reads each finished video's detail. Processes awaiting the same job share it."""
    ids = state.video_ids
    first = ids[0] if ids else ""
    return f"{state.project_id or ''}|{first}|{int(state.read_detail)}"


def spec_of(state: JobState) -> bytes:
    """What a registration says a job follows."""
    ids = state.video_ids
    spec = {"p": state.project_id, "v": ids[0] if ids else None, "d": state.read_detail}
    return json.dumps(spec, separators=(",", ":")).encode()


def read_spec(spec: bytes) -> tuple[str | None, str | None, bool]:
    """A registration's project id, (first) video id and whether it reads details.

    Raises:
        ValueError: Not a registration this version reads.
    """
    try:
        follows = json.loads(spec)
        project, video = follows["p"], follows["v"]
        if not all(v is None or isinstance(v, str) for v in (project, video)):
            raise TypeError("ids must be text")
        return project, video, bool(follows["d"])
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"registration unreadable: {exc!r}") from None


def _wire(video: Video) -> Any:
    """A record as the service's JSON."""
    return converter.unstructure(video)


def _entry(change: Change) -> list[Any]:
    if isinstance(change, Record):
        return [change.job, "r", _wire(change.video)]
    if isinstance(change, Detail):
        return [change.job, "d", _wire(change.detail)]
    if isinstance(change, Failure):
        return [change.job, "f", {"e": change.error, "m": change.message, "s": change.status}]
    return ["", "n", _wire(change.detail)]


def encode_message(message: Message) -> bytes:
    """``message`` as it travels on the fleet's channel (version :data:`WIRE_VERSION`)."""
    body = {"v": WIRE_VERSION, "from": message.sender, "j": [_entry(c) for c in message.changes]}
    return json.dumps(body, separators=(",", ":")).encode()


def _change(key: Any, kind: Any, payload: Any) -> Change:
    """One entry of a message; raises on one this version cannot read."""
    if kind == "n":
        return Notified(decode(payload, VideoDetail))
    if not isinstance(key, str):
        raise TypeError(f"a job key must be text, not {type(key).__name__}")
    if kind == "f":
        status = payload.get("s")
        return Failure(
            job=key,
            error=str(payload.get("e")),
            message=str(payload.get("m") or ""),
            status=status if isinstance(status, int) else 0,
        )
    if kind == "d":
        return Detail(key, decode(payload, VideoDetail))
    return Record(key, decode(payload, Video))


def read_message(
    data: bytes,
    *,
    wanted: Callable[[str], bool] | None = None,
    ignore_from: str | None = None,
) -> Message | None:
    """Read a message from the fleet's channel, once: typed changes, or None for a
    message this version cannot read (another shape, or an unknown version; logged).

    Args:
        data: The message as it came.
        wanted: Which job keys to read the changes of (the others are skipped unread,
            not counted as dropped); every one when omitted. Notifications are always read.
        ignore_from: A sender whose messages are not read further (this process's own):
            their changes are left out.

    Returns:
        The message; an entry that could not be read is logged, left out and counted
        in ``dropped``.
    """
    try:
        body = json.loads(data)
        version = body.get("v", 1)
        if version not in READ_VERSIONS:
            raise ValueError(f"version {version!r}")
        sender = str(body.get("from"))
        entries = list(body["j"])
        if sender == ignore_from:
            return Message(sender=sender, changes=(), version=version)
    except Exception as exc:  # another version's message, or a broken one
        logger.warning("fleet: a message could not be read (%r)", exc)
        return None
    changes: list[Change] = []
    dropped = 0
    for entry in entries:
        try:
            key, kind, payload = entry
            if kind != "n" and wanted is not None and not wanted(key):
                continue
            changes.append(_change(key, kind, payload))
        except Exception as exc:
            logger.warning("fleet: a change could not be read (%r)", exc)
            dropped += 1
    return Message(sender=sender, changes=tuple(changes), version=version, dropped=dropped)


def kept(change: Record | Detail) -> bytes:
    """A finished video's record, kept for processes that await it later."""
    kind, video = ("d", change.detail) if isinstance(change, Detail) else ("r", change.video)
    return json.dumps({"k": kind, "v": _wire(video)}, separators=(",", ":")).encode()


def unkept(raw: bytes) -> Record | Detail | None:
    """A kept record (its job key left empty); None for one this version cannot read."""
    try:
        kept = json.loads(raw)
        if kept["k"] == "d":
            return Detail("", decode(kept["v"], VideoDetail))
        return Record("", decode(kept["v"], Video))
    except Exception as exc:
        logger.debug("fleet: a kept outcome is unreadable (%r)", exc)
        return None


def apply(job: JobState, change: Record | Detail) -> None:
    """Hand a record to ``job`` (a detail as a detail)."""
    if isinstance(change, Detail):
        job.take_detail(change.detail)
    else:
        job.take_record(change.video)
