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

One run per journal: opening it locks the journal file itself, whatever name reaches it (a
symlink, a hard link, a bind mount), making it empty if missing (an empty journal is new),
and a sidecar naming the holder, beside the file (:mod:`~asyncclient.batch.journal_lock`);
a second run is refused at once (:class:`~asyncclient.errors.JournalLockedError`).

Durability: every record is one whole line, written by a single ``write`` to a file
opened for appending, so a crash leaves it whole or absent. The records that matter for
money (``submit`` before the request leaves, ``accepted`` and ``rejected`` after its
answer) are fsynced before the next step, so not even a power cut loses them (a running
batch's share one fsync among the rows that wrote meanwhile: :meth:`Journal.arecord`);
``done`` lines are flushed to the operating system only. A write that fails or is short
(a full disk, a file size limit: ``EFBIG``, if ``SIGXFSZ`` is ignored as the command
line does), or an fsync that fails, raises
:class:`~asyncclient.errors.JournalWriteError` after cutting the file back to its last
whole line; the journal then refuses every later record, so a row whose ``submit`` could
not be recorded is never sent. On open, a torn or unreadable tail (the last lines, cut
by a crash) is cut off the file before anything is appended, and said in
:attr:`Journal.skipped` and the log; an unreadable line *before* readable ones means the
file was damaged otherwise, and the journal is refused rather than trusted.

Memory: a finished row (last event ``done`` or ``rejected``) costs about 17 bytes, its
last event and where its last line starts, in arrays indexed by row number, and a
64-bit digest of its project (:mod:`~asyncclient.batch.journal_table`); its
:class:`RowState` is read back from that line when asked for (``journal.rows``), which
is why ``done`` and ``rejected`` lines are written whole: they repeat what the row's
earlier lines said (``at``, ``project``, ...) and say so with ``"whole":true`` (an
earlier version reads them as before). Open rows (``submit``, ``accepted``), and the
finished rows of an earlier version whose last line tells only part of them, are kept
whole. A row's fingerprint is its last line's. :meth:`Journal.event_of`,
:meth:`Journal.counts`, :meth:`Journal.owns` and :meth:`Journal.open_rows` answer from
memory alone.

The index, ``<journal>.index`` (:mod:`~asyncclient.batch.journal_index`), is a
checkpoint of those arrays, the open rows and the header's facts, as of a length of the
journal it names (with digests of the journal's first and last 4 KiB up to there). It is
written while the lock is held, whole or not at all (a temporary file, synced, renamed
over the old one): when a journal that needed reading is opened, every
:data:`CHECKPOINT_EVERY` records (or as many as rows kept whole, when more), and on
close (not after a record was lost). Opening reads the index and replays only the lines
after the length it covers; an index that is missing, damaged, of another batch or of
other bytes (the journal cut behind it, or replaced) is not used (said in the log) and
the whole file is replayed. The journal stays the truth: the index only saves reading
it; deleting it is always safe."""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from attrs import Factory, define, field

from asyncclient._clock import SYSTEM_CLOCK, pause
from asyncclient._states import JOURNAL, JournalEvent
from asyncclient.batch.journal_index import (
    Facts,
    StaleIndex,
    index_path,
    open_reader,
    read_at,
    read_index,
    replay_lines,
    write_index,
)
from asyncclient.batch.journal_lock import JournalLock, key_id, sync_directory, write_error
from asyncclient.batch.journal_table import (
    EVENTS,
    MAX_ROWS,
    RowState,
    RowsView,
    RowTable,
    digest_of,
    whole_line,
)
from asyncclient.errors import JournalKeyError

__all__ = ["CHECKPOINT_EVERY", "Journal", "RowState", "key_id"]

logger = logging.getLogger("asyncclient")

VERSION = 1
CHECKPOINT_EVERY = 50_000
"""Records between two writes of the index while a run goes on."""
_SYNCED = frozenset({JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.REJECTED})
_FINISHED = frozenset({JournalEvent.REJECTED, JournalEvent.DONE})


@define
class Journal:
    """An append-only JSON Lines journal of one batch, held by one run.

    Args:
        path: The file; created if missing, appended to if present.
        batch_id: Identifies the batch's rows; a journal of other rows is refused.
        now: The wall clock that stamps ``submit`` lines (UTC).
        key: The :func:`key_id` of the API key the run uses; a journal of another key
            is refused. None: not checked.
        checkpoint_every: Records between two writes of the index.
    """

    path: Path
    batch_id: str
    now: Callable[[], datetime] = field(default=SYSTEM_CLOCK.now, repr=False)
    key: str | None = None
    checkpoint_every: int = CHECKPOINT_EVERY
    skipped: list[str] = field(factory=list)
    """What opening the journal cut off its tail (a torn last line), in words."""
    recorded_key: str | None = None
    """The key id the journal's header names (None: a journal of an earlier version)."""
    replayed: int = 0
    """Lines opening read from the file: all of them, or those after what the index
    covers."""
    indexed: bool = False
    """Whether opening started from the index."""
    _headed: bool = field(default=False, init=False, repr=False)
    _file: IO[bytes] | None = field(default=None, init=False, repr=False)
    _lock: JournalLock | None = field(default=None, init=False, repr=False)
    _size: int = field(default=0, init=False, repr=False)  # bytes up to the last whole line
    _synced: int = field(default=0, init=False, repr=False)  # bytes known durable
    _broken: str | None = field(default=None, init=False, repr=False)
    _table: RowTable = field(
        default=Factory(
            lambda self: RowTable(str(self.path), self._line_at, self._apply_header),
            takes_self=True,
        ),
        init=False,
        repr=False,
    )
    _reader: int | None = field(default=None, init=False, repr=False)  # reads lines back
    _lines: int = field(default=0, init=False, repr=False)  # whole lines in the file
    _covered: int = field(default=0, init=False, repr=False)  # bytes the index covers
    _since: int = field(default=0, init=False, repr=False)  # records since the index

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        batch_id: str,
        *,
        now: Callable[[], datetime] = SYSTEM_CLOCK.now,
        key: str | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
    ) -> Journal:
        """Lock the journal at ``path``, read it (if any) and open it for appending.

        Raises:
            JournalLockedError: Another run holds it (nothing was read or written).
            JournalKeyError: It belongs to another API key.
            JournalWriteError: Its header could not be written.
            ValueError: The file is the journal of a different batch, or its events
                break the journal's state table (a damaged file).
        """
        journal = cls(Path(path), batch_id, now, key, checkpoint_every)
        journal.path.parent.mkdir(parents=True, exist_ok=True)
        journal._lock = JournalLock.take(journal.path, now)
        try:
            journal._load()
        except BaseException:
            journal.close()
            raise
        return journal

    @property
    def rows(self) -> Mapping[int, RowState]:
        """What the journal knows of each row, by row number (read-only); a finished
        row's state is read back from the file each time."""
        return RowsView(self._table)

    @property
    def index_path(self) -> Path:
        """The journal's index file: ``<journal>.index``, of its path resolved at opening."""
        return index_path(self._lock.journal if self._lock is not None else self.path)

    def event_of(self, index: int) -> JournalEvent:
        """The row's last event (``none``: the journal has no line of it)."""
        return self._table.event_of(index)

    def counts(self) -> dict[JournalEvent, int]:
        """How many rows have each last event (``submit``, ``accepted``, ``rejected``,
        ``done``)."""
        codes = self._table.codes
        return {EVENTS[code]: codes.count(code) for code in range(1, len(EVENTS))}

    def owns(self, project_id: str) -> bool:
        """Whether a line of the journal names this project (a row of the batch owns it)."""
        return digest_of(project_id) in self._table.projects

    def open_rows(self) -> Iterator[RowState]:
        """The rows whose last event is ``submit`` or ``accepted``, by row number."""
        table = self._table
        return iter([table.open[index] for index in sorted(table.open)])

    def _load(self) -> None:
        new = not self.path.exists() or self.path.stat().st_size == 0  # the lock made it
        if new:
            self.index_path.unlink(missing_ok=True)  # a journal's that is gone
        else:
            self._reader = open_reader(self.path)
            self._replay(self._from_index())
        if self.key and self.recorded_key and self.recorded_key != self.key:
            raise JournalKeyError(
                f"{self.path} belongs to another API key (the journal's key id is "
                f"{self.recorded_key}, this key's is {self.key}): run it with the key that "
                "started it, or give this key a new journal file",
                path=str(self.path),
            )
        self._file = self.path.open("ab", buffering=0)
        self._size = self._synced = os.fstat(self._file.fileno()).st_size
        if new:  # its name, in the folder of its file (beside its index: a symlink's target's)
            sync_directory(self.index_path.parent)
            self._reader = open_reader(self.path)
        if not self._headed or (self.key and self.recorded_key is None):
            header: dict[str, Any] = {"ev": "batch", "batch": self.batch_id, "version": VERSION}
            if self.key:
                header["key"] = self.key
            self._write(header, sync=True)
            self._headed, self.recorded_key = True, self.key  # (the next index says so)
        if self.replayed and (not self.indexed or self.replayed >= self.checkpoint_every):
            self._checkpoint()

    def _from_index(self) -> int:
        """Load the index, if it is of this journal; the byte to replay from."""
        assert self._reader is not None
        try:
            facts = read_index(self.index_path, self._reader, self.batch_id, self._table)
        except StaleIndex as exc:
            log = logger.debug if str(exc) == "there is none" else logger.warning
            log("%s: its index is not used (%s): the journal is read whole", self.path, exc)
            return 0
        self._headed, self.recorded_key = facts.headed, facts.key
        self._lines, self._covered, self.indexed = facts.lines, facts.covered, True
        return facts.covered

    def _replay(self, start: int) -> None:
        """Apply the lines from byte ``start`` on, and cut a torn tail off."""
        scan = replay_lines(self._table, self.path, start, self._lines)
        if scan.bad or scan.good_end < scan.size:
            self._cut(scan.size, scan.good_end, scan.bad)
        self._table.flush()
        self._lines, self.replayed = scan.good_lines, scan.records

    def _cut(self, size: int, good_end: int, bad: list[int]) -> None:
        """Cut a torn or unreadable tail off the file, and say so."""
        lines = f"lines {bad[0]}-{bad[-1]}" if len(bad) > 1 else f"line {bad[0]}" if bad else ""
        what = f"{size - good_end} bytes of a torn tail ({lines or 'no whole line'})"
        self.skipped.append(what)
        logger.warning("%s: cut off %s, left by a crash", self.path, what)
        with self.path.open("r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())

    def _line_at(self, offset: int) -> bytes:
        """The whole line that starts at byte ``offset`` of the journal."""
        if self._reader is None:  # closed: read from the file anew
            with self.path.open("rb") as fh:
                fh.seek(offset)
                return fh.readline()
        size = 1024
        while True:
            data = read_at(self._reader, size, offset)
            end = data.find(b"\n")
            if end >= 0:
                return data[:end]
            if len(data) < size:
                return data
            size *= 8

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
            raise write_error(self.path, event, row, f"an earlier record was lost ({self._broken})")
        data = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        try:
            written = self._file.write(data)  # one write of a whole line: whole or absent
            if written != len(data):
                raise OSError(errno.EIO, f"a short write: {written or 0} of {len(data)} bytes")
            if sync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            self._size = self._synced if sync else self._size
            self._broken = exc.strerror or str(exc)
            self._cut_back()
            raise write_error(self.path, event, row, self._broken) from exc
        self._size += len(data)
        self._lines += 1
        if sync:
            self._synced = self._size

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
            ValueError: The event may not follow the row's last one, or ``index`` is no
                row number (a bug: nothing is written).
            JournalWriteError: The line was not written whole (and synced, for the
                events of money): the file ends at its last whole line as before, and
                every later record is refused too.
        """
        return self._record(event, index, fingerprint, data, sync=event in _SYNCED)

    def _record(
        self,
        event: JournalEvent,
        index: int,
        fingerprint: str,
        data: dict[str, Any],
        *,
        sync: bool,
    ) -> RowState:
        if type(index) is not int or not 0 <= index < MAX_ROWS:
            raise ValueError(f"journal: {index!r} is not a row number")
        JOURNAL.check(self._table.event_of(index), event)
        record: dict[str, Any] = {"ev": event.value, "i": index, "fp": fingerprint, **data}
        if event is JournalEvent.SUBMIT:
            record["at"] = self.now().isoformat()
        record = {k: v for k, v in record.items() if v is not None}
        state = self._table.preview(index, record)
        if event in _FINISHED:
            record = whole_line(record, state)  # the line alone tells the row
        start = self._size
        self._write(record, sync=sync)
        self._table.replay([record], (start,), 0)
        self._table.flush()
        self._since += 1
        if self._since >= self.checkpoint_every and self._since >= self._table.whole_rows():
            self._checkpoint()
        return self._table.open.get(index, state)

    async def arecord(
        self, event: JournalEvent, index: int, fingerprint: str, **data: Any
    ) -> RowState:
        """:meth:`record`, for a running batch: the events of money are made durable by
        one fsync shared with the lines other rows wrote meanwhile (group commit).

        Raises:
            ValueError: As :meth:`record`.
            JournalWriteError: As :meth:`record`; the file is cut back to its last
                durable line.
        """
        state = self._record(event, index, fingerprint, data, sync=False)
        if event in _SYNCED:
            await self._durable(self._size, str(event.value), index)
        return state

    async def _durable(self, end: int, event: str, row: int) -> None:
        """Return once the file is durable up to ``end`` bytes. The loop's other tasks run
        first (other rows write their lines), then one fsync covers them all."""
        if self._synced < end:
            await pause()
        if self._synced < end and self._broken is None:
            self._sync_now()
        if self._synced < end:
            raise write_error(self.path, event, row, f"an earlier record was lost ({self._broken})")

    def _sync_now(self) -> None:
        assert self._file is not None, "the journal is closed"
        target = self._size
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._broken = exc.strerror or str(exc)
            self._size = self._synced  # lines past the last durable one are not kept
            self._cut_back()
            return
        self._synced = max(self._synced, target)

    def _checkpoint(self) -> None:
        """Write the index of the journal as it is now; one that fails is said in the
        log (the next open reads more of the journal, nothing else)."""
        assert self._reader is not None
        self._since = 0
        facts = Facts(self.batch_id, self.recorded_key, self._headed, self._size, self._lines)
        try:
            write_index(self.index_path, self._reader, self._table, facts)
        except OSError as exc:
            logger.warning("%s: could not write its index: %s", self.path, exc)
            return
        self._covered = self._size

    def close(self) -> None:
        """Write the index (unless a record was lost), close the file and give up the lock."""
        if self._file is not None:
            if self._broken is None and self._covered != self._size:
                self._checkpoint()
            self._file.close()
            self._file = None
        if self._reader is not None:
            os.close(self._reader)
            self._reader = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
