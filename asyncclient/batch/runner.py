"""Bulk creation: many videos, spaced, bounded, journaled, and never paid for twice.

``client.templates.generate_many(template_id, rows)`` and ``client.batch(requests)``
return a :class:`Batch`. Await it for every row's :class:`RowResult` in input
order, or ``async for`` it to get results as they finish. Before the first
submission every row is checked (a template is fetched once), and every bad row
is reported as ``rejected`` before a credit is spent; a row the service refuses
is ``rejected`` too, and the batch goes on. Submissions start at least
``spacing`` seconds apart (spec 8.3 advises about one second), at most
``concurrency`` at once, under the client's rate limiter. With a ``journal``
file, running the same batch again resumes it (see ``asyncclient.batch.journal``).

A :class:`Batch` takes what it uses: a :class:`Submitter` (``client.projects``),
a :class:`JobMaker` (``client.jobs``), a clock, and its settings; it can be built
and tested without a client. Its tasks live in one task group that the batch
owns: leaving or cancelling the batch cancels them all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._states import ROW, JournalEvent, RowOutcome
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.budget import CreditBudget
from asyncclient.batch.journal import Journal, RowState
from asyncclient.batch.rows import (
    BatchOptions,
    BatchProgress,
    BatchSettings,
    Item,
    RowResult,
    batch_id_of,
    items_from_requests,
    named,
)
from asyncclient.batch.settle import Unknown, settle
from asyncclient.errors import AmbiguousCreationError, APIError, JobTimeoutError, ValidationError
from asyncclient.http.gate import Ahead, Gate
from asyncclient.models.requests import CreationRequest
from asyncclient.models.videos import CreatedProject, VideoDetail
from asyncclient.resources.prepared import PreparedCreation

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from asyncclient.notebook.live import Live

__all__ = [
    "Batch",
    "BatchOptions",
    "BatchProgress",
    "BatchSettings",
    "JobMaker",
    "RowOutcome",
    "RowResult",
    "Submitter",
    "batch_id_of",
    "request_batch",
]

logger = logging.getLogger("asyncclient")

_R = RowOutcome
class Submitter(Protocol):
    """A way to submit one prepared creation, and to find an ambiguous one's project."""

    async def submit(self, prepared: PreparedCreation) -> VideoJob: ...

    async def reconcile(self, error: AmbiguousCreationError) -> VideoJob | None: ...


class JobMaker(Protocol):
    """Makes a job for a project a journal knows."""

    def from_created(self, created: CreatedProject) -> VideoJob: ...


