"""``examples/bulk_from_csv.py`` runs as a user runs it: a real process, against the
emulator it starts itself, then against a running one twice (the second run resumes)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from asyncclient.emulator import Emulator
from tests.test_cli_main import CREATE, clean_env

EXAMPLES = Path(__file__).parents[1] / "examples"
ROWS = 5  # in examples/talking_avatars.csv


async def run_example(csv: Path, *args: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLES / "bulk_from_csv.py"), str(csv), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def copy_rows(folder: Path) -> Path:
    csv = folder / "talking_avatars.csv"
    shutil.copy(EXAMPLES / "talking_avatars.csv", csv)
    return csv


@pytest.mark.heavy
async def test_without_a_service_it_runs_against_the_embedded_emulator(tmp_path: Path) -> None:
    csv = copy_rows(tmp_path)
    code, out, err = await run_example(csv, "--time-scale", "3600", env=clean_env())
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "ASYNCCLIENT_BASE_URL is not set: running against the embedded emulator"
    assert f"{ROWS}/{ROWS} finished: {ROWS} completed, 0 failed, 0 rejected" in lines
    assert [line.split()[2] for line in lines if line.startswith("row ")] == ["completed"] * ROWS
    assert lines[-1] == f"summary: {ROWS} of {ROWS} completed"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "talking_avatars.csv"
    ]  # its journal was temporary


@pytest.mark.heavy
async def test_against_a_service_a_second_run_resumes_from_the_journal(tmp_path: Path) -> None:
    csv = copy_rows(tmp_path)
    async with Emulator(time_scale=600.0, seed=4) as emu:
        env = clean_env()
        env["ASYNCCLIENT_BASE_URL"] = emu.url
        env["ASYNCCLIENT_API_KEY"] = emu.add_team(plan="premium", credits=1_000)
        first = await run_example(csv, "--spacing", "0.01", env=env)
        second = await run_example(csv, "--spacing", "0.01", env=env)
        created = [r for r in emu.requests if r.method == "POST" and r.path.startswith(CREATE)]
        names = sorted(str(p.videos[0].name) for p in emu.store.projects.values())
    assert first[0] == 0 and second[0] == 0, first[2] + second[2]
    assert (
        first[1].splitlines()[-1]
        == second[1].splitlines()[-1]
        == f"summary: {ROWS} of {ROWS} completed"
    )
    assert "resuming from" not in first[1] and "resuming from" in second[1]
    assert len(created) == ROWS  # the second run sent nothing again
    assert names == sorted(f"Welcome {n}" for n in ("Ann", "Bo", "Chen", "Dara", "Eli"))
    assert (tmp_path / "talking_avatars.journal.jsonl").exists()
