"""Opening a batch journal fast: its checkpoint, ``<journal>.index``, then the lines after it.

:func:`replay_lines` applies a journal's lines from a byte on to a
:class:`~asyncclient.batch.journal_table.RowTable`, many lines to one JSON parse, and
finds a torn or unreadable tail (the journal cuts it off).

The index holds a :class:`~asyncclient.batch.journal_table.RowTable` as it stood when
the journal was ``covered`` bytes long, and the header's facts. Its layout
(little-endian)::

    magic     8 bytes   b"ACJIDX1\\n"
    sizes     5 x u64   covered bytes, covered lines, row slots, project digests, meta bytes
    windows   2 x 32    SHA-256 of the journal's first and of its last 4 KiB up to covered
    meta      JSON      batch id, key id, whether a header was read, open and loose rows
    codes     1 byte a row slot: its last event
    offsets   8 bytes a row slot (i64): where its last line starts in the journal
    digests   8 bytes each (u64, sorted): the projects the journal's lines name
    check     32 bytes  SHA-256 of everything above

:func:`read_index` trusts an index only when every part of it checks: its own digest,
the batch, ``covered`` not past the journal's end, and both windows equal to the
journal's bytes there; anything else is a :class:`StaleIndex`, and the journal (the
truth) is replayed instead. :func:`write_index` writes a new one beside the old
(``<journal>.index.tmp``), syncs it and renames it over the old in one step, so a crash
leaves the old index or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import sys
from array import array
from datetime import datetime
from itertools import accumulate
from pathlib import Path
from typing import Any

from attrs import define, field

from asyncclient._states import JournalEvent
from asyncclient.batch.journal_table import EVENTS, DigestSet, RowState, RowTable

__all__ = [
    "Facts",
    "Scan",
    "StaleIndex",
    "index_path",
    "open_reader",
    "read_at",
    "read_index",
    "replay_lines",
    "write_index",
]

MAGIC = b"ACJIDX1\n"
WINDOW = 4096
_SIZES = struct.Struct("<8s5Q32s32s")
_CHECK = 32
_CHUNK = 4 << 20  # bytes read at a time when replaying
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)  # (O_BINARY: Windows)


class StaleIndex(Exception):
    """The index is missing, damaged, or not of this journal as it is now (why, in words)."""


@define
class Facts:
    """What an index says besides its rows: the header's facts and what it covers."""

    batch: str
    key: str | None
    headed: bool
    covered: int
    """Bytes of the journal the index covers (a whole number of lines)."""
    lines: int
    """Lines in those bytes."""


def index_path(journal: Path) -> Path:
    """Where a journal's index is: ``<journal>.index``, beside the file the path resolves
    to (symlinks followed, a relative path made absolute), so that a symlink finds its
    file's index. A hard link's other name has its own, harmless: an index of other bytes
    than the journal's is not used."""
    resolved = Path(os.path.realpath(journal))
    return resolved.with_name(resolved.name + ".index")


def write_index(path: Path, journal_fd: int, table: RowTable, facts: Facts) -> int:
    """Write the index of ``table`` at ``path`` atomically; its size in bytes.

    ``journal_fd`` reads the journal (for the windows). The table must be flushed.

    Raises:
        OSError: It could not be written (the old index, if any, is left as it was).
    """
    parts = _encode(table, facts, _windows(journal_fd, facts.covered))
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _FLAGS, 0o644)
    try:
        for part in parts:  # views of the table's arrays: nothing is copied whole
            with memoryview(part).cast("B") as whole:
                view = whole
                while view:
                    view = view[os.write(fd, view) :]
                view.release()
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temporary, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        size = 0
        for part in parts:  # a live view would keep the arrays from growing: end each
            size += len(part) if isinstance(part, bytes) else part.nbytes
            if isinstance(part, memoryview):
                part.release()
    return size


def read_index(path: Path, journal_fd: int, batch_id: str, table: RowTable) -> Facts:
    """Load the index at ``path`` into ``table`` (a new one), if it is of this journal.

    Raises:
        StaleIndex: It is missing, damaged, of another batch, or of other bytes than
            the journal's (``table`` is left unchanged then).
    """
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise StaleIndex("there is none") from None
    except OSError as exc:
        raise StaleIndex(f"it cannot be read ({exc.strerror or exc})") from None
    if (
        len(blob) < _SIZES.size + _CHECK
        or not blob.startswith(MAGIC)
        or hashlib.sha256(memoryview(blob)[:-_CHECK]).digest() != blob[-_CHECK:]
    ):
        raise StaleIndex("it is damaged")
    _, covered, lines, slots, digests, meta_size, head, tail = _SIZES.unpack_from(blob)
    at = _SIZES.size
    parts = [meta_size, slots, 8 * slots, 8 * digests]
    if at + sum(parts) + _CHECK != len(blob):
        raise StaleIndex("it is damaged")
    meta = _meta_of(blob[at : at + meta_size])
    if meta.get("batch") != batch_id:
        raise StaleIndex("it is of another batch")
    size = os.fstat(journal_fd).st_size
    if covered > size:
        raise StaleIndex(f"it covers {covered} bytes, and the journal has {size} (it was cut)")
    if _windows(journal_fd, covered) != (head, tail):
        raise StaleIndex("it is of other bytes than the journal's (the journal was replaced)")
    at += meta_size
    codes = bytearray(blob[at : at + slots])
    offsets = _numbers("q", blob[at + slots : at + 9 * slots])
    found = _numbers("Q", blob[at + 9 * slots : at + 9 * slots + 8 * digests])
    _install(table, meta, codes, offsets, found, covered)
    return Facts(batch_id, meta.get("key"), bool(meta.get("headed")), covered, lines)


