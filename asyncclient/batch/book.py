"""One owner of every row's life: the row book.

A row's state used to be written from four places (the ledger's codes and flags, the
journal, the runner's own dicts, the budget). :class:`RowBook` is now the one place that
moves it: one method per event of a row's life (read, sending, not sent, accepted,
refused, ambiguous, finished, still pending, stopped), each moving together the row's
outcome and counts (:class:`~asyncclient.batch.ledger.Ledger`), its journal record
(through :class:`~asyncclient.batch.pickup.Notes`, durable before the batch goes on
where money is at stake), the credit budget, the projects the batch owns
(:class:`~asyncclient.batch.pickup.Claims`) and the gate's count of rows still to send
(:class:`~asyncclient.http.gate.Ahead`). The runner keeps only the scheduling: reading,
spacing, sending, settling, awaiting.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from asyncclient._states import BatchPhase, JournalEvent, RowOutcome
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.batch.budget import CreditBudget
from asyncclient.batch.ledger import Ledger
from asyncclient.batch.pickup import Claims, Notes
from asyncclient.batch.rows import Item, RowResult
from asyncclient.batch.source import RowSource
from asyncclient.batch.stop import end_open_rows
from asyncclient.batch.store import JournalStore
from asyncclient.http.gate import Ahead
from asyncclient.models.videos import VideoDetail

__all__ = ["RowBook"]

_R = RowOutcome
_AGAIN = "run the batch again with its journal to wait for it (it is never sent again)"
_LATER = "wait for it later by its ids (client.jobs.from_created); it is never sent again"


class RowBook:
    """The rows of one run, each moved by the event that happened to it.

    Args:
        ledger: The batch's outcomes, counts and listeners.
        budget: The credit budget (what a refusal gives back).
        journal: The batch's journal, or None.
        ahead: The gate's count of rows read and not yet past their submission, or None.
    """

    def __init__(
        self,
        ledger: Ledger,
        budget: CreditBudget,
        journal: JournalStore | None = None,
        ahead: Ahead | None = None,
    ) -> None:
        self.ledger = ledger
        self._budget = budget
        self._journal = journal
        self._ahead = ahead
        self._notes = Notes(journal)
        self.claims = Claims(journal)
        """Projects a row of the batch owns (one project satisfies one row)."""
        self._open: dict[int, VideoJob] = {}  # rows being awaited, by row
        self._titles: dict[int, str | None] = {}  # titles of the rows read, not finished
        self._reading = True  # rows are still being read from the source
        self.read_count = 0
        """Rows read so far."""

    # -- reading -------------------------------------------------------------------------

    def read(self, index: int) -> None:
        """A row was read from the input: pending, and announced to the gate."""
        self.read_count = index + 1
        self.ledger.add_row(index)
        if self._ahead is not None:
            self._ahead.more(1)

    def titled(self, index: int, title: str | None) -> None:
        """The row's title (a template row) or name (a request), for its result."""
        self._titles[index] = title

    def all_read(self) -> None:
        """The input ended: what was announced and not read is gone."""
        self._reading = False
        self.ledger.all_read(self.read_count)
        if self._ahead is not None:
            self._ahead.close()
        self._check_passed()

    def passed(self, index: int) -> None:
        """The row is past its submission (sent, refused, skipped, or known from the
        journal): polling need not leave a token for it any more."""
        if self.ledger.pass_row(index):
            if self._ahead is not None:
                self._ahead.sent()
            self._check_passed()

    def _check_passed(self) -> None:
        ledger = self.ledger
        if (
            not self._reading
            and ledger.passed >= ledger.total
            and ledger.phase is BatchPhase.SUBMITTING
        ):
            ledger.to(BatchPhase.AWAITING)

    # -- sending -------------------------------------------------------------------------

    async def sending(self, item: Item, service_at: datetime | None) -> None:
        """The row's creation is about to leave: recorded (durable) with the service's
        clock as known now, then counted as sent."""
        await self._notes.submit(item, service_at)
        self.ledger.mark_sent(item.index)

    async def not_sent(self, item: Item, why: str) -> None:
        """The request could not leave (not a byte sent): nothing was made."""
        self.ledger.unmark_sent(item.index)
        await self._notes.money(JournalEvent.REJECTED, item, error=f"not sent: {why}")

    async def accepted(self, item: Item, job: VideoJob) -> None:
        """The service accepted the row's creation (it is charged): its project is the
        row's, recorded (durable), and the row is ``submitted``."""
        self.claims.add(job.project_id)
        await self._notes.money(
            JournalEvent.ACCEPTED, item, project=job.project_id, video=job.video_id
        )
        self.ledger.move(item.index, _R.SUBMITTED)
        self.ledger.report_progress()

    async def found(self, item: Item, job: VideoJob) -> None:
        """A look found what the row's cut-off creation made: recorded as accepted."""
        await self._notes.money(
            JournalEvent.ACCEPTED, item, project=job.project_id, video=job.video_id
        )

    async def refused(self, item: Item, error: str) -> None:
        """The service showed that it made nothing: the credits come back, the row is
        ``rejected``."""
        self.passed(item.index)
        self._budget.refund()
        await self._notes.money(JournalEvent.REJECTED, item, error=error, api=True)
        self._end(item, _R.REJECTED, error=error)

    def made_nothing(self) -> None:
        """A creation an earlier run sent turned out to have made nothing: its credits,
        counted when the run began, come back (the row is sent afresh)."""
        self._budget.refund()

    def invalid(self, item: Item) -> None:
        """The row's input breaks a rule: ``rejected`` before anything was sent."""
        self._end(item, _R.REJECTED, error="; ".join(item.problems))

    def skipped(self, item: Item) -> None:
        """The budget does not cover the row: ``skipped``, never sent."""
        self._end(item, _R.SKIPPED, error="credit budget reached")

    def ambiguous(self, item: Item, reason: str) -> None:
        """Sent, and the service cannot say whether it made the row's project:
        ``unresolved`` (counted as maybe charged, never resent on a guess)."""
        self._end(item, _R.UNRESOLVED, error=reason)

    # -- awaiting ------------------------------------------------------------------------

    def awaiting(self, item: Item, job: VideoJob) -> bool:
        """The row's video is awaited; True when this run's acceptance charged it."""
        self.passed(item.index)  # (already, on every way here; never wait unannounced)
        ledger = self.ledger
        if ledger.outcome(item.index) is _R.PENDING:  # a row an earlier run submitted
            ledger.move(item.index, _R.SUBMITTED, earlier=True)
        self._open[item.index] = job
        return ledger.accepted(item.index)

    def finished(
        self,
        item: Item,
        status: RowOutcome,
        job: VideoJob,
        *,
        video: VideoDetail | None = None,
        error: str | None = None,
    ) -> None:
        """The service finished the row's video (``completed`` or ``failed``):
        recorded ``done`` in the journal."""
        self._end(item, status, error=error, job=job, video=video, done=True)

    def still_pending(self, item: Item, job: VideoJob, why: str) -> None:
        """The row's video was accepted and is not known finished: the row keeps
        ``submitted``, with its ids (its journal's last line stays ``accepted``, so the
        next run with the journal waits for it again). Never ``failed`` on our side's
        account: a row told failed is one a user pays for twice."""
        self.passed(item.index)
        self._open.pop(item.index, None)
        self.ledger.keep(
            RowResult(
                index=item.index,
                status=_R.SUBMITTED,
                error=f"still pending: {why}; {_AGAIN if self._journal else _LATER}",
                project_id=job.project_id,
                video_id=job.video_id,
                title=self._titles.pop(item.index, None),
            )
        )

    # -- a stop --------------------------------------------------------------------------

    def stopped(self, reason: str, unread: Iterator[tuple[int, Any]], source: RowSource) -> None:
        """The run stopped (the service out of reach): every row without an outcome
        gets one (:func:`~asyncclient.batch.stop.end_open_rows`), the unread ones too."""
        self.read_count = end_open_rows(
            reason, self.ledger, self._journal, self._open, self._titles,
            read=self.read_count, unread=unread, source=source,
        )  # fmt: skip
        if self.ledger.phase is BatchPhase.SUBMITTING:  # every row has its outcome now
            self.ledger.to(BatchPhase.AWAITING)

    # -- the end of a row ----------------------------------------------------------------

    def _end(
        self,
        item: Item,
        status: RowOutcome,
        *,
        error: str | None = None,
        job: VideoJob | None = None,
        video: VideoDetail | None = None,
        done: bool = False,
    ) -> None:
        self.passed(item.index)
        self._open.pop(item.index, None)
        self.ledger.move(item.index, status)
        result = RowResult(
            index=item.index,
            status=status,
            video=video,
            error=error,
            project_id=job.project_id if job else None,
            video_id=(video.id if video else None) or (job.video_id if job else None),
            title=self._titles.pop(item.index, None),
        )
        if done:  # recorded before anyone is told
            self._notes.record(
                JournalEvent.DONE,
                item,
                status=status.value,
                project=result.project_id,
                video=result.video_id,
                error=error,
                title=result.title,
                credits=video.used_credits if video is not None else None,
            )
        self.ledger.keep(result)
