"""How a job and a batch show themselves: plain text and HTML.

The renderers are pure: :func:`job_bundle` and :func:`batch_bundle` give the
``text/plain`` and ``text/html`` of what is known now, both built from one list of
fields (:func:`job_fields`, :func:`batch_fields`), so they always agree. A value not
known yet (a progress before the first read, a video id a template job has not
learnt) is shown as ``?`` in both. Anything that came from the service or the user
(names, messages, URLs) is escaped, and only ``http(s)`` URLs go into ``src`` or
``href``. A notebook's live display (``asyncclient.notebook.live``) shows these.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Sequence
from typing import Any, Protocol

from asyncclient.awaiting.state import JobState
from asyncclient.errors import APIError
from asyncclient.models.videos import VideoDetail

__all__ = [
    "MAX_ROWS",
    "UNKNOWN",
    "Bundle",
    "ShownBatch",
    "batch_bundle",
    "batch_fields",
    "batch_html",
    "batch_phase",
    "batch_text",
    "job_bundle",
    "job_fields",
    "job_html",
    "job_text",
]

Bundle = dict[str, str]
"""A mime bundle: ``text/plain`` and ``text/html``."""

MAX_ROWS = 100
"""Most rows a batch's table shows (rows that did not complete first)."""

UNKNOWN = "?"
"""What a value not known yet reads as, in text and HTML alike."""


class _Progress(Protocol):
    """A batch's counts (``BatchProgress``)."""

    @property
    def total(self) -> int: ...
    @property
    def submitted(self) -> int: ...
    @property
    def resumed(self) -> int: ...
    @property
    def completed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def unresolved(self) -> int: ...
    @property
    def finished(self) -> int: ...
    @property
    def rate(self) -> float: ...
    @property
    def eta(self) -> float | None: ...


