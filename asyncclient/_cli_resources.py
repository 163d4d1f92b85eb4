"""Read-only commands: ``asyncclient videos list|get|wait|download``, ``templates list|get``.

Each command takes ``--json`` (machine-readable JSON on stdout, camelCase as on the
wire) and otherwise prints a plain table or ``key: value`` lines. Errors go to
stderr as ``error: <message>``. Exit statuses: 0 done, 1 an API error (or a FAILED
video for ``videos wait``), 2 a configuration or input error, 3 ``videos wait``
timed out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, cast

from asyncclient._convert import converter
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL, AsyncClient
from asyncclient.errors import APIError, ValidationError
from asyncclient.models.enums import ProjectType, VideoListStatus, VideoStatus
from asyncclient.models.videos import Video, VideoDetail

__all__ = [
    "EXIT_CONFIG",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_TIMEOUT",
    "Handler",
    "add_connection_args",
    "register",
    "run",
    "wait_video",
]

Handler = Callable[[argparse.Namespace, AsyncClient], Awaitable[int]]
"""What ``func`` of a parsed command is: ``await func(args, client)`` -> exit status."""

EXIT_OK, EXIT_ERROR, EXIT_CONFIG, EXIT_TIMEOUT = 0, 1, 2, 3

_sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
"""How ``videos wait`` sleeps between polls (tests replace it)."""
_clock: Callable[[], float] = time.monotonic
"""How ``videos wait`` measures its timeout (tests replace it)."""

# -- parsers ------------------------------------------------------------------------


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--api-key`` and ``--base-url`` (default: the environment, via AsyncClient)."""
    parser.add_argument(
        "--api-key", default=None, metavar="KEY", help=f"API key (default: ${ENV_API_KEY})"
    )
    parser.add_argument(
        "--base-url", default=None, metavar="URL", help=f"service URL (default: ${ENV_BASE_URL})"
    )


def _common() -> argparse.ArgumentParser:
    """Options every command takes, after its name."""
    common = argparse.ArgumentParser(add_help=False)
    add_connection_args(common)
    common.add_argument("--json", action="store_true", help="print JSON on stdout")
    return common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``videos`` and ``templates`` commands; each leaf sets ``func`` (a Handler).

    Args:
        subparsers: What ``parser.add_subparsers()`` returned.
    """
    common = _common()
    videos = subparsers.add_parser("videos", help="list, read, wait for and download videos")
    vsub = videos.add_subparsers(dest="videos_command", metavar="COMMAND", required=True)
    p = vsub.add_parser("list", parents=[common], help="list videos (newest first)")
    p.add_argument("--status", choices=[s.value for s in VideoListStatus])
    p.add_argument("--type", choices=[t.value for t in ProjectType])
    p.add_argument("--limit", type=_positive_int, default=50, help="at most N videos (50)")
    p.set_defaults(func=videos_list)
    p = vsub.add_parser("get", parents=[common], help="read one video")
    p.add_argument("id", metavar="ID")
    p.set_defaults(func=videos_get)
    p = vsub.add_parser("wait", parents=[common], help="poll a video until COMPLETED or FAILED")
    p.add_argument("id", metavar="ID")
    p.add_argument(
        "--timeout", type=_positive_float, default=None, metavar="SECONDS", help="give up (exit 3)"
    )
    p.add_argument(
        "--interval", type=_positive_float, default=2.0, metavar="SECONDS", help="between reads (2)"
    )
    p.set_defaults(func=videos_wait)
    p = vsub.add_parser("download", parents=[common], help="download a completed video")
    p.add_argument("id", metavar="ID")
    p.add_argument("path", metavar="PATH", nargs="?", default=".", help="file or directory (.)")
    p.set_defaults(func=videos_download)

    templates = subparsers.add_parser("templates", help="list and read templates")
    tsub = templates.add_subparsers(dest="templates_command", metavar="COMMAND", required=True)
    p = tsub.add_parser("list", parents=[common], help="list the team's templates")
    p.add_argument("--type", choices=[t.value for t in ProjectType])
    p.set_defaults(func=templates_list)
    p = tsub.add_parser("get", parents=[common], help="read one template")
    p.add_argument("id", metavar="ID")
    p.set_defaults(func=templates_get)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


# -- running ------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    """Build the client from ``args``, run ``args.func``, map errors to exit statuses.

    Args:
        args: Parsed by a parser that :func:`register` filled.

    Returns:
        The exit status: 0, 1 (API error), 2 (configuration or input), 3 (timeout).
    """
    try:
        client = AsyncClient(api_key=args.api_key, base_url=args.base_url)
    except ValueError as exc:
        _error(str(exc))
        return EXIT_CONFIG
    handler: Handler = args.func
    try:
        async with client:
            return await handler(args, client)
    except ValidationError as exc:
        _error(str(exc))
        return EXIT_CONFIG
    except (APIError, ValueError, OSError) as exc:
        _error(str(exc))
        return EXIT_ERROR


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


# -- output -------------------------------------------------------------------------


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [list(headers)] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _print_record(data: dict[str, Any]) -> None:
    """``key: value`` lines; nested values as indented JSON."""
    width = max((len(k) for k in data), default=0)
    for key, value in data.items():
        if isinstance(value, (dict, list)):
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        else:
            text = str(value)
        print(f"{key.ljust(width)}  {text}")


def _show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _print_json(data)
    else:
        _print_record(data)


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


# -- videos -------------------------------------------------------------------------


async def videos_list(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos list [--status S] [--type T] [--limit N]`` (spec 4.10)."""
    pager = client.videos.list(type=args.type, status=args.status, page_size=min(args.limit, 100))
    videos: list[Video] = []
    async with contextlib.aclosing(cast(AsyncGenerator[Video, None], aiter(pager))) as items:
        async for video in items:
            videos.append(video)
            if len(videos) >= args.limit:
                break
    if args.json:
        _print_json([converter.unstructure(v) for v in videos])
        return EXIT_OK
    rows = [
        (v.id, v.status, f"{v.progress or 0}%", _when(v.created_at), v.name or "") for v in videos
    ]
    _print_table(("ID", "STATUS", "PROGRESS", "CREATED", "NAME"), rows)
    return EXIT_OK


