"""Start a real redis-server on a free loopback port, for tests and benchmarks."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence


class RedisUnavailable(RuntimeError):
    """redis-server is not installed."""


def free_port() -> int:
    """A loopback port free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_redis(
    port: int, workdir: str, *, appendfsync: str | None = None, more: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """Start redis-server on ``port`` with its files in ``workdir`` and wait until it
    answers; ``appendfsync`` (``always``, ``everysec``, ``no``) turns its AOF on (a server
    restarted on the same ``workdir`` reads it back), None leaves it off; ``more``: other
    arguments (``--replicaof HOST PORT``).

    Raises:
        RedisUnavailable: No ``redis-server`` on the PATH.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise RedisUnavailable("redis-server is not installed (apt-get install redis-server)")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    if appendfsync is None:
        args += ["--appendonly", "no", "--dir", workdir]
    else:
        args += ["--appendonly", "yes", "--appendfsync", appendfsync, "--dir", workdir]
    args += list(more)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"redis-server did not start on port {port}")
        time.sleep(0.05)


@contextlib.contextmanager
def redis_server(*, appendfsync: str | None = None) -> Iterator[str]:
    """Yield ``redis://127.0.0.1:<port>/0`` of a throwaway server; stop it afterwards.
    ``appendfsync``: its AOF's policy (None: no AOF, as before).

    Raises:
        RedisUnavailable: No ``redis-server`` on the PATH.
    """
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        proc = start_redis(port, workdir, appendfsync=appendfsync)
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def require_redis() -> bool:
    """True when missing Redis must fail the run (CI) rather than skip."""
    return os.environ.get("CI", "").lower() == "true"
