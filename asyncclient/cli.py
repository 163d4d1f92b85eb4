"""The ``asyncclient`` command line.

Commands: ``demo`` and ``batch`` (the main job), ``videos`` and ``templates``
(read-only, with ``--json``), and ``emulator`` (serve the emulator).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from asyncclient import _cli_batch, _cli_resources
from asyncclient._version import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asyncclient",
        description="Asyncio SDK for the video-generation service, with an embedded emulator.",
    )
    parser.add_argument("--version", action="version", version=f"asyncclient {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _cli_batch.register(sub)
    _cli_resources.register(sub)
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
    ns = parser.parse_args(args)
    if ns.command is None:
        parser.print_help()
        return 0
    try:
        return asyncio.run(_cli_batch.main(ns))
    except KeyboardInterrupt:
        if not _cli_batch.interrupt_reported:
            print("interrupted", file=sys.stderr)
        return _cli_batch.EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
