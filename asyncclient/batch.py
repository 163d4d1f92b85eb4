"""Bulk creation: many videos, spaced, bounded, journaled, and never paid for twice.

``client.templates.generate_many(template_id, rows)`` and ``client.batch(requests)``
return a :class:`Batch`. Await it for every row's :class:`RowResult` in input
order, or ``async for`` it to get results as they finish. Before the first
submission every row is checked (a template is fetched once), and every bad row
is reported as ``rejected`` before a credit is spent; a row the service refuses
is ``rejected`` too, and the batch goes on. Submissions start at least
``spacing`` seconds apart (spec 8.3 advises about one second), at most
``concurrency`` at once, under the client's rate limiter. With a ``journal``
file, running the same batch again resumes it (see ``asyncclient._journal``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from asyncclient._budget import CreditBudget
from asyncclient._convert import unstructure
from asyncclient._journal import Journal, RowState
from asyncclient.errors import AmbiguousCreationError, APIError, JobTimeoutError, ValidationError
from asyncclient.jobs import DEFAULT_WAIT_TIMEOUT, VideoJob
from asyncclient.models.requests import CreationRequest
from asyncclient.models.videos import CreatedProject, VideoDetail
from asyncclient.validation import problems

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient

__all__ = ["Batch", "BatchProgress", "RowResult"]

logger = logging.getLogger("asyncclient")

COMPLETED, FAILED, REJECTED, SKIPPED = "completed", "failed", "rejected", "skipped"


@frozen(kw_only=True)
class RowResult:
    """The outcome of one row."""

    index: int
    """The row's position in the input (0-based)."""
    status: str
    """``completed``, ``failed`` (the video failed), ``rejected`` (bad input or refused
    by the service) or ``skipped`` (the credit budget was reached)."""
    video: VideoDetail | None = None
    """The completed (or failed) video, as the video list shows it: the detail-only
    fields (script, usedCredits, ...) may be None; ``client.videos.get`` reads them."""
    error: str | None = None
    """Why it failed, was rejected or skipped."""
    project_id: str | None = None
    video_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == COMPLETED


