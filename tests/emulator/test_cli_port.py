"""``asyncclient emulator`` without ``--port``: 8080 if free, else a free port, said so."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest

from asyncclient.emulator import __main__ as cli


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def options(*argv: str) -> argparse.Namespace:
    return cli._parser().parse_args(list(argv))


async def test_the_default_port_taken_falls_back_to_a_free_one(
    taken_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "DEFAULT_PORT", taken_port)
    emu = await cli._start(options(), None)
    try:
        port = int(emu.url.rsplit(":", 1)[1])
        assert port not in (taken_port, 0)
    finally:
        await emu.stop()
    assert f"port {taken_port} is in use: serving on a free port instead" in capsys.readouterr().err


async def test_the_default_port_free_is_used(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port free a moment ago
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    monkeypatch.setattr(cli, "DEFAULT_PORT", free)
    emu = await cli._start(options(), None)
    try:
        assert emu.url == f"http://127.0.0.1:{free}"
    finally:
        await emu.stop()
    assert capsys.readouterr().err == ""


def test_a_port_asked_for_and_taken_is_an_error(
    taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--port", str(taken_port)]) == 1
    err = capsys.readouterr().err
    assert "address already in use" in err and "--port 0 picks a free port" in err


@pytest.mark.heavy
def test_json_prints_the_url_and_key_on_one_line() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "asyncclient.emulator", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert {"url", "apiKey", "teamId", "openapi", "docs"} <= set(info)
        request = urllib.request.Request(
            info["url"] + "/v1/integration/list", headers={"x-api-key": info["apiKey"]}
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert resp.status == 200
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
