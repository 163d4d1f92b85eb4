"""The documentation (docs/): its complete examples run, and its reference names every name.

A complete example is a ```python block of a page that calls ``asyncio.run(``: each runs
in a process of its own, in a directory of its own, against the ``emu`` fixture's
emulator (``ASYNCCLIENT_BASE_URL`` and ``ASYNCCLIENT_API_KEY`` point at it), all at once.
The build itself (``mkdocs build --strict``) is CI's, not a test's.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

import asyncclient
from asyncclient.emulator import Emulator

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def complete_examples() -> dict[str, str]:
    """``page.md:line`` -> the code, for every block that runs on its own."""
    found = {}
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            if "asyncio.run(" in match[1]:
                line = text.count("\n", 0, match.start()) + 1
                found[f"{page.name}:{line}"] = match[1]
    return found


def test_the_creation_formats_each_have_a_complete_example() -> None:
    pages = [where.split(":")[0] for where in complete_examples()]
    assert pages.count("formats.md") == 9  # spec 4.1 to 4.9


@pytest.mark.heavy
@pytest.mark.emulator(processing_seconds=1.0)  # done at the first poll: no waiting
async def test_every_complete_example_runs(emu: Emulator, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    env["ASYNCCLIENT_BASE_URL"] = emu.url
    env["ASYNCCLIENT_API_KEY"] = emu.add_team(plan="premium", credits=100_000)

    async def run(where: str, code: str) -> str | None:
        cwd = tmp_path / where.replace(":", "_")
        cwd.mkdir()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            code,
            cwd=cwd,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=120)
        except TimeoutError:
            process.kill()
            await process.wait()
            return f"{where}: still running after 120 s"
        if process.returncode != 0:
            return f"{where}: exit {process.returncode}\n{out.decode()}{err.decode()}"
        return None

    examples = complete_examples()
    assert len(examples) >= 9
    failures = await asyncio.gather(*(run(where, code) for where, code in examples.items()))
    assert [f for f in failures if f] == []


def test_the_reference_says_where_every_top_level_name_is_documented() -> None:
    page = (DOCS / "reference" / "asyncclient.md").read_text(encoding="utf-8")
    missing = [name for name in asyncclient.__all__ if f"`{name}`" not in page]
    assert missing == []


def test_every_test_the_guarantees_page_names_exists() -> None:
    """docs/guarantees.md names the test behind each promise: each must be there."""
    page = (DOCS / "guarantees.md").read_text(encoding="utf-8")
    root = DOCS.parent
    named, missing, last = 0, [], ""
    for match in re.finditer(r"`(tests/[\w/]+\.py)?::(\w+)`", page):
        last = match.group(1) or last
        named += 1
        if f"def {match.group(2)}(" not in (root / last).read_text(encoding="utf-8"):
            missing.append(f"{last}::{match.group(2)}")
    assert named >= 20 and missing == []