class Batch:
    """Many creations, run once; await it or ``async for`` it (not both).

    Args:
        prepare: Coroutine function giving the items (rows checked, requests built).
        submitter: Submits one prepared creation (``client.projects``).
        jobs: Makes jobs for rows a journal knows (``client.jobs``).
        batch_id: Names the batch in its journal.
        clock: Spaces submissions and times the progress.
        settings: Spacing, concurrency, journal, budget, ... (:class:`BatchSettings`).
        gate: The client's gate: the rows still to send are announced to it, so that
            polling takes only the tokens they leave (submissions first).
    """

    def __init__(
        self,
        prepare: Callable[[], Awaitable[Sequence[Item]]],
        *,
        submitter: Submitter,
        jobs: JobMaker,
        batch_id: str,
        clock: Clock = SYSTEM_CLOCK,
        settings: BatchSettings | None = None,
        gate: Gate | None = None,
    ) -> None:
        self.settings = settings or BatchSettings()
        self._gate = gate
        self._ahead: Ahead | None = None
        self._unsent: set[int] = set()  # rows not yet past their submission
        self._prepare = prepare
        self._submitter = submitter
        self._jobs = jobs
        self._batch_id = batch_id
        self._clock = clock
        self._sem = asyncio.Semaphore(self.settings.concurrency)
        self._budget = CreditBudget(self.settings.budget, self.settings.cost_per_row, clock=clock)
        self._items: list[Item] | None = None
        self._rows: dict[int, RowOutcome] = {}
        self._results: dict[int, RowResult] = {}
        self._queue: asyncio.Queue[RowResult] = asyncio.Queue()
        self._submitted = 0  # rows this run sent
        self._resumed = 0  # rows an earlier run sent, awaited by this one
        self._done_before = 0  # rows an earlier run saw finished
        self._started = 0.0
        self._task: asyncio.Task[list[RowResult]] | None = None
        self._journal: Journal | None = None
        self._last_start = -1e9
        self._display: Live | None = None  # a live notebook display, only while one runs

    @property
    def spacing(self) -> float:
        """Least seconds between two submissions' starts."""
        return self.settings.spacing

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
            if self._display is not None:  # displayed before it ran: follow it from now
                from asyncclient.notebook.live import follow_batch

                follow_batch(self, self._task)
        return self._task

    async def prepare(self) -> list[Item]:
        """Check every row and build the requests (once); nothing is submitted.

        Returns:
            Every item; those with ``problems`` will be rejected.
        """
        if self._items is None:
            self._items = list(await self._prepare())
            self._rows = dict.fromkeys((item.index for item in self._items), _R.PENDING)
        return self._items

    @property
    def results(self) -> list[RowResult]:
        """The results so far, in input order."""
        return [self._results[i] for i in sorted(self._results)]

    # -- running -------------------------------------------------------------------------

    async def _run(self) -> list[RowResult]:
        items = await self.prepare()
        self._started = self._clock.monotonic()
        if self.settings.journal is not None:
            self._journal = Journal.open(self.settings.journal, self._batch_id, now=self._clock.now)
        try:
            for item in items:
                if item.problems:
                    self._finish(item, _R.REJECTED, error="; ".join(item.problems))
            self._report()
            self._announce(items)
            async with TaskScope() as rows:
                for item in items:
                    if not item.problems:
                        await self._start(item, rows)
        finally:
            if self._ahead is not None:
                self._ahead.close()
            if self._journal is not None:
                self._journal.close()
        return self.results

    def _announce(self, items: list[Item]) -> None:
        """Tell the client's gate how many creations are to come (submissions first)."""
        self._unsent = {item.index for item in items if not item.problems}
        if self._gate is not None and self._unsent:
            self._ahead = self._gate.expect(len(self._unsent))

    def _passed(self, item: Item) -> None:
        """The row is past its submission (sent, refused, skipped, or known from the
        journal): polling need not leave a token for it any more."""
        if item.index in self._unsent:
            self._unsent.discard(item.index)
            if self._ahead is not None:
                self._ahead.sent()

    async def _start(self, item: Item, rows: TaskScope) -> None:
        """Submit one row (or pick it up from the journal) and await it in ``rows``."""
        state = self._journal.rows.get(item.index) if self._journal else None
        if state is not None:
            self._check_fingerprint(item, state)
            if self._cut_off(item, state):
                # Sent by an earlier run that ended before the answer: ask the service in
                # the row's own task, so that many such rows are asked about at once.
                # Counted meanwhile, as it may have been paid.
                self._budget.count()
                rows.start(self._settle_cut_off, item, state)
                return
            job = self._resume(state)
            self._done_before += state.event is JournalEvent.DONE
            if job is not None or state.event is JournalEvent.DONE:
                self._passed(item)
                self._budget.count()
                if job is not None:
                    await self._budget.learn(job)  # a row sent before tells
                    rows.start(self._await, item, job)
                return
        if await self._take_turn(item):
            rows.start(self._submit_and_await, item)

    async def _settle_cut_off(self, item: Item, state: RowState) -> None:
        job = await self._settle_interrupted(item, state)
        if job is not None:
            self._passed(item)
        if isinstance(job, Unknown):  # may have been paid: counted, never resent
            self._finish(item, _R.UNRESOLVED, error=job.reason)
            return
        if job is not None:
            await self._budget.learn(job)
            await self._await(item, job)
            return
        self._budget.uncount()  # the service made nothing: the row is submitted afresh
        if await self._take_turn(item):
            await self._submit_and_await(item)

    async def _take_turn(self, item: Item) -> bool:
        """Admit the row under the budget, then wait for a slot and its spacing; False
        (the row skipped) once the budget is reached."""
        if not await self._budget.admit():
            self._passed(item)
            self._finish(item, _R.SKIPPED, error="credit budget reached")
            return False
        await self._sem.acquire()
        await self._space()
        return True

    async def _space(self) -> None:
        """Wait for this submission's turn, ``spacing`` after the one before.

        The turn is reserved before waiting, so rows that start from several tasks at
        once (rows resumed after a crash) are spaced as well.
        """
        now = self._clock.monotonic()
        turn = max(now, self._last_start + self.spacing)
        self._last_start = turn
        if turn > now:
            await self._clock.sleep(turn - now)

    async def _submit_and_await(self, item: Item) -> None:
        job = await self._submit(item)
        if job is None:
            return
        self._record(JournalEvent.ACCEPTED, item, project=job.project_id, video=job.video_id)
        self._move(item, _R.SUBMITTED)
        self._report()
        await self._budget.learn(job)
        await self._await(item, job)

    async def _submit(self, item: Item) -> VideoJob | None:
        """Send the row's creation (the semaphore is held); None when it did not start.

        A row is sent a second time only after the service has said, twice, that the
        first sending made nothing. An answer that proves nothing was made (a refusal)
        rejects the row; one that leaves it open leaves the row ``unresolved``.
        """
        assert item.prepared is not None
        try:
            for attempt in range(2):
                self._record(JournalEvent.SUBMIT, item, name=getattr(item.request, "name", None))
                try:
                    return await self._submitter.submit(item.prepared)
                except AmbiguousCreationError as exc:
                    settled = await self._settle(exc)
                    if isinstance(settled, Unknown):
                        self._finish(item, _R.UNRESOLVED, error=settled.reason)
                        return None
                    if settled is not None:
                        return settled
                    if attempt == 0:
                        logger.warning("row %d: nothing was made; sending it again", item.index)
            error = "sent twice; the service made nothing either time"
        except APIError as exc:  # a refusal: the service made nothing
            error = str(exc)
        finally:
            self._passed(item)
            self._sem.release()
        self._budget.refund()
        self._record(JournalEvent.REJECTED, item, error=error, api=True)
        self._finish(item, _R.REJECTED, error=error)
        return None

    async def _settle(self, exc: AmbiguousCreationError) -> VideoJob | Unknown | None:
        return await settle(self._submitter.reconcile, exc, self._clock)

    def _resume(self, state: RowState) -> VideoJob | None:
        """A job for a row the journal saw accepted, or None (done, refused or never
        sent)."""
        known = state.video_id or state.project_id
        if state.event in (JournalEvent.ACCEPTED, JournalEvent.DONE) and known:
            created = CreatedProject(project_id=state.project_id, video_id=state.video_id)
            return self._jobs.from_created(created)
        return None

    @staticmethod
    def _cut_off(item: Item, state: RowState) -> bool:
        """Whether an earlier run sent the row and ended before recording the answer."""
        return (
            state.event is JournalEvent.SUBMIT
            and item.request is not None
            and state.sent_at is not None
        )

    async def _settle_interrupted(self, item: Item, state: RowState) -> VideoJob | Unknown | None:
        """What a cut-off submission made: its job, :class:`Unknown` when the service
        cannot yet tell, or None when it made nothing (the row may be sent again)."""
        assert item.request is not None and state.sent_at is not None
        error = AmbiguousCreationError(
            "interrupted while submitting",
            request=item.request,
            sent_at=state.sent_at,
            cause=APIError("interrupted"),
        )
        job = await self._settle(error)
        if isinstance(job, VideoJob):
            self._record(JournalEvent.ACCEPTED, item, project=job.project_id, video=job.video_id)
        return job

    async def _await(self, item: Item, job: VideoJob) -> None:
        self._passed(item)  # (already, on every way here; never wait for polling unannounced)
        job.read_detail = False  # the list's record is outcome enough: a GET saved per row
        if self._rows[item.index] is _R.PENDING:  # a row an earlier run submitted
            self._move(item, _R.SUBMITTED, earlier=True)
        try:
            video = await job.wait(timeout=self.settings.wait_timeout)
        except JobTimeoutError as exc:
            self._finish(item, _R.FAILED, error=str(exc), job=job)
            return
        except APIError as exc:
            detail = getattr(exc, "video", None)
            self._finish(item, _R.FAILED, error=exc.message, job=job, video=detail)
            return
        self._finish(item, _R.COMPLETED, job=job, video=video)

    # -- bookkeeping ---------------------------------------------------------------------

    def _check_fingerprint(self, item: Item, state: RowState) -> None:
        sent = (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE)
        if state.event in sent and state.fingerprint != item.fingerprint:
            raise ValidationError(
                [f"rows[{item.index}]: changed since the journal recorded its submission"]
            )

    def _record(self, event: JournalEvent, item: Item, **data: Any) -> None:
        if self._journal is not None:
            self._journal.record(event, item.index, item.fingerprint, **data)

    def _move(self, item: Item, outcome: RowOutcome, *, earlier: bool = False) -> None:
        self._rows[item.index] = ROW.check(self._rows[item.index], outcome)
        if outcome is _R.SUBMITTED:
            if earlier:
                self._resumed += 1
            else:
                self._submitted += 1

    def _finish(
        self,
        item: Item,
        status: RowOutcome,
        *,
        error: str | None = None,
        job: VideoJob | None = None,
        video: VideoDetail | None = None,
    ) -> None:
        self._passed(item)
        self._move(item, status)
        result = RowResult(
            index=item.index,
            status=status,
            video=video,
            error=error,
            project_id=job.project_id if job else None,
            video_id=(video.id if video else None) or (job.video_id if job else None),
        )
        self._results[item.index] = result
        if status in (_R.COMPLETED, _R.FAILED):
            self._record(
                JournalEvent.DONE, item, status=status.value, video=result.video_id, error=error
            )
        self._queue.put_nowait(result)
        self._report()

    @property
    def progress(self) -> BatchProgress:
        """Where the batch stands now (what ``on_progress`` receives)."""
        counts = dict.fromkeys(RowOutcome, 0)
        for outcome in self._rows.values():
            counts[outcome] += 1
        return BatchProgress(
            total=len(self._items or ()),
            submitted=self._submitted,
            resumed=self._resumed,
            done_before=self._done_before,
            completed=counts[_R.COMPLETED],
            failed=counts[_R.FAILED],
            rejected=counts[_R.REJECTED],
            skipped=counts[_R.SKIPPED],
            unresolved=counts[_R.UNRESOLVED],
            elapsed=self._clock.monotonic() - self._started if self._started else 0.0,
        )

    def _report(self) -> None:
        if self.settings.on_progress is not None:
            self.settings.on_progress(self.progress)
        if self._display is not None:
            self._display.changed()

    # -- how it shows itself (asyncclient.notebook.display) ---------------------------------------

    def __repr__(self) -> str:
        """``<Batch running: finished=3/20 completed=2 failed=1 ...>``."""
        from asyncclient.notebook.display import batch_text

        return batch_text(self)

    def _repr_html_(self) -> str:
        """A snapshot as HTML: the progress summary, then the table of rows once ended."""
        from asyncclient.notebook.display import batch_html

        return batch_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A snapshot as ``text/plain`` and ``text/html`` (frontends other than IPython)."""
        from asyncclient.notebook.display import batch_bundle

        return batch_bundle(self)

    def _ipython_display_(self) -> None:
        """IPython shows the batch: in a Jupyter kernel, updated in place from its start
        to its end (displaying it starts nothing); otherwise a snapshot."""
        from asyncclient.notebook.live import display_batch

        display_batch(self)


def request_batch(
    requests: Sequence[CreationRequest],
    *,
    submitter: Submitter,
    jobs: JobMaker,
    clock: Clock = SYSTEM_CLOCK,
    gate: Gate | None = None,
    **options: Unpack[BatchOptions],
) -> Batch:
    """The batch of ``client.batch``: every request named, checked and serialised once.

    A request without a name is given one (``batch-<id>-<row>``): names are how an
    interrupted batch finds what the service made.
    """
    bid = batch_id_of("requests", len(requests))
    named_requests = [named(r, f"batch-{bid[:6]}-{i}") for i, r in enumerate(requests)]

    async def prepare() -> list[Item]:
        return items_from_requests(named_requests)

    return Batch(
        prepare,
        submitter=submitter,
        jobs=jobs,
        batch_id=bid,
        clock=clock,
        settings=BatchSettings(**options),
        gate=gate,
    )