def _install(
    table: RowTable,
    meta: dict[str, Any],
    codes: bytearray,
    offsets: array[int],
    digests: array[int],
    covered: int,
) -> None:
    """Put what an index holds into ``table``, once it agrees with itself."""
    try:
        open_rows = [_row_of(row) for row in meta["open"]]
        loose = [_row_of(row) for row in meta["loose"]]
    except (KeyError, TypeError, ValueError, IndexError):
        raise StaleIndex("it is damaged (its rows do not read)") from None

    def misplaced(row: RowState) -> bool:  # not where the codes say
        return not 0 <= row.index < len(codes) or EVENTS[codes[row.index]] is not row.event

    wrong = codes.translate(None, bytes(range(len(EVENTS))))  # codes of no event
    if (
        wrong
        or (offsets and not 0 <= min(offsets) <= max(offsets) < covered)
        or codes.count(1) + codes.count(2) != len(open_rows)
        or any(map(misplaced, open_rows))
        or any(map(misplaced, loose))
        or any(r.event not in (JournalEvent.REJECTED, JournalEvent.DONE) for r in loose)
    ):
        raise StaleIndex("it is damaged (its parts disagree)")
    table.codes = codes
    table.offsets = offsets
    table.open = {row.index: row for row in open_rows}
    table.loose = {row.index: row for row in loose}
    table.projects = DigestSet(rows=False, keys=digests)
    table.known = len(codes) - codes.count(0)


def _encode(
    table: RowTable, facts: Facts, windows: tuple[bytes, bytes]
) -> list[bytes | memoryview]:
    """The index's parts in order, the last its SHA-256: views of the table's arrays, not
    copies (a million rows would cost 17 MB more at each checkpoint, three times over)."""
    slots = len(table.codes.rstrip(b"\0"))
    meta = {
        "batch": facts.batch,
        "key": facts.key,
        "headed": facts.headed,
        "open": [_list_of(table.open[i]) for i in sorted(table.open)],
        "loose": [_list_of(table.loose[i]) for i in sorted(table.loose)],
    }
    text = json.dumps(meta, separators=(",", ":"), ensure_ascii=False).encode()
    digests = table.projects.sorted()
    sizes = (MAGIC, facts.covered, facts.lines, slots, len(digests), len(text), *windows)
    parts: list[bytes | memoryview] = [
        _SIZES.pack(*sizes),
        text,
        memoryview(table.codes)[:slots],
        _little(table.offsets, slots),
        _little(digests, len(digests)),
    ]
    check = hashlib.sha256()
    for part in parts:
        check.update(part)
    parts.append(check.digest())
    return parts


def _windows(journal_fd: int, covered: int) -> tuple[bytes, bytes]:
    """Digests of the journal's first and last :data:`WINDOW` bytes up to ``covered``."""
    width = min(covered, WINDOW)
    head = read_at(journal_fd, width, 0)
    tail = read_at(journal_fd, width, covered - width)
    return hashlib.sha256(head).digest(), hashlib.sha256(tail).digest()


def open_reader(path: Path) -> int:
    """A file descriptor that reads the journal at ``path`` (for :func:`read_at`)."""
    return os.open(path, os.O_RDONLY | _FLAGS)


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes of ``fd`` from byte ``offset`` on."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover (Windows: the fd is ours alone)
    return os.read(fd, size)  # pragma: no cover


def _little(numbers: array[int], count: int) -> bytes | memoryview:
    """The first ``count`` numbers as little-endian bytes: a view where the machine is."""
    if sys.byteorder == "big":  # pragma: no cover
        swapped = array(numbers.typecode, numbers[:count])
        swapped.byteswap()
        return swapped.tobytes()
    return memoryview(numbers)[:count].cast("B")


def _numbers(typecode: str, data: bytes) -> array[int]:
    numbers = array(typecode)
    numbers.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        numbers.byteswap()
    return numbers


