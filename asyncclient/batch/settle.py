"""Asking the service what an ambiguous creation made, patiently, before anything is resent.

A creation whose answer was lost (a reset or timeout after sending, a 5xx that may
follow processing, an unreadable reply) may or may not have made a paid project.
:func:`settle` looks for it with the service (``projects.reconcile``): two looks that
find nothing, a moment apart, are the service's word that nothing was made; a look
that fails (an error, an unreadable page) is tried again after a growing delay; when
the service still cannot tell, the answer is :class:`Unknown`, and the row is never
resent on a guess.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from attrs import frozen

from asyncclient._clock import Clock
from asyncclient.awaiting.jobs import VideoJob
from asyncclient.errors import AmbiguousCreationError, APIError, ValidationError

__all__ = ["LOOKS_AFTER", "Unknown", "settle"]

LOOKS_AFTER = (0.0, 2.0, 4.0, 8.0, 16.0)
"""Seconds to wait before each look (30 s in all)."""
_CLEAN_LOOKS = 2


@frozen
class Unknown:
    """The service could not tell whether an ambiguous creation made a project."""

    reason: str


async def settle(
    reconcile: Callable[[AmbiguousCreationError], Awaitable[VideoJob | None]],
    error: AmbiguousCreationError,
    clock: Clock,
) -> VideoJob | Unknown | None:
    """The job of what ``error``'s creation made, None when the service says it made
    nothing, or :class:`Unknown` when it could not tell after every look."""
    clean = 0
    reason = "the service could not be asked"
    for delay in LOOKS_AFTER:
        if delay:
            await clock.sleep(delay)
        try:
            job = await reconcile(error)
        except AmbiguousCreationError as several:  # more than one project matches
            return Unknown(str(several))
        except (APIError, ValidationError) as failed:
            reason = f"looking for it failed: {failed}"
            continue
        if job is not None:
            return job
        clean += 1
        if clean >= _CLEAN_LOOKS:
            return None
    return Unknown(
        f"sent, and whether the service made it is unknown ({reason}); "
        "run the batch again with its journal to find out (it is never resent blindly)"
    )
