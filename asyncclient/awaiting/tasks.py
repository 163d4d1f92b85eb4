"""Structured concurrency for the batch and the poller, on anyio task groups.

Every task a batch or the poller starts lives in a task group the owner opens
and closes: none outlives it, a cancellation of the owner reaches all of them,
and an error is never left unretrieved. A :class:`TaskScope` re-raises the first
error of its tasks as itself (not wrapped in an exception group), after
cancelling the others, so callers keep catching the errors they know.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

__all__ = ["TaskScope", "run_all"]


class TaskScope:
    """A task group whose first error cancels the rest and is raised as itself.

    ``async with TaskScope() as scope: scope.start(fn, *args)``; the body itself
    may raise too. Leaving the block waits for every task.
    """

    def __init__(self) -> None:
        self._group: anyio.abc.TaskGroup | None = None
        self._error: BaseException | None = None
        self._cancelled = False

    async def __aenter__(self) -> TaskScope:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        assert self._group is not None
        if isinstance(exc, Exception):  # the body failed: stop the tasks, raise it as itself
            self._keep(exc)
            exc = None
        suppressed: bool | None = False
        if exc is None:
            await self._group.__aexit__(None, None, None)
        else:
            suppressed = await self._group.__aexit__(type(exc), exc, exc.__traceback__)
        if self._error is not None:
            raise self._error
        return bool(self._cancelled and suppressed)

    def cancel(self) -> None:
        """Cancel every task and the block's body; the block then ends without an error
        (unless a task failed before)."""
        assert self._group is not None, "cancel inside 'async with'"
        self._cancelled = True
        self._group.cancel_scope.cancel()

    def _keep(self, error: Exception) -> None:
        if self._error is None:
            self._error = error
        assert self._group is not None
        self._group.cancel_scope.cancel()

    def start(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``func(*args)`` in the group."""
        assert self._group is not None, "start tasks inside 'async with'"
        self._group.start_soon(self._guard, func, *args)

    async def _guard(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        try:
            await func(*args)
        except Exception as exc:
            self._keep(exc)


async def run_all(calls: list[Callable[[], Awaitable[Any]]], *, limit: int) -> None:
    """Await every call, at most ``limit`` at once; the first error cancels the rest.

    Raises:
        Exception: The first error a call raised, as itself.
    """
    if len(calls) <= 1 or limit <= 1:
        for call in calls:
            await call()
        return
    slots = anyio.Semaphore(limit)

    async def one(call: Callable[[], Awaitable[Any]]) -> None:
        async with slots:
            await call()

    async with TaskScope() as scope:
        for call in calls:
            scope.start(one, call)
