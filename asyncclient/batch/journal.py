"""The batch journal: a JSON Lines file recording each row before and after submission.

One line per event, appended and flushed at once, so that a batch killed at any
point (Ctrl-C, an exception, ``kill -9``) leaves a journal that tells, row by row,
what the service may have: ``submit`` is written before the creation request
leaves, ``accepted`` (with the ids) after it was answered, ``rejected`` when it
was refused, ``done`` when the video finished. Running the same batch again reads
it back: accepted rows are awaited, rows with ``submit`` and no answer are
reconciled with the service, never blindly resent.

The header line names the batch and the API key the journal belongs to, as a hash
(:func:`key_id`: a SHA-256 of a fixed context and the key, 16 hex digits; never the
key)::

    {"ev":"batch","batch":"<batch id>","version":1,"key":"<key id>"}

A journal opened with another key is refused (:class:`~asyncclient.errors.JournalKeyError`):
its rows were made by another team. A journal written before keys were recorded has no
``key``: it is accepted, and on that first open the key of the run that opens it is
appended as a second ``batch`` line (the file is only ever appended to); from then on it
belongs to that key. A journal opened without a key (``key=None``: a batch built without
a client) is neither checked nor given one.

One run per journal: opening it takes an OS advisory lock (``flock``) on a sidecar file,
``<journal>.lock``, held by the open file until :meth:`Journal.close`, so it is released
when the process ends in any way (even ``kill -9``). The lock file says who holds it
(``{"pid":..,"host":..,"since":..}``); a second run is refused at once
(:class:`~asyncclient.errors.JournalLockedError`, naming the holder). The lock file is
removed on close; a dead holder's is taken over. (Not on Windows, where there is no lock.)

Durability: every record is one whole line, written by a single ``write`` to a file
opened for appending, so a crash leaves it whole or absent. The records that matter for
money (``submit`` before the request leaves, ``accepted`` and ``rejected`` after its
answer) are fsynced before the next step, so not even a power cut loses them; ``done``
lines are flushed to the operating system only (a lost one means the video is read
again). A write that fails or is short (a full disk, a file size limit: ``EFBIG``, if
``SIGXFSZ`` is ignored as the command line does), or an fsync that fails, raises
:class:`~asyncclient.errors.JournalWriteError` after cutting the file back to its last
whole line; the journal then refuses every later record, so a row whose ``submit``
could not be recorded is never sent. On open, a torn or unreadable tail (the last lines,
cut by a crash) is cut off the file before anything is appended, and said in
:attr:`Journal.skipped` and the log; an unreadable line *before* readable ones means the
file was damaged otherwise, and the journal is refused rather than trusted.
"""

from __future__ import annotations

import errno
import hashlib
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
from asyncclient.batch.journal_lock import JournalLock
from asyncclient.errors import JournalKeyError, JournalWriteError

__all__ = ["Journal", "RowState", "key_id"]

logger = logging.getLogger("asyncclient")

VERSION = 1
_SYNCED = frozenset({JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.REJECTED})
_KEY_CONTEXT = b"asyncclient batch journal key v1\x00"


