"""What the command line draws: a live bar on a terminal, plain lines (no ANSI) elsewhere."""

from __future__ import annotations

import io
import re

import pytest

from asyncclient.batch.runner import BatchProgress
from asyncclient.cli.exits import EXIT_STATUSES, epilog
from asyncclient.cli.progress import DownloadProgress, Earlier, FilesProgress, ProgressDisplay
from asyncclient.cli.terminal import LiveLine, format_bytes, is_terminal, table_lines

ANSI = re.compile(r"\x1b\[")


class Ticks:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def progress(
    finished: int, total: int = 4, *, elapsed: float = 30.0, **counts: int
) -> BatchProgress:
    options = {"submitted": total, "completed": finished, "failed": 0, "rejected": 0}
    options.update(counts)
    return BatchProgress(total=total, skipped=0, elapsed=elapsed, **options)


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- the live line ---------------------------------------------------------------------


def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    out = io.StringIO()
    line = LiveLine(out, tty=True)
    line.update("one", now=0.0)
    line.update("two", now=0.0)
    line.update("three", now=0.0, final=True)
    assert out.getvalue() == "\r\x1b[2Kone\r\x1b[2Ktwo\r\x1b[2Kthree\n"


def test_elsewhere_plain_lines_paced_and_the_final_one_always() -> None:
    out = io.StringIO()
    line = LiveLine(out, tty=False, every=2.0)
    line.update("a", now=0.0)
    line.update("b", now=1.0)  # too soon: dropped
    line.update("c", now=2.5)
    line.update("c", now=9.0)  # nothing changed: dropped
    line.update("d", now=9.1, final=True)  # the final one, however soon
    line.close()
    assert out.getvalue() == "a\nc\nd\n"
    assert not ANSI.search(out.getvalue())


def test_close_ends_a_line_left_drawn() -> None:
    out = io.StringIO()
    line = LiveLine(out, tty=True)
    line.update("half", now=0.0)
    line.close()
    line.close()
    assert out.getvalue().endswith("half\n") and out.getvalue().count("\n") == 1


def test_is_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    assert is_terminal(FakeTty()) and not is_terminal(io.StringIO()) and not is_terminal(None)
    monkeypatch.setenv("TERM", "dumb")  # a terminal that understands no escape codes
    assert not is_terminal(FakeTty())


# -- the batch's bar -------------------------------------------------------------------


def test_batch_progress_on_a_terminal_is_a_bar_redrawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # wide enough for every figure
    out = io.StringIO()
    display = ProgressDisplay(out, tty=True, clock=Ticks())
    for finished in range(5):
        display(progress(finished))
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 5 and text.endswith("\n") and text.count("\n") == 1
    assert "[" + "#" * 24 + "]  4/4  completed 4" in text
    assert "[" + "#" * 12 + "." * 12 + "]  2/4" in text


def test_batch_progress_off_a_terminal_has_no_escape_codes() -> None:
    out = io.StringIO()
    ticks = Ticks()
    display = ProgressDisplay(out, clock=ticks)  # a StringIO is no terminal
    for finished in range(5):
        ticks.now += 3.0
        display(progress(finished))
    lines = out.getvalue().splitlines()
    assert len(lines) == 5 and lines[-1].startswith("[" + "#" * 24 + "]  4/4")
    assert not ANSI.search(out.getvalue()) and "\r" not in out.getvalue()


def test_the_rate_and_eta_are_this_runs() -> None:
    display = ProgressDisplay(io.StringIO())
    assert display.line(progress(2, elapsed=60.0)).endswith("submitted 4  2.0/min  ETA 1:00")
    # Four rows an earlier run did, re-read in a second: no rate of 240/min.
    earlier = ProgressDisplay(io.StringIO(), earlier=Earlier(finished=4, sent=4))
    text = earlier.line(progress(4, elapsed=1.0, submitted=0, resumed=4, done_before=4))
    assert "/min" not in text and "submitted 0" in text and "(4 done before)" in text
    # Half done before: only what this run finished counts, and what it submitted.
    half = ProgressDisplay(io.StringIO(), earlier=Earlier(finished=2, sent=2))
    text = half.line(progress(3, elapsed=60.0, submitted=2, resumed=2, done_before=2))
    assert "submitted 2" in text and "1.0/min" in text and "ETA 1:00" in text


