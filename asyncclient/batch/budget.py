"""A batch's credit budget: rows are admitted while their cost fits (issue: bulk generation).

The spec shows no credit amounts, so a row's cost is either given or learnt from
the first row's video (its ``usedCredits``); until then only that one row is let
through. Credits are reserved when a row is admitted and given back when the
service refuses it.
"""

from __future__ import annotations

import asyncio
import logging

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.errors import APIError

__all__ = ["CreditBudget"]

logger = logging.getLogger("asyncclient")


class CreditBudget:
    """Credits a batch may spend.

    Args:
        limit: The budget in credits; ``None`` admits every row.
        cost_per_row: What one row costs, when known.
        clock: Paces the reads that learn the cost.
    """

    def __init__(
        self, limit: int | None, cost_per_row: int | None = None, *, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.limit = limit
        self._clock = clock
        self.cost = cost_per_row
        self.rows = 0
        """Rows admitted so far (resumed ones included)."""
        self._reached = False
        self._learning = False
        self._cost_known = asyncio.Event()

    async def admit(self) -> bool:
        """Reserve one row's credits; False once the budget would be exceeded."""
        if self.limit is None:
            return True
        while self.cost is None:
            if not self._learning:
                self._learning = True  # this row's video will tell what a row costs
                self.rows += 1
                return True
            await self._cost_known.wait()
        if self._reached or (self.rows + 1) * self.cost > self.limit:
            self._reached = True
            return False
        self.rows += 1
        return True

    def count(self) -> None:
        """A row submitted by an earlier run of the batch (from its journal) counts too."""
        self.rows += 1

    def uncount(self) -> None:
        """A counted row turned out to have spent nothing (it will be admitted anew)."""
        self.rows -= 1

    @property
    def spent(self) -> int:
        """Credits the admitted rows cost (0 while the cost is unknown)."""
        return self.rows * (self.cost or 0)

    def refund(self) -> None:
        """A row the service refused spent nothing."""
        if self.limit is None:
            return
        self.rows -= 1
        if self.cost is None:
            self._learning = False  # let the next row learn the cost
            self._cost_known.set()
            self._cost_known = asyncio.Event()

    async def learn(self, job: VideoJob) -> None:
        """Read the cost of the row that was let through to learn it.

        Never raises for the service's sake: when reading fails, the next row
        admitted learns it instead (its own row is unaffected).
        """
        if self.limit is None or self.cost is not None:
            return
        try:
            cost = await self._read_cost(job)
        except APIError as exc:
            logger.warning("could not read a row's cost (%s); the next row will", exc)
            self._learning = False
            self._cost_known.set()
            self._cost_known = asyncio.Event()
            return
        if not cost:
            logger.warning("could not learn a row's cost: the credit budget is not enforced")
        self.cost = cost
        self._cost_known.set()

    async def _read_cost(self, job: VideoJob) -> int:
        for _ in range(20):  # template jobs find their video in the list first
            await job.refresh()
            if job.video_id:
                break
            await self._clock.sleep(0.5)
        if not job.video_id:
            return 0
        return (await job.read()).used_credits or 0
