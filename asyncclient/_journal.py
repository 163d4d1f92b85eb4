"""The batch journal: a JSON Lines file recording each row before and after submission.

One line per event, appended and flushed at once, so that a batch killed at any
point (Ctrl-C, an exception, ``kill -9``) leaves a journal that tells, row by row,
what the service may have: ``submit`` is written before the creation request
leaves, ``accepted`` (with the ids) after it was answered, ``rejected`` when it
was refused, ``done`` when the video finished. Running the same batch again reads
it back: accepted rows are awaited, rows with ``submit`` and no answer are
reconciled with the service, never blindly resent.

Lines are flushed to the operating system, not fsynced: a killed process loses
nothing, a power cut may lose the last lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from attrs import define, field

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient._states import JOURNAL, JournalEvent

__all__ = ["Journal", "RowState"]

VERSION = 1


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
    _file: IO[str] | None = field(default=None, repr=False)

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
        if journal.path.exists():
            journal._replay()
        journal.path.parent.mkdir(parents=True, exist_ok=True)
        journal._file = journal.path.open("a", encoding="utf-8")
        if not journal.rows:
            journal._write({"ev": "batch", "batch": batch_id, "version": VERSION})
        return journal

    def _replay(self) -> None:
        with self.path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    # A line cut short by a kill: only the last line can be.
                    continue
                self._apply(record, number)

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

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None, "the journal is closed"
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()

    def record(
        self, event: JournalEvent, index: int, fingerprint: str, **data: Any
    ) -> RowState:
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
        self._write(record)
        self._apply(record, 0)
        return self.rows[index]

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None
