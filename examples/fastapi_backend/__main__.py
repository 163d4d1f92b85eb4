"""``python -m examples.fastapi_backend``: run the application under uvicorn with N workers.

The parent checks what it can at once (the certificate, the address), leaves the settings
in the environment for the workers (:data:`.config.SETTINGS_ENV`), and hands over to
``uvicorn.run`` with the application factory's import string and ``workers=``: uvicorn
binds the address once, starts the workers as new interpreters, forwards SIGTERM and
SIGINT to them and exits when they have; each worker prints its report line as its
application stops.
"""

from __future__ import annotations

import os
import socket
import ssl
import sys
from collections.abc import Sequence
from dataclasses import replace

import uvicorn

from .config import SETTINGS_ENV, Settings, parse_settings, to_environment

__all__ = ["main"]

APP = "examples.fastapi_backend.app:app_from_environment"
"""The factory each worker imports and calls."""


def _free_port(host: str) -> int:
    """A port free on ``host`` now (for ``--port 0``: uvicorn binds the one it is given)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    with socket.socket(family, kind, proto) as sock:
        sock.bind(address)
        return int(sock.getsockname()[1])


def _check(settings: Settings) -> str | None:
    """What stops the backend before any worker starts, or None."""
    try:
        if settings.certfile:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(settings.certfile, settings.keyfile)
    except OSError as exc:  # ssl.SSLError included
        return f"cannot load --certfile/--keyfile: {exc}"
    try:
        socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"cannot bind {settings.host}:{settings.port}: {exc}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the backend until SIGTERM or SIGINT; return the exit status."""
    settings = parse_settings(argv)
    problem = _check(settings)
    if problem is not None:
        print(f"fastapi_backend: {problem}", file=sys.stderr)
        return 1
    if settings.port == 0:
        settings = replace(settings, port=_free_port(settings.host))
    os.environ[SETTINGS_ENV] = to_environment(settings)
    uvicorn.run(
        APP,
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        ssl_certfile=settings.certfile,
        ssl_keyfile=settings.keyfile,
        lifespan="on",  # the client opens and closes with the application
        access_log=False,  # notification URLs carry the receiver's secret token
        log_level="warning",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
