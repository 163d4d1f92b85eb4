"""A job or a batch displayed in a Jupyter kernel, updated in place while it runs.

In a Jupyter kernel (IPython with a kernel: ipykernel, Colab, VS Code) an object
displayed while it runs is shown with a display id and updated in place
(:class:`Live`): a job by a task that follows ``job.updates()`` (a displayed job is
polled, as an awaited one is, until it ends or its client closes), a batch by its own
progress reports and the end of its run (no task of its own). Updates are throttled
to one every :data:`MIN_INTERVAL` seconds of the loop's time (a pace for people, not
the client's clock), except the last, which is sent as soon as the job or batch ends.
Elsewhere (a terminal IPython, no running loop) the display is a snapshot; frontends
other than IPython read ``_repr_html_`` or ``_repr_mimebundle_``.

The displays attach from outside: a job is followed through ``job.updates()``, a
batch through ``batch.subscribe`` (its phase and progress reports). Which object has
a live display is kept here (:data:`_LIVE`, by weak reference), not on the object.

IPython is never imported here unless it is already loaded (``sys.modules``): the
package does not depend on it. What is shown comes from ``asyncclient.notebook.display``.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
import sys
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from asyncclient._clock import SYSTEM_CLOCK, Cancellable, Clock, timers_of
from asyncclient._states import BATCH_PHASE, BatchPhase
from asyncclient.awaiting.state import JobState
from asyncclient.notebook.display import Bundle, ShownBatch, batch_bundle, job_bundle

__all__ = ["MIN_INTERVAL", "Live", "display_batch", "display_job", "showing"]

logger = logging.getLogger("asyncclient")

MIN_INTERVAL = 0.25
"""Least seconds between two updates of a live display (at most four a second)."""

_FOLLOWERS: set[asyncio.Task[None]] = set()
"""The tasks updating jobs' displays (held here so that none is collected while it runs)."""


_LIVE: weakref.WeakKeyDictionary[Any, Live] = weakref.WeakKeyDictionary()
"""The live display of each job or batch that has one (only while it runs)."""


class _Job(Protocol):
    """What a displayed job offers (``VideoJob``)."""

    @property
    def state(self) -> JobState: ...

    def done(self) -> bool: ...

    def updates(self) -> AsyncIterator[object]: ...


class _Update(Protocol):
    """What a batch tells its listeners (``BatchUpdate``)."""

    @property
    def phase(self) -> BatchPhase: ...


class _LiveBatch(ShownBatch, Protocol):
    """What a displayed batch offers (``Batch``)."""

    def subscribe(self, listener: Callable[[Any], object]) -> Callable[[], None]: ...


def showing(shown: object) -> Live | None:
    """The live display of a job or batch, while one runs."""
    return _LIVE.get(shown)


