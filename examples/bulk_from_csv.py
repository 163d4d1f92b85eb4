"""Make one talking-avatar video per row of a CSV file, resumably.

    python examples/bulk_from_csv.py examples/talking_avatars.csv

The CSV has a header line and the columns ``title``, ``script``, ``avatar_id`` and
``voice_id`` (see ``examples/talking_avatars.csv``). With ``ASYNCCLIENT_BASE_URL`` and
``ASYNCCLIENT_API_KEY`` set, it runs against that service (spending credits) and
records every submission in a journal next to the CSV (``bulk.journal.jsonl``): run
the same command again, after Ctrl-C or a crash, and it resumes without paying for a
row twice. Without them it starts the embedded emulator (no account needed), whose
videos, like its journal, last as long as the script.

Exit status: 0 when every row completed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import sys
import tempfile
from pathlib import Path

from asyncclient import AsyncClient, BatchProgress, Plan, RowResult, TalkingAvatarRequest


def read_requests(path: Path, journal: Path) -> list[TalkingAvatarRequest]:
    """One creation request per CSV row; the title names the video (and is how a
    resumed run finds a video whose submission was cut off)."""
    if journal.exists():
        print(f"resuming from {journal}: rows already submitted are not sent again")
    with path.open(newline="", encoding="utf-8") as fh:
        return [
            TalkingAvatarRequest(
                name=row["title"],
                script=row["script"],
                avatar_id=row["avatar_id"],
                voice_id=row["voice_id"],
            )
            for row in csv.DictReader(fh)
        ]


class ShowProgress:
    """Print a line each time another row finishes (``on_progress`` of the batch)."""

    def __init__(self) -> None:
        self.finished = -1

    def __call__(self, p: BatchProgress) -> None:
        if p.finished != self.finished:
            self.finished = p.finished
            print(
                f"{p.finished}/{p.total} finished: {p.completed} completed, "
                f"{p.failed} failed, {p.rejected} rejected",
                flush=True,
            )


async def make_videos(
    client: AsyncClient, rows: Path, journal: Path, spacing: float
) -> list[RowResult]:
    """Run the batch; the journal makes a second run resume the first."""
    requests = read_requests(rows, journal)
    batch = client.batch(requests, journal=journal, spacing=spacing, on_progress=ShowProgress())
    return await batch


def summarize(results: list[RowResult]) -> int:
    """Print one line per row and a summary; the exit status."""
    for r in results:
        print(f"row {r.index}: {r.status} {r.video_id or ''} {r.error or ''}".rstrip())
    completed = sum(r.ok for r in results)
    print(f"summary: {completed} of {len(results)} completed")
    return 0 if completed == len(results) else 1


async def main() -> int:
    """Parse the options, pick the service or the emulator, run; the exit status."""
    parser = argparse.ArgumentParser(description="One talking-avatar video per CSV row.")
    parser.add_argument("rows", type=Path, help="the CSV file")
    parser.add_argument("--spacing", type=float, default=1.0, help="seconds between sends (1)")
    parser.add_argument("--time-scale", type=float, default=60.0, help="of the emulator (60)")
    args = parser.parse_args()
    if os.environ.get("ASYNCCLIENT_BASE_URL"):
        async with AsyncClient() as client:  # the key and URL come from the environment
            journal = args.rows.with_suffix(".journal.jsonl")
            return summarize(await make_videos(client, args.rows, journal, args.spacing))

    from asyncclient.emulator import Emulator

    print("ASYNCCLIENT_BASE_URL is not set: running against the embedded emulator")
    async with Emulator(time_scale=args.time_scale) as emu:
        key = emu.add_team(plan="premium", credits=10_000)
        plan = Plan.PREMIUM.rate_limit.scaled(args.time_scale)  # its minutes are shorter
        async with AsyncClient(key, base_url=emu.url, plan=plan) as client:
            with tempfile.TemporaryDirectory() as tmp:  # the emulator forgets: so does this
                journal = Path(tmp) / "journal.jsonl"
                spacing = args.spacing / args.time_scale
                return summarize(await make_videos(client, args.rows, journal, spacing))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
