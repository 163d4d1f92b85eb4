"""Progress of batches and downloads on the command line: a live bar on a terminal,
a few plain lines elsewhere (no ANSI codes), see :mod:`asyncclient.cli.terminal`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient._states import RowOutcome
from asyncclient.batch.runner import BatchProgress
from asyncclient.cli.terminal import LiveLine, bar, format_bytes, format_duration

__all__ = ["DownloadProgress", "Earlier", "FilesProgress", "ProgressDisplay", "format_duration"]


@frozen
class Earlier:
    """What earlier runs of a batch did, read from its journal before this run."""

    finished: int = 0
    """Rows whose video finished (completed or failed) in an earlier run."""
    sent: int = 0
    """Rows an earlier run submitted (finished, accepted, or cut off before the answer)."""


class ProgressDisplay:
    """Shows :class:`BatchProgress` updates (``on_progress`` of a batch).

    The figures are this run's: rows an earlier run finished (``earlier``, from the
    journal) are counted as such, not as this run's submissions, and the rate is of
    the videos that finished during this run (none: no rate, rather than a bogus one).

    Args:
        stream: Where to write (default: stderr).
        width: Characters of the bar.
        every: Least seconds between two plain lines (off a terminal).
        earlier: What the journal says earlier runs did.
        clock: Seconds, for pacing plain lines (the system clock's monotonic seconds).
        tty: Whether ``stream`` is a terminal (default: asked of the stream).
        intro: A line written before the first update (the batch reports first once
            its journal was opened and accepted).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        width: int = 24,
        every: float = 2.0,
        earlier: Earlier | None = None,
        clock: Callable[[], float] = SYSTEM_CLOCK.monotonic,
        tty: bool | None = None,
        intro: str | None = None,
    ) -> None:
        out = stream or sys.stderr
        self._live = LiveLine(out, tty=tty, every=every)
        self._width = width
        self._earlier = earlier or Earlier()
        self._clock = clock
        self._ended = False
        self._intro = intro

    def line(self, p: BatchProgress) -> str:
        """The text of one update."""
        done = p.finished / p.total if p.total else 1.0
        parts = [
            bar(done, self._width),
            f"{p.finished}/{p.total}",
            f"completed {p.completed}",
            f"failed {p.failed}",
        ]
        for outcome in (RowOutcome.REJECTED, RowOutcome.SKIPPED, RowOutcome.UNRESOLVED):
            if count := getattr(p, outcome.value):
                parts.append(f"{outcome} {count}")
        parts.append(f"submitted {p.submitted}")
        if self._earlier.finished:
            parts.append(f"({self._earlier.finished} done before)")
        new = max(0, p.completed + p.failed - self._earlier.finished)
        rate = new / p.elapsed * 60 if new and p.elapsed > 0 else None
        if rate is not None:
            parts.append(f"{rate:.1f}/min")
        if p.finished < p.total:
            left = p.total - p.finished
            parts.append(f"ETA {format_duration(left / rate * 60 if rate else None)}")
        return "  ".join(parts)

    def resume(self, earlier: Earlier, intro: str | None = None) -> None:
        """What the journal says earlier runs did, learnt once the batch read it (before
        its first update), and the line to write before the first update."""
        self._earlier = earlier
        self._intro = intro

    def __call__(self, p: BatchProgress) -> None:
        final = p.finished >= p.total
        if self._ended and final:
            return
        if self._intro is not None:
            self._live.stream.write(self._intro + "\n")
            self._intro = None
        self._ended = final
        self._live.update(self.line(p), now=self._clock(), key=p.finished, final=final)

    def close(self) -> None:
        """End the line left on a terminal, if the batch did not finish (Ctrl-C)."""
        self._live.close()


class DownloadProgress:
    """``progress(done, total)`` of one download: bytes, and a bar when the size is known.

    Args:
        label: What is downloaded (the video id).
        stream: Where to write (default: stderr).
        clock: Seconds, for pacing plain lines.
        tty: Whether ``stream`` is a terminal (default: asked of the stream).
    """

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = SYSTEM_CLOCK.monotonic,
        tty: bool | None = None,
    ) -> None:
        out = stream or sys.stderr
        self._live = LiveLine(out, tty=tty)
        self._label = label
        self._clock = clock
        self._done = 0
        self._total: int | None = None
        self._ended = False

    def _text(self) -> str:
        if self._total:
            fraction = self._done / self._total
            return (
                f"downloading {self._label}  {bar(fraction)} {fraction:.0%}  "
                f"{format_bytes(self._done)} of {format_bytes(self._total)}"
            )
        return f"downloading {self._label}  {format_bytes(self._done)}"

    def __call__(self, done: int, total: int | None) -> None:
        self._done, self._total = done, total
        final = total is not None and done >= total
        if not self._ended:
            self._live.update(self._text(), now=self._clock(), key=done, final=final)
            self._ended = final

    def finish(self) -> None:
        """End the line: the last figures if the size was unknown, else nothing more."""
        if not self._ended and self._done:
            self._live.update(self._text(), now=self._clock(), final=True)
            self._ended = True
        self._live.close()


class FilesProgress:
    """Progress of many downloads: files done of all, and the bytes written.

    Args:
        total: Files to download.
        stream: Where to write (default: stderr).
        clock: Seconds, for pacing plain lines.
        tty: Whether ``stream`` is a terminal (default: asked of the stream).
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = SYSTEM_CLOCK.monotonic,
        tty: bool | None = None,
    ) -> None:
        out = stream or sys.stderr
        self._live = LiveLine(out, tty=tty)
        self.total = total
        self.files = 0
        self.bytes = 0
        self._clock = clock

    def file_done(self, size: int) -> None:
        """Count one more file of ``size`` bytes (downloaded, or already there)."""
        self.files += 1
        self.bytes += size
        fraction = self.files / self.total if self.total else 1.0
        text = (
            f"downloading {bar(fraction)} {self.files}/{self.total} videos  "
            f"{format_bytes(self.bytes)}"
        )
        final = self.files >= self.total
        self._live.update(text, now=self._clock(), key=self.files, final=final)

    def close(self) -> None:
        """End the line left on a terminal, if not every file was counted."""
        self._live.close()
