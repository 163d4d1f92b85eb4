"""What a creation answered, and finding what an ambiguous creation made."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from attrs import define

from asyncclient.errors import (
    AmbiguousCreationError,
    APIResponseValidationError,
    ReconciliationError,
    ValidationError,
)
from asyncclient.models.identified import stamp
from asyncclient.models.requests import CreationRequest
from asyncclient.models.videos import CreatedProject, SentCreation, Video

if TYPE_CHECKING:
    from asyncclient.resources.videos import Videos

__all__ = ["created_from_envelope", "find_created"]

# Creation format -> the video list's type filter (spec 4.10); talking avatar has none.
_LIST_TYPE = {
    "ugc_ads": "ugc_ads",
    "script_to_video": "script_to_video",
    "product_ads": "product_ads",
    "scenes": "scenes",
    "hook_demo": "hook_demo",
    "ugc_video": "ugc_video",
    "add_captions": "add_captions",
    "template": "class",
}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def created_from_envelope(envelope: dict[str, Any], request: CreationRequest) -> CreatedProject:
    """Read a creation response, whatever its envelope variant.

    Most formats answer ``data: {videoId, projectId, status}``; multi-scene
    answers a top-level ``projectId`` and no data; hook plus demo adds a
    top-level ``projectId``; template generation has no video id.

    Raises:
        APIResponseValidationError: Neither a video id nor a project id was found.
    """
    data = envelope.get("data")
    data = data if isinstance(data, dict) else {}
    project_id = _str_or_none(data.get("projectId")) or _str_or_none(envelope.get("projectId"))
    video_id = _str_or_none(data.get("videoId"))
    if project_id is None and video_id is None:
        raise APIResponseValidationError(
            "creation response names neither a video nor a project",
            body=repr(envelope),
            errors=["data.videoId: required field missing", "projectId: required field missing"],
            method="POST",
            path=request.PATH,
        )
    status = _str_or_none(data.get("status")) or _str_or_none(envelope.get("status"))
    created = CreatedProject(
        project_id=project_id,
        video_id=video_id,
        status=status,
        message=_str_or_none(envelope.get("message")),
        format=request.FORMAT,
    )
    stamp(created, getattr(envelope, "request_id", None))
    return created


async def find_created(
    videos: Videos,
    error: AmbiguousCreationError | SentCreation,
    *,
    skew: float | None = None,
    max_pages: int | None = None,
    claimed: Collection[str] = (),
) -> Video | None:
    """The video of the project an ambiguous creation made, or None.

    Scans the video list (newest first) for a video of the same format whose name is the
    request's name (a template's title), made after the request left, and not
    ``claimed`` (a project another row already owns: one project satisfies one row).
    "After the request left" is read on the service's clock (``service_sent_after``,
    from the ``Date`` of the service's earlier responses), so that another batch's
    project of the same name made before this request is never taken; on ours, ``skew``
    seconds earlier, only when the caller gives a ``skew``. The scan goes on until a
    page lies wholly before that time or the list ends, however many pages that is: a
    look that did not reach back that far proves nothing. None means none was found
    in all of the list made since.

    Raises:
        ReconciliationError: The look cannot prove which project is the request's:
            several unclaimed ones match (``reason="several"``, their ids named), the
            service's clock at sending is unknown and no ``skew`` was given
            (``"no_service_clock"``), or ``max_pages`` pages were read without reaching
            back to the send time (``"page_cap"``).
        ValidationError: The request had no name to look for.
    """
    sent = sent_of(error)
    name = sent.name
    if not name:
        raise ValidationError(
            [
                "name: the request had no name, so its project cannot be told apart; "
                "give creations a unique name to make them reconcilable"
            ]
        )
    since = _made_after(sent, skew)
    before = _Looked.of(sent, since, claimed)
    scan = await _scan(
        videos, name, _LIST_TYPE.get(sent.format or ""), since, before.top, max_pages
    )
    matches = [m for m in scan.found if (m.project_id or m.id) not in claimed]
    if not matches:  # what this look read need not be read again for this creation
        before.after(scan, sent)
    if len(matches) > 1:
        ids = sorted({m.project_id or m.id for m in matches})
        raise ReconciliationError(
            f"several projects named {name!r} were created since {since:%H:%M:%S}: "
            f"{', '.join(ids)}; which one this request made cannot be told",
            reason="several",
            project_ids=ids,
        )
    return matches[0] if matches else None


def sent_of(error: AmbiguousCreationError | SentCreation) -> SentCreation:
    """The creation as it left: the value itself, or the one an error carries (made
    once per error, so that looking again with the error reads only what is new)."""
    if isinstance(error, SentCreation):
        return error
    sent = getattr(error, _SENT, None)
    if not isinstance(sent, SentCreation):
        sent = SentCreation(
            request=error.request,
            sent_at=error.sent_at,
            service_sent_after=error.service_sent_after,
        )
        setattr(error, _SENT, sent)
    return sent


_SENT = "_asyncclient_sent"


def _made_after(error: SentCreation, skew: float | None) -> datetime:
    """The earliest ``createdAt`` a project of ``error``'s request can have."""
    service: datetime | None = error.service_sent_after
    if service is not None:
        return service.replace(microsecond=0)  # a Date is whole seconds
    if skew is None:
        raise ReconciliationError(
            "the service's clock was never read before this request left, so which "
            f"project named {error.name!r} is its own cannot be proven (another made "
            "earlier would look the same); look in the video list yourself, or pass "
            "skew=SECONDS to match on this client's clock",
            reason="no_service_clock",
        )
    sent: datetime = error.sent_at
    return sent - timedelta(seconds=skew)