def key_id(api_key: str) -> str:
    """What a journal records of the API key it belongs to: 16 hex digits of a SHA-256
    of a fixed context and the key (it tells nothing of the key)."""
    digest = hashlib.sha256(_KEY_CONTEXT + api_key.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


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
    """An append-only JSON Lines journal of one batch, held by one run.

    Args:
        path: The file; created if missing, appended to if present.
        batch_id: Identifies the batch's rows; a journal of other rows is refused.
        now: The wall clock that stamps ``submit`` lines (UTC).
        key: The :func:`key_id` of the API key the run uses; a journal of another key
            is refused. None: not checked.
    """

    path: Path
    batch_id: str
    now: Callable[[], datetime] = field(default=SYSTEM_CLOCK.now, repr=False)
    key: str | None = None
    rows: dict[int, RowState] = field(factory=dict)
    skipped: list[str] = field(factory=list)
    """What opening the journal cut off its tail (a torn last line), in words."""
    recorded_key: str | None = None
    """The key id the journal's header names (None: a journal of an earlier version)."""
    _headed: bool = field(default=False, init=False, repr=False)
    _file: IO[bytes] | None = field(default=None, init=False, repr=False)
    _lock: JournalLock | None = field(default=None, init=False, repr=False)
    _size: int = field(default=0, init=False, repr=False)  # bytes up to the last whole line
    _broken: str | None = field(default=None, init=False, repr=False)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        batch_id: str,
        *,
        now: Callable[[], datetime] = SYSTEM_CLOCK.now,
        key: str | None = None,
    ) -> Journal:
        """Lock the journal at ``path``, read it (if any) and open it for appending.

        Raises:
            JournalLockedError: Another run holds it (nothing was read or written).
            JournalKeyError: It belongs to another API key.
            JournalWriteError: Its header could not be written.
            ValueError: The file is the journal of a different batch, or its events
                break the journal's state table (a damaged file).
        """
        journal = cls(Path(path), batch_id, now, key)
        journal.path.parent.mkdir(parents=True, exist_ok=True)
        journal._lock = JournalLock.take(journal.path, now)
        try:
            journal._load()
        except BaseException:
            journal.close()
            raise
        return journal

    def _load(self) -> None:
        new = not self.path.exists()
        if not new:
            self._replay()
        if self.key and self.recorded_key and self.recorded_key != self.key:
            raise JournalKeyError(
                f"{self.path} belongs to another API key (the journal's key id is "
                f"{self.recorded_key}, this key's is {self.key}): run it with the key that "
                "started it, or give this key a new journal file",
                path=str(self.path),
            )
        self._file = self.path.open("ab", buffering=0)
        self._size = os.fstat(self._file.fileno()).st_size
        if new:
            _sync_directory(self.path.parent)
        if not self._headed or (self.key and self.recorded_key is None):
            header: dict[str, Any] = {"ev": "batch", "batch": self.batch_id, "version": VERSION}
            if self.key:
                header["key"] = self.key
            self._write(header, sync=True)
            self.recorded_key = self.key

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
            self._apply_header(record, number)
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

    def _apply_header(self, record: dict[str, Any], number: int) -> None:
        if record.get("batch") != self.batch_id:
            raise ValueError(
                f"{self.path} is the journal of another batch (line {number}); "
                "use a new journal file for these rows"
            )
        self._headed = True
        key = record.get("key")
        if key is None:
            return
        if self.recorded_key is not None and key != self.recorded_key:
            raise ValueError(
                f"{self.path}, line {number}: names a second API key; the file was "
                "damaged; it is not used"
            )
        self.recorded_key = str(key)

    def _write(self, record: dict[str, Any], *, sync: bool = False) -> None:
        """Append one whole line (synced when ``sync``), or cut the file back to its last
        whole line and raise :class:`JournalWriteError`."""
        assert self._file is not None, "the journal is closed"
        event, row = str(record.get("ev")), record.get("i")
        if self._broken is not None:
            raise self._error(event, row, f"an earlier record was lost ({self._broken})")
        data = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        try:
            written = self._file.write(data)  # one write of a whole line: whole or absent
            if written != len(data):
                raise OSError(errno.EIO, f"a short write: {written or 0} of {len(data)} bytes")
            if sync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            self._broken = exc.strerror or str(exc)
            self._cut_back()
            raise self._error(event, row, self._broken) from exc
        self._size += len(data)

    def _error(self, event: str, row: Any, reason: str) -> JournalWriteError:
        what = {
            "batch": "its header",
            JournalEvent.SUBMIT: f"row {row}'s submission (the row was not sent)",
            JournalEvent.ACCEPTED: f"row {row}'s acceptance by the service",
            JournalEvent.REJECTED: f"row {row}'s refusal by the service",
            JournalEvent.DONE: f"row {row}'s end",
        }.get(event, f"a {event} record")
        return JournalWriteError(
            f"{self.path}: could not record {what}: {reason}; the journal stops here, at "
            "its last whole line",
            path=str(self.path),
            event=event,
            row=row if isinstance(row, int) else None,
        )

    def _cut_back(self) -> None:
        """Cut a line written in part (or written and not synced) off the file."""
        assert self._file is not None
        try:
            os.ftruncate(self._file.fileno(), self._size)
            os.fsync(self._file.fileno())
        except OSError as exc:  # the next open cuts the torn tail off
            logger.warning("%s: could not cut a torn line off: %s", self.path, exc)

    def record(self, event: JournalEvent, index: int, fingerprint: str, **data: Any) -> RowState:
        """Append one event of a row and update its state.

        Raises:
            ValueError: The event may not follow the row's last one (a bug: nothing
                is written).
            JournalWriteError: The line was not written whole (and synced, for the
                events of money): the file ends at its last whole line as before, and
                every later record is refused too.
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
        """Close the file and give up the lock."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None


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
