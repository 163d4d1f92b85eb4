"""The notebook attaches from outside: the core never imports it, jobs keep no display,
and IPython's formatters (registered by type name) show jobs and batches."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.formatters import DisplayFormatter

import asyncclient.notebook as notebook
from asyncclient import AsyncClient, VideoJob
from asyncclient.batch import Batch
from asyncclient.notebook import display as shown
from asyncclient.notebook import live

PACKAGE = Path(__file__).resolve().parents[1] / "asyncclient"
FACES = ("asyncclient.notebook", "asyncclient.cli")


def imported_by(path: Path) -> set[str]:
    """Every module a file names in an import, wherever the import stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


@pytest.mark.parametrize("wing", ["awaiting", "batch"])
def test_the_core_wings_never_import_the_faces(wing: str) -> None:
    found = {}
    for path in sorted((PACKAGE / wing).glob("*.py")):
        text = path.read_text(encoding="utf-8")
        faces = {m for m in imported_by(path) if m.startswith(FACES)}
        faces |= {face for face in FACES if f'"{face}' in text or f"'{face}" in text}
        if faces:
            found[path.name] = sorted(faces)
    assert found == {}


def test_jobs_and_batches_keep_no_display_of_their_own() -> None:
    assert "_display" not in VideoJob.__slots__
    for kind in (VideoJob, Batch):
        for name in ("_ipython_display_", "_repr_html_", "_repr_mimebundle_", "_display"):
            assert not hasattr(kind, name), (kind, name)


async def test_ipythons_formatters_show_jobs_and_batches_by_type_name(
    client: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown_now: list[dict[str, str]] = []
    monkeypatch.setattr(live, "_frontend", lambda: (lambda b, **_: shown_now.append(b), False))
    formatter = DisplayFormatter()

    class Shell:
        display_formatter = formatter

    notebook.load_ipython_extension(Shell())
    notebook.attach(Shell())  # twice: harmless
    job = client.jobs.from_video_id("v1", project_id="p1")
    assert formatter.format(job) == ({}, {})  # IPython's display was taken over...
    assert shown_now == [shown.job_bundle(job.state)]  # ...by a snapshot (no kernel here)
    assert formatter.formatters["text/html"](job) == shown.job_html(job.state)
    batch = client.templates.generate_many("tpl_welcome", [{"title": "x"}])
    assert formatter.format(batch) == ({}, {})
    assert shown_now[-1] == shown.batch_bundle(batch)
    assert formatter.formatters["text/html"](batch) == shown.batch_html(batch)
    with pytest.raises(TypeError, match="not int"):
        notebook.snapshot(3)


def test_importing_the_package_in_a_running_shell_attaches_and_loads_no_display(
    tmp_path: Path,
) -> None:
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "import asyncclient\n"
        "printers = shell.display_formatter.ipython_display_formatter.deferred_printers\n"
        "assert ('asyncclient.awaiting.jobs', 'VideoJob') in printers, printers\n"
        "assert ('asyncclient.batch.runner', 'Batch') in printers, printers\n"
        "html = shell.display_formatter.formatters['text/html'].deferred_printers\n"
        "assert ('asyncclient.awaiting.jobs', 'VideoJob') in html, html\n"
        "loaded = [m for m in sys.modules if m.startswith('asyncclient.notebook.')]\n"
        "assert loaded == [], loaded\n"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=PACKAGE.parent)


def test_without_a_shell_importing_the_package_attaches_nothing() -> None:
    code = (
        "import sys, IPython, asyncclient\n"
        "assert 'asyncclient.notebook' in sys.modules\n"
        "assert not asyncclient.notebook.attach_to_running_shell()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)