@define
class _Scan:
    """What one look read: the videos of the name made since the send time, and the
    newest ``createdAt`` it saw (None: none)."""

    found: list[Video]
    top: datetime | None = None


@define
class _Looked:
    """What earlier looks for one error read, all of it without a match: the list down
    from ``top`` (the newest ``createdAt`` they saw) to the send time ``since``, where
    only the projects ``seen`` (each claimed then) bore its name. A later look with the
    same send time, and those projects still claimed, reads only what is newer: the
    cost of looking again is what was created since the last look. Kept on the
    :class:`SentCreation` (``looked``), which a caller looks with each time."""

    since: datetime
    top: datetime | None = None
    seen: frozenset[str] = frozenset()

    @classmethod
    def of(cls, sent: SentCreation, since: datetime, claimed: Collection[str]) -> _Looked:
        earlier = sent.looked
        if (
            isinstance(earlier, _Looked)
            and earlier.since == since
            and all(project in claimed for project in earlier.seen)
        ):
            return earlier
        return cls(since)

    def after(self, scan: _Scan, sent: SentCreation) -> None:
        """Remember a look that found nothing unclaimed."""
        if scan.top is None:
            return
        top = scan.top if self.top is None else max(scan.top, self.top)
        seen = self.seen | {video.project_id or video.id for video in scan.found}
        sent.looked = _Looked(self.since, top, seen)


async def _scan(
    videos: Videos,
    name: str,
    list_type: str | None,
    since: datetime,
    read_before: datetime | None,
    max_pages: int | None,
) -> _Scan:
    """Videos named ``name`` made at ``since`` or later (or of no known time), from the
    newest back to the first page wholly before ``since`` (or before ``read_before``,
    down to which an earlier look read) or the list's end."""
    found: dict[str, Video] = {}
    stop = since if read_before is None else max(since, read_before)
    count = 0
    top: datetime | None = None
    async for page in videos.list(type=list_type, page_size=100).pages():
        count += 1
        for video in page.items:
            if video.name == name and (video.created_at is None or video.created_at >= since):
                found[video.project_id or video.id] = video
        times = [v.created_at for v in page.items if v.created_at is not None]
        if times:
            top = max(times) if top is None else max(top, *times)
        if times and max(times) < stop:
            return _Scan(list(found.values()), top)  # every later page is older still
        if max_pages is not None and count >= max_pages:
            raise ReconciliationError(
                f"looked at {count} pages of the video list without reaching back to "
                f"{stop:%Y-%m-%d %H:%M:%S} (the service's time the request left): "
                f"whether it made a project named {name!r} is not known",
                reason="page_cap",
                pages=count,
            )
    return _Scan(list(found.values()), top)  # the list's end
