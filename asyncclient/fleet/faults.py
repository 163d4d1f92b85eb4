"""What a fleet's Redis may raise, and the one place it becomes an error of ours.

Every call the fleet makes to Redis can fail: unreachable or reset (``ConnectionError``,
``OSError``), too slow (``TimeoutError``), refusing writes (``OutOfMemoryError`` under
``maxmemory``, ``ReadOnlyError`` on a replica), or answering something unexpected
(``ResponseError``, a reply of another shape). :func:`redis_errors` names them all;
:func:`wrapped` turns them into :class:`~asyncclient.errors.FleetError` at the store's
boundary, so that nothing of ``redis`` reaches a user's await: the fleet falls back to
what a lone process does, or raises an error of the SDK's tree.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from asyncclient.errors import FleetError

__all__ = ["redis_errors", "wrapped"]

_P = ParamSpec("_P")
_T = TypeVar("_T")
_Method = Callable[_P, Coroutine[Any, Any, _T]]


@functools.cache
def redis_errors() -> tuple[type[BaseException], ...]:
    """Whatever a Redis call may raise that is the server's or the wire's doing (not a
    bug of ours): the client's errors, the OS's, timeouts and replies of a wrong shape."""
    found: tuple[type[BaseException], ...] = (OSError, asyncio.TimeoutError, FleetError)
    try:
        from redis.exceptions import RedisError
    except ImportError:  # pragma: no cover - a duck-typed client without redis-py
        return found
    return (*found, RedisError)


def wrapped(
    doing: str,
) -> Callable[[_Method[_P, _T]], _Method[_P, _T]]:
    """Decorate an async method of the store: what Redis raises becomes a
    :class:`FleetError` (``doing`` says what failed; the original is ``__cause__``)."""

    def decorate(call: _Method[_P, _T]) -> _Method[_P, _T]:
        @functools.wraps(call)
        async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            try:
                return await call(*args, **kwargs)
            except FleetError:
                raise
            except redis_errors() as exc:
                raise FleetError(f"fleet store: {doing} failed ({exc!r})") from exc

        return guarded

    return decorate
