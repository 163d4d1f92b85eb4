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
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from asyncclient._states import JournalEvent
from asyncclient.batch.digests import DigestSet
from asyncclient.batch.journal_table import EVENTS, MAX_ROWS, RowState

__all__ = [
    "ACCEPTED",
    "CODES",
    "SCAN",
    "RowTable",
    "RowsView",
    "pack",
    "unpack",
]

# A page of a hash, in one string (a reply of one element reads much faster than one
# of thousands). KEYS[1] the hash; ARGV: the cursor, the count. Returns {the next
# cursor, "field<TAB>value" lines joined by newlines} (a record, JSON, has neither raw).
SCAN = r"""
local page = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local found, lines = page[2], {}
for i = 1, #found, 2 do lines[#lines + 1] = found[i] .. '\t' .. found[i + 1] end
return {page[1], table.concat(lines, '\n')}
"""

CODES = {event: code for code, event in enumerate(EVENTS) if code}
"""Each event's code in a record (and in a journal's ``codes``)."""
ACCEPTED = 2
"""Codes up to this one are open rows."""
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


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
        state.credits,
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
        items += [None] * (12 - len(items))
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
            items[11] if type(items[11]) is int else None,
        )
        return state, list(items[10] or ())
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"row {index}'s record does not read ({exc})") from None


class RowsView(Mapping[int, RowState]):
    """``journal.rows``: the rows a journal knows, by row number (read-only).

    Args:
        table: The journal's rows in memory.
        state: A row's whole state (a finished row's read back from Redis).
    """

    def __init__(self, table: RowTable, state: Callable[[int], RowState | None]) -> None:
        self._table = table
        self._state = state

    def __getitem__(self, index: int) -> RowState:
        state = self._state(index)
        if state is None:
            raise KeyError(index)
        return state

    def __contains__(self, index: object) -> bool:
        return type(index) is int and self._table.event_of(index) is not JournalEvent.NONE

    def __len__(self) -> int:
        return self._table.known

    def __iter__(self) -> Iterator[int]:
        return (index for index, code in enumerate(bytes(self._table.codes)) if code)


class RowTable:
    """What a Redis journal's client keeps of its rows: each row's last event (a byte a
    row), open rows whole, a digest of each project a record named."""

    def __init__(self) -> None:
        self.codes = bytearray()
        """Each row's last event, by row number (its code in :data:`CODES`)."""
        self.open: dict[int, RowState] = {}
        self.projects = DigestSet(rows=False)
        self.known = 0
        """Rows with a record."""
        self.earlier: dict[int, list[str]] = {}
        """The projects a row named before its last one (rare), by row number."""

    def event_of(self, index: int) -> JournalEvent:
        """The row's last event (``none`` for a row without a record)."""
        if type(index) is not int or not 0 <= index < len(self.codes):
            return JournalEvent.NONE
        return EVENTS[self.codes[index]]

    def counts(self) -> dict[JournalEvent, int]:
        """How many rows have each last event."""
        codes = self.codes
        return {EVENTS[code]: codes.count(code) for code in range(1, len(EVENTS))}

    def apply(self, index: int, state: RowState, earlier: list[str]) -> None:
        """A row's state, once written."""
        self._grow(index)
        if self.codes[index] == 0:
            self.known += 1
        code = CODES[state.event]
        self.codes[index] = code
        if code <= ACCEPTED:
            self.open[index] = state
        else:
            self.open.pop(index, None)
        if state.project_id:
            self.projects.add(state.project_id)
        if earlier:
            self.earlier[index] = earlier

    def sent_no_earlier(self, since: datetime) -> int:
        """Make every open row whose last event is ``submit`` count as sent no earlier
        than ``since`` (its settle window starts then); how many there are."""
        sending = [state for state in self.open.values() if state.event is JournalEvent.SUBMIT]
        for state in sending:
            if state.sent_at is None or state.sent_at < since:
                state.sent_at = since
        return len(sending)

    def read_page(self, page: bytes, where: str) -> None:
        """Apply a page of records read at open (``row<TAB>record`` lines); a finished
        row keeps only its code and its projects' digests.

        Raises:
            ValueError: A record does not read (a damaged journal; ``where`` names it).
        """
        codes, loads, note = self.codes, json.loads, self.projects.note
        for line in page.split(b"\n") if page else ():
            field, _, raw = line.partition(b"\t")
            try:
                index = int(field)
                if not 0 <= index < MAX_ROWS:
                    raise ValueError(f"row {index} is out of range")
                items = loads(raw)
                code = items[0]
                if type(code) is not int or not 0 < code < len(EVENTS):
                    raise ValueError(f"row {index}'s record does not read")
                project = items[3] if len(items) > 3 else None
                earlier = items[10] if len(items) > 10 else None
                if code <= ACCEPTED:
                    self.open[index] = unpack(index, raw)[0]
            except (ValueError, TypeError, IndexError, KeyError) as exc:
                raise ValueError(f"{where}: damaged, {exc}") from None
            if index >= len(codes):
                self._grow(index)
            if codes[index] == 0:
                self.known += 1
            codes[index] = code
            if code > ACCEPTED:
                self.open.pop(index, None)
            if project:
                note(str(project))
            if earlier:
                self.earlier[index] = [str(name) for name in earlier]
                for name in earlier:
                    note(str(name))

    def _grow(self, index: int) -> None:
        if index >= len(self.codes):
            grow = max(index + 1 - len(self.codes), len(self.codes) >> 3, 1024)
            self.codes.extend(bytes(min(grow, MAX_ROWS - len(self.codes))))
