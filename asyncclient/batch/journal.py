"""The batch journal: a JSON Lines file recording each row before and after submission.

One line per event, appended and flushed at once, so that a batch killed at any
point (Ctrl-C, an exception, ``kill -9``) leaves a journal that tells, row by row,
what the service may have: ``submit`` is written before the creation request
leaves, ``accepted`` (with the ids) after it was answered, ``rejected`` when it
was refused, ``done`` when the video finished. Running the same batch again reads
it back: accepted rows are awaited, rows with ``submit`` and no answer are
reconciled with the service, never blindly resent.

Durability: every record is one whole line, written by a single ``write`` to a file
opened for appending, so a crash leaves it whole or absent. The records that matter for
money (``submit`` before the request leaves, ``accepted`` and ``rejected`` after its
answer) are fsynced before the next step, so not even a power cut loses them; ``done``
lines are flushed to the operating system only (a lost one means the video is read
again). On open, a torn or unreadable tail (the last lines, cut by a crash) is cut off
the file before anything is appended, and said in :attr:`Journal.skipped` and the log;
an unreadable line *before* readable ones means the file was damaged otherwise, and
the journal is refused rather than trusted.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from attrs import define, field

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient._states import JOURNAL, JournalEvent

__all__ = ["Journal", "RowState"]

logger = logging.getLogger("asyncclient")

VERSION = 1
_SYNCED = frozenset({JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.REJECTED})


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


@define
class Journal:
    """An append-only JSON Lines journal of one batch.

    Args:
        path: The file; created if missing, appended to if present.
        batch_id: Identifies the batch's rows; a journal of other rows is refused.
        now: The wall clock that stamps ``submit`` lines (UTC).
    """

    path: Path
    batch_id: str
    now: Callable[[], datetime] = field(default=SYSTEM_CLOCK.now, repr=False)
    rows: dict[int, RowState] = field(factory=dict)
    skipped: list[str] = field(factory=list)
    """What opening the journal cut off its tail (a torn last line), in words."""
    _file: IO[bytes] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        batch_id: str,
        *,
        now: Callable[[], datetime] = SYSTEM_CLOCK.now,
    ) -> Journal:
        """Read the journal at ``path`` (if any) and open it for appending.

        Raises:
            ValueError: The file is the journal of a different batch, or its events
                break the journal's state table (a damaged file).
        """
        journal = cls(Path(path), batch_id, now)
        new = not journal.path.exists()
        if not new:
            journal._replay()
        journal.path.parent.mkdir(parents=True, exist_ok=True)
        journal._file = journal.path.open("ab", buffering=0)
        if new:
            _sync_directory(journal.path.parent)
        if not journal.rows:
            journal._write({"ev": "batch", "batch": batch_id, "version": VERSION}, sync=True)
        return journal

    def _replay(self) -> None:
        data = self.path.read_bytes()
        lines = data.split(b"\n")  # the piece after the last newline is torn, or empty
        records: list[tuple[int, dict[str, Any]]] = []
        good_end = 0  # bytes of the file up to the end of the last readable line
        offset = 0
        bad: list[int] = []
        for number, line in enumerate(lines, 1):
            whole = number < len(lines)  # a line ends with a newline
            end = offset + len(line) + (1 if whole else 0)
            if line.strip():
                record = _record_of(line) if whole else None
                if record is None:
                    bad.append(number)
                else:
                    if bad:
                        raise ValueError(
                            f"{self.path}: line {bad[0]} is not a journal record, yet records "
                            "follow it: the file was damaged; it is not used (move it away "
                            "and check the service's video list before running the batch)"
                        )
                    records.append((number, record))
                    good_end = end
            elif not bad:
                good_end = end
            offset = end
        if bad or good_end < len(data):
            self._cut(data, good_end, bad)
        for number, record in records:
            self._apply(record, number)

    def _cut(self, data: bytes, good_end: int, bad: list[int]) -> None:
        """Cut a torn or unreadable tail off the file, and say so."""
        lines = f"lines {bad[0]}-{bad[-1]}" if len(bad) > 1 else f"line {bad[0]}" if bad else ""
        what = f"{len(data) - good_end} bytes of a torn tail ({lines or 'no whole line'})"
        self.skipped.append(what)
        logger.warning("%s: cut off %s, left by a crash", self.path, what)
        with self.path.open("r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())

    def _apply(self, record: dict[str, Any], number: int) -> None:
        ev = record.get("ev")
        if ev == "batch":
            if record.get("batch") != self.batch_id:
                raise ValueError(
                    f"{self.path} is the journal of another batch (line {number}); "
                    "use a new journal file for these rows"
                )
            return
        index = int(record["i"])
        state = self.rows.setdefault(index, RowState(index, str(record.get("fp", ""))))
        try:
            state.event = JOURNAL.check(state.event, JournalEvent(ev))
        except ValueError as exc:
            where = f"line {number}" if number else "a new line"
            raise ValueError(f"{self.path}, {where}, row {index}: {exc}") from None
        if ev == JournalEvent.SUBMIT:
            state.sent_at = datetime.fromisoformat(record["at"])
        for key, attr in (("project", "project_id"), ("video", "video_id")):
            if record.get(key):
                setattr(state, attr, record[key])
        state.status = record.get("status", state.status)
        state.error = record.get("error", state.error)
        state.api_rejection = bool(record.get("api", state.api_rejection))

    def _write(self, record: dict[str, Any], *, sync: bool = False) -> None:
        assert self._file is not None, "the journal is closed"
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
        self._file.write(line.encode())  # one write of a whole line: whole or absent
        if sync:
            os.fsync(self._file.fileno())

    def record(self, event: JournalEvent, index: int, fingerprint: str, **data: Any) -> RowState:
        """Append one event of a row and update its state.

        Raises:
            ValueError: The event may not follow the row's last one (a bug: nothing
                is written).
        """
        last = self.rows[index].event if index in self.rows else JournalEvent.NONE
        JOURNAL.check(last, event)
        record: dict[str, Any] = {"ev": event.value, "i": index, "fp": fingerprint, **data}
        if event is JournalEvent.SUBMIT:
            record["at"] = self.now().isoformat()
        record = {k: v for k, v in record.items() if v is not None}
        self._write(record, sync=event in _SYNCED)
        self._apply(record, 0)
        return self.rows[index]

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _record_of(line: bytes) -> dict[str, Any] | None:
    """The record a whole line holds, or None when it is not one."""
    try:
        record = json.loads(line)
    except ValueError:  # also invalid UTF-8
        return None
    return record if isinstance(record, dict) and "ev" in record else None


def _sync_directory(folder: Path) -> None:
    """Make a new file's name durable too (POSIX; elsewhere a no-op)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
