"""Submissions first: background reads wait while paid creations need the tokens.

A client's creations and its poller share one rate limit, first come, first served. On
a small plan a bulk run's submissions queue for tokens, and every token a poll takes
delays the next submission, so the run ends later than the plan allows. The client
keeps one :class:`Gate`, and the poller awaits :meth:`Gate.turn` before each read. Two
things hold background reads back:

- a creation waiting for its token (the request path holds :meth:`Gate.foreground`);
- creations announced ahead (a batch's rows not yet sent, :meth:`Gate.expect`) that
  the tokens on hand do not cover: a read goes out only while the limiter holds at
  least one token beyond them, so polling takes only what the submissions leave, and
  catches up once they are sent. Without a way to count the limiter's tokens,
  announced creations do not hold reads back.

Submissions come first, but never all: background reads keep a :data:`SHARE` of the
turns (one in 25 by default) while creations hold them back, so that a batch that
saturates its plan still records completions as it sends (before, a 100,000-row batch
recorded none while it submitted), and its submissions still get 96% of the plan (one
list page a turn in 25 follows 100 jobs; one in ten took a tenth of a Free plan's
tokens from a batch of 100 rows). Reads made while nothing held them back count among
the turns too. Turns are counted over the recent past only (the counts halve past
:data:`_WINDOW`), so a poller idle for long gets no burst.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["SHARE", "Ahead", "Gate"]

SHARE = 0.04
"""The part of the turns background reads keep while foreground work holds them back."""
_WINDOW = 200  # turns counted before the counts halve


class Gate:
    """Counts foreground work; background work takes its turn when none needs the tokens.

    Args:
        spare: The limiter's tokens now (:meth:`Limiter.spare`), to tell whether
            announced creations leave one over; ``None``, or a count of ``None``, when
            the limiter cannot count them.
        share: The part of the turns background work keeps however much foreground
            work there is (0: none, foreground always first).
    """

    __slots__ = ("_ahead", "_back", "_clear", "_front", "_share", "_spare", "_waiting")

    def __init__(
        self, spare: Callable[[], float | None] | None = None, *, share: float = SHARE
    ) -> None:
        if not 0 <= share < 1:
            raise ValueError(f"share must be at least 0 and below 1, got {share}")
        self._waiting = 0
        self._ahead = 0
        self._spare = spare
        self._share = share
        self._front = 0.0  # foreground turns (creations) lately
        self._back = 0.0  # background turns (reads) lately
        self._clear: asyncio.Event | None = None

    @property
    def waiting(self) -> int:
        """Foreground waiters now."""
        return self._waiting

    @property
    def ahead(self) -> int:
        """Creations announced and not yet sent."""
        return self._ahead

    def held(self) -> bool:
        """Whether background work must wait now (never while it has had less than its
        share of the recent turns)."""
        if not self._pressed():
            return False
        return self._back >= self._share * (self._front + self._back)

    def _pressed(self) -> bool:
        """Whether foreground work needs the tokens now."""
        if self._waiting:
            return True
        if self._ahead and self._spare is not None:
            spare = self._spare()
            return spare is not None and spare - self._ahead < 1.0
        return False

    def _count(self, foreground: bool) -> None:
        if foreground:
            self._front += 1
        else:
            self._back += 1
        if self._front + self._back > _WINDOW:
            self._front /= 2
            self._back /= 2

    @contextmanager
    def foreground(self) -> Iterator[None]:
        """Hold background work back for as long as the block runs."""
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1
            self._count(foreground=True)
            self._changed()

    def expect(self, count: int) -> Ahead:
        """Announce ``count`` creations to come; each is let go with :meth:`Ahead.sent`."""
        return Ahead(self, count)

    def _release(self, count: int) -> None:
        self._ahead -= count
        self._changed()

    def _changed(self) -> None:
        if self._clear is not None and not self.held():
            self._clear.set()
            self._clear = None

    async def turn(self) -> None:
        """Return once no foreground work needs the tokens (at once when none does).

        Announced creations are weighed again whenever one of them is sent or a
        foreground wait ends (a batch sends at least every ``spacing``).
        """
        while self.held():
            if self._clear is None:
                self._clear = asyncio.Event()
            await self._clear.wait()
        self._count(foreground=False)


class Ahead:
    """Creations a batch has announced to its client's gate, let go one by one."""

    __slots__ = ("_gate", "_left")

    def __init__(self, gate: Gate, count: int) -> None:
        self._gate = gate
        self._left = max(0, count)
        gate._ahead += self._left

    def more(self, count: int) -> None:
        """Announce ``count`` creations more."""
        if count > 0:
            self._left += count
            self._gate._ahead += count

    @property
    def left(self) -> int:
        """Announced creations not yet let go."""
        return self._left

    def sent(self) -> None:
        """One announced creation is past its submission (sent, skipped or settled)."""
        if self._left:
            self._left -= 1
            self._gate._release(1)

    def close(self) -> None:
        """Let go of every creation still announced (the batch's submissions ended)."""
        if self._left:
            left, self._left = self._left, 0
            self._gate._release(left)
