"""How a job and a batch show themselves: plain text and HTML.

The renderers are pure: :func:`job_bundle` and :func:`batch_bundle` give the
``text/plain`` and ``text/html`` of what is known now, both built from one list of
fields (:func:`job_fields`, :func:`batch_fields`), so they always agree. A value not
known yet (a progress before the first read, a video id a template job has not
learnt) is shown as ``?`` in both. Anything that came from the service or the user
(names, messages, URLs) is escaped, and only ``http(s)`` URLs go into ``src`` or
``href``. A notebook's live display (``asyncclient.notebook.live``) shows these.

The text is the objects' own ``repr`` (the fields come from the core:
:func:`~asyncclient.awaiting.jobs.job_fields`,
:func:`~asyncclient.batch.text.batch_fields`); the HTML and a batch's table of rows
are the notebook's.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Protocol

from asyncclient._states import RowOutcome
from asyncclient.awaiting.jobs import (
    UNKNOWN,
    duration,
    error_text,
    job_fields,
    job_text,
    percent,
)
from asyncclient.awaiting.state import JobState
from asyncclient.batch.text import (
    UNDER_WAY,
    Summarised,
    batch_fields,
    batch_line,
    phase_word,
    rows_known,
)
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
    "duration",
    "error_text",
    "job_bundle",
    "job_fields",
    "job_html",
    "job_text",
    "percent",
]

Bundle = dict[str, str]
"""A mime bundle: ``text/plain`` and ``text/html``."""

MAX_ROWS = 100
"""Most rows a batch's table shows (rows that did not complete first)."""


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


class ShownBatch(Summarised, Protocol):
    """What a shown batch offers (``Batch``): its phase, error, progress and results."""

    @property
    def results(self) -> Sequence[_Row]: ...


# -- a job ------------------------------------------------------------------------------


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


_UNDER_WAY = UNDER_WAY
"""The phases before a batch ended: a summary only, no table of rows."""


def batch_phase(batch: ShownBatch) -> tuple[str, str | None]:
    """Where the batch is (``not started``, ``preparing``, ``running``, ``done``,
    ``cancelled``, ``stopped``) and, once stopped by an error, that error."""
    return phase_word(batch)


def batch_text(batch: ShownBatch, *, rows: bool = False) -> str:
    """``<Batch running: finished=3/20 completed=2 ...>``, then, when ``rows`` and the
    batch ended, one line per row (what the HTML's table shows)."""
    line = batch_line(batch)
    if not rows or phase_word(batch)[0] in _UNDER_WAY:
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
        bar = " " + _bar(p.finished if rows_known(batch) else None, p.total or 1)
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
    problems = [r for r in rows if r.status != RowOutcome.COMPLETED][:MAX_ROWS]
    completed = [r for r in rows if r.status == RowOutcome.COMPLETED]
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
    if video is not None and row.status != RowOutcome.COMPLETED and video.message:
        return video.message
    return ""


def batch_bundle(batch: ShownBatch) -> Bundle:
    """The batch's mime bundle (``text/plain`` with its rows once ended, and HTML)."""
    return {"text/plain": batch_text(batch, rows=True), "text/html": batch_html(batch)}


# -- small pieces -----------------------------------------------------------------------


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
