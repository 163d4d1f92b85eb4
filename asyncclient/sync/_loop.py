"""One event loop in a thread of its own: where a synchronous client's calls run.

:class:`LoopThread` starts an anyio blocking portal (an asyncio loop in a daemon thread)
on its first call, runs each call there as a task (``run_coroutine_threadsafe``: half the
cost of a portal call) and blocks the calling thread until it returns:
any thread may call, many at once (a web server's worker threads), including a thread
whose own event loop is running (a notebook cell, an async framework's thread): that loop
is only blocked for the call, never re-entered. :meth:`LoopThread.close` runs a last
coroutine (the async client's ``aclose``) and stops the loop and its thread.

In a child made by ``os.fork()`` (a server that forks its workers after the app was
loaded and used) the loop's thread does not exist: the first call there starts a new
loop and thread, and the parent's are left alone (see :mod:`asyncclient.http.forks`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractContextManager
from typing import Any, ParamSpec, TypeVar, overload

from anyio.from_thread import BlockingPortal, start_blocking_portal

from asyncclient.http.forks import keep, track

__all__ = ["LoopThread"]

T = TypeVar("T")
P = ParamSpec("P")

_IN_LOOP = (
    "a synchronous client was called from its own event loop's thread (a callback the "
    "client runs, such as on_progress or a webhook callback, called it): call the async "
    "client there, or hand the call to another thread"
)


class _Done:
    """What an exhausted async iterator gives the thread that iterates it."""


_DONE = _Done()


class LoopThread:
    """An event loop in a daemon thread, started on first use.

    Args:
        name: The thread's name (shown in thread dumps).
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._context: AbstractContextManager[BlockingPortal] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        track(self)  # a forked child starts a loop of its own (_after_fork)

    @property
    def closed(self) -> bool:
        return self._closed

    def _after_fork(self) -> None:
        """In a forked child: the loop's thread is not there. The parent's portal and
        loop are kept as they are (stopping them would wait for that thread forever, and
        closing the loop would unregister the parent's sockets from the epoll the two
        share); the next call starts a new loop. The lock may have been held by a thread
        of the parent that is not here either: it is made again."""
        keep(self._portal, self._context, self._loop, self._thread)
        self._portal = self._context = self._loop = self._thread = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the client is closed")
            if self._portal is None:
                context = start_blocking_portal()
                portal = context.__enter__()
                self._thread = portal.call(threading.current_thread)
                self._thread.name = self._name
                self._loop = portal.call(asyncio.get_running_loop)
                self._portal, self._context = portal, context
            assert self._loop is not None
            return self._loop

    @overload
    def call(
        self, func: Callable[P, Coroutine[Any, Any, T]], /, *args: P.args, **kwargs: P.kwargs
    ) -> T: ...

    @overload
    def call(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T: ...

    def call(self, func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Run ``func(*args, **kwargs)`` in the loop (awaited if it is a coroutine
        function) and return what it returns, or raise what it raises.

        Only a coroutine is awaited: a returned job or batch (awaitable too) is handed
        back as it is, not waited for."""
        loop = self._started()
        if threading.current_thread() is self._thread:
            raise RuntimeError(_IN_LOOP)
        # A task of the loop, handed over as a future (half the cost of a portal call,
        # which also opens a cancel scope): the portal runs the loop, this runs the call.
        future = asyncio.run_coroutine_threadsafe(
            _run(functools.partial(func, *args, **kwargs)), loop
        )
        try:
            box = future.result()
        except BaseException:
            future.cancel()  # e.g. Ctrl-C while waiting: the call stops too
            raise
        return box.value

    def iterate(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        """The items of the async iterator ``make()`` builds in the loop, one call each.

        Leaving the loop early (``break``, an error) closes the async iterator."""
        iterator = self.call(make)
        finished = False
        try:
            while True:
                item: T | _Done = self.call(_next_of, iterator)
                if isinstance(item, _Done):
                    finished = True
                    return
                yield item
        finally:
            if not finished and hasattr(iterator, "aclose") and not self._closed:
                self.call(_aclose, iterator)

    def close(self, last: Callable[[], Awaitable[None]] | None = None) -> None:
        """Await ``last()`` in the loop (when it ever started), then stop the loop and
        join its thread. Later calls raise ``RuntimeError``; closing again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            portal, context = self._portal, self._context
        if portal is None or context is None:
            return
        if threading.current_thread() is self._thread:
            raise RuntimeError(_IN_LOOP)
        try:
            if last is not None:
                portal.call(last)
        finally:
            context.__exit__(None, None, None)  # stops the loop, joins the thread
            self._portal = self._context = self._thread = self._loop = None


class _Box:
    """A result carried out of the loop as it is (the portal would await an awaitable)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


async def _run(func: Callable[[], object]) -> _Box:
    result = func()
    if inspect.iscoroutine(result):
        result = await result
    return _Box(result)


async def _aclose(iterator: Any) -> None:
    # (``aclose()`` returns an awaitable that is not a coroutine: :func:`_run` would not
    # await it, and the iterator would stay open)
    await iterator.aclose()


async def _next_of(iterator: AsyncIterator[T]) -> T | _Done:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _DONE
