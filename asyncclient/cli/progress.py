"""Progress of batches and downloads on the command line: a live bar on a terminal,
plain lines elsewhere (no ANSI codes), see :mod:`asyncclient.cli.terminal`.

A batch's display is paced by a timer on its clock as well as by the batch's reports:
the figures it shows are the last report's, its elapsed time (and so the rate and the
ETA) moves on with the clock. Off a terminal (a log) a line is written at most
:data:`EVERY` seconds after the figures changed (none while nothing changes, but one
every :data:`HEARTBEAT` seconds saying the batch waits); a terminal's bar is redrawn
at most every :data:`REDRAW` seconds, and every :data:`TICK` seconds while nothing
changes. The last figures are always written: at the batch's last report, or when the
display is closed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO, cast

from attrs import frozen

from asyncclient._clock import SYSTEM_CLOCK, Cancellable, Clock, timers_of
from asyncclient._states import RowOutcome
from asyncclient.batch.rows import BatchProgress
from asyncclient.cli.progress_line import Part, fitted, joined
from asyncclient.cli.terminal import LiveLine, bar, format_bytes, format_duration

__all__ = [
    "EVERY",
    "HEARTBEAT",
    "REDRAW",
    "TICK",
    "DownloadProgress",
    "Earlier",
    "FilesProgress",
    "ProgressDisplay",
    "format_duration",
]

EVERY = 2.0
"""Seconds: off a terminal, a line at most this long after the figures changed."""
HEARTBEAT = 60.0
"""Seconds: off a terminal, a line at least this often while a batch runs (it waits)."""
REDRAW = 0.25
"""Seconds: least time between two redraws of a terminal's bar."""
TICK = 1.0
"""Seconds: a terminal's bar is redrawn this often while nothing changes (its clock)."""


@frozen
class Earlier:
    """What earlier runs of a batch did, read from its journal before this run."""

    finished: int = 0
    """Rows whose video finished (completed or failed) in an earlier run."""
    sent: int = 0
    """Rows an earlier run submitted (finished, accepted, or cut off before the answer)."""


_SHOWN_IF_ANY = (
    RowOutcome.REJECTED.value,
    RowOutcome.SKIPPED.value,
    RowOutcome.UNRESOLVED.value,
    "not_sent",  # (a count a newer BatchProgress has)
)
"""The outcomes a line names only when some row has them."""


def _counts(p: BatchProgress) -> tuple[object, ...]:
    """What must change for a new plain line (every count; not the time)."""
    return (
        p.total,
        p.submitted,
        p.completed,
        p.failed,
        p.rejected,
        p.skipped,
        p.unresolved,
        p.resumed,
        p.done_before,
        getattr(p, "not_sent", 0),
    )


def _processing(p: BatchProgress) -> int:
    """Rows accepted by the service (by this run or an earlier one) whose videos are
    being made; the other rows without an outcome are pending (their turn to be sent,
    or the service's answer to their submission: a request in flight)."""
    accepted = p.submitted + p.resumed - p.completed - p.failed
    return min(max(0, p.total - p.finished), max(0, accepted))


