"""The README's pytest-plugin example, copied as is into a fresh project, passes with plain pytest.

The fresh project is a temporary directory with no pytest configuration at all (so
pytest-asyncio runs in its default strict mode) and the example as its only test file;
pytest runs in a subprocess there with an environment that carries none of this suite's
pytest settings. The package is installed in the running interpreter, so the plugin comes
in through its ``pytest11`` entry point, as it would for a user.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- plugin-example -->"
PLUGIN_SECTION = "fixtures defined from asyncclient.emulator.pytest_plugin"
# Files through which pytest would find a configuration or a rootdir above the project.
CONFIG_FILES = (
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    "conftest.py",
)
TIMEOUT = 120


def readme_example() -> str:
    """The fenced Python block right after the marker in the README's plugin section."""
    text = README.read_text(encoding="utf-8")
    assert text.count(MARKER) == 1, f"{MARKER} must appear exactly once in README.md"
    section = text.index("### The pytest plugin")
    start = text.index(MARKER)
    assert start > section, "the example marker belongs to the section on the pytest plugin"
    match = re.compile(r"\s*```python\n(.*?)^```", re.S | re.M).match(text, start + len(MARKER))
    assert match is not None, "a ```python block must follow the example marker"
    return match.group(1)


def clean_env() -> dict[str, str]:
    """This process's environment without anything that configures pytest or warnings."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PYTEST_") and name not in {"PYTHONWARNINGS", "PY_COLORS"}
    }


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture
def fresh_project(tmp_path: Path) -> Path:
    """A directory holding the README example and nothing else, with no config above it."""
    for directory in (tmp_path, *tmp_path.parents):
        found = [name for name in CONFIG_FILES if (directory / name).exists()]
        assert not found, f"pytest would pick up {found} in {directory}"
    (tmp_path / "test_readme_example.py").write_text(readme_example(), encoding="utf-8")
    return tmp_path


def test_readme_example_is_found() -> None:
    example = readme_example()
    assert "@pytest.mark.asyncio" in example
    assert "asyncclient_client" in example


@pytest.mark.heavy
def test_readme_example_passes_in_a_fresh_project(fresh_project: Path) -> None:
    result = run_pytest(fresh_project, "-q")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    summary = result.stdout.strip().splitlines()[-1]
    # One test passed, and nothing else: no warnings, errors or skips of the test run.
    assert re.fullmatch(r"1 passed in [\d.]+s", summary), output
    assert "warnings summary" not in result.stdout, output


@pytest.mark.heavy
def test_plugin_defines_only_prefixed_fixtures(fresh_project: Path) -> None:
    result = run_pytest(fresh_project, "--fixtures")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if PLUGIN_SECTION in line)
    names = []
    for line in lines[start + 1 :]:
        if line.startswith("-"):  # the next plugin's section
            break
        if line and not line[0].isspace():
            names.append(line.split(" ", 1)[0])
    assert names == ["asyncclient_emulator", "asyncclient_api_key", "asyncclient_client"]