def test_the_intro_comes_once_before_the_first_update() -> None:
    out = io.StringIO()
    display = ProgressDisplay(out, clock=Ticks(), intro="resuming from j.jsonl: 2 of 4 done")
    assert out.getvalue() == ""  # not before the batch reports (its journal accepted)
    display(progress(2))
    display(progress(4))
    lines = out.getvalue().splitlines()
    assert lines[0] == "resuming from j.jsonl: 2 of 4 done" and len(lines) == 3


def test_the_final_line_is_written_once() -> None:
    out = io.StringIO()
    display = ProgressDisplay(out, tty=True)
    display(progress(4))
    display(progress(4))
    assert out.getvalue().count("4/4") == 1


# -- downloads -------------------------------------------------------------------------


def test_download_progress_on_a_terminal_and_off() -> None:
    tty, plain = io.StringIO(), io.StringIO()
    for out, is_tty in ((tty, True), (plain, False)):
        show = DownloadProgress("vid_1", out, tty=is_tty, clock=Ticks())
        for done in (500, 1000, 1500, 2130):
            show(done, 2130)
        show.finish()
    assert tty.getvalue().count("\r\x1b[2K") == 4 and tty.getvalue().endswith("\n")
    assert "100%  2.1 kB of 2.1 kB" in tty.getvalue()
    assert plain.getvalue().splitlines() == [
        "downloading vid_1  [#####...................] 23%  500 B of 2.1 kB",
        "downloading vid_1  [########################] 100%  2.1 kB of 2.1 kB",
    ]


def test_download_of_unknown_size_ends_with_its_bytes() -> None:
    out = io.StringIO()
    show = DownloadProgress("vid_1", out, tty=False, clock=Ticks())
    show(700, None)
    show(1400, None)
    show.finish()
    assert out.getvalue().splitlines() == ["downloading vid_1  700 B", "downloading vid_1  1.4 kB"]


def test_files_progress_counts_files_and_bytes() -> None:
    out = io.StringIO()
    files = FilesProgress(2, out, tty=True, clock=Ticks())
    files.file_done(2130)
    files.file_done(2130)
    files.close()
    assert out.getvalue().endswith("2/2 videos  4.3 kB\n")


def test_format_bytes() -> None:
    assert [format_bytes(n) for n in (0, 999, 2130, 5_000_000, 7 * 10**15)] == [
        "0 B",
        "999 B",
        "2.1 kB",
        "5.0 MB",
        "7000.0 TB",
    ]


# -- tables and the exit statuses ------------------------------------------------------


def test_tables_are_plain_unless_a_terminal() -> None:
    rows = [("vid_1", "COMPLETED", "a very long name indeed"), ("vid_22", None, "x")]
    plain = table_lines(("ID", "STATUS", "NAME"), rows)
    assert plain == [
        "ID      STATUS     NAME",
        "vid_1   COMPLETED  a very long name indeed",
        "vid_22             x",
    ]
    tty = table_lines(("ID", "STATUS", "NAME"), rows, tty=True, width=30)
    assert tty[0] == "\x1b[1mID      STATUS     NAME\x1b[0m"
    assert tty[1] == "vid_1   COMPLETED  a very l..." and len(tty[1]) == 30


def test_the_help_lists_every_exit_status() -> None:
    text = epilog()
    codes = [code for code, _ in EXIT_STATUSES]
    assert codes == [0, 1, 2, 3, 4, 130]
    for code in codes:
        assert re.search(rf"^  {code} +\S", text, re.M)
