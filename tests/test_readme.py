"""The README's Python examples: every block parses (fragments may ``await`` at top level,
as in a notebook), and every complete program runs as pasted, in a fresh interpreter
with no ``ASYNCCLIENT_*`` variable set, against the emulator it starts itself."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def is_program(block: str) -> bool:
    """A block that runs as pasted: it imports what it uses and starts what it needs."""
    return "asyncio.run(" in block or "\nwith serve_in_thread(" in block


PROGRAMS = [block for block in BLOCKS if is_program(block)]


def test_every_python_block_of_the_readme_parses() -> None:
    assert len(BLOCKS) >= 10
    for block in BLOCKS:
        compile(block, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_the_first_examples_are_programs_in_both_faces() -> None:
    assert is_program(BLOCKS[0]) and "AsyncClient" in BLOCKS[0]
    assert is_program(BLOCKS[1]) and "Client(" in BLOCKS[1] and "await" not in BLOCKS[1]


@pytest.mark.heavy
@pytest.mark.parametrize("program", PROGRAMS, ids=[f"program{i}" for i in range(len(PROGRAMS))])
def test_each_program_of_the_readme_runs_as_pasted(program: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "COMPLETED" in done.stdout


@pytest.mark.heavy
def test_the_readme_s_command_line_batch_runs_as_written(tmp_path: Path) -> None:
    """``asyncclient emulator`` prints the demo key the README shows, and ``asyncclient
    batch examples/welcome.csv --template tpl_welcome`` completes its five rows."""
    readme = (ROOT / "README.md").read_text()
    key = re.search(r"ASYNCCLIENT_API_KEY=(emu_[0-9a-f]+)", readme)
    assert key is not None and "asyncclient batch examples/welcome.csv" in readme
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    emulator = subprocess.Popen(
        [sys.executable, "-m", "asyncclient", "emulator", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert emulator.stdout is not None
        printed = json.loads(emulator.stdout.readline())
        assert printed["apiKey"] == key[1]  # the README's key is the emulator's demo key
        env.update(ASYNCCLIENT_BASE_URL=printed["url"], ASYNCCLIENT_API_KEY=printed["apiKey"])
        out = tmp_path / "results.jsonl"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "asyncclient",
                "batch",
                str(ROOT / "examples" / "welcome.csv"),
                "--template",
                "tpl_welcome",
                "--spacing",
                "0",
                "--out",
                str(out),
                "--journal",
                str(tmp_path / "welcome.journal.jsonl"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["status"] for r in rows] == ["completed"] * 5
    finally:
        emulator.terminate()
        emulator.wait(10)
        if emulator.stdout is not None:
            emulator.stdout.close()
