"""A set of strings kept as 64-bit digests, each with a row number: 12 bytes an entry.

A batch of a million rows must not keep a million strings to tell whether a title was
used before (titles are how an interrupted row's video is found again), nor whether a
project is already owned by a row: a Python set of them costs 60 to 100 bytes an entry
and more. :class:`DigestSet` keeps a 64-bit BLAKE2b digest of each string in one sorted
array (8 bytes), the row that added it in a parallel one (4 bytes; none for a set
without rows, such as a journal's owned projects), and the ones added since the last
merge in a small dict (:data:`RECENT` at most, under 1 MB). A merge moves the sorted
array's runs up in place, a slice at a time, to make room for the recent ones: no
second array, no list of every digest, so memory is the arrays and little else at any
moment. Two different strings share a digest with a probability of about n²/2⁶⁵ (one in
3·10⁷ for a million entries). Row numbers are below 2³¹.

A resumed batch notes the titles of the rows an earlier run finished, half a million of
them at once: :meth:`DigestSet.note` appends them unchecked (an earlier run checked
them) and the first question asked of the set sorts them in one go, which costs a
third of adding them one by one. A set that lives in one process only (titles) may use
Python's own string hash (:func:`local_digest`, SipHash, 64 bits) instead of BLAKE2b;
what is written to a file (a journal's projects) keeps :func:`digest_of`.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

__all__ = ["RECENT", "DigestSet", "digest_of", "local_digest"]

RECENT = 1 << 13
"""Entries a :class:`DigestSet` holds outside its sorted arrays, at most."""


def digest_of(text: str) -> int:
    """The string's 64-bit digest (BLAKE2b)."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little")


_MASK = (1 << 64) - 1


def _hashed(text: str) -> int:
    return hash(text) & _MASK


local_digest: Callable[[str], int] = _hashed if sys.hash_info.width >= 64 else digest_of
"""A 64-bit digest good in this process only: the string's own hash (cached on it),
BLAKE2b where hashes are narrower than 64 bits."""


class DigestSet:
    """Strings, as digests, each with the row that added it first.

    Args:
        items: Strings to start with (row -1).
        rows: Keep each entry's row (``add`` and ``row_of`` tell it); without, -1.
        keys: Sorted digests to start with (a journal's index), each once.
        digest: How a string becomes its digest (:func:`local_digest` for a set that
            is never written anywhere).
    """

    __slots__ = ("_digest", "_keys", "_noted", "_noted_rows", "_recent", "_rows")

    def __init__(
        self,
        items: Iterable[str] = (),
        *,
        rows: bool = True,
        keys: array[int] | None = None,
        digest: Callable[[str], int] = digest_of,
    ) -> None:
        self._digest = digest
        self._keys: array[int] = keys if keys is not None else array("Q")
        self._rows: array[int] | None = array("i", [-1]) * len(self._keys) if rows else None
        self._recent: dict[int, int] = {}
        self._noted: array[int] = array("Q")
        self._noted_rows: array[int] = array("i")
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        if self._noted:
            self._settle()
        return len(self._keys) + len(self._recent)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            item = self._digest(item)
        return isinstance(item, int) and self.row_of_key(item) is not None

    def __iter__(self) -> Iterator[str]:
        """Digests keep no strings: nothing to iterate (``in`` and ``len`` work)."""
        return iter(())

    def row_of(self, item: str) -> int | None:
        """The row that added ``item`` first, or None when it was never added."""
        return self.row_of_key(self._digest(item))

    def row_of_key(self, key: int) -> int | None:
        """The row that added the digest ``key`` first, or None."""
        if self._noted:
            self._settle()
        row = self._recent.get(key)
        if row is not None:
            return row
        keys = self._keys
        at = bisect_left(keys, key)
        if at == len(keys) or keys[at] != key:
            return None
        return -1 if self._rows is None else self._rows[at]

    def add(self, item: str, row: int = -1) -> int | None:
        """Add ``item`` for ``row``; the row that added it before, or None when new."""
        return self.add_key(self._digest(item), row)

    def note(self, item: str, row: int = -1) -> None:
        """Add ``item`` for ``row`` without asking whether it is new (an earlier run
        checked it): many notes cost one sort, at the next question asked of the set.
        Of equal ones, the set keeps the first added (as :meth:`add` does)."""
        self._noted.append(self._digest(item))
        self._noted_rows.append(row)

    def add_key(self, key: int, row: int = -1) -> int | None:
        """Add the digest ``key`` for ``row``; the row that added it before, or None."""
        before = self.row_of_key(key)
        if before is not None:
            return before
        self._recent[key] = row
        if len(self._recent) >= RECENT:
            self._merge()
        return None

    def update_keys(self, keys: Iterable[int]) -> None:
        """Add many digests (row -1)."""
        for key in keys:
            self.add_key(key)

    def sorted(self) -> array[int]:
        """Every digest, sorted (the array itself, not a copy)."""
        if self._noted:
            self._settle()
        if self._recent:
            self._merge()
        return self._keys

    def _settle(self) -> None:
        """Add the noted entries: one by one when they are few next to the sorted ones,
        else all sorted again in one go (:meth:`_resort`)."""
        noted, noted_rows = self._noted, self._noted_rows
        self._noted, self._noted_rows = array("Q"), array("i")
        if len(noted) < max(RECENT, len(self._keys) // 4):
            for key, row in zip(noted, noted_rows, strict=True):
                self.add_key(key, row)
            return
        if self._recent:
            self._merge()
        self._resort(noted, noted_rows)

    def _resort(self, noted: array[int], noted_rows: array[int]) -> None:
        """Sort the sorted entries and the noted ones together: each digest packed
        above its place (so that of equal digests the one added first sorts first),
        one sort, then the first of each run of equals kept."""
        keys, old = self._keys, len(self._keys)
        packed = [key << 32 | at for at, key in enumerate(keys)]
        packed.extend([key << 32 | at for at, key in enumerate(noted, old)])
        del keys
        self._keys = array("Q")  # (the old array is freed before the new one grows)
        packed.sort()
        merged = array("Q", [p >> 32 for p in packed])
        if self._rows is not None:
            places = array("i", [p & 0xFFFF_FFFF for p in packed])
            every_row = self._rows + noted_rows
            del packed
            rows = array("i", map(every_row.__getitem__, places))
        else:
            del packed
            rows = None
        repeated = [j for j in range(1, len(merged)) if merged[j] == merged[j - 1]]
        for j in reversed(repeated):  # rare: a title noted twice
            del merged[j]
            if rows is not None:
                del rows[j]
        self._keys, self._rows = merged, rows

    def _merge(self) -> None:
        """Merge the recent entries into the sorted arrays, in place: from the largest
        new digest down, the run of old ones above it moves up by the count of new ones
        at or below it, one slice assignment each."""
        added = sorted(self._recent.items())
        self._recent = {}
        keys, rows = self._keys, self._rows
        end = len(keys)  # the old entries not moved yet are keys[:end]
        keys.frombytes(bytes(8 * len(added)))
        if rows is not None:
            rows.frombytes(bytes(4 * len(added)))
        for j in range(len(added) - 1, -1, -1):
            key, row = added[j]
            at = bisect_left(keys, key, 0, end)
            if at < end:
                keys[at + j + 1 : end + j + 1] = keys[at:end]
                if rows is not None:
                    rows[at + j + 1 : end + j + 1] = rows[at:end]
            keys[at + j] = key
            if rows is not None:
                rows[at + j] = row
            end = at
