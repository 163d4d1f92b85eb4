"""The main job on the command line: ``asyncclient batch`` and ``asyncclient demo``."""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asyncclient._cli_resources import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, add_connection_args, run
from asyncclient._progress import ProgressDisplay, format_duration
from asyncclient.batch import Batch, BatchProgress, RowResult
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL, AsyncClient
from asyncclient.ratelimit import Plan

__all__ = ["read_rows", "register"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C

DEMO_TEMPLATE = "tpl_welcome"
DEMO_SCALE = 60.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``batch`` and ``demo`` commands."""
    p = subparsers.add_parser(
        "batch",
        help="generate one template video per row of a CSV or JSON Lines file",
        description=(
            "Generate one video per row: the 'title' column is the video's title, every "
            "other column a template variable. Progress is journaled: run the same command "
            "again after an interruption and it resumes without paying twice."
        ),
    )
    p.add_argument("rows", metavar="ROWS", help="a .csv or .jsonl file of rows")
    p.add_argument("--template", required=True, metavar="ID", help="the template's id")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="in flight (4)")
    p.add_argument("--spacing", type=float, default=1.0, metavar="S", help="between sends (1)")
    p.add_argument("--journal", metavar="FILE", help="default: ROWS.journal.jsonl")
    p.add_argument("--out", metavar="RESULTS.jsonl", help="write one result per row")
    p.add_argument("--download", metavar="DIR", help="download completed videos here")
    p.add_argument("--budget", type=int, metavar="CREDITS", help="stop submitting past it")
    p.add_argument("--title-column", default="title", metavar="NAME", help="(title)")
    add_connection_args(p)
    p.set_defaults(func=_batch, needs_client=True)

    d = subparsers.add_parser(
        "demo",
        help="generate a batch of template videos against the embedded emulator",
        description=(
            "Starts the embedded service emulator (time runs 60x faster), generates a batch "
            "of template videos with a progress bar, downloads them and prints a summary. "
            "With --real it runs against the service configured by ASYNCCLIENT_API_KEY and "
            "ASYNCCLIENT_BASE_URL instead (this spends credits)."
        ),
    )
    d.add_argument("--rows", type=int, default=20, metavar="N", help="videos to make (20)")
    d.add_argument("--real", action="store_true", help="use the configured real service")
    d.add_argument("--template", default=None, metavar="ID", help="with --real: the template")
    d.add_argument("--download", metavar="DIR", help="where to save the videos (a temp dir)")
    d.set_defaults(func=None, demo=True)


async def main(args: argparse.Namespace) -> int:
    """Run ``batch`` or ``demo``."""
    if getattr(args, "demo", False):
        return await _demo(args)
    return await run(args)


# -- batch -------------------------------------------------------------------------------


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV file (header line first) or a JSON Lines file (one object a line).

    Raises:
        ValueError: Neither, or a line that is not a JSON object.
    """
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as fh:
            return [dict(row) for row in csv.DictReader(fh)]
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        rows = []
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    row = json.loads(line)
                    if not isinstance(row, dict):
                        raise ValueError(f"{path}:{number}: expected a JSON object")
                    rows.append(row)
        return rows
    raise ValueError(f"{path}: rows must be a .csv or .jsonl file")


async def _batch(args: argparse.Namespace, client: AsyncClient) -> int:
    path = Path(args.rows)
    try:
        rows = read_rows(path)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    journal = Path(args.journal) if args.journal else path.with_suffix(".journal.jsonl")
    batch = client.templates.generate_many(
        args.template,
        rows,
        title_key=args.title_column,
        spacing=args.spacing,
        concurrency=args.concurrency,
        journal=journal,
        on_progress=ProgressDisplay(),
        budget=args.budget,
    )
    try:
        results = await _run_batch(batch)
    except asyncio.CancelledError:  # Ctrl-C: the batch and its journal are closed by now
        _report_interrupt(batch.progress, journal)
        return EXIT_INTERRUPTED
    if args.out:
        _write_results(Path(args.out), results, rows)
    if args.download:
        await _download(client, results, Path(args.download))
    counts = _counts(results)
    unresolved = f", {counts['unresolved']} unresolved" if counts["unresolved"] else ""
    print(
        f"{counts['completed']} completed, {counts['failed']} failed, "
        f"{counts['rejected']} rejected, {counts['skipped']} skipped{unresolved} "
        f"(journal: {journal})"
    )
    if counts["unresolved"]:
        print(
            f"{counts['unresolved']} rows were sent but the service could not yet say whether "
            "it made them: run the same command again to find out (they are never resent "
            "blindly)",
            file=sys.stderr,
        )
    return EXIT_OK if counts["completed"] == len(results) else EXIT_ERROR


interrupt_reported = False
"""Set once the one line about an interruption was printed (``cli.main`` reads it)."""


def _report_interrupt(progress: BatchProgress, journal: Path) -> None:
    global interrupt_reported
    interrupt_reported = True
    print(
        f"\ninterrupted: {progress.finished} of {progress.total} rows finished, "
        f"{progress.submitted} submitted, every submission recorded in {journal}; "
        "run the same command again to resume",
        file=sys.stderr,
    )


async def _run_batch(batch: Batch) -> list[RowResult]:
    items = await batch.prepare()
    bad = [item for item in items if item.problems]
    for item in bad:
        print(f"row {item.index}: rejected: {'; '.join(item.problems)}", file=sys.stderr)
    if bad:
        print(f"{len(bad)} of {len(items)} rows rejected before any submission", file=sys.stderr)
    return await batch


def _counts(results: Sequence[RowResult]) -> dict[str, int]:
    counts = dict.fromkeys(("completed", "failed", "rejected", "skipped", "unresolved"), 0)
    for result in results:
        counts[result.status] += 1
    return counts


def _write_results(path: Path, results: Sequence[RowResult], rows: Sequence[Any]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in results:
            record = {
                "row": r.index,
                "status": r.status,
                "title": rows[r.index].get("title") if r.index < len(rows) else None,
                "videoId": r.video_id,
                "projectId": r.project_id,
                "url": r.video.url if r.video else None,
                "error": r.error,
            }
            fh.write(json.dumps(record) + "\n")


async def _download(client: AsyncClient, results: Sequence[RowResult], folder: Path) -> int:
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    count = 0
    for r in results:
        if r.ok and r.video is not None:
            await client.videos.download(r.video, folder)
            count += 1
    return count


# -- demo --------------------------------------------------------------------------------


def _demo_rows(n: int) -> list[dict[str, str]]:
    names = ["Ann", "Bo", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
    products = ["Acme Lamp", "Acme Mug", "Acme Desk"]
    return [
        {
            "title": f"Welcome {names[i % len(names)]} #{i + 1}",
            "first_name": names[i % len(names)],
            "product": products[i % len(products)],
            "logo": "https://cdn.example/acme-logo.png",
        }
        for i in range(n)
    ]


async def _demo(args: argparse.Namespace) -> int:
    import os

    if args.real:
        if not (os.environ.get(ENV_API_KEY) and os.environ.get(ENV_BASE_URL)):
            print(f"error: --real needs {ENV_API_KEY} and {ENV_BASE_URL}", file=sys.stderr)
            return EXIT_CONFIG
        if not args.template:
            print("error: --real needs --template ID (one of your templates)", file=sys.stderr)
            return EXIT_CONFIG
        async with AsyncClient() as client:
            return await _demo_run(client, args, args.template, emulator=None)
    if os.environ.get(ENV_API_KEY) or os.environ.get(ENV_BASE_URL):
        print(
            f"note: {ENV_API_KEY}/{ENV_BASE_URL} are set, but the demo uses the embedded "
            "emulator unless you pass --real",
            file=sys.stderr,
        )
    from asyncclient.emulator import Emulator

    async with Emulator(time_scale=DEMO_SCALE, seed=7, failure_rate={"class": 0.05}) as emu:
        key = emu.add_team(plan="starter", credits=10_000)
        rate = Plan.STARTER.rate_limit.scaled(DEMO_SCALE)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as client:
            return await _demo_run(client, args, DEMO_TEMPLATE, emulator=emu)


async def _demo_run(
    client: AsyncClient, args: argparse.Namespace, template: str, *, emulator: Any
) -> int:
    where = (
        f"the embedded emulator at {client.base_url} (no account needed; time runs "
        f"{DEMO_SCALE:g}x faster there)"
        if emulator is not None
        else f"the real service at {client.base_url} (this spends credits)"
    )
    print(f"asyncclient demo: {args.rows} template videos against {where}")
    # The emulator's minute passes in a second: space submissions by its clock.
    spacing = 1.0 / DEMO_SCALE if emulator is not None else 1.0
    started = time.monotonic()
    batch = client.templates.generate_many(
        template, _demo_rows(args.rows), spacing=spacing, on_progress=ProgressDisplay()
    )
    results = await _run_batch(batch)
    folder = Path(args.download) if args.download else Path(tempfile.mkdtemp(prefix="demo-"))
    downloaded = await _download(client, results, folder)
    elapsed = time.monotonic() - started
    counts = _counts(results)
    if emulator is not None:
        team = emulator.team_id(client._transport._api_key)
        credits: Any = emulator.counters.credits_spent[team]
        served_429 = emulator.counters.rate_limited
    else:
        credits = sum(r.video.used_credits or 0 for r in results if r.video)
        served_429 = client.stats.rate_limited
    _summary(
        [
            ("ok", counts["completed"]),
            ("failed", counts["failed"]),
            ("rejected", counts["rejected"]),
            ("seconds", f"{elapsed:.1f} ({format_duration(elapsed)})"),
            ("credits used", credits),
            ("requests made", client.stats.requests),
            ("429s", served_429),
            ("downloaded", f"{downloaded} videos to {folder}"),
        ]
    )
    if emulator is not None:
        print("This ran against the embedded emulator, not the real service.")
    return EXIT_OK if counts["completed"] + counts["failed"] == len(results) else EXIT_ERROR


def _summary(rows: Sequence[tuple[str, Any]]) -> None:
    width = max(len(name) for name, _ in rows)
    print()
    print(f"| {'summary':<{width}} | value")
    print(f"|{'-' * (width + 2)}|{'-' * 8}")
    for name, value in rows:
        print(f"| {name:<{width}} | {value}")