class _Alarm:
    """One callback, due at one time at a time, on a clock's timers.

    Without a clock (a bare function of seconds) or outside a running loop it never
    rings: :meth:`at` says so, and the reports alone pace the display.
    """

    def __init__(self, clock: Clock | None, ring: Callable[[], None]) -> None:
        self._clock = clock
        self._ring = ring
        self._handle: Cancellable | None = None
        self._due: float | None = None

    def at(self, when: float) -> bool:
        """Ring at ``when`` (only then: an earlier setting is called off); False when
        it cannot ring at all."""
        if self._clock is None:
            return False
        if self._handle is not None and self._due == when:
            return True
        self.cancel()
        try:
            self._handle = timers_of(self._clock).call_at(when, self._rang)
        except RuntimeError:  # no running loop
            return False
        self._due = when
        return True

    def _rang(self) -> None:
        self._handle = self._due = None
        self._ring()

    def cancel(self) -> None:
        """Call off the ring set, if any."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self._due = None


class ProgressDisplay:
    """Shows :class:`BatchProgress` updates (``on_progress`` of a batch).

    The figures are this run's: rows an earlier run finished (``earlier``, from the
    journal) are counted as such, not as this run's submissions, and the rate is of
    the videos that finished during this run (none: no rate, rather than a bogus one).

    From its first update to its last (every row finished) or :meth:`close`, the
    display also runs a timer on ``clock`` (see the module's docstring), so a log gets
    a line within ``every`` seconds of a change even when no update follows.

    Args:
        stream: Where to write (default: stderr).
        width: Characters of the bar.
        every: Off a terminal, the most seconds a change waits for its line, and the
            least between two lines.
        earlier: What the journal says earlier runs did.
        clock: The :class:`~asyncclient._clock.Clock` that paces the lines (its timers
            ring in the running loop). A bare function of seconds is taken too: then
            only updates write (no timer), and a terminal redraws each.
        tty: Whether ``stream`` is a terminal (default: asked of the stream).
        intro: A line written before the first update (the batch reports first once
            its journal was opened and accepted).
        heartbeat: Off a terminal, the most seconds without a line while the batch
            runs; the figures then say how long nothing changed.
        redraw: On a terminal, the least seconds between two redraws.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        width: int = 24,
        every: float = EVERY,
        earlier: Earlier | None = None,
        clock: Clock | Callable[[], float] = SYSTEM_CLOCK,
        tty: bool | None = None,
        intro: str | None = None,
        heartbeat: float = HEARTBEAT,
        redraw: float = REDRAW,
    ) -> None:
        out = stream or sys.stderr
        self._live = LiveLine(out, tty=tty, every=every)
        self._width = width
        self._earlier = earlier or Earlier()
        self._intro = intro
        timed: Clock | None = None
        if callable(getattr(clock, "monotonic", None)):
            timed = cast(Clock, clock)
            self._now = timed.monotonic
        else:
            self._now = cast(Callable[[], float], clock)
        self._alarm = _Alarm(timed, self._ring)
        # (least seconds between two lines after a change, most while nothing changes)
        self._gaps = (redraw, TICK) if self._live.tty else (every, heartbeat)
        self._heartbeat = heartbeat
        self._latest: BatchProgress | None = None
        self._latest_at = 0.0
        self._changed_at = 0.0
        self._shown: tuple[object, ...] | None = None
        self._shown_at: float | None = None
        self._ended = False

    def line(
        self,
        p: BatchProgress,
        *,
        elapsed: float | None = None,
        idle: float | None = None,
        columns: int | None = None,
    ) -> str:
        """The text of one update.

        Args:
            p: The figures.
            elapsed: Seconds since the batch started (default: ``p.elapsed``).
            idle: Seconds since the figures last changed, to say the batch waits.
            columns: A terminal's width: the line is made to fit in one row less a
                character (the least useful figures go, the bar narrows: see
                :mod:`~asyncclient.cli.progress_line`); None (a log): every figure.
        """
        seconds = p.elapsed if elapsed is None else elapsed
        parts = self._parts(p, seconds, idle)
        if columns is None:
            return joined(parts, self._width)
        return fitted(parts, self._width, max(1, columns - 1))

    def _parts(self, p: BatchProgress, seconds: float, idle: float | None) -> list[Part]:
        """The figures of one update, each of a kind ranked in ``progress_line.RANKS``."""
        parts = [
            Part("bar", "", done=p.finished / p.total if p.total else 1.0),
            Part("finished", f"{p.finished}/{p.total}"),
            Part("completed", f"completed {p.completed}"),
            Part("failed" if p.failed else "failed 0", f"failed {p.failed}"),
        ]
        for outcome in _SHOWN_IF_ANY:
            if count := getattr(p, outcome, 0):
                parts.append(Part("outcome", f"{outcome.replace('_', ' ')} {count}"))
        if p.finished < p.total:
            making = _processing(p)
            parts.append(Part("processing", f"processing {making}"))
            if pending := p.total - p.finished - making:
                parts.append(Part("pending", f"pending {pending}"))
        parts.append(Part("elapsed", f"elapsed {format_duration(seconds)}"))
        parts.append(Part("submitted", f"submitted {p.submitted}"))
        if self._earlier.finished:
            parts.append(Part("before", f"({self._earlier.finished} done before)"))
        before = max(self._earlier.finished, p.done_before)
        new = max(0, p.completed + p.failed - before)
        rate = new / seconds * 60 if new and seconds > 0 else None
        if rate is not None:
            parts.append(Part("rate", f"{rate:.1f}/min"))
            if p.finished < p.total:
                eta = format_duration((p.total - p.finished) / rate * 60)
                parts.append(Part("eta", f"ETA {eta}"))
        if idle is not None:
            parts.append(Part("waiting", f"waiting: no change for {format_duration(idle)}"))
        return parts

    def resume(self, earlier: Earlier, intro: str | None = None) -> None:
        """What the journal says earlier runs did, learnt once the batch read it (before
        its first update), and the line to write before the first update."""
        self._earlier = earlier
        self._intro = intro

    def __call__(self, p: BatchProgress) -> None:
        if self._ended:
            return
        now = self._now()
        if self._intro is not None:
            self._live.stream.write(self._intro + "\n")
            self._intro = None
        if self._latest is None or _counts(p) != _counts(self._latest):
            self._changed_at = now
        self._latest, self._latest_at = p, now
        if p.finished >= p.total:
            self._end(now)
        else:
            self._pace(now)

    def close(self) -> None:
        """Write the last figures, if the batch did not finish (Ctrl-C, an error), end
        the line left on a terminal, and stop the timer. Calling it again does nothing."""
        self._alarm.cancel()
        if not self._ended and self._latest is not None:
            self._end(self._now())
        self._ended = True
        self._live.close()

    # -- pacing ----------------------------------------------------------------------------

    def _pace(self, now: float) -> None:
        """Show the figures if they are due, and set the timer for when they next are."""
        assert self._latest is not None
        changed = _counts(self._latest) != self._shown
        wait = self._gaps[0] if changed else self._gaps[1]
        last = self._shown_at
        if last is not None and now - last < wait:
            if self._alarm.at(last + wait):
                return
            if not (changed and self._live.tty):
                return  # no timer (no clock, no loop): the next update writes
            # ... and a terminal draws each change as it comes.
        self._show(now)
        self._alarm.at(now + self._gaps[1])

    def _show(self, now: float) -> None:
        p = self._latest
        assert p is not None
        idle = now - self._changed_at
        elapsed = p.elapsed + max(0.0, now - self._latest_at)
        waiting = idle if idle >= self._heartbeat else None
        columns = self._live.columns() if self._live.tty else None
        self._live.draw(self.line(p, elapsed=elapsed, idle=waiting, columns=columns))
        self._shown, self._shown_at = _counts(p), now

    def _ring(self) -> None:
        """The timer rang: show what is due (never raises into the loop)."""
        if self._ended:
            return
        try:
            self._pace(self._now())
        except (OSError, ValueError):  # the stream went away (a closed pipe): no more lines
            self._ended = True

    def _end(self, now: float) -> None:
        """Write the last figures (the final line) and stop the timer."""
        self._ended = True
        self._alarm.cancel()
        p = self._latest
        assert p is not None
        elapsed = p.elapsed + max(0.0, now - self._latest_at)
        columns = self._live.columns() if self._live.tty else None
        self._live.draw(self.line(p, elapsed=elapsed, columns=columns), final=True)


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
