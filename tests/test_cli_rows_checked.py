"""A rows file as a newcomer writes it: a CSV header that does not fit the template is
refused once, from the header, before anything is sent (no journal either); rows are
named by the line of the file they start on; another rows file given the journal of an
earlier batch is refused with the journal named and what to do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from asyncclient.cli.rowsfile import RowsFile
from asyncclient.emulator import Emulator
from tests.test_cli_batch_runs import batch_argv, creations
from tests.test_cli_main import _advance_forever, run_cli, write_rows


@pytest.mark.heavy
async def test_a_header_without_a_template_variable_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("title,first_name,colour\nA,Ann,red\nB,Bob,blue\n", encoding="utf-8")
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        code, out, err = await run_cli(*batch_argv(rows, emu, key))
        assert creations(emu) == 0
    assert code == 2 and out == "", err
    assert err.count("error:") == 1, err  # once for the file, not once a row
    assert f"{rows}:1: the header does not fit template tpl_welcome" in err
    assert "no column for the template's variables product, logo" in err
    assert "columns that are not variables of the template: colour" in err
    assert "(its variables: first_name, product, logo;" in err
    assert not list(tmp_path.glob("*.journal*")), list(tmp_path.iterdir())  # no journal


@pytest.mark.heavy
async def test_a_header_without_the_title_column_names_the_option(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("name,first_name,product,logo\nA,Ann,Lamp,\n", encoding="utf-8")
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        code, _, err = await run_cli(*batch_argv(rows, emu, key))
        assert creations(emu) == 0
        ok, _, named = await run_cli(
            *batch_argv(rows, emu, key, "--title-column", "name", "--check")
        )
    assert code == 2 and "no 'title' column" in err and "--title-column NAME" in err
    assert ok == 0, named  # the same file, its title column named: it fits


def test_rows_are_named_by_the_line_they_start_on(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        'title,first_name\nA,Ann\n\n"B\nsecond line",Bob\nC,Cy\n\n\nD,Di\n', encoding="utf-8"
    )
    scanned = RowsFile(rows).scan()
    assert scanned.count == 4
    assert [scanned.line_of(i) for i in range(4)] == [2, 4, 6, 9]
    assert scanned.named("title: 'A' is also the title of row 3") == (
        "title: 'A' is also the title of line 9"
    )
    plain = tmp_path / "plain.csv"
    write_rows(plain, 1000)
    flat = RowsFile(plain).scan()
    assert flat.line_of(999) == 1001 and flat._shifts == []  # no list kept for a plain file
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text('{"title": "A"}\n\n{"title": "B"}\n', encoding="utf-8")
    assert [RowsFile(jsonl).scan().line_of(i) for i in range(2)] == [1, 3]


@pytest.mark.heavy
async def test_results_carry_the_line_of_their_row(tmp_path: Path) -> None:
    rows, out = tmp_path / "rows.csv", tmp_path / "out.jsonl"
    write_rows(rows, 3)
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            code, _, err = await run_cli(*batch_argv(rows, emu, key, "--out", str(out)))
        finally:
            mover.cancel()
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["row"], r["line"]) for r in records) == [(0, 2), (1, 3), (2, 4)]


@pytest.mark.heavy
@pytest.mark.parametrize("changed", ["other titles", "one row edited"])
async def test_another_rows_file_on_a_journal_names_it_and_says_what_to_do(
    tmp_path: Path, changed: str
) -> None:
    first, second = tmp_path / "spring.csv", tmp_path / "summer.csv"
    journal = tmp_path / "spring.journal.jsonl"
    write_rows(first, 3)
    text = first.read_text()
    if changed == "other titles":
        second.write_text(text.replace("Row ", "Summer "), encoding="utf-8")
    else:
        second.write_text(text.replace("Row 0,N0", "Row 0,Nina"), encoding="utf-8")
    async with Emulator(time_scale=600.0, seed=3) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        mover = asyncio.ensure_future(_advance_forever(emu))
        try:
            argv = batch_argv(first, emu, key, "--journal", str(journal))
            assert (await run_cli(*argv))[0] == 0
            made = creations(emu)
            argv = batch_argv(second, emu, key, "--journal", str(journal))
            code, out, err = await run_cli(*argv)
        finally:
            mover.cancel()
        assert creations(emu) == made == 3  # nothing sent for the second file
    assert code == 2 and out == "", err
    assert f"{second}:2: not the row the journal {journal} recorded as sent" in err
    assert "--journal NEW.journal.jsonl" in err and "rows[" not in err
