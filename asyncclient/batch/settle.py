"""Asking the service what an ambiguous creation made, until it can no longer make one.

A creation whose answer was lost (a reset or timeout after sending, a 5xx that may
follow processing, an unreadable reply) may or may not have made a paid project, and a
service that queued the request may make it long after the client gave up on the reply.
:func:`settle` looks for it with the service (``projects.reconcile``), again and again
while the batch goes on, until :data:`SETTLE_WINDOW` has passed since the request left
(longer than any timeout on either side). A project found at any look is the row's.
Only a look after the window that finds nothing is the service's word that nothing was
made: then, and only then, the row may be sent again; a look is a scan of the list
back to the request's send time by the service's clock, however long. When looking
kept failing, several projects match, or no look can prove anything (the service's
clock was never read before the request left), the answer is :class:`Unknown`: the row
stays unresolved, is counted as maybe charged, and is never resent on a guess.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from attrs import frozen

from asyncclient._clock import Clock
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.errors import (
    APIError,
    ReconciliationError,
    ValidationError,
)
from asyncclient.models.videos import SentCreation

__all__ = ["LOOKS_AFTER", "SETTLE_WINDOW", "Unknown", "settle"]

SETTLE_WINDOW = 600.0
"""Seconds after a creation left before "not found" means "nothing was made" (10
minutes: past the client's longest timeout, two minutes, and any queue a service keeps a
request in that it has not answered). ``BatchSettings(settle_window=...)`` changes it."""

LOOKS_AFTER = (0.0, 2.0, 4.0, 8.0, 16.0, 30.0, 60.0)
"""Seconds to wait before each look; the last repeats until the window has passed."""


@frozen
class Unknown:
    """The service could not tell whether an ambiguous creation made a project."""

    reason: str


async def settle(
    reconcile: Callable[[SentCreation], Awaitable[VideoJob | None]],
    sent: SentCreation,
    clock: Clock,
    *,
    window: float = SETTLE_WINDOW,
) -> VideoJob | Unknown | None:
    """The job of what ``sent`` made; None once a look after ``window``
    seconds from its sending found nothing (nothing was made); :class:`Unknown` when
    the service could not tell (looks failed, or several projects match)."""
    if sent.service_sent_after is None:  # nothing to match on but our clock: a guess
        return Unknown(
            "sent before any reply of the service told its clock, so which project is "
            f"this row's ({sent.name!r}) cannot be proven; it stays unresolved and is "
            "never resent: look for it in the video list"
        )
    failed: str | None = None
    left = _Window(sent, clock, window)
    for look in range(10_000):  # bounded: a window of days at the longest delay
        delay = LOOKS_AFTER[min(look, len(LOOKS_AFTER) - 1)]
        if look and delay:
            await clock.sleep(min(delay, max(1.0, left())))
        last = left() <= 0
        try:
            job = await reconcile(sent)
        except ReconciliationError as unprovable:  # several match, or no look can prove it
            return Unknown(
                f"sent, and whether the service made it cannot be proven: {unprovable}; "
                "it is never resent on a guess"
            )
        except (APIError, ValidationError) as exc:
            failed = f"looking for it failed: {exc}"
            if last:
                break
            continue
        if job is not None:
            return job
        if last:
            return None  # after the window, the service can no longer make it
        failed = None
    return Unknown(
        f"sent, and whether the service made it is unknown ({failed or 'not settled'}); "
        "run the batch again with its journal to find out (it is never resent blindly)"
    )


class _Window:
    """Seconds of the settle window still to come (negative once it has passed).

    The time already gone when settling starts is read on the wall clock (the request
    may have left in an earlier run); from then on the clock's monotonic time counts.
    """

    def __init__(self, creation: SentCreation, clock: Clock, window: float) -> None:
        sent: datetime = creation.sent_at
        self._clock = clock
        self._end = clock.monotonic() + window - max(0.0, (clock.now() - sent).total_seconds())

    def __call__(self) -> float:
        return self._end - self._clock.monotonic()
