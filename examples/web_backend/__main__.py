"""``python -m examples.web_backend``: start the workers, forward signals, wait for them.

The parent serves nothing itself. It binds the address once with ``SO_REUSEPORT``
(reporting a taken address early, and choosing the port for all when ``--port 0``),
starts ``--workers`` processes with the "spawn" method, forwards SIGTERM and SIGINT to
them as SIGTERM, and exits when they have all exited: 0 after a requested stop that
every worker ended cleanly, 1 otherwise. A worker that exits on its own stops the rest.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import replace
from types import FrameType

from .config import Settings, parse_settings
from .worker import run_worker

__all__ = ["main"]


def _reserve(host: str, port: int) -> socket.socket:
    """A socket bound (not listening) to the address with ``SO_REUSEPORT``.

    It holds the port for the workers, which bind it too, and receives no connection.

    Raises:
        OSError: The address cannot be bound (taken, or not this machine's).
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


class _Fleet:
    """The worker processes, and whether a stop was asked for."""

    def __init__(self, settings: Settings) -> None:
        spawn = multiprocessing.get_context("spawn")
        self.workers = [
            spawn.Process(target=run_worker, args=(settings,), name=f"web-backend-worker-{i}")
            for i in range(settings.workers)
        ]
        self.stopping = False

    def stop(self, signum: int | None = None, frame: FrameType | None = None) -> None:
        """Ask every started worker to stop (SIGTERM); usable as a signal handler."""
        self.stopping = True
        for worker in self.workers:
            if worker.pid is not None and worker.exitcode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGTERM)

    def run(self) -> int:
        """Start the workers and wait for all of them; the exit status."""
        for worker in self.workers:
            if self.stopping:
                break
            worker.start()
        running = [w for w in self.workers if w.pid is not None]
        clean = True
        while running:
            multiprocessing.connection.wait([w.sentinel for w in running])
            for worker in [w for w in running if not w.is_alive()]:
                worker.join()
                running.remove(worker)
                if not self.stopping:  # exited on its own: bring the fleet down
                    print(f"{worker.name} exited ({worker.exitcode})", file=sys.stderr)
                    clean = False
                    self.stop()
                clean = clean and worker.exitcode == 0
        return 0 if clean else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the backend until SIGTERM or SIGINT; return the exit status."""
    settings = parse_settings(argv)
    try:  # each worker loads them again (a context does not cross to a process)
        settings.server_context()
    except OSError as exc:  # ssl.SSLError included
        print(f"web_backend: cannot load --certfile/--keyfile: {exc}", file=sys.stderr)
        return 1
    try:
        reserved = _reserve(settings.host, settings.port)
    except OSError as exc:
        print(f"web_backend: cannot bind {settings.host}:{settings.port}: {exc}", file=sys.stderr)
        return 1
    with reserved:
        fleet = _Fleet(replace(settings, port=reserved.getsockname()[1]))
        signal.signal(signal.SIGTERM, fleet.stop)
        signal.signal(signal.SIGINT, fleet.stop)
        return fleet.run()


if __name__ == "__main__":
    sys.exit(main())
