"""What ``batch`` and ``demo`` share: running a batch with its rejections said first,
the rows by outcome (from the batch's report), the per-row records of ``--out`` and
``--json``, and downloading the completed videos with a progress bar."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from asyncclient._states import ROW, RowOutcome
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.report import BatchReport
from asyncclient.batch.runner import Batch, RowResult
from asyncclient.cli.output import note
from asyncclient.cli.progress import FilesProgress
from asyncclient.client import AsyncClient

__all__ = [
    "OUTCOMES",
    "Downloaded",
    "counts",
    "download_results",
    "row_record",
    "row_records",
    "run_batch",
]

OUTCOMES = tuple(outcome.value for outcome in RowOutcome if ROW.is_terminal(outcome))
"""A row's outcomes once it ended (``completed``, ``failed``, ``rejected``, ``skipped``,
``unresolved``): the keys of the counts printed and of ``--json``."""


async def run_batch(batch: Batch) -> list[RowResult]:
    """Check the rows (saying which are rejected, before any submission), then run.

    Args:
        batch: Not started yet.

    Returns:
        Every row's result, in input order.
    """
    items = await batch.prepare()
    bad = [item for item in items if item.problems]
    for item in bad:
        note(f"row {item.index}: rejected: {'; '.join(item.problems)}")
    if bad:
        note(f"{len(bad)} of {len(items)} rows rejected before any submission")
    return await batch


def counts(report: BatchReport) -> dict[str, int]:
    """Rows by outcome, as the batch's report counts them: completed, failed, rejected,
    skipped, unresolved."""
    return {name: report.count(RowOutcome(name)) for name in OUTCOMES}


def row_record(result: RowResult, path: Path | None, line: int | None = None) -> dict[str, Any]:
    """One row's JSON record (``--out``, ``--json``): row (0 for the first), the line
    of the rows file it starts on (when it came from one), status, title, ids, url,
    error, whether an earlier run finished it, and the downloaded file's path (or None)."""
    return {
        "row": result.index,
        **({"line": line} if line is not None else {}),
        "status": str(result.status),
        "title": result.title,
        "videoId": result.video_id,
        "projectId": result.project_id,
        "url": result.video.url if result.video else None,
        "error": result.error,
        "before": result.before,
        "path": str(path) if path is not None else None,
    }


def row_records(
    results: Sequence[RowResult],
    paths: dict[int, Path],
    line_of: Callable[[int], int] | None = None,
) -> list[dict[str, Any]]:
    """One JSON record per result (see :func:`row_record`); ``line_of`` gives a row's
    line in its rows file."""
    return [
        row_record(r, paths.get(r.index), line_of(r.index) if line_of else None) for r in results
    ]


@frozen
class Downloaded:
    """The files of completed rows, by row; ``fetched`` of them downloaded now, the
    others were already there (same size)."""

    paths: dict[int, Path]
    fetched: int

    def text(self, folder: str | Path) -> str:
        """``downloaded 3 videos to out (1 already there)``."""
        kept = len(self.paths) - self.fetched
        there = f" ({kept} already there)" if kept else ""
        return f"downloaded {self.fetched} videos to {folder}{there}"


async def download_results(
    client: AsyncClient, results: Sequence[RowResult], folder: Path, *, concurrency: int = 4
) -> Downloaded:
    """Download every completed row's video to ``folder/<video_id>.mp4``, a few at once,
    with a progress bar; a file already there with the video's size is kept.

    Args:
        client: Downloads.
        results: The batch's results; only completed rows with a video count.
        folder: Made if missing.
        concurrency: Downloads at once.

    Returns:
        The files, and how many were downloaded now.
    """
    from asyncclient.http.download import target_path

    todo = [r for r in results if r.ok and r.video is not None]
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    display = FilesProgress(len(todo))
    paths: dict[int, Path] = {}
    fetched = 0
    gate = asyncio.Semaphore(concurrency)

    async def one(result: RowResult) -> None:
        nonlocal fetched
        assert result.video is not None
        target = target_path(folder, result.video.id)
        async with gate:
            if not _already_there(target, result.video.size):
                await client.videos.download(result.video, target)
                fetched += 1
        paths[result.index] = target
        display.file_done(target.stat().st_size)

    try:
        async with TaskScope() as scope:
            for result in todo:
                scope.start(one, result)
    finally:
        display.close()
    return Downloaded(dict(sorted(paths.items())), fetched)


def _already_there(target: Path, size: int | None) -> bool:
    """A file of the video's size is there already (an earlier run downloaded it)."""
    try:
        return bool(size) and target.stat().st_size == size
    except OSError:
        return False
