"""``asyncclient emulator`` / ``python -m asyncclient.emulator``: serve until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import signal
import ssl
import sys
from collections.abc import Callable

from asyncclient.emulator._emulator import Emulator
from asyncclient.emulator._ratelimit import PLANS
from asyncclient.emulator._routes_docs import DOCS_PATH, OPENAPI_PATH

__all__ = ["DEFAULT_PORT", "main"]

DEFAULT_PORT = 8080
"""Tried first when ``--port`` is not given; a free port is taken if it is in use."""


def _number(kind: type[int] | type[float], low: float, high: float) -> Callable[[str], float]:
    """An option type: a number of ``kind`` from ``low`` to ``high`` (argparse names the
    option and exits 2 on anything else)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not low <= value <= high:  # NaN is refused too
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asyncclient emulator",
        description="Serve the emulated video-generation service on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=_number(int, 0, 65535),
        default=None,
        help=f"port (default: {DEFAULT_PORT}, or a free one if {DEFAULT_PORT} is taken; "
        "0 = any free port); the URL is printed",
    )
    parser.add_argument(
        "--time-scale",
        type=_number(float, 0.001, 1e9),
        default=60.0,
        help="service seconds per real second (default: 60, a minute a second)",
    )
    parser.add_argument(
        "--seed", type=_number(int, 0, 2**63), default=0, help="seed of ids and jitter (default: 0)"
    )
    parser.add_argument(
        "--plan",
        choices=list(PLANS),
        default="premium",
        help="the demo team's plan (default: premium)",
    )
    parser.add_argument(
        "--credits",
        type=_number(int, 0, 10**15),
        default=100_000,
        help="the demo team's credits (default: 100000)",
    )
    parser.add_argument(
        "--webhook-ca",
        metavar="FILE",
        help="PEM CA bundle to trust when notifying HTTPS webhook URLs "
        "(e.g. the CA of a local receiver's test certificate)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON line {"url", "apiKey", "teamId", "openapi", "docs"} instead of '
        "the text (openapi: the API description's URL; docs: the explorer's)",
    )
    return parser


def _webhook_context(cafile: str | None) -> ssl.SSLContext | None:
    """The client context of webhook deliveries: trusting ``cafile`` only, if given.

    Raises:
        OSError: The file cannot be read.
        ssl.SSLError: It holds no usable PEM certificate.
    """
    if cafile is None:
        return None
    return ssl.create_default_context(cafile=cafile)


async def _start(args: argparse.Namespace, webhook_ssl: ssl.SSLContext | None) -> Emulator:
    """Start serving on ``--port``; without it on :data:`DEFAULT_PORT`, else a free port.

    Raises:
        OSError: The address cannot be bound (a ``--port`` in use, a bad ``--host``).
    """

    def emulator(port: int) -> Emulator:
        return Emulator(
            time_scale=args.time_scale,
            seed=args.seed,
            host=args.host,
            port=port,
            webhook_ssl=webhook_ssl,
        )

    emu = emulator(DEFAULT_PORT if args.port is None else args.port)
    try:
        await emu.start()
    except OSError as exc:
        if args.port is not None or exc.errno != errno.EADDRINUSE:
            raise
        print(
            f"port {DEFAULT_PORT} is in use: serving on a free port instead (--port N chooses one)",
            file=sys.stderr,
            flush=True,
        )
        emu = emulator(0)
        await emu.start()
    return emu


async def _serve(args: argparse.Namespace, webhook_ssl: ssl.SSLContext | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    emu = await _start(args, webhook_ssl)
    try:
        key = emu.add_team(plan=args.plan, credits=args.credits, name="Demo team")
        if args.json:
            info = {
                "url": emu.url,
                "apiKey": key,
                "teamId": emu.team_id(key),
                "openapi": emu.url + OPENAPI_PATH,
                "docs": emu.url + DOCS_PATH,
            }
            print(json.dumps(info))
            sys.stdout.flush()
        else:
            print(f"asyncclient emulator listening on {emu.url}", flush=True)
            print(f"demo API key: {key}", flush=True)
            print(f"try: curl -H 'x-api-key: {key}' {emu.url}/v1/integration/list", flush=True)
            print(f"or: export ASYNCCLIENT_BASE_URL={emu.url} ASYNCCLIENT_API_KEY={key}")
            print(f"API description (OpenAPI): {emu.url}{OPENAPI_PATH}")
            print(f"API explorer: {emu.url}{DOCS_PATH}")
            print("press Ctrl-C to stop", flush=True)
        await stop.wait()
    finally:
        await emu.stop()


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until Ctrl-C or SIGTERM; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        webhook_ssl = _webhook_context(args.webhook_ca)
    except (OSError, ssl.SSLError) as exc:  # SSLError is an OSError; named for the reader
        parser.error(f"--webhook-ca {args.webhook_ca}: {exc}")
    try:
        asyncio.run(_serve(args, webhook_ssl))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            port = args.port if args.port is not None else DEFAULT_PORT
            where = f"{args.host}:{port}"
            exc_text = f"{where}: address already in use (--port 0 picks a free port)"
        else:
            exc_text = str(exc)
        print(f"asyncclient emulator: {exc_text}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
