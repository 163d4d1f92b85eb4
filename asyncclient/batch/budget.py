"""A batch's credit budget: a hard cap on the credits its rows may be charged.

The service does not publish what a creation costs (the spec shows no amounts): a
video's ``usedCredits``, in its detail view only, says what it was charged. So what a
row may cost is known before anything is sent from one of two places: the user's
``cost_per_row``, or what the service charged the videos of rows an earlier run of
the same batch sent (same batch, same template), read from the journal's rows
(:func:`row_cost`: a few videos' details, the most of their charges). When neither
tells it, a batch with a budget is refused before anything is sent
(:class:`~asyncclient.errors.ValidationError`); no row is ever sent "to find out".

A row is sent only when what remains covers the most a row may cost. What remains is
the budget less every row that may have been charged: rows this run sent (accepted, in
flight, unresolved) and rows an earlier run sent (the journal's), each at its charge
when one was read, else at the most a row may cost. A row the service refused gives
its credits back. A charge read later (``read_charges``) that is more than the cost
counted raises it: rows not yet read count at it, and no row is sent unless that fits
(said in the log and in :attr:`CreditBudget.overcharged`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

from attrs import field, frozen

from asyncclient._states import JournalEvent
from asyncclient.batch.pickup import JobMaker
from asyncclient.batch.report import BatchUpdate
from asyncclient.batch.store import JournalStore
from asyncclient.errors import APIConnectionError, APIError, ValidationError
from asyncclient.models.videos import CreatedProject

__all__ = ["SAMPLE", "CreditBudget", "RowCost", "row_cost"]

logger = logging.getLogger("asyncclient")

SAMPLE = 8
"""Rows of a journal whose videos' charges are read to learn what a row may cost."""

_SENT = (JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.DONE)  # may be charged
_MADE = (JournalEvent.ACCEPTED, JournalEvent.DONE)  # the service made a video for these

HOW = (
    "give what a row may cost (cost_per_row=N; on the command line --cost-per-row N), "
    "or resume with a journal whose earlier rows the service charged (their videos' "
    "usedCredits tell it)"
)
"""What to do when a row's cost is unknown (the refusal and ``--check`` say it)."""


@frozen(kw_only=True)
class RowCost:
    """What a row of a batch may cost, and where that was learnt."""

    given: int | None = None
    """The user's ``cost_per_row``."""
    charges: Mapping[int, int] = field(factory=dict)
    """Credits the service charged the videos of the journal's rows read, by row."""
    sent_before: int = 0
    """Rows an earlier run sent (the journal's ``submit``, ``accepted`` and ``done``):
    each may have been charged."""

    @property
    def per_row(self) -> int | None:
        """The most a row may cost: the larger of the given cost and the charges read
        (None: unknown)."""
        known = [c for c in (self.given, *self.charges.values()) if c is not None]
        return max(known) if known else None

    @property
    def source(self) -> str:
        """Where :attr:`per_row` comes from, in words."""
        return cost_source(self.given, tuple(self.charges.items()))


def cost_source(given: int | None, charges: tuple[tuple[int, int], ...]) -> str:
    """Where a row's cost comes from, in words: given, and/or the journal's rows read."""
    rows = ", ".join(str(row) for row, _ in charges)
    read = (
        f"what the service charged the journal's rows {rows} (their videos' usedCredits)"
        if charges
        else ""
    )
    if given is not None and read:
        return f"given ({given}), and {read}: the larger"
    if given is not None:
        return "given"
    return read or "unknown"


async def row_cost(journal: JournalStore | None, jobs: JobMaker, given: int | None) -> RowCost:
    """What a row may cost: ``given``, and what the service charged the videos of up to
    :data:`SAMPLE` rows the journal saw accepted or finished (one read of a video's
    detail each; a row that cannot be read is passed over). Nothing is sent."""
    if journal is None:
        return RowCost(given=given)
    counts = journal.counts()
    sent = sum(counts.get(event, 0) for event in _SENT)
    made = sum(counts.get(event, 0) for event in _MADE)
    charges = await _read_charges(journal, jobs) if made else {}
    return RowCost(given=given, charges=charges, sent_before=sent)


async def _read_charges(journal: JournalStore, jobs: JobMaker) -> dict[int, int]:
    charges: dict[int, int] = {}
    tries = 0
    for index, created in _made_rows(journal):
        if len(charges) >= SAMPLE or tries >= 2 * SAMPLE:
            break
        tries += 1
        job = jobs.from_created(created)
        try:
            if job.video_id is None:  # a template row's video is found by its project
                await job.refresh()
            if job.video_id is None:
                continue
            charge = (await job.read()).used_credits
        except APIConnectionError as exc:  # the service cannot be reached: stop asking
            logger.warning("could not read what journal row %d was charged: %s", index, exc)
            break
        except APIError as exc:
            logger.warning("could not read what journal row %d was charged: %s", index, exc)
            continue
        if charge:  # a creation consumes credits: 0 (or none) tells nothing
            charges[index] = charge
    return charges


