"""Real notebooks, run by nbclient in an ipykernel of this very interpreter, against the
emulator started inside the kernel.

The first builds a notebook that leaves a job, then a batch, as a cell's value and awaits
them in the next cell; every display message the kernel sends is recorded, so the test
sees the display being *updated* (a snapshot would send one ``display_data`` and nothing
more). The second runs ``examples/notebook.ipynb`` top to bottom, as CI's way of running
the example.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "notebook.ipynb"
KERNEL = "asyncclient-test"


class RecordingClient(NotebookClient):
    """A notebook client that also records every display message, in order.

    nbclient applies an ``update_display_data`` to the earlier output in place (and
    rewrites the message's type while doing so): the record is taken before that.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.displays: list[tuple[int, str, str | None, dict[str, Any]]] = []

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        kind = msg["msg_type"]
        if kind in ("display_data", "update_display_data", "execute_result"):
            content = msg["content"]
            display_id = (content.get("transient") or {}).get("display_id")
            self.displays.append((cell_index, kind, display_id, dict(content["data"])))
        return super().process_message(msg, cell, cell_index)

    def updates_of(self, display_id: str) -> list[dict[str, Any]]:
        return [d for _, k, i, d in self.displays if k == "update_display_data" and i == display_id]


def kernel_manager(tmp_path: Path) -> AsyncKernelManager:
    """A kernel manager for an ipykernel of ``sys.executable`` (a kernelspec written for
    this test, whatever kernelspecs the machine has)."""
    from ipykernel.kernelspec import write_kernel_spec

    write_kernel_spec(str(tmp_path / "kernels" / KERNEL))
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    assert specs.get_kernel_spec(KERNEL).argv[0] == sys.executable
    return AsyncKernelManager(
        kernel_name=KERNEL,
        kernel_spec_manager=specs,
        transport="ipc",  # local sockets, in tmp_path
        ip=str(tmp_path / "kernel-ipc"),
    )


def run(nb: Any, tmp_path: Path, *, timeout: int) -> RecordingClient:
    client = RecordingClient(
        nb,
        km=kernel_manager(tmp_path),
        timeout=timeout,
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute(cleanup_kc=True)  # raises CellExecutionError if a cell raised; then
    return client  # the kernel is shut down and the channels closed (cleanup_kc)


SETUP = f"""\
import sys
assert sys.executable == {sys.executable!r}, sys.executable  # this test's interpreter
from asyncclient import AsyncClient, Plan, PollPolicy
from asyncclient.emulator import Emulator

emu = Emulator(time_scale=60.0, seed=1)
await emu.start()
key = emu.add_team(plan="premium", credits=10_000)
client = AsyncClient(key, base_url=emu.url, plan=Plan.PREMIUM.rate_limit.scaled(60.0),
                     polling=PollPolicy(min_interval=0.1, max_interval=0.2))
"""

JOB = """\
job = await client.projects.create_talking_avatar(
    script="Hello from a notebook <b>cell</b>", avatar_id="avatar_001",
    voice_id="voice_001", name="Notebook <greeting>")
job
"""

BATCH = """\
batch = client.templates.generate_many("tpl_thanks", [
    {"title": "For Ann", "first_name": "Ann"},
    {"title": "For Bob", "first_name": "Bob"},
    {"title": "Wrong", "last_name": "Doe"},
], spacing=0.05)
batch
"""

END = """\
from asyncclient.notebook import live as _display_live
await client.aclose()
await emu.stop()
assert _display_live.showing(job) is None and _display_live.showing(batch) is None
assert not _display_live._FOLLOWERS, _display_live._FOLLOWERS
"""


@pytest.mark.heavy
def test_a_job_and_a_batch_update_their_display_in_place(tmp_path: Path) -> None:
    nb = new_notebook(
        cells=[
            new_code_cell(SETUP),
            new_code_cell(JOB),
            new_code_cell("video = await job\nvideo.status == 'COMPLETED'"),
            new_code_cell(BATCH),
            new_code_cell("results = await batch\n[r.status.value for r in results]"),
            new_code_cell(END),
        ]
    )
    client = run(nb, tmp_path, timeout=60)

    job_id = displayed_once(client, 1)
    updates = [u["text/html"] for u in client.updates_of(job_id)]
    assert any("<progress" in u for u in updates[:-1]), updates  # live progress...
    final = updates[-1]  # ...then the player
    assert "<video" in final and "COMPLETED" in final and "<progress" not in final
    assert "Notebook &lt;greeting&gt;" in final  # the name, escaped
    assert nb.cells[1].outputs[0]["data"]["text/html"] == final  # saved, updated in place
    assert "status=COMPLETED" in nb.cells[1].outputs[0]["data"]["text/plain"]
    assert nb.cells[2].outputs[0]["data"]["text/plain"] == "True"

    batch_id = displayed_once(client, 3)
    assert "not started" in first_html(client, 3)  # displaying it starts nothing
    updates = [u["text/html"] for u in client.updates_of(batch_id)]
    assert any("running" in u for u in updates), updates
    final = updates[-1]
    assert "<table" in final and final == nb.cells[3].outputs[0]["data"]["text/html"]
    assert [cell_text(c) for c in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>", final)] == [
        "0 completed",
        "1 completed",
        "2 rejected",
    ]
    assert final.count('<a href="http') == 2  # each completed row links its video
    assert "last_name" in html.unescape(final)  # the rejected row says why
    assert nb.cells[4].outputs[0]["data"]["text/plain"] == (
        "['completed', 'completed', 'rejected']"
    )


def displayed_once(client: RecordingClient, cell: int) -> str:
    """The display id of the one display a cell made (no plain execute_result)."""
    made = [(k, i) for c, k, i, _ in client.displays if c == cell and k != "update_display_data"]
    assert len(made) == 1 and made[0][0] == "display_data" and made[0][1], made
    return str(made[0][1])


def first_html(client: RecordingClient, cell: int) -> str:
    return str(next(d["text/html"] for c, _, _, d in client.displays if c == cell))


def cell_text(cells: tuple[str, str]) -> str:
    return " ".join(html.unescape(c) for c in cells)


@pytest.mark.heavy
def test_the_example_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    nb = nbformat.read(EXAMPLE, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")  # saved clean
    client = run(nb, tmp_path, timeout=120)
    shown = [d.get("text/html", "") for _, _, _, d in client.displays]
    assert any("<video" in h for h in shown)  # a job ended as its player
    assert any("<table" in h for h in shown)  # a batch ended as its table
