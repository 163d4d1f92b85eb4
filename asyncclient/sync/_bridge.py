"""Descriptors that give a synchronous namespace the async one's methods, typed.

A synchronous namespace (:class:`Face`) holds the async namespace it fronts and the
client's :class:`~asyncclient.sync._loop.LoopThread`. Its methods are declared from the
async class's own functions, ``get = blocking(Videos.get)``: the descriptor keeps the
parameters (``ParamSpec``), docstring and signature, runs the call in the loop, and hands
back the result, turned into its synchronous twin where there is one (a job, a pager, a
batch). There is no second implementation: every sync call is the async call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from asyncclient.sync._loop import LoopThread
from asyncclient.sync.batch import SyncBatch
from asyncclient.sync.jobs import SyncVideoJob
from asyncclient.sync.pager import SyncPager

if TYPE_CHECKING:
    from typing_extensions import Self

    from asyncclient.awaiting.jobs import VideoJob
    from asyncclient.batch.runner import Batch
    from asyncclient.resources._base import AsyncPager

__all__ = [
    "Face",
    "blocking",
    "blocking_batch",
    "blocking_job",
    "blocking_job_plain",
    "blocking_maybe_job",
    "blocking_pager",
    "blocking_plain",
]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class Face:
    """A synchronous namespace: the async one it fronts and the loop its calls run in."""

    __slots__ = ("_async", "_loop")

    def __init__(self, target: Any, loop: LoopThread) -> None:
        self._async = target
        self._loop = loop

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class _Bridge(Generic[P, R]):
    """A method of a :class:`Face`: the async namespace's method of the same name, run
    in the loop; ``convert`` turns its result into what the caller gets."""

    def __init__(
        self,
        method: Callable[..., Any],
        convert: Callable[[Any, LoopThread], R] | None,
        returns: str,
    ) -> None:
        self._method = method
        self._convert = convert
        self._name = method.__name__
        self.__doc__ = method.__doc__
        signature = inspect.signature(method)
        self._signature = signature.replace(
            parameters=list(signature.parameters.values())[1:],  # without self
            return_annotation=returns,
        )

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, face: None, owner: type) -> Self: ...

    @overload
    def __get__(self, face: Face, owner: type) -> Callable[P, R]: ...

    def __get__(self, face: Face | None, owner: type) -> Self | Callable[P, R]:
        if face is None:
            return self
        target = getattr(face._async, self._method.__name__)
        loop, convert = face._loop, self._convert

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            result = loop.call(target, *args, **kwargs)
            return result if convert is None else convert(result, loop)

        functools.update_wrapper(call, self._method)
        del call.__wrapped__  # type: ignore[attr-defined]  # help() shows the sync signature
        call.__signature__ = self._signature  # type: ignore[attr-defined]
        call.__qualname__ = f"{owner.__name__}.{self._name}"
        return call


def _returned(method: Callable[..., Any]) -> str:
    annotation = inspect.signature(method).return_annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    for prefix in ("Awaitable[", "Coroutine[Any, Any, "):
        if text.startswith(prefix):
            text = text[len(prefix) : -1]
    return text


def blocking(method: Callable[Concatenate[Any, P], Awaitable[R]]) -> _Bridge[P, R]:
    """The async ``method``, blocking until its result."""
    return _Bridge(method, None, _returned(method))


def blocking_plain(method: Callable[Concatenate[Any, P], R]) -> _Bridge[P, R]:
    """The plain ``method`` of the async namespace, run in the loop (it may touch what
    the loop owns)."""
    return _Bridge(method, None, _returned(method))


def blocking_job(
    method: Callable[Concatenate[Any, P], Awaitable[VideoJob]],
) -> _Bridge[P, SyncVideoJob]:
    """A method that makes a job: its :class:`SyncVideoJob`."""
    return _Bridge(method, SyncVideoJob, "SyncVideoJob")


def blocking_maybe_job(
    method: Callable[Concatenate[Any, P], Awaitable[VideoJob | None]],
) -> _Bridge[P, SyncVideoJob | None]:
    """A method that may make a job (``reconcile``): its :class:`SyncVideoJob`, or None."""

    def convert(job: VideoJob | None, loop: LoopThread) -> SyncVideoJob | None:
        return None if job is None else SyncVideoJob(job, loop)

    return _Bridge(method, convert, "SyncVideoJob | None")


def blocking_job_plain(
    method: Callable[Concatenate[Any, P], VideoJob],
) -> _Bridge[P, SyncVideoJob]:
    """A plain method that makes a job (``client.jobs.from_video_id``)."""
    return _Bridge(method, SyncVideoJob, "SyncVideoJob")


def blocking_pager(
    method: Callable[Concatenate[Any, P], AsyncPager[T]],
) -> _Bridge[P, SyncPager[T]]:
    """A method that returns a pager: a plain iterator of the items."""
    return _Bridge(method, SyncPager, "SyncPager")


def blocking_batch(method: Callable[Concatenate[Any, P], Batch]) -> _Bridge[P, SyncBatch]:
    """A method that makes a batch: its :class:`SyncBatch`."""
    return _Bridge(method, SyncBatch, "SyncBatch")
