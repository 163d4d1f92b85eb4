"""A client used before ``os.fork()`` works in the child (issue 30, point 4).

A server that loads the app before it forks its workers (gunicorn ``--preload``) copies
a client that may already have been used (a warm-up call at import). Each test runs
``tests/fork_worker.py`` in a process of its own, against an emulator served from this
one over loopback: it uses a client, forks, and the child uses it (and the parent again,
for the sync client). The child has a few seconds before ``signal.alarm`` kills it, and
the worker has a bound too, so a hang fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asyncclient import Client
from asyncclient.emulator import EmulatorThread, serve_in_thread

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork() is POSIX only")

WORKER = Path(__file__).resolve().parent / "fork_worker.py"


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    with serve_in_thread(time_scale=600.0, seed=3) as served:
        yield served


def run_worker(emu: EmulatorThread, scenario: str, *extra: str) -> dict[str, Any]:
    key = emu.add_team("premium", 1_000_000)
    done = subprocess.run(
        [sys.executable, str(WORKER), scenario, "--base-url", emu.url, "--api-key", key, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.stdout, done.stderr[-3000:])
    report: dict[str, Any] = json.loads(lines[-1])
    return report


def test_the_sync_client_used_before_a_fork_works_in_the_child_and_the_parent(
    emu: EmulatorThread,
) -> None:
    report = run_worker(emu, "sync")
    assert report["child"] == {"ok": "COMPLETED COMPLETED COMPLETED", "exit": 0}
    # The parent's loop, connections and the wait under way at the fork are intact.
    assert report["parent"] == {"waited": ["COMPLETED"], "after": "COMPLETED"}


def test_the_sync_client_of_a_fleet_works_in_the_child_and_the_parent(
    emu: EmulatorThread, redis_url: str
) -> None:
    """``redis=``: the child opens Redis connections of its own (the limiter's, the
    fleet's); the parent's keep working."""
    report = run_worker(emu, "sync-redis", "--redis", redis_url)
    assert report["child"] == {"ok": "COMPLETED COMPLETED COMPLETED", "exit": 0}
    assert report["parent"] == {"waited": ["COMPLETED"], "after": "COMPLETED"}


def test_the_async_client_used_before_a_fork_works_in_the_childs_own_loop(
    emu: EmulatorThread,
) -> None:
    report = run_worker(emu, "async")
    assert report["child"] == {"ok": "COMPLETED", "exit": 0}


def test_a_callers_session_used_before_a_fork_is_refused_at_once_in_the_child(
    emu: EmulatorThread,
) -> None:
    report = run_worker(emu, "async-session")
    child = report["child"]
    assert child["exit"] == 3 and child["error"] == "RuntimeError", child
    assert "session=" in child["message"] and "os.fork()" in child["message"]


def test_an_async_fleet_client_that_awaited_before_a_fork_refuses_to_await_in_the_child(
    emu: EmulatorThread, redis_url: str
) -> None:
    """Its fleet's state is bound to the parent's loop: the child's creation goes out
    (through Redis connections of its own), its wait fails at once with a clear error."""
    report = run_worker(emu, "async-redis", "--redis", redis_url)
    child = report["child"]
    assert child["exit"] == 3 and child["error"] == "RuntimeError", child
    assert "os.fork()" in child["message"] and "a client made there" in child["message"]


def test_an_async_fleet_client_that_only_created_before_a_fork_awaits_in_the_child(
    emu: EmulatorThread, redis_url: str
) -> None:
    """Its fleet poller never ran in the parent: the child awaits through it, with
    Redis connections and a fleet id of its own (not the parent's, nor its lease)."""
    report = run_worker(emu, "async-redis-created", "--redis", redis_url)
    assert report["child"] == {"ok": "COMPLETED own id", "exit": 0}


def test_the_fork_hook_of_a_sync_client_makes_a_new_async_client_unless_closed() -> None:
    """What runs in the child right after a fork, called here by hand."""
    client = Client("k", base_url="http://127.0.0.1:1")
    first = client._async
    client._after_fork()
    assert client._async is not first  # a fresh async client, same arguments
    assert client._async.base_url == first.base_url
    client.close()
    client._after_fork()  # a closed client stays closed
    assert client.closed