class _Row(Protocol):
    """One row's outcome (``RowResult``)."""

    @property
    def index(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def video(self) -> VideoDetail | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def video_id(self) -> str | None: ...


class ShownBatch(Protocol):
    """What a shown batch offers (``Batch``)."""

    @property
    def _task(self) -> asyncio.Task[Any] | None: ...
    @property
    def _items(self) -> Sequence[object] | None: ...
    @property
    def progress(self) -> _Progress: ...
    @property
    def results(self) -> Sequence[_Row]: ...


# -- a job ------------------------------------------------------------------------------


def job_fields(state: JobState) -> list[tuple[str, str]]:
    """What a job's text and HTML both show, as (name, value) pairs."""
    ids = state.video_ids
    fields = [
        ("video", ids[0] if ids else UNKNOWN),
        ("project", state.project_id or UNKNOWN),
        ("status", state.status or UNKNOWN),
        ("progress", percent(state.progress)),
    ]
    if len(ids) > 1:
        fields.append(("videos", str(len(ids))))
    video = state.result
    if video is not None:
        if video.name:
            fields.append(("name", video.name))
        if (seconds := duration(video)) is not None:
            fields.append(("duration", seconds))
    if state.error is not None:
        fields.append(("message", error_text(state.error)))
    return fields


def job_text(state: JobState) -> str:
    """``<VideoJob video=... project=... status=... progress=40%>`` (and name, message)."""
    return f"<VideoJob {_pairs(job_fields(state))}>"


def job_html(state: JobState) -> str:
    """The job as HTML: status and progress while it runs, the video player once
    completed, the service's message once failed."""
    values = dict(job_fields(state))
    ids = state.video_ids
    who = _e(ids[0] if ids else f"project {values['project']}")
    head = f"<b>VideoJob</b> {who}: {_e(values['status'])}"
    if state.result is not None:
        return _player(state.result, values, state.videos[1:])
    if state.error is not None:
        return (
            f'<div class="asyncclient-job">{head} · project {_e(values["project"])}'
            f" · progress {_e(values['progress'])}<br>"
            f'<span style="color:#b00020">{_e(values["message"])}</span></div>'
        )
    return (
        f'<div class="asyncclient-job">{head} · project {_e(values["project"])} · '
        f"{_bar(state.progress, 100)} {_e(values['progress'])}</div>"
    )


def _player(video: VideoDetail, values: dict[str, str], others: Sequence[VideoDetail]) -> str:
    """A completed job: poster, name, duration, status, the video and a link to it."""
    url = _safe_url(video.url)
    poster = _safe_url(video.thumbnail)
    parts = ['<div class="asyncclient-job">']
    if url:
        poster_attr = f' poster="{_e(poster)}"' if poster else ""
        parts.append(
            f'<video src="{_e(url)}"{poster_attr} controls preload="metadata" '
            'width="360" style="display:block;max-width:100%"></video>'
        )
    title = " · ".join(_e(values[k]) for k in ("name", "duration") if k in values)
    parts.append(f"<div><b>{title or _e(video.id)}</b> · <b>{_e(values['status'])}</b></div>")
    link = f' · <a href="{_e(url)}" target="_blank">open</a>' if url else ""
    parts.append(
        f'<div style="font-size:smaller">{_e(values["video"])} · project '
        f"{_e(values['project'])} · progress {_e(values['progress'])}{link}</div>"
    )
    for other in others:
        parts.append(f'<div style="font-size:smaller">also: {_video_link(other)}</div>')
    parts.append("</div>")
    return "".join(parts)


def job_bundle(state: JobState) -> Bundle:
    """The job's mime bundle (``text/plain`` and ``text/html``)."""
    return {"text/plain": job_text(state), "text/html": job_html(state)}


# -- a batch ----------------------------------------------------------------------------


_UNDER_WAY = ("not started", "preparing", "running")
"""The phases before a batch ended: a summary only, no table of rows."""


def batch_phase(batch: ShownBatch) -> tuple[str, str | None]:
    """Where the batch is (``not started``, ``preparing``, ``running``, ``done``,
    ``cancelled``, ``stopped``) and, once stopped by an error, that error."""
    task = batch._task
    if task is None:
        return "not started", None
    if not task.done():
        return ("preparing" if batch._items is None else "running"), None
    if task.cancelled():
        return "cancelled", None
    error = task.exception()
    if error is not None:
        return "stopped", error_text(error)
    return "done", None


def batch_fields(batch: ShownBatch) -> list[tuple[str, str]]:
    """What a batch's text and HTML both show, as (name, value) pairs."""
    phase, error = batch_phase(batch)
    p = batch.progress
    total = str(p.total) if batch._items is not None else UNKNOWN
    fields = [("state", phase), ("finished", f"{p.finished}/{total}")]
    counts = [("completed", p.completed), ("failed", p.failed), ("rejected", p.rejected)]
    counts += [(k, n) for k, n in (("skipped", p.skipped), ("unresolved", p.unresolved)) if n]
    fields += [(k, str(n)) for k, n in counts]
    fields.append(("submitted", str(p.submitted)))
    if p.resumed:  # sent by an earlier run (the journal): awaited, not sent again
        fields.append(("resumed", str(p.resumed)))
    if phase == "running":
        fields.append(("rate", f"{p.rate:.1f}/min"))
        fields.append(("eta", UNKNOWN if p.eta is None else _seconds(p.eta)))
    if error is not None:
        fields.append(("error", error))
    return fields


def batch_text(batch: ShownBatch, *, rows: bool = False) -> str:
    """``<Batch running: finished=3/20 completed=2 ...>``, then, when ``rows`` and the
    batch ended, one line per row (what the HTML's table shows)."""
    fields = batch_fields(batch)
    line = f"<Batch {fields[0][1]}: {_pairs(fields[1:])}>"
    if not rows or fields[0][1] in _UNDER_WAY:
        return line
    shown, hidden = _rows_shown(batch)
    lines = [line]
    for row in shown:
        cells = [f"#{row.index}", str(row.status), *_row_cells(row)]
        lines.append("  " + "  ".join(c for c in cells if c))
    if hidden:
        lines.append(f"  ... {hidden} more rows (batch.results has them all)")
    return "\n".join(lines)


def batch_html(batch: ShownBatch) -> str:
    """The batch as HTML: a progress summary, then a table of rows once it ended."""
    fields = batch_fields(batch)
    phase = fields[0][1]
    summary = " · ".join(f"{_e(k)} {_e(v)}" for k, v in fields[1:])
    bar = ""
    if phase in _UNDER_WAY[1:]:
        p = batch.progress
        bar = " " + _bar(p.finished if batch._items is not None else None, p.total or 1)
    parts = [
        '<div class="asyncclient-batch">',
        f"<div><b>Batch</b> {_e(phase)}{bar}</div>",
        f"<div>{summary}</div>",
    ]
    if phase not in _UNDER_WAY:
        parts.append(_table(batch))
    parts.append("</div>")
    return "".join(parts)


_COLUMNS = ("#", "outcome", "video", "name", "duration", "message")


def _table(batch: ShownBatch) -> str:
    """The rows as an HTML table: index, outcome, video (a link), name, duration, message."""
    shown, hidden = _rows_shown(batch)
    head = "".join(f"<th>{h}</th>" for h in _COLUMNS)
    body = []
    for row in shown:
        video = row.video
        link = _video_link(video) if video is not None else _e(row.video_id or "")
        name = _e(video.name or "") if video is not None else ""
        length = _e(duration(video) or "") if video is not None else ""
        cells = [str(row.index), _e(str(row.status)), link, name, length, _e(_row_message(row))]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    more = f"<div>... {hidden} more rows (batch.results has them all)</div>" if hidden else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def _rows_shown(batch: ShownBatch) -> tuple[list[_Row], int]:
    """The rows a table shows (up to :data:`MAX_ROWS`, those that did not complete
    first, in input order) and how many it leaves out."""
    rows = list(batch.results)
    if len(rows) <= MAX_ROWS:
        return rows, 0
    problems = [r for r in rows if str(r.status) != "completed"][:MAX_ROWS]
    completed = [r for r in rows if str(r.status) == "completed"]
    shown = sorted(problems + completed[: MAX_ROWS - len(problems)], key=lambda r: r.index)
    return shown, len(rows) - len(shown)


def _row_cells(row: _Row) -> list[str]:
    video = row.video
    cells = [row.video_id or ""]
    if video is not None:
        cells += [repr(video.name) if video.name else "", duration(video) or ""]
    message = _row_message(row)
    return [*cells, repr(message) if message else ""]


def _row_message(row: _Row) -> str:
    if row.error:
        return row.error
    video = row.video
    if video is not None and str(row.status) != "completed" and video.message:
        return video.message
    return ""


def batch_bundle(batch: ShownBatch) -> Bundle:
    """The batch's mime bundle (``text/plain`` with its rows once ended, and HTML)."""
    return {"text/plain": batch_text(batch, rows=True), "text/html": batch_html(batch)}


# -- small pieces -----------------------------------------------------------------------


def percent(progress: int | None) -> str:
    """``40%``, or ``?`` before the first read."""
    return UNKNOWN if progress is None else f"{progress}%"


def duration(video: VideoDetail) -> str | None:
    """``12.0s`` from the detail's seconds (or its frames at 25 fps), None if unknown."""
    seconds = video.duration_in_seconds
    if seconds is None and video.duration_in_frames:
        seconds = video.duration_in_frames / 25
    return None if seconds is None else f"{seconds:.1f}s"


def error_text(error: BaseException) -> str:
    """The service's message for an API error, else the error as text."""
    return error.message if isinstance(error, APIError) else str(error) or type(error).__name__


def _seconds(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def _pairs(fields: Sequence[tuple[str, str]]) -> str:
    """``name=value`` pairs; free text (names, messages) quoted with ``repr``."""
    quoted = ("name", "message", "error")
    return " ".join(f"{k}={v!r}" if k in quoted else f"{k}={v}" for k, v in fields)


def _bar(value: int | None, maximum: int) -> str:
    """A ``<progress>`` bar; without a value (not known yet) it is indeterminate."""
    shown = "" if value is None else f' value="{value}"'
    return f'<progress max="{maximum}"{shown}></progress>'


def _video_link(video: VideoDetail) -> str:
    url = _safe_url(video.url)
    return f'<a href="{_e(url)}" target="_blank">{_e(video.id)}</a>' if url else _e(video.id)


def _safe_url(url: str | None) -> str | None:
    """The URL when it is http(s) (nothing else goes into ``src`` or ``href``)."""
    if url and url.lower().startswith(("https://", "http://")):
        return url
    return None


def _e(text: str) -> str:
    return html.escape(text, quote=True)
