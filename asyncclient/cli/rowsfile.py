"""A rows file (CSV or JSON Lines) read as the batch sends, never held whole.

:class:`RowsFile` first reads the file once for its shape (:meth:`RowsFile.scan`): that
every CSV line has the header's number of values, every JSON line is an object, the
text is UTF-8, and how many rows there are. Nothing is kept but the count, so a bad
line stops the command before anything is sent, and a file of a million rows costs no
more memory than a file of ten. Iterating it then reads the rows again, one at a time
(each iteration opens the file anew: the batch's pre-pass and its run both read it).
Every error names the file (and the line).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["SUFFIXES", "RowsFile"]

SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json")


class RowsFile:
    """The rows of a ``.csv`` (header line first) or ``.jsonl`` file.

    Args:
        path: The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        """Rows in the file (after :meth:`scan`)."""
        self._csv = path.suffix.lower() == ".csv"

    def scan(self) -> RowsFile:
        """Check the file's shape and count its rows (nothing is kept).

        Raises:
            OSError: The file cannot be read.
            ValueError: Another kind of file, a line that is not a JSON object, a CSV
                line with more or fewer values than the header, text that is not
                UTF-8, or no row at all; the message names the file and the line.
        """
        if self.path.suffix.lower() not in SUFFIXES:
            raise ValueError(f"{self.path}: rows must be a .csv or .jsonl file")
        count = 0
        for _ in self._read(check=True):
            count += 1
        if not count:
            what = "a header line and no row under it" if self._csv else "no rows in it"
            raise ValueError(f"{self.path}: {what}: nothing to generate")
        self.count = count
        return self

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._read(check=False)

    def _read(self, *, check: bool) -> Iterator[dict[str, Any]]:
        try:
            yield from self._csv_rows(check) if self._csv else self._json_rows()
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{self.path}: not UTF-8 text (byte {exc.start}: {exc.reason}); "
                "save the file as UTF-8"
            ) from None

    def _csv_rows(self, check: bool) -> Iterator[dict[str, Any]]:
        if check:
            yield from self._csv_shape()
            return
        with self.path.open(newline="", encoding="utf-8-sig") as fh:
            yield from csv.DictReader(fh)

    def _csv_shape(self) -> Iterator[dict[str, Any]]:
        """One empty dict a row, once its values are counted: the scan needs no dicts
        (a plain reader's lists are three times faster than ``DictReader`` on a
        million rows, where blank lines are skipped the same way)."""
        with self.path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise ValueError(
                    f"{self.path}: the file is empty: a header line, then a row a line"
                )
            columns = len(header)
            empty: dict[str, Any] = {}
            for row in reader:
                if not row:
                    continue
                if len(row) != columns:
                    raise ValueError(
                        f"{self.path}:{reader.line_num}: {len(row)} values, the header "
                        f"has {columns} columns (quote a value that holds a comma)"
                    )
                yield empty

    def _json_rows(self) -> Iterator[dict[str, Any]]:
        with self.path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{self.path}:{number}: not JSON: {exc}") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{self.path}:{number}: expected a JSON object")
                yield row
