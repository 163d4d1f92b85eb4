"""A rows file (CSV or JSON Lines) read as the batch sends, never held whole.

:class:`RowsFile` first reads the file once for its shape (:meth:`RowsFile.scan`): that
every CSV line has the header's number of values, every JSON line is an object, the
text is UTF-8, and how many rows there are. Nothing is kept but the count, so a bad
line stops the command before anything is sent, and a file of a million rows costs no
more memory than a file of ten. Iterating it then reads the rows again, one at a time
(each iteration opens the file anew: the batch's pre-pass and its run both read it).
Every error names the file (and the line); a row is named by the line of the file it
starts on (:meth:`RowsFile.line_of`), and a CSV file's header is checked against the
template's variables before anything is sent (:func:`header_problem`).
"""

from __future__ import annotations

import bisect
import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["SUFFIXES", "RowsFile", "header_problem"]

SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json")
_ROW = re.compile(r"\brow (\d+)\b")


class RowsFile:
    """The rows of a ``.csv`` (header line first) or ``.jsonl`` file.

    Args:
        path: The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        """Rows in the file (after :meth:`scan`)."""
        self.header: list[str] | None = None
        """A CSV file's column names (after :meth:`scan`); None for JSON Lines."""
        self._csv = path.suffix.lower() == ".csv"
        self._first = 2 if self._csv else 1  # the line of row 0 when no line is blank
        # Where rows stop starting on the line after the last one's (blank lines, values
        # holding newlines): (the first row, how many lines later than so it starts).
        # Empty for most files: a million rows need no list of their lines.
        self._rows_shifted: list[int] = []
        self._shifts: list[int] = []

    def line_of(self, index: int) -> int:
        """The line of the file (1 for the first) where row ``index`` (0 for the first)
        starts, once :meth:`scan` read the file."""
        at = bisect.bisect_right(self._rows_shifted, index) - 1
        return index + self._first + (self._shifts[at] if at >= 0 else 0)

    def named(self, text: str) -> str:
        """``text`` (a row's problem) with each ``row N`` it names turned into the line
        of the file that row starts on."""
        return _ROW.sub(lambda m: f"line {self.line_of(int(m.group(1)))}", text)

    def _started(self, index: int, line: int) -> None:
        """Note that row ``index`` starts on ``line`` (scanning)."""
        if line != self.line_of(index):
            self._rows_shifted.append(index)
            self._shifts.append(line - index - self._first)

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
        self._rows_shifted, self._shifts = [], []
        count = 0
        for line in self._read(check=True):
            self._started(count, int(line))
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

    def _read(self, *, check: bool) -> Iterator[Any]:
        try:
            yield from self._csv_rows(check) if self._csv else self._json_rows(check)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{self.path}: not UTF-8 text (byte {exc.start}: {exc.reason}); "
                "save the file as UTF-8"
            ) from None

    def _csv_rows(self, check: bool) -> Iterator[Any]:
        if check:
            yield from self._csv_shape()
            return
        with self.path.open(newline="", encoding="utf-8-sig") as fh:
            yield from csv.DictReader(fh)

    def _csv_shape(self) -> Iterator[Any]:
        """The line each row starts on, once its values are counted: the scan needs no dicts
        (a plain reader's lists are three times faster than ``DictReader`` on a
        million rows, where blank lines are skipped the same way)."""
        with self.path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise ValueError(
                    f"{self.path}: the file is empty: a header line, then a row a line"
                )
            self.header = header
            columns = len(header)
            before = reader.line_num  # the lines read before the next row
            for row in reader:
                if not row:
                    before = reader.line_num
                    continue
                if len(row) != columns:
                    raise ValueError(
                        f"{self.path}:{reader.line_num}: {len(row)} values, the header "
                        f"has {columns} columns (quote a value that holds a comma)"
                    )
                yield before + 1  # (the line the row starts on, as the scan's "row")
                before = reader.line_num

    def _json_rows(self, check: bool = False) -> Iterator[Any]:
        """Each row (scanning: the line it is on)."""
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
                yield number if check else row


def header_problem(
    rows: RowsFile, variables: list[str], title_column: str, template_id: str
) -> str | None:
    """What a CSV file's header lacks, or has too many, for a template's rows: one
    message for the whole file (None: the header fits, or the file has no header).

    Every variable of the template needs a column (an empty value is one), the title
    needs its column, and every other column must be a variable: otherwise every row
    would be rejected, each for the same reason.

    Args:
        rows: The file, scanned.
        variables: The template's variables (``TemplateDetail.variable_names()``).
        title_column: The column of the videos' titles.
        template_id: The template, for the message.
    """
    if rows.header is None:
        return None
    header = rows.header
    missing = [name for name in variables if name not in header]
    unknown = [name for name in header if name not in variables and name != title_column]
    problems = []
    if title_column not in header:
        problems.append(
            f"no '{title_column}' column for the videos' titles (another column: "
            "--title-column NAME)"
        )
    if missing:
        problems.append(f"no column for the template's variables {', '.join(missing)}")
    if unknown:
        problems.append(f"columns that are not variables of the template: {', '.join(unknown)}")
    if not problems:
        return None
    known = ", ".join(variables) or "none"
    return (
        f"{rows.path}:1: the header does not fit template {template_id}: "
        f"{'; '.join(problems)} (its variables: {known}; the header: {', '.join(header)}). "
        "Nothing was sent."
    )
