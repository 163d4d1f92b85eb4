"""The ``asyncclient`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from asyncclient._version import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asyncclient",
        description="Asyncio SDK for the video-generation service, with an embedded emulator.",
    )
    parser.add_argument("--version", action="version", version=f"asyncclient {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser(
        "emulator",
        help="serve the service emulator on loopback (see `asyncclient emulator --help`)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "emulator":
        from asyncclient.emulator.__main__ import main as emulator_main

        return emulator_main(args[1:])
    parser = _parser()
    parser.parse_args(args)
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
