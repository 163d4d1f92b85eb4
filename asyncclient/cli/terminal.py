"""Terminal output without dependencies: a live status line, a bar, an aligned table.

Everything here is told whether its stream is a terminal (:func:`is_terminal`) and
what time it is (the caller's clock): on a terminal a status line is redrawn in
place with ANSI codes; anywhere else (a pipe, a log file, CI) plain lines are
written, a few at most, and no escape code ever.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = [
    "LiveLine",
    "bar",
    "format_bytes",
    "format_duration",
    "is_terminal",
    "table_lines",
    "terminal_columns",
]

CLEAR_LINE = "\r\x1b[2K"
BOLD, RESET = "\x1b[1m", "\x1b[0m"


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an interactive terminal that understands ANSI codes.

    Args:
        stream: A file object (``sys.stderr``); anything without ``isatty`` is not one.

    Returns:
        True for a tty, unless ``TERM`` is ``dumb``.
    """
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed file
        return False
    return tty and os.environ.get("TERM") != "dumb"


MIN_COLUMNS = 20
"""The narrowest width a line is fitted to (a narrower terminal wraps it)."""


def terminal_columns(stream: Any) -> int:
    """The width of the terminal ``stream`` writes to.

    Args:
        stream: A file object (``sys.stderr``).

    Returns:
        ``COLUMNS`` if it is a positive number, else the terminal's width, else 80;
        at least :data:`MIN_COLUMNS`.
    """
    env = os.environ.get("COLUMNS", "")
    columns = int(env) if env.isdigit() else 0
    if not columns:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a terminal, closed, no fileno
            columns = 0
    return max(MIN_COLUMNS, columns or 80)


def format_duration(seconds: float | None) -> str:
    """``75.2`` -> ``1:15``, ``3700`` -> ``1:01:40``; None -> ``?``."""
    if seconds is None:
        return "?"
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_bytes(count: int) -> str:
    """``2130`` -> ``2.1 kB``, ``5_000_000`` -> ``5.0 MB`` (powers of 1000)."""
    if count < 1000:
        return f"{count} B"
    value = float(count)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


def bar(fraction: float, width: int = 24) -> str:
    """``[#########...............]`` for ``fraction`` (clamped to 0..1)."""
    filled = int(max(0.0, min(1.0, fraction)) * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


class LiveLine:
    """One status line: redrawn in place on a terminal, plain lines elsewhere.

    Off a terminal a line is written when ``key`` changed and ``every`` seconds
    passed since the last one, and always for the final update, so a log gets a
    few lines, never one per chunk.

    Args:
        stream: Where to write (stderr, usually).
        tty: Whether it is a terminal (default: asked of ``stream``, :func:`is_terminal`).
        every: Least seconds between two plain lines.
    """

    def __init__(self, stream: TextIO, *, tty: bool | None = None, every: float = 2.0) -> None:
        self.stream = stream
        self.tty = is_terminal(stream) if tty is None else tty
        self.every = every
        self._last_at: float | None = None
        self._last_key: object = object()
        self._drawn = False

    def update(self, text: str, *, now: float, key: object = None, final: bool = False) -> None:
        """Show ``text``; ``final`` ends the line (a terminal keeps it on screen).

        Args:
            text: The status, one line.
            now: The caller's clock, in seconds (decides when a plain line is due).
            key: What must change for a new plain line (default: the text).
            final: The last update: always written, then the line is ended.
        """
        key = text if key is None else key
        if self.tty:
            self.draw(text, final=final)
            return
        due = self._last_at is None or now - self._last_at >= self.every
        if final or (key != self._last_key and due):
            self.draw(text)
            self._last_at, self._last_key = now, key

    def draw(self, text: str, *, final: bool = False) -> None:
        """Show ``text`` now, whatever the pacing (the caller paces): redrawn in place on
        a terminal (``final`` ends the line there), else one plain line.

        Args:
            text: The status, one line.
            final: The last one: a terminal keeps it on screen and moves to the next line.
        """
        if self.tty:
            limit = self.columns() - 1  # a full row would wrap before ``\r`` (some terminals)
            if len(text) > limit:
                text = text[: limit - 3] + "..."
            self.stream.write(CLEAR_LINE + text + ("\n" if final else ""))
            self._drawn = not final
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def columns(self) -> int:
        """The terminal's width, asked at each redraw (it may have been resized):
        ``COLUMNS`` if set (as :func:`shutil.get_terminal_size` reads it), else the
        stream's terminal; 80 when neither says, never less than :data:`MIN_COLUMNS`."""
        return terminal_columns(self.stream)

    def close(self) -> None:
        """End a line left drawn on a terminal (after an interruption, say)."""
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def table_lines(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    tty: bool = False,
    width: int | None = None,
) -> list[str]:
    """An aligned table, header first: plain text unless ``tty`` (then a bold header).

    Args:
        headers: The column names.
        rows: The cells (None shows as empty).
        tty: Bold the header (ANSI) for a terminal.
        width: On a terminal, its width: the last column is cut to fit, ending ``...``.

    Returns:
        The lines, without newlines.
    """
    cells = [list(headers)] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    if width is not None and width > 20:
        lines = [line if len(line) <= width else line[: width - 3] + "..." for line in lines]
    if tty and lines:
        lines[0] = BOLD + lines[0] + RESET
    return lines
