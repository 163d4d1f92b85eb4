"""The command line: start on a free port, read the printed URL and key, stop."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

import pytest


def test_cli_serves_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "asyncclient.emulator", "--port", "0", "--time-scale", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("asyncclient emulator listening on http://127.0.0.1:")
        url = first.rsplit(" ", 1)[1].strip()
        second = proc.stdout.readline()
        assert second.startswith("demo API key: ")
        key = second.split(": ", 1)[1].strip()
        request = urllib.request.Request(url + "/v1/integration/list", headers={"x-api-key": key})
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert resp.status == 200
            assert json.load(resp)["data"]["total"] == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_main_rejects_bad_arguments() -> None:
    from asyncclient.emulator.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(["--plan", "gold"])
    assert info.value.code == 2
