"""A set of strings kept as 64-bit digests, each with a row number: 12 bytes a slot.

A batch of a million rows must not keep a million strings to tell whether a title was
used before (titles are how an interrupted row's video is found again) or whether a
project is already owned by a row: a Python set of them costs 60 to 100 bytes an entry
and more. :class:`DigestSet` keeps a 64-bit BLAKE2b digest of each string and a number
(the row that added it, 32 bits) in two flat arrays, an open-addressing table kept at
most half full: 24 to 48 bytes an entry. Two different strings share a digest with a
probability of about n²/2⁶⁵ (one in 3·10⁷ for a million entries). Row numbers are below
2³¹ (a journal takes fewer rows still).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator

__all__ = ["DigestSet", "digest_of"]

_EMPTY = 0


def digest_of(text: str) -> int:
    """The string's 64-bit digest (never 0: 0 marks an empty slot)."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little") or 1


class DigestSet:
    """Strings, as digests, each with the row that added it first.

    Args:
        items: Strings to start with (row -1).
    """

    __slots__ = ("_keys", "_mask", "_rows", "_size")

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._size = 0
        self._mask = 15
        self._keys = array("Q", bytes(8 * 16))
        self._rows = array("i", bytes(4 * 16))
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return self._size

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and self.row_of(item) is not None

    def __iter__(self) -> Iterator[str]:
        """Digests keep no strings: nothing to iterate (``in`` and ``len`` work)."""
        return iter(())

    def _slot(self, key: int) -> int:
        """The slot that holds ``key``, or the empty one where it would go."""
        keys, mask = self._keys, self._mask
        slot = key & mask
        while keys[slot] != key and keys[slot] != _EMPTY:
            slot = (slot + 1) & mask
        return slot

    def row_of(self, item: str) -> int | None:
        """The row that added ``item`` first, or None when it was never added."""
        slot = self._slot(digest_of(item))
        return None if self._keys[slot] == _EMPTY else self._rows[slot]

    def add(self, item: str, row: int = -1) -> int | None:
        """Add ``item`` for ``row``; returns the row that added it before, or None when
        it is new."""
        key = digest_of(item)
        slot = self._slot(key)
        if self._keys[slot] != _EMPTY:
            return self._rows[slot]
        self._keys[slot] = key
        self._rows[slot] = row
        self._size += 1
        if 2 * self._size > self._mask:
            self._grow()
        return None

    def _grow(self) -> None:
        old_keys, old_rows = self._keys, self._rows
        slots = 2 * (self._mask + 1)
        self._mask = mask = slots - 1
        self._keys = keys = array("Q", bytes(8 * slots))
        self._rows = rows = array("i", bytes(4 * slots))
        for key, row in zip(old_keys, old_rows, strict=True):
            if key != _EMPTY:
                slot = key & mask
                while keys[slot] != _EMPTY:
                    slot = (slot + 1) & mask
                keys[slot] = key
                rows[slot] = row