def _made_rows(journal: JournalStore) -> Iterator[tuple[int, CreatedProject]]:
    """The rows the journal saw accepted or finished, with their ids, in row order."""
    for index in journal.rows:
        if journal.event_of(index) not in _MADE:
            continue
        state = journal.rows[index]
        if state.project_id or state.video_id:
            yield index, CreatedProject(project_id=state.project_id, video_id=state.video_id)


class CreditBudget:
    """Credits a batch may be charged, at most.

    Args:
        limit: The budget in credits; ``None`` admits every row.
        cost_per_row: What one row may cost at most, when the user knows it.
    """

    def __init__(self, limit: int | None, cost_per_row: int | None = None) -> None:
        self.limit = limit
        self.given = cost_per_row
        self.cost: int | None = cost_per_row
        """The most a row may cost, in credits (None: unknown)."""
        self.cost_from = cost_source(cost_per_row, ())
        """Where :attr:`cost` was learnt, in words."""
        self.overcharged: str | None = None
        """Set when a row was charged more than :attr:`cost` said: what happened."""
        self._known = 0  # credits of rows that may be charged whose charge was read
        self._unknown = 0  # rows that may be charged, charge not read: ``cost`` each
        self._read_before: frozenset[int] = frozenset()  # journal rows in ``_known``
        self._reached = False

    @property
    def committed(self) -> int:
        """Credits counted against the budget: every row that may have been charged."""
        return self._known + self._unknown * (self.cost or 0)

    @property
    def remaining(self) -> int | None:
        """Credits left for rows not sent yet (None without a budget)."""
        return None if self.limit is None else max(0, self.limit - self.committed)

    async def begin(self, journal: JournalStore | None, jobs: JobMaker) -> None:
        """Learn what a row may cost and count the rows an earlier run sent, before
        any row is sent.

        Raises:
            ValidationError: A budget of more than 0 and nothing tells what a row may
                cost (the message says how to give it); nothing was sent.
        """
        if self.limit is None:
            return
        learnt = await row_cost(journal, jobs, self.given)
        self.cost, self.cost_from = learnt.per_row, learnt.source
        self._known = sum(learnt.charges.values())
        self._unknown = learnt.sent_before - len(learnt.charges)
        self._read_before = frozenset(learnt.charges)
        if self.cost is None and self.limit > 0:
            raise ValidationError(
                [
                    f"cost_per_row: a budget of {self.limit} credits is a cap, and what a "
                    f"row may cost is not known (the service does not publish it), so "
                    f"nothing was sent: {HOW}"
                ]
            )
        if self.given is not None and self.cost is not None and self.cost > self.given:
            logger.warning(
                "the journal's rows were charged up to %d credits, more than the %d given "
                "as cost_per_row: a row counts %d",
                self.cost, self.given, self.cost,
            )  # fmt: skip
        logger.info(
            "credit budget %d: a row may cost %s (%s); %d counted for rows sent before",
            self.limit, self.cost, self.cost_from, self.committed,
        )  # fmt: skip

    async def admit(self) -> bool:
        """Count one row at the most it may cost; False (the row is not sent) once
        what remains does not cover it."""
        if self.limit is None:
            return True
        cost = self.cost
        if self._reached or cost is None or self.committed + cost > self.limit:
            self._reached = True
            return False
        self._unknown += 1
        return True

    def refund(self) -> None:
        """A row counted turned out to have made nothing (the service refused it, or
        what an earlier run sent was never made): its credits are given back."""
        if self.limit is not None and self._unknown > 0:
            self._unknown -= 1

    def charged(self, update: BatchUpdate) -> None:
        """A listener of the batch: a row's result that shows its charge (its video's
        ``usedCredits``, read once it ended) replaces the cost it was counted at."""
        row = update.row
        if self.limit is None or row is None or row.video is None:
            return
        charge = row.video.used_credits
        if charge is None or row.index in self._read_before or self._unknown == 0:
            return
        self._unknown -= 1
        self._known += charge
        if self.cost is not None and charge > self.cost:
            self.overcharged = (
                f"row {row.index} was charged {charge} credits, more than the {self.cost} "
                f"a row was counted at: every row not yet known to be charged now counts "
                f"{charge}, and a row is sent only while that fits what remains of the "
                f"budget ({self.limit} credits)"
            )
            logger.warning("credit budget: %s", self.overcharged)
            self.cost = charge
