"""How a Redis journal (:mod:`asyncclient.fleet.journal`) keeps a row: its state as a
short JSON array, one field of the journal's ``rows`` hash (:func:`pack`,
:func:`unpack`), and the view of the rows it knows (:class:`RowsView`).

A record is ``[code, fingerprint, sent at, project, video, status, error, api, title,
service's clock, earlier projects]``, its trailing empty items left out: the code of the
row's last event (:data:`~asyncclient.batch.journal_table.EVENTS`), times as
microseconds since the epoch (an aware time; a naive one as its text), ``api`` 1 when
the service refused the row, the service's clock kept while the row is open only (as
the file journal's whole lines), and the projects the row named before its last one
(rare: a row sent again after it was refused).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from asyncclient._states import JournalEvent
from asyncclient.batch.journal_table import EVENTS, RowState

__all__ = ["ACCEPTED", "CODES", "Known", "RowsView", "pack", "unpack"]

CODES = {event: code for code, event in enumerate(EVENTS) if code}
"""Each event's code in a record (and in a journal's ``codes``)."""
ACCEPTED = 2
"""Codes up to this one are open rows."""
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Known(Protocol):
    """What :class:`RowsView` reads of a journal."""

    codes: bytearray
    known: int

    def state(self, index: int) -> RowState | None: ...

    def event_of(self, index: int) -> JournalEvent: ...


def _stamp(at: datetime | None) -> int | str | None:
    """A time in a record: microseconds since the epoch (an aware time), else its text."""
    if at is None:
        return None
    if at.utcoffset() is None:
        return at.isoformat()
    return (at - _EPOCH) // timedelta(microseconds=1)


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, int):
        return _EPOCH + timedelta(microseconds=value)
    return datetime.fromisoformat(str(value))


def pack(state: RowState, earlier: list[str] | None = None) -> bytes:
    """A row's state as Redis keeps it (``earlier``: projects it named before)."""
    open_row = CODES[state.event] <= ACCEPTED
    items: list[Any] = [
        CODES[state.event],
        state.fingerprint,
        _stamp(state.sent_at),
        state.project_id,
        state.video_id,
        state.status,
        state.error,
        1 if state.api_rejection else 0,
        state.title,
        _stamp(state.service_at) if open_row else None,  # (a finished row's is not kept)
        earlier or None,
    ]
    while items[-1] is None or items[-1] == 0:
        items.pop()
    return json.dumps(items, separators=(",", ":"), ensure_ascii=False).encode()


def unpack(index: int, raw: bytes | str) -> tuple[RowState, list[str]]:
    """A row's state from its record, and the projects it named before.

    Raises:
        ValueError: Not a record of a row (a damaged journal).
    """
    try:
        items = json.loads(raw)
        code = items[0]
        if type(code) is not int or not 0 < code < len(EVENTS):
            raise ValueError(f"no event {code!r}")
        items += [None] * (11 - len(items))
        state = RowState(
            index,
            str(items[1] or ""),
            EVENTS[code],
            _time(items[2]),
            items[3],
            items[4],
            items[5],
            items[6],
            bool(items[7]),
            items[8],
            _time(items[9]),
        )
        return state, list(items[10] or ())
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"row {index}'s record does not read ({exc})") from None


class RowsView(Mapping[int, RowState]):
    """``journal.rows``: the rows a journal knows, by row number (read-only)."""

    def __init__(self, journal: Known) -> None:
        self._journal = journal

    def __getitem__(self, index: int) -> RowState:
        state = self._journal.state(index)
        if state is None:
            raise KeyError(index)
        return state

    def __contains__(self, index: object) -> bool:
        return type(index) is int and self._journal.event_of(index) is not JournalEvent.NONE

    def __len__(self) -> int:
        return self._journal.known

    def __iter__(self) -> Iterator[int]:
        return (index for index, code in enumerate(bytes(self._journal.codes)) if code)
