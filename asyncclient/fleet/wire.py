"""What the processes of a fleet write to each other through Redis.

- A *registration* (``jobs`` hash): a job's key (:func:`job_key`) and what it follows
  (:func:`spec_of`, read back by :func:`read_spec`).
- A *message* on the fleet's channel (:func:`message`): ``{"from": process, "j": [[job
  key, kind, payload], ...]}``; kind ``r`` a list record, ``d`` a detail, ``f`` a
  failure (:func:`failure`, read back by :func:`rebuilt`), ``n`` a notification's
  confirmed record (for whichever job awaits its video or project; no job key).
- A *kept outcome* (``done:v:*``, ``done:p:*``): a finished video's record and its kind
  (:func:`kept`, read back by :func:`unkept`).

Records travel as the service's own JSON (camelCase), decoded as any response is.
"""

from __future__ import annotations

import json
import logging
from typing import Any

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
    "failure",
    "job_key",
    "kept",
    "message",
    "read_spec",
    "rebuilt",
    "spec_of",
    "take",
    "unkept",
    "wire",
]

logger = logging.getLogger("asyncclient")

# Errors a lease holder tells the fleet, by class name: they end the job everywhere.
_TOLD_ERRORS: dict[str, type[APIStatusError]] = {
    cls.__name__: cls for cls in (NotFoundError, AuthenticationError, PermissionDeniedError)
}


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


def wire(video: Video) -> Any:
    """A record as the service's JSON."""
    return converter.unstructure(video)


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


def message(process: str, entries: list[list[Any]]) -> bytes:
    """A message of ``process`` to the fleet."""
    return json.dumps({"from": process, "j": entries}, separators=(",", ":")).encode()


def failure(error: APIStatusError) -> dict[str, Any]:
    """A failure that ends a job everywhere, as a message's payload."""
    return {"e": type(error).__name__, "m": error.message, "s": error.status_code}


def kept(kind: str, video: Video) -> bytes:
    """A finished video's record, kept for processes that await it later."""
    return json.dumps({"k": kind, "v": wire(video)}, separators=(",", ":")).encode()


def unkept(raw: bytes) -> tuple[str, Video | None]:
    """A kept record and its kind; None for one this version cannot read."""
    try:
        kept = json.loads(raw)
        kind = "d" if kept["k"] == "d" else "r"
        return kind, decode(kept["v"], VideoDetail if kind == "d" else Video)
    except Exception as exc:
        logger.debug("fleet: a kept outcome is unreadable (%r)", exc)
        return "r", None


def take(job: JobState, kind: str, video: Video) -> None:
    """Hand a record of ``kind`` to ``job``."""
    if kind == "d" and isinstance(video, VideoDetail):
        job.take_detail(video)
    else:
        job.take_record(video)


def rebuilt(payload: dict[str, Any]) -> APIStatusError:
    """The error a :func:`failure` payload tells."""
    cls = _TOLD_ERRORS.get(str(payload.get("e")), APIStatusError)
    status = payload.get("s")
    return cls(
        str(payload.get("m") or "the lease holder's read failed"),
        status_code=status if isinstance(status, int) else 0,
    )