def _meta_of(data: bytes) -> dict[str, Any]:
    try:
        meta = json.loads(data)
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise StaleIndex("it is damaged")
    return meta


def _list_of(row: RowState) -> list[Any]:
    sent = row.sent_at.isoformat() if row.sent_at else None
    return [
        row.index,
        row.event.value,
        row.fingerprint,
        sent,
        row.project_id,
        row.video_id,
        row.status,
        row.error,
        row.api_rejection,
        row.service_at.isoformat() if row.service_at else None,
    ]


def _row_of(row: list[Any]) -> RowState:
    index, event, fingerprint, sent, project, video, status, error, api = row[:9]
    service = row[9] if len(row) > 9 else None  # an index of an earlier version has none
    return RowState(
        int(index),
        str(fingerprint),
        JournalEvent(event),
        datetime.fromisoformat(sent) if sent else None,
        project,
        video,
        status,
        error,
        bool(api),
        service_at=datetime.fromisoformat(service) if service else None,
    )


# -- the lines after the index --------------------------------------------------------


@define
class Scan:
    """Where replaying a journal's lines stands."""

    table: RowTable
    name: str
    offset: int
    """The byte the next line starts at."""
    number: int
    """Lines before it."""
    good_end: int = field(init=False)
    """The end of the last readable line (or blank one before any unreadable)."""
    good_lines: int = field(init=False)
    size: int = 0
    """The bytes of the file, once read to its end."""
    records: int = 0
    """Lines applied."""
    bad: list[int] = field(factory=list)
    """The numbers of unreadable lines (a tail to cut, if nothing readable follows)."""

    def __attrs_post_init__(self) -> None:
        self.good_end, self.good_lines = self.offset, self.number

    def whole(self, lines: list[bytes], size: int) -> None:
        """Apply lines that each ended with a newline (``size`` bytes in all)."""
        parsed = None if self.bad else _parsed(lines)
        if parsed is None:  # a blank or unreadable line among them: one by one
            for line in lines:
                self._one(line)
            return
        starts = accumulate(map((1).__add__, map(len, lines)), initial=self.offset)
        applied = self.table.replay(parsed, starts, self.number + 1)
        if applied < len(lines):  # line ``applied`` holds no record: one by one from there
            size = sum(map(len, lines[:applied])) + applied
        self.offset += size
        self.number += applied
        self.records += applied
        self.good_end, self.good_lines = self.offset, self.number
        for line in lines[applied:]:
            self._one(line)

    def torn(self, piece: bytes) -> None:
        """Take what followed the last newline: a torn line, or nothing."""
        self.size = self.offset + len(piece)
        if piece.strip():
            self.bad.append(self.number + 1)
        elif not self.bad:
            self.good_end = self.size

    def _one(self, line: bytes) -> None:
        end = self.offset + len(line) + 1
        self.number += 1
        if line.strip():
            record = _record_of(line)
            if record is None:
                self.bad.append(self.number)
            else:
                if self.bad:
                    raise self._damaged()
                self.table.replay([record], (self.offset,), self.number)
                self.records += 1
                self.good_end, self.good_lines = end, self.number
        elif not self.bad:
            self.good_end, self.good_lines = end, self.number
        self.offset = end

    def _damaged(self) -> ValueError:
        return ValueError(
            f"{self.name}: line {self.bad[0]} is not a journal record, yet records "
            "follow it: the file was damaged; it is not used (move it away "
            "and check the service's video list before running the batch)"
        )


def replay_lines(table: RowTable, path: Path, start: int, number: int) -> Scan:
    """Apply the journal's lines from byte ``start`` on (``number`` lines before it) to
    ``table``, up to the first unreadable one; where it stands then.

    Raises:
        ValueError: An unreadable line is followed by readable ones (the file was
            damaged), or a line breaks the journal's state table.
    """
    scan = Scan(table, str(path), start, number)
    carry = b""
    with path.open("rb", buffering=0) as fh:
        fh.seek(start)
        while block := fh.read(_CHUNK):
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut:
                lines = data[:cut].split(b"\n")
                lines.pop()  # what follows the last newline: carried to the next block
                scan.whole(lines, cut)
            carry = data[cut:]
    scan.torn(carry)
    return scan


def _parsed(lines: list[bytes]) -> list[Any] | None:
    """What ``lines`` hold, parsed at once; None unless each line holds one value."""
    try:
        records = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        return None
    if type(records) is not list or len(records) != len(lines):
        return None
    return records


def _record_of(line: bytes) -> dict[str, Any] | None:
    """The record a whole line holds, or None when it is not one."""
    try:
        record = json.loads(line)
    except ValueError:  # also invalid UTF-8
        return None
    return record if isinstance(record, dict) and "ev" in record else None
