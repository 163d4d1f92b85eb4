"""The emulator in a thread of its own: for synchronous code, scripts and sync tests.

``with serve_in_thread(time_scale=60) as emu:`` starts an :class:`Emulator` in an event
loop of its own (a daemon thread, an anyio blocking portal) and stops it when the block
ends; meanwhile any thread may use it: ``emu.url``, ``emu.add_team(...)``, and
``emu.call(fn)`` for anything else of the :class:`Emulator` (run in its loop, where its
state lives).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from asyncclient.emulator._emulator import Emulator

__all__ = ["EmulatorThread", "serve_in_thread"]

T = TypeVar("T")


class EmulatorThread:
    """A running :class:`Emulator` and the loop it runs in.

    Args:
        emulator: The emulator (``emu.emulator``); touch its state only through
            :meth:`call`.
        portal: Its loop's portal.
    """

    def __init__(self, emulator: Emulator, portal: BlockingPortal) -> None:
        self.emulator = emulator
        self._portal = portal

    @property
    def url(self) -> str:
        """Where it serves (``http://127.0.0.1:<port>``)."""
        return self.emulator.url

    def call(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run ``func(*args, **kwargs)`` in the emulator's loop; return its result."""
        result: T = self._portal.call(functools.partial(func, *args, **kwargs))
        return result

    def add_team(self, plan: str = "free", credits: int = 1000, **options: Any) -> str:
        """A new team's API key (see :meth:`Emulator.add_team`)."""
        return self.call(self.emulator.add_team, plan, credits, **options)

    def credits(self, api_key: str) -> int:
        """The team's balance."""
        return self.call(self.emulator.credits, api_key)


@contextmanager
def serve_in_thread(**options: Any) -> Iterator[EmulatorThread]:
    """Serve an :class:`Emulator` (built with ``options``) in a thread of its own until
    the block ends."""
    with start_blocking_portal() as portal:
        emulator = Emulator(**options)
        portal.call(emulator.start)
        try:
            yield EmulatorThread(emulator, portal)
        finally:
            portal.call(emulator.stop)
