"""Bulk creation: many videos, spaced, bounded, journaled, and never paid for twice.

``client.templates.generate_many(template_id, rows)`` and ``client.batch(requests)``
return a :class:`Batch`. Await it for every row's :class:`RowResult` in input
order, or ``async for`` it to get results as they finish (then no result is kept:
a million rows run in flat memory). Rows are read as they are sent, from a list, a
generator or a file's reader; each is checked before it is sent (a template is
fetched once), and a bad row is ``rejected`` before a credit is spent on it;
``await batch.check()`` checks every row first, keeping none. A row the service
refuses is ``rejected`` too, and the batch goes on. Submissions start at least
``spacing`` seconds apart (the service advises about one second), at most
``concurrency`` at once, under the client's rate limiter. With a ``journal``
file, running the same batch again resumes it (see ``asyncclient.batch.journal``).

A :class:`Batch` takes what it uses: a :class:`Submitter` (``client.projects``),
a :class:`JobMaker` (``client.jobs``), a clock, and its settings; it can be built
and tested without a client. Its tasks live in one task group that the batch
owns: leaving or cancelling the batch cancels them all.

A batch names its phase (``batch.phase``, a :class:`BatchPhase`) and tells listeners
(``batch.subscribe``) of each change; ``batch.report()`` says what the run did. Faces
(the notebook's displays, the command line) attach from outside through these.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._states import BatchPhase, RowOutcome
from asyncclient.batch.budget import CreditBudget, RowCost, row_cost
from asyncclient.batch.ledger import Ledger
from asyncclient.batch.report import BatchListener, BatchReport, BatchUpdate
from asyncclient.batch.rowrun import JobMaker, RowRunner, Submitter
from asyncclient.batch.rows import (
    BatchOptions,
    BatchProgress,
    BatchSettings,
    Item,
    RowResult,
    batch_id_of,
)
from asyncclient.batch.source import BatchCheck, ItemSource, RequestSource, RowSource, check_rows
from asyncclient.batch.store import JournalOpener, is_store_url, open_journal
from asyncclient.batch.text import batch_line
from asyncclient.http.gate import Gate
from asyncclient.http.reach import Reach
from asyncclient.lanes import set_bulk
from asyncclient.models.requests import CreationRequest

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Batch",
    "BatchCheck",
    "BatchListener",
    "BatchOptions",
    "BatchPhase",
    "BatchProgress",
    "BatchReport",
    "BatchSettings",
    "BatchUpdate",
    "JobMaker",
    "RowOutcome",
    "RowResult",
    "Submitter",
    "batch_id_of",
    "request_batch",
]

_P = BatchPhase


class Batch:
    """Many creations, run once; await it or ``async for`` it (not both).

    Args:
        rows: Where the rows come from (a :class:`~asyncclient.batch.source.RowSource`),
            or a coroutine function giving the items (rows checked, requests built).
        submitter: Submits one prepared creation (``client.projects``).
        jobs: Makes jobs for rows a journal knows (``client.jobs``).
        batch_id: Names the batch in its journal.
        clock: Spaces submissions and times the progress.
        settings: Spacing, concurrency, journal, budget, ... (:class:`BatchSettings`).
        gate: The client's gate: the rows still to send are announced to it, so that
            polling takes only the tokens they leave (submissions first).
        reach: The client's record of the service's answers: the batch stops after
            ``unreachable_after`` seconds without one.
    """

    def __init__(
        self,
        rows: RowSource | Callable[[], Awaitable[Sequence[Item]]],
        *,
        submitter: Submitter,
        jobs: JobMaker,
        batch_id: str,
        clock: Clock = SYSTEM_CLOCK,
        settings: BatchSettings | None = None,
        gate: Gate | None = None,
        reach: Reach | None = None,
    ) -> None:
        self.settings = settings or BatchSettings()
        self._source = rows if isinstance(rows, RowSource) else ItemSource(rows)
        self._batch_id = batch_id
        self._jobs, self._clock = jobs, clock
        self._items: list[Item] | None = None
        self._ledger = Ledger(clock, self.settings.on_progress)
        self._rows = RowRunner(
            submitter=submitter,
            jobs=jobs,
            batch_id=batch_id,
            clock=clock,
            settings=self.settings,
            ledger=self._ledger,
            gate=gate,
            reach=reach,
        )
        self._task: asyncio.Task[list[RowResult]] | None = None

    @property
    def spacing(self) -> float:
        """Least seconds between two submissions' starts."""
        return self.settings.spacing

    # -- what it tells --------------------------------------------------------------------

    @property
    def phase(self) -> BatchPhase:
        """Where the run stands: ``not started``, ``preparing``, ``prepared`` (by
        :meth:`prepare`), ``submitting``, ``awaiting`` (every row past its submission),
        then ``done``, ``failed`` (see :attr:`error`) or ``cancelled``."""
        return self._ledger.phase

    @property
    def error(self) -> BaseException | None:
        """What stopped the run (phase ``failed``), else None."""
        return self._ledger.error

    def subscribe(self, listener: BatchListener) -> Callable[[], None]:
        """Call ``listener`` with a :class:`BatchUpdate` at each change of phase and each
        progress report (as ``on_progress`` is), from the batch's own task.

        A listener that raises is logged and kept; it never breaks the batch.

        Args:
            listener: Called with each update; it must not block.

        Returns:
            A function that unsubscribes ``listener`` (calling it twice is harmless).
        """
        return self._ledger.subscribe(listener)

    @property
    def budget(self) -> CreditBudget:
        """The credit budget (read it, never change it): ``cost``, the most a row may
        cost, and ``cost_from``, where that was learnt; ``committed``, the credits
        counted against ``limit``; ``overcharged``, said when a row was charged more
        than it was counted at (see :mod:`asyncclient.batch.budget`)."""
        return self._rows.budget

    def report(self) -> BatchReport:
        """What this run did so far: rows by outcome, what the journal said of earlier
        runs, what this run sent and what the service charged for it (see
        :class:`BatchReport` for what is known of the credits, and when)."""
        return self._ledger.report()

    @property
    def progress(self) -> BatchProgress:
        """Where the batch stands now (what ``on_progress`` receives)."""
        return self._ledger.progress

    @property
    def results(self) -> list[RowResult]:
        """The results so far, in input order: every one for an awaited batch; for a
        batch read with ``async for``, which keeps none, the latest 1,000."""
        ledger = self._ledger
        if ledger.streaming:
            return sorted(ledger.recent, key=lambda r: r.index)
        results = ledger.results
        return [results[i] for i in sorted(results)]

    def __repr__(self) -> str:
        """``<Batch running: finished=3/20 completed=2 failed=1 ...>``."""
        return batch_line(self)

    # -- the two ways in ----------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, list[RowResult]]:
        return self._ensure_task().__await__()

    async def __aiter__(self) -> AsyncIterator[RowResult]:
        """Yield results as rows finish; leaving the loop early cancels the batch
        (its journal lets a later run resume it)."""
        ledger = self._ledger
        if self._task is None:
            ledger.streaming = True  # each result handed out once, none kept
        task = self._ensure_task()
        queue = ledger.queue
        getter: asyncio.Future[RowResult] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    ledger.taken()
                    yield getter.result()
                    while not queue.empty():  # what is there already, without a wait
                        result = queue.get_nowait()
                        ledger.taken()
                        yield result
                    continue
                getter.cancel()
                while not queue.empty():
                    result = queue.get_nowait()
                    ledger.taken()
                    yield result
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
            self._task.add_done_callback(self._ended)
        return self._task

    def _ended(self, task: asyncio.Task[list[RowResult]]) -> None:
        """A run cancelled before its first step never moved its phase: now it does."""
        if task.cancelled():
            self._ledger.end(_P.CANCELLED)

    async def prepare(self) -> list[Item]:
        """Check every row and build the requests (once); nothing is submitted. The
        items are kept, and the run sends them: for many rows, :meth:`check` keeps none.

        Returns:
            Every item; those with ``problems`` will be rejected.
        """
        running = self._task is not None
        try:
            items = await self._check_rows()
        except BaseException:
            if not running and self._ledger.phase is _P.PREPARING:
                self._ledger.to(_P.NOT_STARTED)  # it may be tried again
            raise
        if not running and self._ledger.phase is _P.PREPARING:
            self._ledger.to(_P.PREPARED)
        return items

    async def _check_rows(self) -> list[Item]:
        if self._items is None:
            if self._ledger.phase is _P.NOT_STARTED:
                self._ledger.to(_P.PREPARING)
            source = self._source
            await source.open()
            items = [source.build(index, raw) for index, raw in source.rows()]
            if self._items is None:
                self._items = items
                self._source = ItemSource.of(items)
                self._ledger.set_total(len(items))
        return self._items

    async def check(self, *, keep: int = 100) -> BatchCheck:
        """Check every row before any is sent, keeping none: a pre-pass over the rows (a
        list or a file; a generator can be read only once). The run reads them again.

        Args:
            keep: How many rows' problems to keep (the first ones); all are counted.

        Returns:
            How many rows there are, how many would be rejected, the first problems,
            and what a row may cost: the ``cost_per_row`` given, or what the service
            charged the videos of the journal's rows (a few details read), with the
            estimate of what the rows to send may cost.

        Raises:
            RuntimeError: The rows can be read only once (a generator).
        """
        if not self._source.reusable:
            raise RuntimeError(
                "check() reads the rows twice; these can be read once (a generator): "
                "give a list or a file's reader, or let the run check each row as it sends"
            )
        await self._source.open()
        found = await check_rows(self._source, keep=keep)
        cost = await self._row_cost()
        return attrs.evolve(
            found,
            cost_per_row=cost.per_row,
            cost_given=cost.given,
            cost_rows=tuple(cost.charges.items()),
            sent_before=cost.sent_before,
        )

    async def _row_cost(self) -> RowCost:
        """What a row may cost, learnt as a run learns it (nothing is sent); the journal,
        when there is one already, is opened for that and closed."""
        settings = self.settings
        path = settings.journal
        if path is None or (
            not is_store_url(path) and not await asyncio.to_thread(os.path.exists, path)
        ):
            return await row_cost(None, self._jobs, settings.cost_per_row)
        journal = await open_journal(
            path,
            self._batch_id,
            now=self._clock.now,
            key=settings.journal_key,
            opener=settings.journal_opener,
            accept_journal_loss=settings.accept_journal_loss,
        )
        try:
            return await row_cost(journal, self._jobs, settings.cost_per_row)
        finally:
            journal.close()

    # -- running -------------------------------------------------------------------------

    async def _run(self) -> list[RowResult]:
        """The run: its rows, then its phase's end (done, failed or cancelled). Its
        requests are bulk work: a request handler's calls go ahead of them."""
        set_bulk()  # this task's context, and the rows' tasks it starts
        try:
            if self._ledger.phase is _P.NOT_STARTED:
                self._ledger.to(_P.PREPARING)
            await self._source.open()
            await self._rows.run(self._source)
        except asyncio.CancelledError:
            self._ledger.end(_P.CANCELLED)
            raise
        except BaseException as exc:
            self._ledger.end(_P.FAILED, exc)
            raise
        self._ledger.to(_P.DONE)
        return self.results


