"""The distribution's name and extras (issue "A name of our own"): a name of our own (the
name ``asyncclient`` on the package index is another project's), the import name kept,
every install line written with it."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = "vidgen-asyncclient"


def test_the_distribution_has_a_name_of_its_own_and_installs_asyncclient() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^name = "([^"]+)"$', pyproject, re.MULTILINE)[1] == DIST  # type: ignore[index]
    installed = metadata.metadata(DIST)
    assert installed["Name"] == DIST
    extras = set(installed.get_all("Provides-Extra") or [])
    assert {"redis", "otel", "pytest", "test", "docs", "asgi"} <= extras
    files = metadata.files(DIST) or []
    assert not any(str(f).startswith(("client/", "common/")) for f in files)


def test_every_install_line_uses_the_distribution_s_name() -> None:
    """``pip install "asyncclient[...]"`` would install someone else's package."""
    texts = [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "asyncclient").rglob("*.py"),
    ]
    wrong = re.compile(r"pip install [\"']?asyncclient(\[|[\"'\s]|$)")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in texts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if wrong.search(line)
    ]
    assert offenders == []