class Live:
    """One display id, shown in one or more outputs and updated in place.

    Args:
        display: IPython's ``display`` function.
        render: Gives the bundle to show now.
        clock: Paces the updates (a person watches them: the real clock by default).
    """

    __slots__ = ("_clock", "_display", "_handle", "_last", "_render", "_shown", "_timer", "_timers")

    def __init__(
        self,
        display: Callable[..., Any],
        render: Callable[[], Bundle],
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._display = display
        self._render = render
        self._clock = clock
        self._timers = timers_of(clock)
        self._handle: Any = None
        self._shown: Bundle = {}
        self._last = clock.monotonic()
        self._timer: Cancellable | None = None

    def show(self) -> None:
        """Show the display in one more output (the cell that displays the object)."""
        self._shown = self._render()
        if self._handle is None:
            self._handle = self._display(self._shown, raw=True, display_id=True)
        else:
            self._handle.display(self._shown, raw=True)
        self._last = self._clock.monotonic()

    def changed(self) -> None:
        """What the object shows changed: update now, or once :data:`MIN_INTERVAL`
        passed since the last update. Never raises."""
        if self._timer is not None:
            return
        now = self._clock.monotonic()
        wait = self._last + MIN_INTERVAL - now
        if wait > 0:
            outside = _no_cell()  # the update runs outside the displaying cell's context
            self._timer = self._timers.call_at(now + wait, lambda: outside.run(self.publish))
        else:
            self.publish()

    def publish(self) -> None:
        """Update every output of this display now, if what it shows changed.

        The update is sent outside the context of the cell that displayed the object:
        ipykernel then attributes it to the cell running now, as it does output from a
        thread. Frontends route updates by display id whatever the cell; tools that
        execute a notebook cell by cell (nbclient, nbconvert, papermill) keep only what
        the running cell's messages carry, so they record the updates too.
        """
        self.close()
        try:
            bundle = self._render()
            self._last = self._clock.monotonic()
            if bundle != self._shown and self._handle is not None:
                self._shown = bundle
                _no_cell().run(self._handle.update, bundle, raw=True)
        except Exception:  # a display must never break the job or batch it shows
            logger.debug("updating a notebook display failed", exc_info=True)

    def close(self) -> None:
        """Drop a pending throttled update."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _no_cell() -> contextvars.Context:
    """An empty context: what runs in it belongs to no cell in particular."""
    return contextvars.Context()


def _frontend() -> tuple[Callable[..., Any], bool] | None:
    """IPython's ``display`` and whether a kernel can update displays in place, or None
    outside IPython (never imports IPython itself)."""
    ipython: Any = sys.modules.get("IPython")
    if ipython is None:
        return None
    shell = ipython.get_ipython()
    display: Callable[..., Any] = importlib.import_module("IPython.display").display
    return display, shell is not None and getattr(shell, "kernel", None) is not None


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _show_once(bundle: Bundle, display: Callable[..., Any] | None) -> None:
    if display is None:
        print(bundle["text/plain"])
    else:
        display(bundle, raw=True)


def display_job(job: _Job) -> None:
    """IPython's display of a job: live while it runs in a kernel, else a snapshot."""
    frontend = _frontend()
    if frontend is None or not frontend[1] or job.done() or not _loop_running():
        _show_once(job_bundle(job.state), frontend[0] if frontend else None)
        return
    live = _LIVE.get(job)
    if live is None:
        state = job.state  # (the job itself is held by its follower alone)
        live = _LIVE[job] = Live(frontend[0], lambda: job_bundle(state))
        loop = asyncio.get_running_loop()
        task = _no_cell().run(loop.create_task, _follow_job(job, live))  # (3.10: no context=)
        _FOLLOWERS.add(task)
        task.add_done_callback(_FOLLOWERS.discard)
    live.show()


async def _follow_job(job: _Job, live: Live) -> None:
    """Update the job's display at each change until it ends (or its client closes)."""
    updates = job.updates()  # watches the job: the poller reads it while it is displayed
    try:
        async for _ in updates:
            live.changed()
        live.publish()  # the outcome, at once
    except Exception:
        logger.debug("following a job's notebook display failed", exc_info=True)
        live.publish()  # what is known, rather than an update the throttle held back
    finally:
        live.close()
        _LIVE.pop(job, None)
        close = getattr(updates, "aclose", None)
        if close is not None:
            await close()


def display_batch(batch: _LiveBatch) -> None:
    """IPython's display of a batch: live until it ends in a kernel, else a snapshot.

    A batch displayed before it runs is followed from its start (displaying starts
    nothing: awaiting or iterating the batch does).
    """
    frontend = _frontend()
    ended = BATCH_PHASE.is_terminal(batch.phase)
    if frontend is None or not frontend[1] or ended or not _loop_running():
        _show_once(batch_bundle(batch), frontend[0] if frontend else None)
        return
    live = _LIVE.get(batch)
    if live is None:
        live = _LIVE[batch] = _follow_batch(batch, frontend[0])
    live.show()


def _follow_batch(
    batch: _LiveBatch, display: Callable[..., Any], *, clock: Clock = SYSTEM_CLOCK
) -> Live:
    """A live display of the batch, updated at each of its changes (``clock`` paces
    them); its last update is sent as soon as the batch ends, whatever the pace. The
    batch is reached by weak reference only (a batch displayed and never run is not
    kept alive by its display)."""
    ref = weakref.ref(batch)

    def render() -> Bundle:
        shown = ref()
        return batch_bundle(shown) if shown is not None else {}

    live = Live(display, render, clock=clock)

    def changed(update: _Update) -> None:
        if not BATCH_PHASE.is_terminal(update.phase):
            live.changed()
            return
        unsubscribe()
        shown = ref()
        if shown is not None:
            _LIVE.pop(shown, None)
        live.publish()  # the outcome, at once

    unsubscribe = batch.subscribe(changed)
    return live
