"""A dependency-free progress display for batches: a live bar on a terminal, lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from asyncclient.batch import BatchProgress

__all__ = ["ProgressDisplay", "format_duration"]


def format_duration(seconds: float | None) -> str:
    """``75.2`` -> ``1:15``; None -> ``?``."""
    if seconds is None:
        return "?"
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressDisplay:
    """Shows :class:`BatchProgress` updates.

    On a terminal one line is redrawn in place (a bar, submitted, completed,
    failed, ETA); elsewhere (a log, CI) a plain line is printed when something
    finished, at most every ``every`` seconds, and always at the end.
    """

    def __init__(self, stream: TextIO | None = None, *, width: int = 24, every: float = 2.0):
        self._out = stream or sys.stderr
        self._tty = bool(getattr(self._out, "isatty", lambda: False)())
        self._width = width
        self._every = every
        self._last_line = 0.0
        self._last_finished = -1

    def line(self, p: BatchProgress) -> str:
        """The text of one update."""
        done = p.finished / p.total if p.total else 1.0
        filled = int(done * self._width)
        bar = "#" * filled + "." * (self._width - filled)
        extra = f" rejected {p.rejected}" if p.rejected else ""
        extra += f" skipped {p.skipped}" if p.skipped else ""
        extra += f" unresolved {p.unresolved}" if p.unresolved else ""
        return (
            f"[{bar}] {p.finished}/{p.total}  submitted {p.submitted}  "
            f"completed {p.completed}  failed {p.failed}{extra}  "
            f"{p.rate:.1f}/min  ETA {format_duration(p.eta)}"
        )

    def __call__(self, p: BatchProgress) -> None:
        text = self.line(p)
        if self._tty:
            self._out.write("\r\x1b[2K" + text)
            if p.finished == p.total:
                self._out.write("\n")
            self._out.flush()
            return
        now = time.monotonic()
        final = p.finished == p.total
        changed = p.finished != self._last_finished
        if changed and (final or now - self._last_line >= self._every):
            self._out.write(text + "\n")
            self._out.flush()
            self._last_line = now
            self._last_finished = p.finished
