"""The ``asyncclient`` command line.

Commands: ``demo`` and ``batch`` (the main job), ``videos`` and ``templates``
(read-only), and ``emulator`` (serve the emulator); each takes ``--json``. The exit
statuses are one table for every command (:mod:`asyncclient.cli.exits`), shown at the
end of ``asyncclient --help``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Coroutine, Iterator, Sequence
from typing import Any

import asyncclient.cli.batch as _cli_batch
import asyncclient.cli.demo as _cli_demo
import asyncclient.cli.resources as _cli_resources
from asyncclient._version import __version__
from asyncclient.cli.exits import EXIT_INTERRUPTED, EXIT_OK, epilog
from asyncclient.cli.options import Parser, RawHelp

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = Parser(
        prog="asyncclient",
        description="Asyncio SDK for the video-generation service, with an embedded emulator.",
        epilog=epilog(),
        formatter_class=RawHelp,
    )
    parser.add_argument("--version", action="version", version=f"asyncclient {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _cli_demo.register(sub)
    _cli_batch.register(sub)
    _cli_resources.register(sub)
    sub.add_parser(
        "emulator",
        help="serve the service emulator on loopback (see `asyncclient emulator --help`)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns:
        The exit status (see ``asyncclient --help``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "emulator":
        from asyncclient.emulator.__main__ import main as emulator_main

        return emulator_main(args[1:])
    if args[:2] == ["batch", "status"]:  # (a rows file named "status": ./status)
        from asyncclient.cli.batch_status import main as status_main

        return status_main(args[2:])
    parser = _parser()
    ns = parser.parse_args(args)
    if ns.command is None:
        parser.print_help()
        return EXIT_OK
    command = _cli_demo.main(ns) if ns.command == "demo" else _cli_resources.run(ns)
    try:
        with _file_size_errors():
            return asyncio.run(_interruptible(command))
    except KeyboardInterrupt:
        if not _cli_batch.interrupt_reported:
            print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


@contextlib.contextmanager
def _file_size_errors() -> Iterator[None]:
    """Ignore ``SIGXFSZ`` meanwhile: a write past the file size limit (``ulimit -f``)
    then fails with ``EFBIG`` instead of killing the process, so that a batch whose
    journal cannot grow stops in order and says what it sent (POSIX, main thread)."""
    xfsz = getattr(signal, "SIGXFSZ", None)
    try:
        previous = signal.signal(xfsz, signal.SIG_IGN) if xfsz is not None else None
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if xfsz is not None and previous is not None:
            signal.signal(xfsz, previous)


async def _interruptible(command: Coroutine[Any, Any, int]) -> int:
    """Run ``command`` so that Ctrl-C cancels it rather than striking wherever it is.

    Python 3.11's ``asyncio.run`` already turns SIGINT into a cancellation of the main
    task; on 3.10 the ``KeyboardInterrupt`` is raised inside whatever task runs at that
    moment (a journal write, a row's task group) and escapes as a group of tracebacks.
    Handling the signal on the loop gives every version the same, orderly path: the
    command sees ``CancelledError``, closes what it holds and reports once.
    """
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        installed = False
    try:
        return await command
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
