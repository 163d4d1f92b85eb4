"""Priority lanes: interactive calls go ahead of bulk work on the same key.

A web backend serves people (a click on "create" waits for its answer) and runs bulk
work (a batch of 10,000 template rows) on one API key, so on one rate limit. Every
request takes a token of the key's limiter first, and each request belongs to a lane:

- :attr:`Lane.INTERACTIVE` (the default): a single call, as a request handler makes.
- :attr:`Lane.BULK`: a batch's submissions and the polling of jobs.

While interactive requests wait for a token, bulk ones leave the next tokens to them:
an interactive request waits at most about one token interval behind a batch that
saturates the plan, and the batch loses only the tokens the interactive requests take.
With the fleet's shared bucket in Redis it holds across processes: a request handler
in one worker goes ahead of a batch in another.

The lane needs no marking where the default is right (a batch marks its own work
bulk, the poller its reads). Mark other background work with :func:`lane`::

    with asyncclient.lane(asyncclient.Lane.BULK):
        await client.videos.list().all()   # a nightly export, behind the handlers

The lane is a context variable: tasks started inside the block inherit it.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["Lane", "current_lane", "lane"]


class Lane(enum.Enum):
    """Which requests go first when they wait for the same rate limit."""

    INTERACTIVE = "interactive"
    """A single call made for someone waiting (the default)."""
    BULK = "bulk"
    """Background work: a batch's submissions, the polling of jobs, exports."""


T = TypeVar("T")

_LANE: ContextVar[Lane] = ContextVar("asyncclient_lane", default=Lane.INTERACTIVE)


def current_lane() -> Lane:
    """The lane of requests made here (:attr:`Lane.INTERACTIVE` unless marked)."""
    return _LANE.get()


@contextmanager
def lane(which: Lane | str) -> Iterator[Lane]:
    """Make the requests of this block (and of the tasks it starts) go in ``which``.

    Args:
        which: A :class:`Lane` or its name (``"interactive"``, ``"bulk"``).

    Raises:
        ValueError: Not a lane.
    """
    try:
        chosen = which if isinstance(which, Lane) else Lane(which)
    except ValueError:
        names = ", ".join(repr(m.value) for m in Lane)
        raise ValueError(f"lane: must be one of {names}, got {which!r}") from None
    token = _LANE.set(chosen)
    try:
        yield chosen
    finally:
        _LANE.reset(token)


async def in_bulk(work: Awaitable[T]) -> T:
    """Await ``work`` in the bulk lane: for a background task's coroutine (the
    poller's), whatever context the task was started from."""
    set_bulk()
    return await work


def set_bulk() -> None:
    """Mark the current context bulk for good (a task of background work: the poller's,
    a batch's): tasks it starts inherit it."""
    _LANE.set(Lane.BULK)