async def videos_get(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos get ID`` (spec 4.11)."""
    video = await client.videos.get(args.id)
    _show(converter.unstructure(video), args.json)
    return EXIT_OK


async def wait_video(
    client: AsyncClient,
    video_id: str,
    *,
    interval: float = 2.0,
    timeout: float | None = None,
    on_poll: Callable[[VideoDetail], None] | None = None,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
    clock: Callable[[], float] | None = None,
) -> VideoDetail | None:
    """Read the video every ``interval`` seconds until COMPLETED or FAILED (spec 3.1).

    Args:
        client: The client.
        video_id: The video.
        interval: Seconds between reads.
        timeout: Give up after this many seconds (``None``: never).
        on_poll: Called with each record read.
        sleep: Instead of ``asyncio.sleep`` (tests pass a fake).
        clock: Instead of ``time.monotonic`` (tests pass a fake).

    Returns:
        The last record, or ``None`` when ``timeout`` ran out first.
    """
    sleep = sleep or _sleep
    clock = clock or _clock
    deadline = None if timeout is None else clock() + timeout
    while True:
        video = await client.videos.get(video_id)
        if on_poll is not None:
            on_poll(video)
        if video.is_terminal:
            return video
        pause = interval
        if deadline is not None:
            remaining = deadline - clock()
            if remaining <= 0:
                return None
            pause = min(interval, remaining)  # one last read at the deadline
        await sleep(pause)


async def videos_wait(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos wait ID [--timeout S] [--interval S]``: 0 COMPLETED, 1 FAILED, 3 timeout."""
    shown: set[str] = set()

    def show(video: VideoDetail) -> None:
        line = f"{video.id}: {video.status} {video.progress or 0}%"
        if not args.json and line not in shown:
            print(line, file=sys.stderr)
            shown.add(line)

    video = await wait_video(
        client, args.id, interval=args.interval, timeout=args.timeout, on_poll=show
    )
    if video is None:
        _error(f"video {args.id} not finished after {args.timeout:g} s")
        return EXIT_TIMEOUT
    if args.json:
        _print_json(converter.unstructure(video))
    if video.status == VideoStatus.FAILED:
        _error(f"video {video.id} failed: {video.message or 'no message'}")
        return EXIT_ERROR
    if not args.json:
        print(f"{video.id} COMPLETED {video.url or ''}".rstrip())
    return EXIT_OK


async def videos_download(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos download ID [PATH]``: PATH is a file or a directory (default ``.``)."""
    progress = _TtyProgress() if not args.json and sys.stderr.isatty() else None
    try:
        path = await client.videos.download(args.id, args.path, progress=progress)
    finally:
        if progress is not None:
            progress.end()
    size = path.stat().st_size
    if args.json:
        _print_json({"id": args.id, "path": str(path), "size": size})
    else:
        print(f"{path} ({size} bytes)")
    return EXIT_OK


class _TtyProgress:
    """Rewrites one line of stderr with the percentage done."""

    def __call__(self, done: int, total: int | None) -> None:
        shown = f"{done * 100 // total}%" if total else f"{done} bytes"
        print(f"\rdownloading... {shown}", end="", file=sys.stderr, flush=True)

    def end(self) -> None:
        print(file=sys.stderr)


# -- templates ----------------------------------------------------------------------


async def templates_list(args: argparse.Namespace, client: AsyncClient) -> int:
    """``templates list [--type T]`` (spec 4.19)."""
    templates = await client.templates.list(type=args.type).collect()
    if args.json:
        _print_json([converter.unstructure(t) for t in templates])
        return EXIT_OK
    rows = [(t.id, t.type or "", ", ".join(t.variables or []), t.name or "") for t in templates]
    _print_table(("ID", "TYPE", "VARIABLES", "NAME"), rows)
    return EXIT_OK


async def templates_get(args: argparse.Namespace, client: AsyncClient) -> int:
    """``templates get ID`` (spec 4.20)."""
    template = await client.templates.get(args.id)
    _show(converter.unstructure(template), args.json)
    return EXIT_OK
