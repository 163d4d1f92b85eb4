"""What the commands print: JSON documents, tables, ``key: value`` records, errors.

Results go to stdout (with ``--json``, one JSON document and nothing else); errors,
notes and progress go to stderr.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from asyncclient.cli.terminal import is_terminal, table_lines

__all__ = ["error", "note", "print_json", "print_record", "print_summary", "print_table"]


def error(message: str) -> None:
    """``error: <message>`` on stderr."""
    print(f"error: {message}", file=sys.stderr)


def note(message: str) -> None:
    """A remark on stderr (never mixed with the results on stdout)."""
    print(message, file=sys.stderr, flush=True)


def print_json(data: Any) -> None:
    """``data`` as one indented JSON document on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """An aligned table on stdout: a bold header and cut to the width on a terminal."""
    tty = is_terminal(sys.stdout)
    width = shutil.get_terminal_size().columns if tty else None
    for line in table_lines(headers, rows, tty=tty, width=width):
        print(line)


def print_record(data: dict[str, Any]) -> None:
    """``key: value`` lines; nested values as indented JSON."""
    width = max((len(k) for k in data), default=0)
    for key, value in data.items():
        if isinstance(value, (dict, list)):
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        else:
            text = str(value)
        print(f"{key.ljust(width)}  {text}")


def print_summary(rows: Sequence[tuple[str, Any]]) -> None:
    """A two-column ``| summary | value`` table on stdout, after a blank line."""
    width = max(len(name) for name, _ in rows)
    print()
    print(f"| {'summary':<{width}} | value")
    print(f"|{'-' * (width + 2)}|{'-' * 8}")
    for name, value in rows:
        print(f"| {name:<{width}} | {value}")