@frozen(kw_only=True)
class BatchProgress:
    """A snapshot for the progress callback."""

    total: int
    submitted: int
    completed: int
    failed: int
    rejected: int
    skipped: int
    elapsed: float
    """Seconds since the batch started."""

    @property
    def finished(self) -> int:
        return self.completed + self.failed + self.rejected + self.skipped

    @property
    def rate(self) -> float:
        """Videos finished (completed or failed) per minute."""
        done = self.completed + self.failed
        return done / self.elapsed * 60 if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until every row is finished at the current rate, if known."""
        left = self.total - self.finished
        if left == 0:
            return 0.0
        return left / self.rate * 60 if self.rate > 0 else None


@frozen
class Item:
    """A row ready to submit: its request, or the problems that keep it back."""

    index: int
    request: CreationRequest | None
    problems: tuple[str, ...] = ()
    fingerprint: str = field(init=False)
    """A digest of the request: the journal tells by it whether a row changed."""

    @fingerprint.default
    def _digest(self) -> str:  # once per row, not at every journal line
        body = json.dumps(unstructure(self.request), sort_keys=True) if self.request else ""
        return hashlib.sha256(body.encode()).hexdigest()[:16]


class Batch:
    """Many creations, run once; await it or ``async for`` it (not both).

    Args:
        client: The client.
        prepare: Coroutine function giving the items (rows checked, requests built).
        batch_id: Names the batch in its journal.
        spacing: Least seconds between two submissions' starts.
        concurrency: Most creation requests in flight at once.
        journal: A JSON Lines file to record progress in and resume from.
        on_progress: Called with a :class:`BatchProgress` after each change.
        budget: Credits the batch may spend; rows past it are ``skipped``.
        cost_per_row: Credits one row costs; learnt from the first video if omitted.
        wait_timeout: How long to wait for each video.
    """

    def __init__(
        self,
        client: AsyncClient,
        prepare: Callable[[], Any],
        *,
        batch_id: str,
        spacing: float = 1.0,
        concurrency: int = 4,
        journal: str | os.PathLike[str] | None = None,
        on_progress: Callable[[BatchProgress], None] | None = None,
        budget: int | None = None,
        cost_per_row: int | None = None,
        wait_timeout: float | None = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._client = client
        self._prepare = prepare
        self._batch_id = batch_id
        self.spacing = spacing
        self._sem = asyncio.Semaphore(concurrency)
        self._journal_path = journal
        self._on_progress = on_progress
        self._budget = CreditBudget(budget, cost_per_row)
        self._wait_timeout = wait_timeout
        self._items: list[Item] | None = None
        self._results: dict[int, RowResult] = {}
        self._queue: asyncio.Queue[RowResult] = asyncio.Queue()
        self._counts = {"submitted": 0, COMPLETED: 0, FAILED: 0, REJECTED: 0, SKIPPED: 0}
        self._started = 0.0
        self._task: asyncio.Task[list[RowResult]] | None = None
        self._journal: Journal | None = None
        self._last_start = -1e9
        self._monotonic = time.monotonic  # spacing's clock and sleep: tests replace them
        self._sleep = asyncio.sleep

    # -- the two ways in ----------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, list[RowResult]]:
        return self._ensure_task().__await__()

    async def __aiter__(self) -> AsyncIterator[RowResult]:
        """Yield results as rows finish; leaving the loop early cancels the batch
        (its journal lets a later run resume it)."""
        task = self._ensure_task()
        getter: asyncio.Future[RowResult] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(self._queue.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                    continue
                getter.cancel()
                while not self._queue.empty():
                    yield self._queue.get_nowait()
                await task  # raises what the batch raised
                return
        finally:
            if getter is not None and not getter.done():
                getter.cancel()
            if not task.done():
                task.cancel()

    def _ensure_task(self) -> asyncio.Task[list[RowResult]]:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        return self._task

    async def prepare(self) -> list[Item]:
        """Check every row and build the requests (once); nothing is submitted.

        Returns:
            Every item; those with ``problems`` will be rejected.
        """
        if self._items is None:
            self._items = list(await self._prepare())
        return self._items

    @property
    def results(self) -> list[RowResult]:
        """The results so far, in input order."""
        return [self._results[i] for i in sorted(self._results)]

    # -- running -------------------------------------------------------------------------

    async def _run(self) -> list[RowResult]:
        items = await self.prepare()
        self._started = time.monotonic()
        if self._journal_path is not None:
            self._journal = Journal.open(self._journal_path, self._batch_id)
        try:
            for item in items:
                if item.problems:
                    self._finish(item, REJECTED, error="; ".join(item.problems))
            self._report()
            waits: list[asyncio.Task[None]] = []
            for item in items:
                if not item.problems:
                    waits.append(await self._start(item))
            await asyncio.gather(*waits)
        finally:
            if self._journal is not None:
                self._journal.close()
        return self.results

    async def _start(self, item: Item) -> asyncio.Task[None]:
        """Submit one row (or pick it up from the journal); returns its waiting task."""
        state = self._journal.rows.get(item.index) if self._journal else None
        if state is not None:
            self._check_fingerprint(item, state)
            job = await self._resume(item, state)
            if job is not None or state.event == "done":
                self._budget.count()
                if job is not None:
                    await self._budget.learn(self._client, job)  # a row sent before tells
                return asyncio.ensure_future(self._await(item, job, state))
        if not await self._budget.admit():
            self._finish(item, SKIPPED, error="credit budget reached")
            return asyncio.ensure_future(asyncio.sleep(0))
        await self._sem.acquire()
        await self._space()
        return asyncio.ensure_future(self._submit_and_await(item))

    async def _space(self) -> None:
        wait = self._last_start + self.spacing - self._monotonic()
        if wait > 0:
            await self._sleep(wait)
        self._last_start = self._monotonic()

    async def _submit_and_await(self, item: Item) -> None:
        job = await self._submit(item)
        if job is None:
            return
        self._counts["submitted"] += 1
        self._record("accepted", item, project=job.project_id, video=job.video_id)
        self._report()
        await self._budget.learn(self._client, job)
        await self._await(item, job, None)

    async def _submit(self, item: Item) -> VideoJob | None:
        """Send the row's creation (the semaphore is held); None when it did not start."""
        assert item.request is not None
        try:
            for attempt in range(2):
                self._record("submit", item, name=getattr(item.request, "name", None))
                try:
                    return await self._client.projects.create(item.request)
                except AmbiguousCreationError as exc:
                    job = await self._reconcile(exc)
                    if job is not None:
                        return job
                    if attempt == 1:
                        raise
                    logger.warning("row %d: not created after all; sending it again", item.index)
        except APIError as exc:
            self._budget.refund()
            self._record("rejected", item, error=str(exc), api=True)
            self._finish(item, REJECTED, error=str(exc))
            return None
        finally:
            self._sem.release()
        return None  # pragma: no cover (the loop returns or raises)

    async def _reconcile(self, exc: AmbiguousCreationError) -> VideoJob | None:
        """Find an ambiguous creation's project: now, and once more a moment later."""
        for delay in (0.0, 2.0):
            await asyncio.sleep(delay)
            job = await self._client.projects.reconcile(exc)
            if job is not None:
                return job
        return None

    async def _resume(self, item: Item, state: RowState) -> VideoJob | None:
        """A job for a row the journal knows, or None to submit it (again)."""
        if state.event in ("accepted", "done") and (state.video_id or state.project_id):
            return self._job(state)
        if state.event == "submit" and item.request is not None and state.sent_at:
            error = AmbiguousCreationError(
                "interrupted while submitting",
                request=item.request,
                sent_at=state.sent_at,
                cause=APIError("interrupted"),
            )
            job = await self._reconcile(error)
            if job is not None:
                self._record("accepted", item, project=job.project_id, video=job.video_id)
            return job
        return None  # rejected, or never sent: submit it

    def _job(self, state: RowState) -> VideoJob:
        created = CreatedProject(project_id=state.project_id, video_id=state.video_id)
        return self._client.jobs.from_created(created)

    async def _await(self, item: Item, job: VideoJob | None, state: RowState | None) -> None:
        if job is None:
            return
        job.read_detail = False  # the list's record is outcome enough: a GET saved per row
        if state is not None:
            self._counts["submitted"] += 1
        try:
            video = await job.wait(timeout=self._wait_timeout)
        except JobTimeoutError as exc:
            self._finish(item, FAILED, error=str(exc), job=job)
            return
        except APIError as exc:
            detail = getattr(exc, "video", None)
            self._finish(item, FAILED, error=exc.message, job=job, video=detail)
            return
        self._finish(item, COMPLETED, job=job, video=video)

    # -- bookkeeping ---------------------------------------------------------------------

    def _check_fingerprint(self, item: Item, state: RowState) -> None:
        if state.event in ("submit", "accepted", "done") and state.fingerprint != item.fingerprint:
            raise ValidationError(
                [f"rows[{item.index}]: changed since the journal recorded its submission"]
            )

    def _record(self, event: str, item: Item, **data: Any) -> None:
        if self._journal is not None:
            self._journal.record(event, item.index, item.fingerprint, **data)

    def _finish(
        self,
        item: Item,
        status: str,
        *,
        error: str | None = None,
        job: VideoJob | None = None,
        video: VideoDetail | None = None,
    ) -> None:
        result = RowResult(
            index=item.index,
            status=status,
            video=video,
            error=error,
            project_id=job.project_id if job else None,
            video_id=(video.id if video else None) or (job.video_id if job else None),
        )
        self._results[item.index] = result
        self._counts[status] += 1
        if status in (COMPLETED, FAILED):
            self._record("done", item, status=status, video=result.video_id, error=error)
        self._queue.put_nowait(result)
        self._report()

    def _report(self) -> None:
        if self._on_progress is None:
            return
        c = self._counts
        self._on_progress(
            BatchProgress(
                total=len(self._items or ()),
                submitted=c["submitted"],
                completed=c[COMPLETED],
                failed=c[FAILED],
                rejected=c[REJECTED],
                skipped=c[SKIPPED],
                elapsed=time.monotonic() - self._started,
            )
        )


def items_from_requests(requests: Sequence[CreationRequest]) -> list[Item]:
    """Check each request; the bad ones become items with problems."""
    return [Item(i, r, tuple(problems(r))) for i, r in enumerate(requests)]


def batch_id_of(*parts: object) -> str:
    """A short stable id for a batch's journal."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
