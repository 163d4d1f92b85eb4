"""When the poller reads, and what it counts: pure decisions and plain counters.

:class:`PollPolicy` decides the interval between rounds (tested without a poller);
:class:`PollerStats` counts the requests of the rounds; :class:`HasRate` is what polling
needs of a limiter. :mod:`asyncclient.awaiting.poller` re-exports them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from attrs import frozen

from asyncclient.ratelimit import RateLimit

__all__ = ["HasRate", "PollPolicy", "PollerStats"]


class HasRate(Protocol):
    """What polling needs of a limiter: its rate (polling's share is sized by it). The
    client's limiter is one; a fleet's poller hands the same one to the poller it composes."""

    @property
    def rate(self) -> RateLimit: ...


@frozen(kw_only=True)
class PollPolicy:
    """How often the poller reads: a pure decision, tested without a poller.

    Attributes:
        min_interval: Seconds between rounds while progress moves.
        max_interval: The longest wait between rounds.
        backoff: Growth of the interval per round without progress.
        jitter: +/- fraction of random spread on each interval.
        share: The largest part of the plan's rate that polling's rounds may use. The
            one detail read of each finished video is not paced by it (every way of
            waiting for a video pays it once); like every request it waits for a token
            of the client's limiter, so it never exceeds the plan.
        first_delay: Seconds from the poller's start (its first watched job, when
            none was watched) to its first round: 0 reads at once.
        notified_first: A video a list page shows finished for the first time is not
            read yet: its notification, usually on its way, finishes the job without a
            request. A later round that still finds the job unfinished reads it (its
            notification is late or lost). For polling behind notifications.
    """

    min_interval: float = 2.0
    max_interval: float = 30.0
    backoff: float = 1.5
    jitter: float = 0.1
    share: float = 0.5
    first_delay: float = 0.0
    notified_first: bool = False

    @classmethod
    def safety_net(cls) -> PollPolicy:
        """Polling as a safety net behind notifications (a client with ``webhook_url``).

        The first round a minute after the poller starts, then every one to five
        minutes; a finished video is read only if a later round still finds its job
        unfinished (``notified_first``): a job whose notification never comes still
        ends, a few minutes late, and one whose notification comes costs no read.
        """
        return cls(min_interval=60.0, max_interval=300.0, first_delay=60.0, notified_first=True)

    def next_interval(
        self,
        current: float,
        *,
        moved: bool,
        spent: int,
        per_second: float,
        spread: Callable[[float, float], float] = random.uniform,
    ) -> tuple[float, float]:
        """The new base interval and the seconds to wait before the next round.

        Args:
            current: The base interval of the round just done.
            moved: Whether some status or progress moved in it.
            spent: Requests it made that recur while jobs are pending (list pages,
                reads by id), not the one read of each finished video's detail.
            per_second: The plan's rate.
            spread: ``uniform(a, b)`` for the jitter.
        """
        base = self.min_interval if moved else min(self.max_interval, current * self.backoff)
        floor = spent / (per_second * self.share) if spent else 0.0
        return base, max(floor, base * (1.0 + spread(-self.jitter, self.jitter)))


class PollerStats:
    """Counters of what the poller did (tests and benchmarks read them)."""

    __slots__ = ("detail_requests", "job_rounds", "list_requests", "result_reads", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.list_requests = 0
        self.detail_requests = 0
        self.result_reads = 0
        """Of ``detail_requests``: reads of a video that a list page showed finished."""
        self.job_rounds = 0
        """Jobs read, summed over rounds: what one GET per job per round would cost."""

    @property
    def requests(self) -> int:
        """Every request the poller made."""
        return self.list_requests + self.detail_requests
