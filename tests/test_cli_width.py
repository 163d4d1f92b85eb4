"""The batch's live line fits the terminal: at any width of 40 columns or more each
redraw is one row (the least useful figures go first, the bar narrows), so the screen
keeps one progress row, however many redraws; in a log the line keeps every figure.

The command line runs in a real pseudo-terminal of each width; what it wrote is played
on a small model of a terminal (auto-wrap at the last column, ``\\r``, erase line)."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import attrs
import pytest

from asyncclient.batch.rows import BatchProgress
from asyncclient.cli.progress import ProgressDisplay
from asyncclient.emulator import Emulator
from tests.test_cli_batch_runs import batch_argv, run_in_terminal
from tests.test_cli_main import _advance_forever, write_rows

REDRAW = "\r\x1b[2K"
CSI = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])")


def screen_rows(output: str, columns: int) -> list[str]:
    """The rows a terminal ``columns`` wide shows after ``output`` (it wraps a character
    written past the last column onto a new row, as xterm does)."""
    rows: list[list[str]] = [[]]
    row = col = 0
    wrap_next = False
    i = 0
    while i < len(output):
        if m := CSI.match(output, i):
            if m.group(2) == "K" and m.group(1) == "2":
                rows[row] = []
            i = m.end()
            continue
        ch = output[i]
        i += 1
        if ch == "\r":
            col, wrap_next = 0, False
        elif ch == "\n":
            row, col, wrap_next = row + 1, 0, False
        elif ch >= " ":
            if wrap_next:
                row, col, wrap_next = row + 1, 0, False
            while len(rows) <= row:
                rows.append([])
            line = rows[row]
            line.extend(" " * (col + 1 - len(line)))
            line[col] = ch
            if col == columns - 1:
                wrap_next = True
            else:
                col += 1
        while len(rows) <= row:
            rows.append([])
    return ["".join(r).rstrip() for r in rows]


@pytest.mark.heavy
@pytest.mark.parametrize("columns", [40, 60, 80, 100])
async def test_each_redraw_is_one_row_at_any_width(columns: int, tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    write_rows(rows, 10)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            argv = batch_argv(rows, emu, key, "--spacing", "0.05")
            code, output = await run_in_terminal(*argv, columns=columns)
        finally:
            mover.cancel()
    assert code == 0, output
    draws = [d.split("\r\n")[0] for d in output.split(REDRAW)[1:]]
    assert len(draws) >= 2, output  # redrawn, not written once
    assert all(len(d) < columns for d in draws), [d for d in draws if len(d) >= columns]
    progress = [r for r in screen_rows(output, columns) if re.search(r"\b\d+/10\b", r)]
    assert len(progress) == 1, screen_rows(output, columns)  # one row, not one a redraw
    assert progress[0].startswith("[") and "10/10  completed 10" in progress[0]


def figures(**counts: int) -> BatchProgress:
    base = {"submitted": 0, "completed": 0, "failed": 0, "rejected": 0, "skipped": 0}
    return BatchProgress(total=1000, elapsed=90.0, **{**base, **counts})


def test_a_narrow_terminal_keeps_the_figures_that_matter_most() -> None:
    display = ProgressDisplay(io.StringIO(), tty=True)
    busy = figures(submitted=600, completed=250, failed=3, rejected=2)
    wide = display.line(busy)
    assert len(wide) > 100 and "elapsed 1:30" in wide and "submitted 600" in wide
    for columns in (40, 60, 80, 100, 200):
        text = display.line(busy, columns=columns)
        assert len(text) < columns, (columns, text)
        assert "255/1000  completed 250" in text, (columns, text)
        if columns >= 60:
            assert "255/1000  completed 250  failed 3  rejected 2" in text, (columns, text)
    narrow = display.line(busy, columns=40)
    assert "submitted" not in narrow and "elapsed" not in narrow and "[" not in narrow
    assert display.line(busy, columns=80).startswith("[")  # room for a bar at 80
    assert display.line(busy, columns=200) == wide  # room for all: as in a log
    # a failed count of 0 goes before the bar; a count of failures stays
    assert "failed 0" not in display.line(figures(completed=5, submitted=9), columns=60)


def test_a_line_narrower_than_its_first_figures_is_cut_not_wrapped() -> None:
    display = ProgressDisplay(io.StringIO(), tty=True)
    text = display.line(attrs.evolve(figures(), total=10**17), columns=20)
    assert len(text) == 19 and text.endswith("...")


def test_in_a_log_the_line_keeps_every_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # a log has no width: COLUMNS is not asked
    out = io.StringIO()
    display = ProgressDisplay(out, tty=False)
    display(figures(submitted=1000, completed=999, failed=1))
    assert "elapsed 1:30  submitted 1000" in out.getvalue() and len(out.getvalue()) > 40


def test_the_model_terminal_stacks_a_line_too_long_for_it() -> None:
    """The model can fail the test above: a 100-character line redrawn three times on a
    60-column terminal leaves three rows of it, as a real terminal does."""
    long = "x" * 100
    assert len(screen_rows(REDRAW.join(["", long, long, long]) + "\n", 60)) >= 3
    assert len([r for r in screen_rows(REDRAW.join(["", "y" * 50] * 3), 60) if r]) == 1
