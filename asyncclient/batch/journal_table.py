"""A journal's rows in little memory: each row's last event in arrays indexed by row number.

:class:`RowTable` keeps, for every row number, one byte (its last event: 0 none,
1 ``submit``, 2 ``accepted``, 3 ``rejected``, 4 ``done``) and the byte offset of its
last line in the journal (8 bytes), and a digest of every project a line names
(:class:`DigestSet`, 8 bytes a project): about 17 bytes a finished row. A row whose
last event is ``submit`` or ``accepted`` (an open row: the runner acts on it) is kept
whole, as a :class:`RowState`. A finished row's state is read back from its last line
when asked for: the journal writes ``done`` and ``rejected`` lines whole (they carry
the row's ``at``, ``project``, ``video``, ``status``, ``error`` and ``api``, and say so
with ``"whole":true``). A finished row of an earlier version, whose last line tells
only part of it, is kept whole too (``loose``), until a later run writes its line anew.

What a row's lines add up to is :func:`fold`'s: each line overwrites what it names and
keeps the rest; the row's fingerprint is its last line's (a refused row changed and sent
again is checked against what was sent).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, NoReturn

from attrs import define, evolve

from asyncclient._states import JOURNAL, JournalEvent
from asyncclient.batch.digests import DigestSet, digest_of

__all__ = ["DigestSet", "RowState", "RowTable", "RowsView", "digest_of", "fold", "line_state"]

EVENTS = (
    JournalEvent.NONE,
    JournalEvent.SUBMIT,
    JournalEvent.ACCEPTED,
    JournalEvent.REJECTED,
    JournalEvent.DONE,
)
"""The events by their code in :attr:`RowTable.codes`."""
_CODES = {event.value: code for code, event in enumerate(EVENTS) if code}
_UNKNOWN = 7  # the code of a line's event that is none of them: never allowed
_ACCEPTED = 2  # codes up to this one are open rows
# _ALLOWED[old << 3 | new]: whether ``new`` may follow ``old`` (the journal's state table)
_ALLOWED = bytes(
    int(old < len(EVENTS) and new < len(EVENTS) and JOURNAL.allows(EVENTS[old], EVENTS[new]))
    for old in range(8)
    for new in range(8)
)
MAX_ROWS = 1 << 28
"""Row numbers a journal takes (0 up to this one, excluded): a line naming a row beyond
would make the arrays huge, so it is refused as damage."""


@define
class RowState:
    """What the journal knows of one row (its last events)."""

    index: int
    fingerprint: str
    event: JournalEvent = JournalEvent.NONE
    """The row's last event (see :data:`asyncclient._states.JOURNAL`)."""
    sent_at: datetime | None = None
    project_id: str | None = None
    video_id: str | None = None
    status: str | None = None
    error: str | None = None
    api_rejection: bool = False
    """True when the service (not validation) refused the row."""
    title: str | None = None
    """The row's title or name, as a ``done`` line recorded it (None before)."""
    service_at: datetime | None = None
    """A time the service's own clock had reached before the row's last ``submit`` left
    (the ``Date`` of its earlier replies; ``svc`` in the line), or None when none was
    known: a project that request made has a ``createdAt`` no earlier than it."""
    credits: int | None = None
    """What the service charged the row's video (``usedCredits``), as a ``done`` line
    recorded it when the batch read it (``read_charges``); None when not read."""


def fold(state: RowState | None, index: int, records: Iterable[dict[str, Any]]) -> RowState:
    """``state`` (None: a row not seen yet) after ``records``, the row's next lines
    (changed in place, and returned)."""
    for record in records:
        event = JournalEvent(record["ev"])
        fp = record.get("fp")
        if state is None:
            state = RowState(index, "" if fp is None else str(fp))
        elif fp is not None:
            state.fingerprint = str(fp)
        state.event = event
        if event is JournalEvent.SUBMIT:
            at, svc = record.get("at"), record.get("svc")
            state.sent_at = datetime.fromisoformat(at) if at else None
            state.service_at = datetime.fromisoformat(svc) if svc else None
        if record.get("project"):
            state.project_id = record["project"]
        if record.get("video"):
            state.video_id = record["video"]
        if "status" in record:
            state.status = record["status"]
        if "error" in record:
            state.error = record["error"]
        if "api" in record:
            state.api_rejection = bool(record["api"])
        if "title" in record:
            state.title = record["title"]
        if "credits" in record:
            state.credits = record["credits"]
    assert state is not None, "no line to fold"
    return state