def request_batch(
    requests: Iterable[CreationRequest],
    *,
    submitter: Submitter,
    jobs: JobMaker,
    clock: Clock = SYSTEM_CLOCK,
    gate: Gate | None = None,
    reach: Reach | None = None,
    journal_key: str | None = None,
    journal_opener: JournalOpener | None = None,
    webhook: str | None = None,
    **options: Unpack[BatchOptions],
) -> Batch:
    """The batch of ``client.batch``: every request named, checked and serialised once,
    when it is about to be sent.

    A request without a name is given one (``batch-<id>-<row>``): names are how an
    interrupted batch finds what the service made. ``journal_key``: the client's key id
    (see :attr:`BatchSettings.journal_key`); ``journal_opener``: opens a journal named
    by a URL (the client's Redis one); ``webhook``: the URL a request without one is
    given.
    """
    total = len(requests) if isinstance(requests, Sequence) else None
    bid = batch_id_of("requests", total)
    source = RequestSource(requests, f"batch-{bid[:6]}", webhook=webhook)
    return Batch(
        source,
        submitter=submitter,
        jobs=jobs,
        batch_id=bid,
        clock=clock,
        settings=BatchSettings(**options, journal_key=journal_key, journal_opener=journal_opener),
        gate=gate,
        reach=reach,
    )
