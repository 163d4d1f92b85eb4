"""A batch's progress on the command line, paced by a timer on the clock as well as by
the batch's reports: in a log a line follows a change within 2 s even when no report
follows it, nothing is written while nothing changes but a heartbeat a minute, and the
last figures are always written; a terminal's bar shows the rate and the ETA and is
redrawn a few times a second at most. Time is virtual: nothing here waits for real."""

from __future__ import annotations

import io
import re
from typing import Any

import attrs
import pytest

from asyncclient.batch.rows import BatchProgress
from asyncclient.cli.progress import ProgressDisplay
from tests.virtual_time import VirtualTime

ANSI = re.compile(r"\x1b\[")
REDRAW = "\r\x1b[2K"


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Run:
    """A batch's reports, made as the time goes: ``elapsed`` is the clock's."""

    def __init__(self, time: VirtualTime, total: int) -> None:
        self.time = time
        self.total = total

    def at(self, **counts: int) -> BatchProgress:
        figures = {"submitted": 0, "completed": 0, "failed": 0, "rejected": 0, "skipped": 0}
        figures.update(counts)
        return BatchProgress(total=self.total, elapsed=self.time.now, **figures)


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal wide enough for every figure (narrow ones: tests/test_cli_width.py)."""
    monkeypatch.setenv("COLUMNS", "160")


@pytest.fixture
def time() -> VirtualTime:
    return VirtualTime()


def log_display(time: VirtualTime, out: io.StringIO, **options: Any) -> ProgressDisplay:
    return ProgressDisplay(out, clock=time.as_clock(), tty=False, **options)


# -- a log (not a terminal) ---------------------------------------------------------------


async def test_a_change_gets_its_line_within_two_seconds_with_no_report_after_it(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    run = Run(time, 100_000)
    display = log_display(time, out)
    display(run.at())
    assert len(lines(out)) == 1 and "0/100000" in lines(out)[0]
    await time.advance(0.5)
    display(run.at(submitted=1))  # a submission: no row finished, the figures moved
    await time.advance(1.4)
    assert len(lines(out)) == 1  # 2 s since the last line are not over
    await time.advance(0.1)
    assert len(lines(out)) == 2
    assert "0/100000" in lines(out)[1] and "submitted 1" in lines(out)[1]
    assert "processing 1" in lines(out)[1] and "elapsed 0:02" in lines(out)[1]
    display.close()


async def test_the_last_of_a_burst_of_changes_is_written_when_the_reports_stop(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    run = Run(time, 5000)
    display = log_display(time, out)
    display(run.at(submitted=3470, completed=3460))
    for done in range(3461, 3471):  # ten rows finish within a second, then nothing
        await time.advance(0.1)
        display(run.at(submitted=3470, completed=done))
    assert len(lines(out)) == 1
    await time.advance(600)
    assert "3470/5000" in lines(out)[1]  # not stuck at the figures of the first line
    assert all("3470/5000" in line for line in lines(out)[1:])
    display.close()


async def test_nothing_is_written_while_nothing_changes_but_a_heartbeat_a_minute(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    run = Run(time, 10)
    display = log_display(time, out)
    display(run.at(submitted=2, completed=1))
    await time.advance(30)
    display(run.at(submitted=2, completed=1))  # a report that changes nothing
    await time.advance(29.9)
    assert len(lines(out)) == 1
    await time.advance(0.1)
    assert len(lines(out)) == 2 and "waiting: no change for 1:00" in lines(out)[1]
    assert "1/10" in lines(out)[1] and "elapsed 1:00" in lines(out)[1]
    await time.advance(60)
    assert len(lines(out)) == 3 and "waiting: no change for 2:00" in lines(out)[2]
    display(run.at(submitted=3, completed=1))  # a change, as a line was just written
    assert len(lines(out)) == 3
    await time.advance(2)
    assert len(lines(out)) == 4 and "submitted 3" in lines(out)[3]
    assert "waiting" not in lines(out)[3]
    display.close()


async def test_the_rate_and_eta_move_on_with_the_clock(time: VirtualTime) -> None:
    out = io.StringIO()
    run = Run(time, 4)
    display = log_display(time, out, heartbeat=60)
    await time.advance(60)
    display(run.at(submitted=4, completed=2))
    assert lines(out)[0].endswith("2.0/min  ETA 1:00")
    await time.advance(60)  # nothing finished in this minute: the rate halves
    assert lines(out)[1].endswith("1.0/min  ETA 2:00  waiting: no change for 1:00")
    display.close()


async def test_closing_writes_the_last_figures_however_soon_and_stops(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    run = Run(time, 6)
    display = log_display(time, out)
    display(run.at(submitted=1))
    await time.advance(0.5)
    display(run.at(submitted=4, completed=2, rejected=1))
    display.close()  # an interruption, 0.5 s after the last line
    display.close()
    text = lines(out)
    assert len(text) == 2 and text[1].startswith("[" + "#" * 12 + "." * 12 + "]  3/6")
    figures = "completed 2  failed 0  rejected 1  processing 2  pending 1  elapsed 0:00"
    assert figures + "  submitted 4" in text[1]
    await time.advance(600)
    assert len(lines(out)) == 2  # the timer stopped
    assert not ANSI.search(out.getvalue()) and "\r" not in out.getvalue()


async def test_the_last_report_is_written_at_once_and_stops_the_timer(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    run = Run(time, 2)
    display = log_display(time, out)
    display(run.at(submitted=2, completed=1))
    await time.advance(0.1)
    display(run.at(submitted=2, completed=1, failed=1))
    assert len(lines(out)) == 2 and lines(out)[1].startswith("[" + "#" * 24 + "]  2/2")
    assert "ETA" not in lines(out)[1] and "processing" not in lines(out)[1]
    await time.advance(600)
    display.close()
    assert len(lines(out)) == 2


async def test_a_count_of_rows_not_sent_is_shown_when_the_report_has_one(
    time: VirtualTime,
) -> None:
    out = io.StringIO()
    display = log_display(time, out)
    figures: dict[str, Any] = {"total": 5, "submitted": 2, "completed": 2, "not_sent": 3}
    figures.update(failed=0, rejected=0, skipped=0, elapsed=9.0)
    if "not_sent" in attrs.fields_dict(BatchProgress):
        report = BatchProgress(**figures)
    else:  # before BatchProgress counts them: a report of the coming shape

        @attrs.frozen(kw_only=True)
        class Newer(BatchProgress):
            not_sent: int = 0

            @property
            def finished(self) -> int:
                return super().finished + self.not_sent

        report = Newer(**figures)
    display(report)
    assert "5/5  completed 2  failed 0  not sent 3" in lines(out)[0]


# -- a terminal -----------------------------------------------------------------------------


async def test_a_terminals_bar_shows_the_rate_and_eta_and_ends_with_the_last_figures(
    time: VirtualTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    screen = FakeTty()
    run = Run(time, 4)
    display = ProgressDisplay(screen, clock=time.as_clock())  # a terminal, as asked of it
    await time.advance(60)
    display(run.at(submitted=4, completed=2))
    drawn = screen.getvalue()
    assert drawn.startswith(REDRAW) and "2/4" in drawn
    assert "2.0/min  ETA 1:00" in drawn and "\n" not in drawn
    await time.advance(60)
    display(run.at(submitted=4, completed=4))
    last = screen.getvalue().rsplit(REDRAW, 1)[1]
    assert last.startswith("[" + "#" * 24 + "]  4/4  completed 4") and last.endswith("\n")
    assert "2.0/min" in last and "elapsed 2:00" in last
    await time.advance(60)
    assert screen.getvalue().count("\n") == 1  # nothing after the end


async def test_a_terminal_is_redrawn_a_few_times_a_second_at_most(
    time: VirtualTime,
) -> None:
    screen = FakeTty()
    run = Run(time, 1000)
    display = ProgressDisplay(screen, clock=time.as_clock(), tty=True)
    for done in range(100):  # a hundred reports at once: one redraw now...
        display(run.at(submitted=100, completed=done))
    assert screen.getvalue().count(REDRAW) == 1
    await time.advance(0.25)  # ... and the last of them a quarter of a second later
    assert screen.getvalue().count(REDRAW) == 2
    assert "99/1000" in screen.getvalue().rsplit(REDRAW, 1)[1]
    await time.advance(3)  # nothing changes: the elapsed time is redrawn each second
    assert screen.getvalue().count(REDRAW) == 5
    assert "elapsed 0:03" in screen.getvalue().rsplit(REDRAW, 1)[1]
    display.close()  # interrupted: the last figures stay on screen, the line ended
    assert screen.getvalue().endswith("\n") and screen.getvalue().count("\n") == 1
    await time.advance(60)
    assert screen.getvalue().count(REDRAW) == 6