def line_state(index: int, record: dict[str, Any]) -> RowState:
    """The state a finished row's last line tells by itself."""
    at = record.get("at")
    return RowState(
        index,
        str(record.get("fp", "")),
        JournalEvent(record["ev"]),
        datetime.fromisoformat(at) if at else None,
        record.get("project") or None,
        record.get("video") or None,
        record.get("status"),
        record.get("error"),
        bool(record.get("api", False)),
        record.get("title"),
        credits=record.get("credits"),
    )


def whole_line(record: dict[str, Any], state: RowState) -> dict[str, Any]:
    """A ``done`` or ``rejected`` record, given everything its row's ``state`` (the state
    after it) knows, so that the line alone tells the row."""
    line = dict(record)
    if state.sent_at is not None:
        line["at"] = state.sent_at.isoformat()
    known = (
        ("project", state.project_id),
        ("video", state.video_id),
        ("status", state.status),
        ("error", state.error),
        ("title", state.title),
        ("credits", state.credits),
    )
    for key, value in known:
        if value is not None:
            line[key] = value
    if state.api_rejection:
        line["api"] = True
    line["whole"] = True
    return line


class RowTable:
    """Every row's last event and line, in arrays indexed by row number; open rows whole.

    Args:
        name: What messages call the journal (its path).
        read_line: Reads the whole line that starts at a byte offset of the journal.
        on_header: Takes a ``batch`` line and its line number.
    """

    def __init__(
        self,
        name: str,
        read_line: Callable[[int], bytes],
        on_header: Callable[[dict[str, Any], int], None],
    ) -> None:
        self.name = name
        self.codes = bytearray()
        """Each row's last event, by row number (its code in :data:`EVENTS`)."""
        self.offsets: array[int] = array("q")
        """Where each row's last line starts in the journal."""
        self.open: dict[int, RowState] = {}
        self.loose: dict[int, RowState] = {}
        """Finished rows whose last line does not tell all of them (an earlier version's)."""
        self.projects = DigestSet(rows=False)
        self.known = 0
        """Rows with at least one line."""
        self._read_line = read_line
        self._on_header = on_header
        self._pending: dict[int, list[Any]] = {}  # open rows met in a replay: base, lines
        self._names: list[int] = []  # digests of the projects met in a replay

    def event_of(self, index: int) -> JournalEvent:
        """The row's last event (``none`` for a row without a line)."""
        if type(index) is not int or not 0 <= index < len(self.codes):
            return JournalEvent.NONE
        return EVENTS[self.codes[index]]

    def state(self, index: int) -> RowState | None:
        """What the journal knows of the row (None: nothing); a finished row's state is
        read back from its last line."""
        code = self.codes[index] if type(index) is int and 0 <= index < len(self.codes) else 0
        if code == 0:
            return None
        if code <= _ACCEPTED:
            return self.open[index]
        loose = self.loose.get(index)
        if loose is not None:
            return loose
        return line_state(index, self._record_at(index))

    def whole_rows(self) -> int:
        """Rows kept whole: open, or finished and loose."""
        return len(self.open) + len(self.loose)

    def preview(self, index: int, record: dict[str, Any]) -> RowState:
        """The row's state once ``record`` is applied; nothing is changed."""
        state = self.state(index)
        return fold(None if state is None else evolve(state), index, [record])

    def replay(self, records: list[Any], starts: Iterable[int], number: int) -> int:
        """Apply journal lines in order: ``records``, whose lines start at ``starts`` in
        the file and are numbered from ``number`` (0: lines being written now), up to the
        first that is no record (not an object with an ``ev``); how many were applied.
        :meth:`flush` ends a replay.

        Raises:
            ValueError: A line breaks the journal's state table, or names no row.
        """
        codes, offsets, pending, names = self.codes, self.offsets, self._pending, self._names
        # ``starts`` may run one past ``records`` (the end of the last line)
        for k, (record, start) in enumerate(zip(records, starts, strict=False)):
            try:
                ev = record["ev"]
            except (KeyError, TypeError, IndexError):  # a line of something else
                return k
            if ev == "batch":
                self._on_header(record, number + k if number else 0)
                continue
            index = record.get("i")
            if type(index) is not int or not 0 <= index < len(codes):
                index = self._row_of(record, number + k if number else 0)
            old = codes[index]
            try:
                code = _CODES.get(ev, _UNKNOWN)
            except TypeError:  # not a string
                code = _UNKNOWN
            if not _ALLOWED[old << 3 | code]:
                self._refuse(old, ev, index, number + k if number else 0)
            if code > _ACCEPTED:
                self._finished(index, old, record)
                offsets[index] = start  # (an open row's state is kept whole)
            else:  # an open row: its lines are folded once the replay ends
                lines = pending.get(index)
                if lines is None:
                    pending[index] = [self._base(index, old), record]
                else:
                    lines.append(record)
                project = record.get("project")
                if project:
                    names.append(digest_of(str(project)))
            if old == 0:
                self.known += 1
            codes[index] = code
        return len(records)

    def flush(self) -> None:
        """End a replay: the open rows it met are made whole."""
        for index, (base, *records) in self._pending.items():
            self.open[index] = fold(base, index, records)
        self._pending.clear()
        self.projects.update_keys(self._names)
        self._names.clear()

    def _finished(self, index: int, old: int, record: dict[str, Any]) -> None:
        pending = self._pending.pop(index, None)
        if record.get("whole") is True:  # the line tells the row: nothing else to keep
            if pending is None:
                self.open.pop(index, None)
            self.loose.pop(index, None)
            return
        project = record.get("project")
        if project:
            self._names.append(digest_of(str(project)))
        if pending is None:
            state = fold(self._base(index, old), index, [record])
        else:
            state = fold(pending[0], index, [*pending[1:], record])
        if state == line_state(index, record):
            self.loose.pop(index, None)
        else:
            self.loose[index] = state

    def _base(self, index: int, old: int) -> RowState | None:
        """The row's state before its next line, taken out of where it is kept."""
        if old == 0:
            return None
        if old <= _ACCEPTED:
            return self.open.pop(index)
        loose = self.loose.pop(index, None)
        return loose if loose is not None else line_state(index, self._record_at(index))

    def _record_at(self, index: int) -> dict[str, Any]:
        offset = self.offsets[index]
        line = self._read_line(offset)
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("i") != index:
            raise ValueError(
                f"{self.name}: row {index}'s line (at byte {offset}) does not read back: "
                "the file was changed while in use"
            )
        return record

    def _row_of(self, record: dict[str, Any], number: int) -> int:
        """The row number a line names, the arrays grown to hold it."""
        where = f"line {number}" if number else "a new line"
        try:
            index = int(record["i"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{self.name}, {where}: names no row") from None
        if not 0 <= index < MAX_ROWS:
            raise ValueError(f"{self.name}, {where}: row {index} is out of range")
        if index >= len(self.codes):
            grow = max(index + 1 - len(self.codes), len(self.codes) >> 3, 1024)
            grow = min(grow, MAX_ROWS - len(self.codes))
            self.codes.extend(bytes(grow))
            self.offsets.frombytes(bytes(8 * grow))
        return index

    def _refuse(self, old: int, ev: Any, index: int, number: int) -> NoReturn:
        where = f"line {number}" if number else "a new line"
        reason = f"{ev!r} may not follow {EVENTS[old].value}"
        try:
            JOURNAL.check(EVENTS[old], JournalEvent(ev))  # the table's words
        except (TypeError, ValueError) as exc:
            reason = str(exc)
        raise ValueError(f"{self.name}, {where}, row {index}: {reason}")


class RowsView(Mapping[int, RowState]):
    """``journal.rows``: the rows the journal knows, by row number (read-only). A finished
    row's :class:`RowState` is read back from the file each time it is asked for."""

    def __init__(self, table: RowTable) -> None:
        self._table = table

    def __getitem__(self, index: int) -> RowState:
        state = self._table.state(index)
        if state is None:
            raise KeyError(index)
        return state

    def __contains__(self, index: object) -> bool:
        return type(index) is int and self._table.event_of(index) is not JournalEvent.NONE

    def __len__(self) -> int:
        return self._table.known

    def __iter__(self) -> Iterator[int]:
        return (index for index, code in enumerate(bytes(self._table.codes)) if code)
