"""One run of a batch's rows: journal, budget, spacing, submission, settling, awaiting.

The :class:`RowRunner` opens the journal, then reads the rows one at a time from their
:class:`~asyncclient.batch.source.RowSource` (announcing them to the client's gate) and
starts each, or picks it up from the journal, in the batch's task group: at most
``concurrency`` sent at once, ``spacing`` apart, under the budget, at most ``max_open``
open; the next row is read once the one before has its turn. A row the journal saw
finished is not sent (:mod:`~asyncclient.batch.earlier` tells it); a batch always ends
(:mod:`asyncclient.batch.stop`). What happens to each row is written in the run's
:class:`~asyncclient.batch.book.RowBook`, the one owner of a row's life.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterator
from typing import Any

from asyncclient._clock import Clock, pause
from asyncclient._states import BatchPhase, JournalEvent, RowOutcome
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.batch.book import RowBook
from asyncclient.batch.budget import CreditBudget
from asyncclient.batch.earlier import Earlier
from asyncclient.batch.journal_table import RowState
from asyncclient.batch.ledger import Ledger
from asyncclient.batch.pickup import (
    JobMaker,
    OpenRows,
    Submitter,
    check_fingerprint,
    cut_off,
    job_of,
)
from asyncclient.batch.rows import BatchSettings, Item
from asyncclient.batch.settle import Unknown, settle
from asyncclient.batch.source import RowSource, title_of
from asyncclient.batch.stop import Stop
from asyncclient.batch.store import JournalStore, open_journal
from asyncclient.errors import (
    AmbiguousCreationError,
    APIConnectionError,
    APIError,
    JobTimeoutError,
    VideoFailedError,
)
from asyncclient.http.caller import SEND_GUARD
from asyncclient.http.gate import Gate
from asyncclient.http.reach import Reach
from asyncclient.models.videos import SentCreation

__all__ = ["JobMaker", "RowRunner", "Submitter"]

logger = logging.getLogger("asyncclient")

_R = RowOutcome
_P = BatchPhase
_YIELD_EVERY = 256  # rows read between two turns given to the loop's other tasks
_CHECK_EVERY = 64  # of the rows an earlier run finished, one in so many is compared
_RESEND_AFTER = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # waits before a row not sent tries again


class RowRunner:
    """Runs a batch's rows once: the scheduling (reading, spacing, sending, settling,
    awaiting); what happens to each row is written in its :class:`RowBook`.

    Args:
        submitter: Submits one prepared creation (``client.projects``).
        jobs: Makes jobs for rows a journal knows (``client.jobs``).
        batch_id: Names the batch in its journal.
        clock: Spaces submissions.
        settings: The batch's settings.
        ledger: Where the batch's state is written.
        gate: The client's gate (submissions first), if any.
        reach: The client's record of the service's answers: the batch stops once none
            came for ``settings.unreachable_after`` seconds (None: never stops).
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
        reach: Reach | None = None,
    ) -> None:
        self.settings, self._submitter, self._jobs = settings, submitter, jobs
        self._batch_id, self._clock, self._ledger = batch_id, clock, ledger
        self._gate, self._reach = gate, reach
        self._sem = asyncio.Semaphore(settings.concurrency)
        self._opened = OpenRows(settings.max_open)
        self.budget = self._budget = CreditBudget(settings.budget, settings.cost_per_row)
        ledger.subscribe(self._budget.charged)  # a charge read replaces the cost counted
        self._journal: JournalStore | None = None
        self._book = RowBook(ledger, self._budget)
        self._last_start = -1e9
        self._seen_before = 0  # rows read that an earlier run finished
        self._earlier = Earlier(None, ledger)

    @property
    def spacing(self) -> float:
        """Least seconds between two submissions' starts."""
        return self.settings.spacing

    async def run(self, source: RowSource) -> None:
        """Run every row of ``source`` to its result (phase ``submitting``, then
        ``awaiting`` once every row is past its submission), or stop when the service
        cannot be reached (``ledger.stopped`` says so)."""
        ledger = self._ledger
        ledger.started = self._clock.monotonic()
        if self.settings.journal is not None:
            self._journal = await open_journal(
                self.settings.journal,
                self._batch_id,
                now=self._clock.now,
                key=self.settings.journal_key,  # a journal of another key is refused
                opener=self.settings.journal_opener,
                accept_journal_loss=self.settings.accept_journal_loss,
                lease=self.settings.journal_lease,
            )
            ledger.read_journal(self._journal.counts())
        try:  # what a row may cost, and the rows sent before, known before any is sent
            await self._budget.begin(self._journal, self._jobs)
        except BaseException:
            if self._journal is not None:
                self._journal.close()
            raise
        ledger.set_total(source.total)
        ledger.to(_P.SUBMITTING)
        stop = Stop(self._clock, self._reach, self.settings.unreachable_after)
        self._earlier = Earlier(self._journal, ledger)
        rows_read = source.rows()
        # Rows read, not yet past their submission: announced (a few, never all).
        ahead = self._gate.expect(0) if self._gate is not None else None
        self._book = book = RowBook(ledger, self._budget, self._journal, ahead)
        try:
            async with stop.watching() as watch, TaskScope() as rows:
                watch.scope = rows
                rows.start(self._earlier.tell)
                await self._read(rows_read, source, rows)
            if stop.reason is not None:
                book.stopped(stop.reason, rows_read, source)
        finally:
            if ahead is not None:
                ahead.close()
            if self._journal is not None:
                self._journal.close()

    async def _read(
        self, rows_read: Iterator[tuple[int, Any]], source: RowSource, rows: TaskScope
    ) -> None:
        """Read, build and start the rows one by one."""
        book = self._book
        for index, raw in rows_read:
            book.read(index)
            if book.read_count % _YIELD_EVERY == 0:
                await pause()
                await self._ledger.room()  # a slow reader of the results slows the reading
            event = self._journal.event_of(index) if self._journal else JournalEvent.NONE
            if event is JournalEvent.DONE:  # finished by an earlier run: told from the journal
                await self._finished_before(source, index, raw)
                continue
            item = self._picked_up(source, index, raw) if event is JournalEvent.ACCEPTED else None
            item = item or source.build(index, raw)
            book.titled(index, title_of(item.request) or source.title(raw))
            if item.problems:
                book.invalid(item)
                continue
            await self._start(item, rows, event)
        self._earlier.all_found()
        book.all_read()

    async def _finished_before(self, source: RowSource, index: int, raw: Any) -> None:
        """A row an earlier run finished: not built (but one in :data:`_CHECK_EVERY`,
        compared with the journal), its result told later."""
        assert self._journal is not None
        self._seen_before += 1
        state = self._journal.rows.get(index) if self._seen_before % _CHECK_EVERY == 1 else None
        source.skip(index, raw)
        if state is not None:
            check_fingerprint(source.rebuild(index, raw), state)
        self._book.passed(index)
        self._earlier.found(index)

    def _picked_up(self, source: RowSource, index: int, raw: Any) -> Item | None:
        """A row an earlier run got accepted, not rebuilt (None: build it, see above)."""
        assert self._journal is not None
        self._seen_before += 1
        state = self._journal.rows.get(index)
        if state is None or self._seen_before % _CHECK_EVERY == 1:
            return None
        source.skip(index, raw)
        return Item(index, None, (), known=state.fingerprint)

    async def _start(self, item: Item, rows: TaskScope, event: JournalEvent) -> None:
        """Submit one row (or pick it up from the journal) and await it in ``rows``, once
        fewer than ``max_open`` rows are open: memory stays bounded, polling catches up."""
        async with self._opened.slot() as slot:
            slot.taken = await self._open_row(item, rows, event)

    async def _open_row(self, item: Item, rows: TaskScope, event: JournalEvent) -> bool:
        journal = self._journal
        state = journal.rows.get(item.index) if journal and event is not JournalEvent.NONE else None
        if state is not None:
            check_fingerprint(item, state)
            if cut_off(item, state):
                # Sent by an earlier run that ended before the answer: ask the service in
                # the row's own task, so that many such rows are asked about at once.
                # (The budget counted it at the start, as it may have been paid.)
                return self._opened.launch(rows, self._settle_cut_off, item, state)
            job = job_of(self._jobs, state)
            if job is not None:
                self._book.passed(item.index)
                return self._opened.launch(rows, self._await, item, job)
        if await self._take_turn(item):
            return self._opened.launch(rows, self._submit_and_await, item)
        return False

    async def _settle_cut_off(self, item: Item, state: RowState) -> None:
        """A row an earlier run sent and was cut off from: what did the service make?"""
        assert item.request is not None and state.sent_at is not None
        sent = SentCreation(
            request=item.request,
            sent_at=state.sent_at,
            service_sent_after=state.service_at,  # the service's clock, as a live row's
        )
        job = await self._settle(sent)
        book = self._book
        if job is not None:
            book.passed(item.index)
        if isinstance(job, Unknown):  # may have been paid: counted, never resent
            book.ambiguous(item, job.reason)
            return
        if job is not None:
            await book.found(item, job)
            await self._await(item, job)
            return
        book.made_nothing()  # the row is submitted afresh
        if await self._take_turn(item):
            await self._submit_and_await(item)

    async def _take_turn(self, item: Item) -> bool:
        """Admit the row under the budget, then wait for a slot and its spacing; False
        (the row skipped) once the budget is reached."""
        if not await self._budget.admit():
            self._book.skipped(item)
            return False
        await self._sem.acquire()
        await self._space()
        self._earlier.begin()  # sending began: rows finished before may now be told
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
        await self._book.accepted(item, job)
        await self._await(item, job)

    async def _submit(self, item: Item) -> VideoJob | None:
        """Send the row's creation (the semaphore is held); None when it did not start.

        A row whose answer was lost stays pending while its project is looked for
        (:func:`~asyncclient.batch.settle.settle`; its slot is given back meanwhile, so
        the batch goes on); it is sent a second time only after the settle window, when
        the service can no longer make the first. A request that could not leave (no
        connection) made nothing: it is tried again after a pause, until the batch stops.
        An answer that proves nothing was made (a refusal) rejects the row; one that
        leaves it open leaves it ``unresolved``.
        """
        assert item.prepared is not None
        book = self._book
        held = True
        # A journal held by a lease (Redis) is asked again right before each creation
        # leaves: a run paused past its lease, which another run took, sends nothing.
        ensure_held = getattr(self._journal, "ensure_held", None)
        guard = SEND_GUARD.set(functools.partial(ensure_held, item.index) if ensure_held else None)
        try:
            sendings = 0
            unsent = 0
            while True:
                if not held:  # a second sending takes its turn like any other
                    await self._sem.acquire()
                    held = True
                    await self._space()
                await book.sending(item, await self._submitter.service_time())
                try:
                    return await self._submitter.submit(item.prepared)
                except APIConnectionError as exc:
                    if exc.request_sent:
                        raise
                    # Not a byte left: nothing was made. Recorded as such, then tried again.
                    await book.not_sent(item, str(exc))
                    self._sem.release()
                    held = False
                    await self._clock.sleep(_RESEND_AFTER[min(unsent, len(_RESEND_AFTER) - 1)])
                    unsent += 1
                    continue
                except AmbiguousCreationError as exc:
                    book.passed(item.index)
                    self._sem.release()
                    held = False
                    sent = SentCreation(
                        request=exc.request,
                        sent_at=exc.sent_at,
                        service_sent_after=exc.service_sent_after,
                    )
                    settled = await self._settle(sent)
                if isinstance(settled, Unknown):
                    book.ambiguous(item, settled.reason)
                    return None
                if settled is not None:
                    return settled
                sendings += 1
                if sendings == 2:
                    error = "sent twice; the service made nothing either time"
                    break
                logger.warning("row %d: nothing was made; sending it again", item.index)
        except APIError as exc:  # a refusal: the service made nothing
            error = str(exc)
        finally:
            SEND_GUARD.reset(guard)
            book.passed(item.index)
            if held:
                self._sem.release()
        await book.refused(item, error)
        return None

    async def _settle(self, sent: SentCreation) -> VideoJob | Unknown | None:
        claimed = self._book.claims

        async def reconcile(creation: SentCreation) -> VideoJob | None:
            return await self._submitter.reconcile(creation, claimed=claimed)

        settled = await settle(reconcile, sent, self._clock, window=self.settings.settle_window)
        if isinstance(settled, VideoJob):
            claimed.add(settled.project_id)
        return settled

    async def _await(self, item: Item, job: VideoJob) -> None:
        book = self._book
        charged_here = book.awaiting(item, job)
        # The list's record is outcome enough (a GET saved per row), unless the charges
        # of this run's rows are to be read (their usedCredits: detail view only).
        job.read_detail = self.settings.read_charges and charged_here
        try:
            video = await job.wait(timeout=self.settings.wait_timeout)
        except VideoFailedError as exc:  # the service's FAILED: the only ``failed``
            book.finished(item, _R.FAILED, job, video=exc.video, error=exc.message)
            return
        except JobTimeoutError as exc:  # the service goes on making it (and charges it)
            book.still_pending(item, job, f"not finished within the batch's wait ({exc})")
            return
        except APIError as exc:  # it could not be followed: its outcome is unknown
            book.still_pending(item, job, f"could not be followed ({exc})")
            return
        book.finished(item, _R.COMPLETED, job, video=video)
