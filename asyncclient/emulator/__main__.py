"""``asyncclient emulator`` / ``python -m asyncclient.emulator``: serve until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import ssl
import sys

from asyncclient.emulator._emulator import Emulator
from asyncclient.emulator._ratelimit import PLANS

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asyncclient emulator",
        description="Serve the emulated video-generation service on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 = any)")
    parser.add_argument(
        "--time-scale",
        type=float,
        default=60.0,
        help="service seconds per real second (default 60: a minute per second)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of ids and jitter (default 0)")
    parser.add_argument("--plan", choices=list(PLANS), default="premium", help="demo team plan")
    parser.add_argument("--credits", type=int, default=100_000, help="demo team credits")
    parser.add_argument(
        "--webhook-ca",
        metavar="FILE",
        help="PEM CA bundle to trust when notifying HTTPS webhook URLs "
        "(e.g. the CA of a local receiver's test certificate)",
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


async def _serve(args: argparse.Namespace, webhook_ssl: ssl.SSLContext | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    emu = Emulator(
        time_scale=args.time_scale,
        seed=args.seed,
        host=args.host,
        port=args.port,
        webhook_ssl=webhook_ssl,
    )
    async with emu:
        key = emu.add_team(plan=args.plan, credits=args.credits, name="Demo team")
        print(f"asyncclient emulator listening on {emu.url}", flush=True)
        print(f"demo API key: {key}", flush=True)
        print(f"try: curl -H 'x-api-key: {key}' {emu.url}/v1/integration/list", flush=True)
        print("press Ctrl-C to stop", flush=True)
        await stop.wait()


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
        print(f"asyncclient emulator: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
