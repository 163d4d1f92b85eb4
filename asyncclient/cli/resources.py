"""Read-only commands: ``asyncclient videos list|get|wait|download``, ``templates list|get``.

Each command takes ``--json`` (machine-readable JSON on stdout, camelCase as on the
wire) and otherwise prints a table or ``key: value`` lines. Errors go to stderr as
``error: <message>``. Exit statuses: see :mod:`asyncclient.cli.exits` (0 done, 1 an
API error or a FAILED video, 2 bad input or configuration, 3 ``videos wait`` timed out).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast

from asyncclient._clock import SYSTEM_CLOCK, Clock, within
from asyncclient._convert import converter
from asyncclient.cli.exits import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE
from asyncclient.cli.options import count, positive_seconds
from asyncclient.cli.output import error, print_json, print_record, print_table
from asyncclient.cli.progress import DownloadProgress
from asyncclient.cli.terminal import LiveLine, bar
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL, AsyncClient
from asyncclient.errors import APIError, ValidationError, VideoFailedError
from asyncclient.models.enums import ProjectType, VideoListStatus
from asyncclient.models.videos import Video

__all__ = [
    "EXIT_CONFIG",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_TIMEOUT",
    "Handler",
    "add_connection_args",
    "register",
    "run",
]

Handler = Callable[[argparse.Namespace, AsyncClient], Awaitable[int]]
"""What ``func`` of a parsed command is: ``await func(args, client)`` -> exit status."""

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
    _register_videos(subparsers, common)
    templates = subparsers.add_parser("templates", help="list and read templates")
    tsub = templates.add_subparsers(dest="templates_command", metavar="COMMAND", required=True)
    p = tsub.add_parser("list", parents=[common], help="list the team's templates")
    p.add_argument(
        "--type",
        choices=[t.value for t in ProjectType],
        metavar="TYPE",
        help="only templates of this type: %(choices)s (default: every type)",
    )
    p.set_defaults(func=templates_list)
    p = tsub.add_parser("get", parents=[common], help="read one template")
    p.add_argument("id", metavar="ID")
    p.set_defaults(func=templates_get)


def _register_videos(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    videos = subparsers.add_parser("videos", help="list, read, wait for and download videos")
    vsub = videos.add_subparsers(dest="videos_command", metavar="COMMAND", required=True)
    p = vsub.add_parser("list", parents=[common], help="list videos (newest first)")
    p.add_argument(
        "--status",
        choices=[s.value for s in VideoListStatus if s is not VideoListStatus.DRAFT],
        help="only videos in this state (default: every state)",
    )
    p.add_argument(
        "--type",
        choices=[t.value for t in ProjectType],
        metavar="TYPE",
        help="only projects of this type: %(choices)s (default: every type)",
    )
    p.add_argument("--limit", type=count, default=50, metavar="N", help="at most N videos")
    p.set_defaults(func=videos_list)
    p = vsub.add_parser("get", parents=[common], help="read one video")
    p.add_argument("id", metavar="ID")
    p.set_defaults(func=videos_get)
    p = vsub.add_parser("wait", parents=[common], help="poll a video until COMPLETED or FAILED")
    p.add_argument("id", metavar="ID")
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="give up after this long (exit 3; default: wait until it ends)",
    )
    p.add_argument(
        "--interval",
        type=positive_seconds,
        default=2.0,
        metavar="SECONDS",
        help="seconds between reads",
    )
    p.set_defaults(func=videos_wait)
    p = vsub.add_parser("download", parents=[common], help="download a completed video")
    p.add_argument("id", metavar="ID")
    p.add_argument(
        "path",
        metavar="PATH",
        nargs="?",
        default=".",
        help="the file, or a directory (ending in / or existing: PATH/ID.mp4; default: .)",
    )
    p.set_defaults(func=videos_download)


# -- running ------------------------------------------------------------------------


async def run(args: argparse.Namespace, *, clock: Clock | None = None) -> int:
    """Build the client from ``args``, run ``args.func``, map errors to exit statuses.

    Args:
        args: Parsed by a parser that :func:`register` filled.
        clock: The client's clock (tests pass one that fast-forwards).

    Returns:
        The exit status (:mod:`asyncclient.cli.exits`): 0, 1 (an API or network
        error), 2 (configuration or input), 3 (timeout), or what the command returns.
    """
    try:
        client = AsyncClient(
            api_key=args.api_key,
            base_url=args.base_url,
            clock=clock,
            redis=getattr(args, "redis", None),  # batch --redis; else $ASYNCCLIENT_REDIS_URL
        )
    except ValueError as exc:
        # The library's words name its arguments; on the command line they are options.
        text = str(exc).replace("api_key is blank", "--api-key is blank")
        text = text.replace("pass api_key=...", "pass --api-key KEY")
        error(text.replace("pass base_url=...", "pass --base-url URL"))
        return EXIT_USAGE
    handler: Handler = args.func
    try:
        async with client:
            return await handler(args, client)
    except ValidationError as exc:
        error(str(exc))
        return EXIT_USAGE
    except (APIError, ValueError, OSError) as exc:
        error(str(exc))
        return EXIT_ERROR


# -- output -------------------------------------------------------------------------


def _show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(data)
    else:
        print_record(data)


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
        print_json([converter.unstructure(v) for v in videos])
        return EXIT_OK
    rows = [
        (v.id, v.status, f"{v.progress or 0}%", _when(v.created_at), v.name or "") for v in videos
    ]
    print_table(("ID", "STATUS", "PROGRESS", "CREATED", "NAME"), rows)
    return EXIT_OK


async def videos_get(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos get ID`` (spec 4.11)."""
    video = await client.videos.get(args.id)
    _show(converter.unstructure(video), args.json)
    return EXIT_OK


