"""What a child made by ``os.fork()`` must not use of its parent's state.

An object bound to an event loop (an aiohttp session, a poller's task, the synchronous
client's loop thread) is copied into a forked child, but the loop it is bound to does
not run there, its thread does not exist, and its sockets are the parent's. Such an
object calls :func:`track` on itself; right after a fork, in the child, its
``_after_fork()`` is called (``os.register_at_fork``), and it lets go of that state,
to be made again on first use.

What it lets go of is handed to :func:`keep`: it stays referenced for the life of the
child and is never finalized there. A finalizer (an unclosed session's, a loop's) could
unregister the parent's sockets from the epoll instance the two processes share, or
write to the parent's connections.
"""

from __future__ import annotations

import logging
import os
import weakref
from typing import Protocol

__all__ = ["forks", "keep", "track"]

logger = logging.getLogger("asyncclient")


class _ForkAware(Protocol):
    def _after_fork(self) -> None: ...


_TRACKED: weakref.WeakSet[_ForkAware] = weakref.WeakSet()
_KEPT: list[object] = []
_FORKS = 0


def track(owner: _ForkAware) -> None:
    """Call ``owner._after_fork()`` in each child forked while ``owner`` lives."""
    _TRACKED.add(owner)


def keep(*parents: object) -> None:
    """Keep the parent's objects referenced in this child, never finalized."""
    _KEPT.extend(p for p in parents if p is not None)


def forks() -> int:
    """How many forks this process descends from since the package was imported."""
    return _FORKS


def _in_child() -> None:
    global _FORKS
    _FORKS += 1
    for owner in list(_TRACKED):
        try:
            owner._after_fork()
        except Exception:  # one owner's failure must not leave the others bound
            logger.exception("asyncclient: %r could not let go of its parent's state", owner)


if hasattr(os, "register_at_fork"):  # not on Windows (no fork there)
    os.register_at_fork(after_in_child=_in_child)
