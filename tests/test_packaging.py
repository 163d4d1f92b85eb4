"""The distribution: a name of our own (the name ``asyncclient`` on the package index is
another project's), the import name kept, every install line written with it; its
metadata (license, addresses, classifiers); the data files the wheel must carry; and a
checkout's ``.gitignore`` covering what the README's commands write.

CI (``.ci/run``) builds the sdist and the wheel, checks them with ``twine check
--strict`` and runs ``asyncclient demo`` from the wheel installed in a clean virtualenv:
the proof these tests stand in for on a developer's machine.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from asyncclient.batch.journal_index import index_path
from asyncclient.batch.journal_lock import sidecar_of
from asyncclient.emulator import serve_in_thread

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pytest brings tomli on Python 3.10
    import tomli as tomllib

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


def test_the_metadata_names_a_license_addresses_and_the_supported_pythons() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"  # an SPDX expression (PEP 639)
    assert project["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    assert set(project["urls"]) == {"Homepage", "Documentation", "Changelog", "Issues"}
    assert all(url.startswith("https://") for url in project["urls"].values())
    pythons = [
        c.rsplit(" ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert pythons == ["3.10", "3.11", "3.12", "3.13"]
    assert project["requires-python"] == f">={pythons[0]}"
    assert {"Typing :: Typed", "Framework :: AsyncIO"} <= set(project["classifiers"])


# -- what a checkout ignores ---------------------------------------------------------

PACKAGE_DATA = [
    "asyncclient/py.typed",
    "asyncclient/emulator/data/explorer.html",
    "asyncclient/emulator/data/openapi.json",
    "asyncclient/emulator/data/sample.mp4",
]
"""Files the wheel must carry: hatchling packs what ``packages`` names, minus what
``.gitignore`` ignores."""


def git() -> str:
    """The path of git; skips without it, fails in CI (CI=true)."""
    if found := shutil.which("git"):
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI needs git")
    pytest.skip("no git")


def readme_batch_command() -> list[str]:
    """The README's command-line batch, as its words (the comment dropped)."""
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("asyncclient batch examples/"):
            return shlex.split(line, comments=True)
    raise AssertionError("the README has no `asyncclient batch examples/...` line")


@pytest.mark.heavy
@pytest.mark.heavy  # a real run of the command line; the same on every Python
def test_what_the_readme_s_batch_writes_in_a_checkout_is_ignored(tmp_path: Path) -> None:
    """The README's ``asyncclient batch`` run in a copy of a checkout (its ``.gitignore``
    and the rows file): every file it leaves is ignored, none is left untracked."""
    words = readme_batch_command()
    rows = Path(words[2])
    (tmp_path / rows.parent).mkdir(parents=True)
    shutil.copy(ROOT / rows, tmp_path / rows)
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    subprocess.run([git(), "init", "-q"], cwd=tmp_path, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCCLIENT_")}
    with serve_in_thread(time_scale=60) as emu:
        env.update(ASYNCCLIENT_BASE_URL=emu.url, ASYNCCLIENT_API_KEY=emu.add_team("premium"))
        done = subprocess.run(
            [sys.executable, "-m", "asyncclient", *words[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]

    def listed(*options: str) -> set[str]:
        out = subprocess.run(
            [git(), "ls-files", "--others", *options],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return set(out.stdout.splitlines())

    written = listed("--ignored", "--exclude-standard")
    assert {str(rows.with_suffix(".journal.jsonl")), words[words.index("--out") + 1]} <= written
    assert listed("--exclude-standard") == {".gitignore", str(rows)}


def test_the_sidecars_of_default_journals_and_downloads_are_ignored() -> None:
    """Names a run writes only for a while (a journal's lock, its index being replaced,
    a download streaming) or that the README's other examples use, as the package
    derives them."""
    journal = ROOT / "examples" / "welcome.journal.jsonl"
    names = [
        journal,
        index_path(journal),
        index_path(journal).with_name(index_path(journal).name + ".tmp"),
        sidecar_of(journal),
        ROOT / "examples" / "talking_avatars.journal.jsonl",  # examples/bulk_from_csv.py
        ROOT / "welcome.jsonl",  # the README's generate_many(..., journal="welcome.jsonl")
        index_path(ROOT / "welcome.jsonl"),
        ROOT / "vid_0001.mp4",  # asyncclient videos download ID: ./ID.mp4
        ROOT / "vid_0001.mp4.part",
    ]
    relative = [str(p.relative_to(ROOT)) for p in names]
    out = subprocess.run(
        [git(), "check-ignore", "--no-index", *relative],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert set(out.stdout.splitlines()) == set(relative)


def test_the_wheel_carries_the_package_data() -> None:
    """Hatchling packs ``packages`` minus what ``.gitignore`` ignores: the data files
    live under a packed folder, exist, and no ignore rule or exclusion drops them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["asyncclient"]
    assert "exclude" not in wheel and "only-include" not in wheel
    for name in PACKAGE_DATA:
        assert (ROOT / name).is_file(), name
    out = subprocess.run(
        [git(), "check-ignore", "--no-index", *PACKAGE_DATA],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.stdout == "" and out.returncode == 1, out.stdout