async def videos_wait(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos wait ID [--timeout S] [--interval S]``: 0 COMPLETED, 1 FAILED, 3 timeout.

    A :class:`~asyncclient.VideoJob` waits, through the client's shared poller
    (``--interval`` is its shortest interval).
    """
    poller = client.jobs.poller
    poller.min_interval = args.interval
    poller.max_interval = max(args.interval, poller.max_interval)
    job = client.jobs.from_video_id(args.id)
    line = LiveLine(sys.stderr, every=0.0)

    async def follow() -> None:
        async for update in job.updates():
            progress = update.progress or 0
            shown = f"{bar(progress / 100)} " if line.tty else ""
            text = f"{args.id}: {shown}{update.status} {progress}%"
            line.update(text, now=SYSTEM_CLOCK.monotonic(), final=job.done())

    try:
        try:
            # --timeout is the person's seconds: on the real clock, whatever paces the client
            finished = await within(SYSTEM_CLOCK, args.timeout, follow)
        finally:
            line.close()
        if not finished:
            error(f"video {args.id} not finished after {args.timeout:g} s (last: {job.status})")
            return EXIT_TIMEOUT
        video = job.result()
    except VideoFailedError as exc:
        if args.json and exc.video is not None:
            print_json(converter.unstructure(exc.video))
        error(f"video {exc.video_id} failed: {exc.message}")
        return EXIT_ERROR
    if args.json:
        print_json(converter.unstructure(video))
    else:
        print(f"{video.id} COMPLETED {video.url or ''}".rstrip())
    return EXIT_OK


async def videos_download(args: argparse.Namespace, client: AsyncClient) -> int:
    """``videos download ID [PATH]``: a PATH ending in ``/`` or naming a directory gets
    ``<PATH>/<ID>.mp4`` (made if missing); any other PATH is the file (default ``.``)."""
    progress = DownloadProgress(args.id)
    try:
        path = await client.videos.download(args.id, args.path, progress=progress)
    finally:
        progress.finish()
    size = path.stat().st_size
    if args.json:
        print_json({"id": args.id, "path": str(path), "size": size})
    else:
        print(f"{path} ({size} bytes)")
    return EXIT_OK


# -- templates ----------------------------------------------------------------------


async def templates_list(args: argparse.Namespace, client: AsyncClient) -> int:
    """``templates list [--type T]`` (spec 4.19)."""
    templates = await client.templates.list(type=args.type).collect()
    if args.json:
        print_json([converter.unstructure(t) for t in templates])
        return EXIT_OK
    rows = [(t.id, t.type or "", ", ".join(t.variables or []), t.name or "") for t in templates]
    print_table(("ID", "TYPE", "VARIABLES", "NAME"), rows)
    return EXIT_OK


async def templates_get(args: argparse.Namespace, client: AsyncClient) -> int:
    """``templates get ID`` (spec 4.20)."""
    template = await client.templates.get(args.id)
    _show(converter.unstructure(template), args.json)
    return EXIT_OK
