"""One run of a batch's rows: journal, budget, spacing, submission, settling, awaiting.

The :class:`RowRunner` does the work a :class:`~asyncclient.batch.runner.Batch` runs:
it opens the journal, rejects the rows that failed their checks, announces the rows
to send to the client's gate, then starts each row (or picks it up from the journal)
in the batch's task group: submitted at most ``concurrency`` at once, ``spacing``
apart, under the credit budget, then awaited. Whatever it learns goes to the batch's
:class:`~asyncclient.batch.ledger.Ledger`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from typing import Any, Protocol

from asyncclient._clock import Clock
from asyncclient._states import BatchPhase, JournalEvent, RowOutcome
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.budget import CreditBudget
from asyncclient.batch.journal import Journal, RowState
from asyncclient.batch.ledger import Ledger
from asyncclient.batch.rows import BatchSettings, Item, RowResult
from asyncclient.batch.settle import Unknown, settle
from asyncclient.errors import AmbiguousCreationError, APIError, JobTimeoutError, ValidationError
from asyncclient.http.gate import Ahead, Gate
from asyncclient.http.prepared import PreparedCreation
from asyncclient.models.videos import CreatedProject, VideoDetail

__all__ = ["JobMaker", "RowRunner", "Submitter"]

logger = logging.getLogger("asyncclient")

_R = RowOutcome
_P = BatchPhase


class Submitter(Protocol):
    """A way to submit one prepared creation, and to find an ambiguous one's project."""

    async def submit(self, prepared: PreparedCreation) -> VideoJob: ...

    async def reconcile(
        self, error: AmbiguousCreationError, *, claimed: Collection[str] = ()
    ) -> VideoJob | None: ...


class JobMaker(Protocol):
    """Makes a job for a project a journal knows."""

    def from_created(self, created: CreatedProject) -> VideoJob: ...


class RowRunner:
    """Runs a batch's rows once.

    Args:
        submitter: Submits one prepared creation (``client.projects``).
        jobs: Makes jobs for rows a journal knows (``client.jobs``).
        batch_id: Names the batch in its journal.
        clock: Spaces submissions.
        settings: The batch's settings.
        ledger: Where the batch's state is written.
        gate: The client's gate (submissions first), if any.
    """

    def __init__(
        self,
        *,
        submitter: Submitter,
        jobs: JobMaker,
        batch_id: str,
        clock: Clock,
        settings: BatchSettings,
        ledger: Ledger,
        gate: Gate | None = None,
    ) -> None:
        self.settings = settings
        self._submitter = submitter
        self._jobs = jobs
        self._batch_id = batch_id
        self._clock = clock
        self._ledger = ledger
        self._gate = gate
        self._ahead: Ahead | None = None
        self._unsent: set[int] = set()  # rows not yet past their submission
        self._sem = asyncio.Semaphore(settings.concurrency)
        self._budget = CreditBudget(settings.budget, settings.cost_per_row, clock=clock)
        self._journal: Journal | None = None
        self._last_start = -1e9
        # Projects a row of this batch owns: one project satisfies one row, never two.
        self._claimed: set[str] = set()

    @property
    def spacing(self) -> float:
        """Least seconds between two submissions' starts."""
        return self.settings.spacing

    async def run(self, items: list[Item]) -> None:
        """Run every row of ``items`` to its result (phase ``submitting``, then
        ``awaiting`` once every row is past its submission)."""
        ledger = self._ledger
        ledger.started = self._clock.monotonic()
        if self.settings.journal is not None:
            self._journal = Journal.open(
                self.settings.journal,
                self._batch_id,
                now=self._clock.now,
                key=self.settings.journal_key,  # a journal of another key is refused
            )
            ledger.read_journal({i: row.event for i, row in self._journal.rows.items()})
            self._claimed.update(r.project_id for r in self._journal.rows.values() if r.project_id)
        ledger.to(_P.SUBMITTING)
        try:
            for item in items:
                if item.problems:
                    self._finish(item, _R.REJECTED, error="; ".join(item.problems))
            ledger.report_progress()
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

    def _announce(self, items: list[Item]) -> None:
        """Tell the client's gate how many creations are to come (submissions first)."""
        self._unsent = {item.index for item in items if not item.problems}
        if self._gate is not None and self._unsent:
            self._ahead = self._gate.expect(len(self._unsent))
        if not self._unsent:
            self._ledger.to(_P.AWAITING)

    def _passed(self, item: Item) -> None:
        """The row is past its submission (sent, refused, skipped, or known from the
        journal): polling need not leave a token for it any more."""
        if item.index in self._unsent:
            self._unsent.discard(item.index)
            if self._ahead is not None:
                self._ahead.sent()
            if not self._unsent:
                self._ledger.to(_P.AWAITING)

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
            self._ledger.done_before += state.event is JournalEvent.DONE
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
        if job.project_id:
            self._claimed.add(job.project_id)
        self._record(JournalEvent.ACCEPTED, item, project=job.project_id, video=job.video_id)
        self._ledger.move(item.index, _R.SUBMITTED)
        self._ledger.report_progress()
        await self._budget.learn(job)
        await self._await(item, job)

    async def _submit(self, item: Item) -> VideoJob | None:
        """Send the row's creation (the semaphore is held); None when it did not start.

        A row whose answer was lost stays pending while its project is looked for
        (:func:`~asyncclient.batch.settle.settle`; its slot is given back meanwhile, so
        the batch goes on); it is sent a second time only after the settle window, when
        the service can no longer make the first. An answer that proves nothing was made
        (a refusal) rejects the row; one that leaves it open leaves it ``unresolved``.
        """
        assert item.prepared is not None
        held = True
        try:
            for attempt in range(2):
                if not held:  # a second sending takes its turn like any other
                    await self._sem.acquire()
                    held = True
                    await self._space()
                self._record(JournalEvent.SUBMIT, item, name=getattr(item.request, "name", None))
                self._ledger.sent.add(item.index)
                try:
                    return await self._submitter.submit(item.prepared)
                except AmbiguousCreationError as exc:
                    self._passed(item)
                    self._sem.release()
                    held = False
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
            if held:
                self._sem.release()
        self._budget.refund()
        self._record(JournalEvent.REJECTED, item, error=error, api=True)
        self._finish(item, _R.REJECTED, error=error)
        return None

    async def _settle(self, exc: AmbiguousCreationError) -> VideoJob | Unknown | None:
        claimed = self._claimed

        async def reconcile(error: AmbiguousCreationError) -> VideoJob | None:
            return await self._submitter.reconcile(error, claimed=claimed)

        settled = await settle(reconcile, exc, self._clock, window=self.settings.settle_window)
        if isinstance(settled, VideoJob) and settled.project_id:
            claimed.add(settled.project_id)
        return settled

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
        ledger = self._ledger
        if ledger.outcome(item.index) is _R.PENDING:  # a row an earlier run submitted
            ledger.move(item.index, _R.SUBMITTED, earlier=True)
        # The list's record is outcome enough (a GET saved per row), unless the charges
        # of this run's rows are to be read (their usedCredits: detail view only).
        job.read_detail = self.settings.read_charges and item.index in ledger.accepted
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
        self._ledger.move(item.index, status)
        result = RowResult(
            index=item.index,
            status=status,
            video=video,
            error=error,
            project_id=job.project_id if job else None,
            video_id=(video.id if video else None) or (job.video_id if job else None),
        )
        if status in (_R.COMPLETED, _R.FAILED):
            self._record(
                JournalEvent.DONE, item, status=status.value, video=result.video_id, error=error
            )
        self._ledger.keep(result)
