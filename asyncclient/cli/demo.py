"""``asyncclient demo``: the main job against the embedded emulator, start to finish."""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient._states import RowOutcome
from asyncclient.batch.report import BatchReport
from asyncclient.batch.runner import RowResult
from asyncclient.cli.exits import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from asyncclient.cli.options import count
from asyncclient.cli.output import error, note, print_json, print_summary
from asyncclient.cli.progress import ProgressDisplay
from asyncclient.cli.results import counts, download_results, row_records, run_batch
from asyncclient.cli.terminal import format_duration, table_lines
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL, AsyncClient
from asyncclient.ratelimit import Plan

__all__ = ["main", "register"]

DEMO_TEMPLATE = "tpl_welcome"
DEMO_SCALE = 60.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command.

    Args:
        subparsers: What ``parser.add_subparsers()`` returned.
    """
    d = subparsers.add_parser(
        "demo",
        help="generate a batch of template videos against the embedded emulator",
        description=(
            "Starts the embedded service emulator (time runs 60x faster), generates a batch "
            "of template videos with a progress bar, downloads them and prints a summary. "
            "The videos go to a temporary folder that is deleted at the end, unless "
            "--download DIR keeps them. With --real it runs against the service configured "
            "by ASYNCCLIENT_API_KEY and ASYNCCLIENT_BASE_URL instead (this spends credits)."
        ),
    )
    d.add_argument("--rows", type=count, default=20, metavar="N", help="videos to make")
    d.add_argument("--real", action="store_true", help="use the configured real service")
    d.add_argument("--template", default=None, metavar="ID", help="with --real: the template")
    d.add_argument(
        "--download", metavar="DIR", help="keep the videos in DIR (default: a temporary folder)"
    )
    d.add_argument("--json", action="store_true", help="print one JSON document on stdout")


async def main(args: argparse.Namespace) -> int:
    """Run the demo; returns the exit status (0 when every video finished).

    Args:
        args: Parsed by the parser :func:`register` added.

    Returns:
        0 when every row ended completed or failed (the emulator fails about one in
        twenty on purpose), 4 otherwise, 2 for ``--real`` without its configuration.
    """
    if args.real:
        key = os.environ.get(ENV_API_KEY, "")
        if not (key.strip() and os.environ.get(ENV_BASE_URL)):  # a blank key is none
            error(f"--real needs {ENV_API_KEY} and {ENV_BASE_URL}")
            return EXIT_USAGE
        if not args.template:
            error("--real needs --template ID (one of your templates)")
            return EXIT_USAGE
        async with AsyncClient() as client:
            return await _run(client, args, args.template, emulator=None)
    if os.environ.get(ENV_API_KEY) or os.environ.get(ENV_BASE_URL):
        note(
            f"note: {ENV_API_KEY}/{ENV_BASE_URL} are set, but the demo uses the embedded "
            "emulator unless you pass --real"
        )
    from asyncclient.emulator import Emulator

    async with Emulator(time_scale=DEMO_SCALE, seed=7, failure_rate={"class": 0.05}) as emu:
        key = emu.add_team(plan="starter", credits=10_000)
        rate = Plan.STARTER.rate_limit.scaled(DEMO_SCALE)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as client:
            return await _run(client, args, DEMO_TEMPLATE, emulator=emu)


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


@contextlib.contextmanager
def _folder(keep: str | None) -> Iterator[Path]:
    """``keep`` if given, else a temporary folder deleted on the way out."""
    if keep is not None:
        yield Path(keep)
        return
    with tempfile.TemporaryDirectory(prefix="asyncclient-demo-") as tmp:
        yield Path(tmp)


async def _run(
    client: AsyncClient, args: argparse.Namespace, template: str, *, emulator: Any
) -> int:
    where = (
        f"the embedded emulator at {client.base_url} (no account needed; time runs "
        f"{DEMO_SCALE:g}x faster there)"
        if emulator is not None
        else f"the real service at {client.base_url} (this spends credits)"
    )
    intro = f"asyncclient demo: {args.rows} template videos against {where}"
    if args.json:
        note(intro)  # stdout holds the JSON document alone
    else:
        print(intro)
    # The emulator's minute passes in a second: space submissions by its clock.
    spacing = 1.0 / DEMO_SCALE if emulator is not None else 1.0
    started = SYSTEM_CLOCK.monotonic()
    rows = _demo_rows(args.rows)
    batch = client.templates.generate_many(
        template,
        rows,
        spacing=spacing,
        on_progress=ProgressDisplay(),
        read_charges=emulator is None,  # the emulator counts what it charged itself
    )
    results = await run_batch(batch)
    with _folder(args.download) as folder:
        downloaded = await download_results(client, results, folder)
    report = batch.report()
    figures = _figures(client, report, emulator, SYSTEM_CLOCK.monotonic() - started)
    figures.update(downloaded=downloaded.fetched, folder=args.download)
    tally = counts(report)
    code = (
        EXIT_OK
        if tally[RowOutcome.COMPLETED] + tally[RowOutcome.FAILED] == len(results)
        else EXIT_PARTIAL
    )
    if args.json:
        figures.update(emulator=emulator is not None, exitCode=code)
        print_json({"summary": figures, "rows": row_records(results, downloaded.paths)})
        return code
    print_summary([(label, _shown(key, figures[key])) for key, label in _LABELS])
    for line in failed_lines(results):
        print(line)
    if emulator is not None:
        print("This ran against the embedded emulator, not the real service.")
    return code


SHOWN_FAILED = 20
"""Failed videos listed after the summary, at most (``--json`` has every row)."""


def failed_lines(results: Sequence[RowResult]) -> list[str]:
    """The videos that failed, or rows that ended without a video, each with its reason
    (none: no line at all)."""
    ended_badly = [r for r in results if r.status not in (RowOutcome.COMPLETED,)]
    if not ended_badly:
        return []
    table = [
        (r.index, str(r.status), r.title, r.video_id or "-", r.error or "no reason given")
        for r in ended_badly[:SHOWN_FAILED]
    ]
    lines = ["", f"{len(ended_badly)} rows did not complete:"]
    lines += table_lines(["row", "outcome", "title", "video", "reason"], table)
    if len(ended_badly) > SHOWN_FAILED:
        lines.append(f"... and {len(ended_badly) - SHOWN_FAILED} more (--json lists every row)")
    return [*lines, ""]


_LABELS = (
    (RowOutcome.COMPLETED, "completed"),
    (RowOutcome.FAILED, "failed"),
    (RowOutcome.REJECTED, "rejected"),
    ("seconds", "seconds"),
    ("creditsUsed", "credits used"),
    ("requests", "requests made"),
    ("rateLimited", "429s"),
    ("downloaded", "downloaded"),
    ("folder", "folder"),
)
"""The summary table's rows: a figure's key (as in ``--json``) and its label."""


def _figures(
    client: AsyncClient, report: BatchReport, emulator: Any, elapsed: float
) -> dict[str, Any]:
    """The demo's figures, keyed as in ``--json``."""
    if emulator is not None:
        team = emulator.team_id(client._transport._api_key)
        credits: int | None = emulator.counters.credits_spent[team]
        served_429 = emulator.counters.rate_limited
    else:
        credits = report.credits_spent  # what the service charged, row by row
        served_429 = client.stats.rate_limited
    return {
        "rows": report.rows,
        **counts(report),
        "seconds": round(elapsed, 1),
        "creditsUsed": credits,
        "requests": client.stats.requests,
        "rateLimited": served_429,
    }


def _shown(key: str, value: Any) -> Any:
    """A figure as the table shows it."""
    if key == "seconds":
        return f"{value:.1f} ({format_duration(value)})"
    if key == "folder":
        return value or "a temporary folder, deleted (--download DIR keeps the videos)"
    if value is None:
        return "unknown"
    return value
