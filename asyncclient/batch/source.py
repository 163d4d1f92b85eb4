"""Where a batch's rows come from: read one at a time, as they are sent.

A batch never holds its input. A :class:`RowSource` numbers the raw rows as it reads
them (a list, a generator, a file being read), and builds a row's request only when
the batch is about to send it (:meth:`RowSource.build`: checked and serialised once).
A row an earlier run finished (its journal says so) is not built at all:
:meth:`RowSource.skip` notes what the source must remember of it (a template row's
title, so that a later row may not reuse it).

A source over a list or a file can be read twice: once by the pre-pass
(``batch.check()``: every row checked, nothing kept, nothing sent) and once by the run.
A generator can be read once: the rows are checked as they are sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence, Sized
from typing import Any, Protocol, runtime_checkable

import attrs
from attrs import frozen

from asyncclient._clock import pause
from asyncclient.batch.rows import Item, named
from asyncclient.models.requests import CreationRequest

__all__ = [
    "BatchCheck",
    "ItemSource",
    "RequestSource",
    "RowSource",
    "check_rows",
    "size_of",
    "title_of",
]


@runtime_checkable
class RowSource(Protocol):
    """A batch's rows, read lazily."""

    @property
    def total(self) -> int | None:
        """How many rows, when known before reading them all (None: learnt at the end)."""
        ...

    @property
    def reusable(self) -> bool:
        """Whether :meth:`rows` can be read more than once (a list or a file)."""
        ...

    async def open(self) -> None:
        """The one step before the first row is built (a template read), once."""
        ...

    def rows(self) -> Iterator[tuple[int, Any]]:
        """The raw rows with their numbers (0-based, in input order), read lazily; each
        call starts over (and forgets what :meth:`build` and :meth:`skip` noted)."""
        ...

    def build(self, index: int, raw: Any) -> Item:
        """The row checked and serialised: an item ready to send, or with problems."""
        ...

    def skip(self, index: int, raw: Any) -> None:
        """Note a row an earlier run finished (it is not built)."""
        ...

    def rebuild(self, index: int, raw: Any) -> Item:
        """A row :meth:`skip` noted, built as :meth:`build` would build it (to compare
        with the journal), without noting it again."""
        ...

    def title(self, raw: Any) -> str | None:
        """The row's title or name, as its result shows it."""
        ...


def size_of(rows: object) -> int | None:
    """``len(rows)`` when the rows know it, else None."""
    return len(rows) if isinstance(rows, Sized) else None


def _one_shot(rows: Iterable[Any]) -> bool:
    return iter(rows) is rows


class _Once:
    """Refuses a second reading of rows that cannot be read twice."""

    def __init__(self, rows: Iterable[Any]) -> None:
        self._rows = rows
        self.reusable = not _one_shot(rows)
        self._read = False

    def __iter__(self) -> Iterator[Any]:
        if self._read and not self.reusable:
            raise RuntimeError(
                "the rows were given as a one-shot iterator (a generator) and were read "
                "already; give a list or a file to read them twice (check(), then run)"
            )
        self._read = True
        return iter(self._rows)


class ItemSource:
    """Rows already built: a coroutine function gives the items (tests, and batches
    built by hand). It runs once, in :meth:`open`."""

    def __init__(self, prepare: Callable[[], Awaitable[Sequence[Item]]]) -> None:
        self._prepare = prepare
        self._items: Sequence[Item] | None = None

    @property
    def total(self) -> int | None:
        return None if self._items is None else len(self._items)

    @property
    def reusable(self) -> bool:
        return True

    @classmethod
    def of(cls, items: Sequence[Item]) -> ItemSource:
        """A source of items built already."""
        source = cls(_none)
        source._items = items
        return source

    async def open(self) -> None:
        if self._items is None:
            self._items = list(await self._prepare())

    def rows(self) -> Iterator[tuple[int, Any]]:
        assert self._items is not None, "open() the source first"
        return ((item.index, item) for item in self._items)

    def build(self, index: int, raw: Any) -> Item:
        assert isinstance(raw, Item)
        return raw

    def skip(self, index: int, raw: Any) -> None:
        pass

    def rebuild(self, index: int, raw: Any) -> Item:
        return self.build(index, raw)

    def title(self, raw: Any) -> str | None:
        request = raw.request if isinstance(raw, Item) else None
        return title_of(request)


class RequestSource:
    """``client.batch(requests)``: creation requests, each given a name if it has none
    (``<prefix>-<row>``: names are how an interrupted batch finds what the service made).

    Args:
        requests: Any iterable; a list is read twice, a generator once.
        prefix: Names the unnamed requests.
    """

    def __init__(
        self, requests: Iterable[CreationRequest], prefix: str, *, webhook: str | None = None
    ) -> None:
        self._requests = _Once(requests)
        self._prefix = prefix
        self._total = size_of(requests)
        self._webhook = webhook

    @property
    def total(self) -> int | None:
        return self._total

    @property
    def reusable(self) -> bool:
        return self._requests.reusable

    async def open(self) -> None:
        pass

    def rows(self) -> Iterator[tuple[int, Any]]:
        return enumerate(self._requests)

    def build(self, index: int, raw: Any) -> Item:
        request = named(raw, f"{self._prefix}-{index}")
        if self._webhook is not None and not getattr(request, "webhook", None):
            request = attrs.evolve(request, webhook=self._webhook)
        return Item.of(index, request)

    def skip(self, index: int, raw: Any) -> None:
        pass

    def rebuild(self, index: int, raw: Any) -> Item:
        return self.build(index, raw)

    def title(self, raw: Any) -> str | None:
        return title_of(raw)


def title_of(request: CreationRequest | None) -> str | None:
    """A request's title (a template's) or name, when it has one."""
    for attribute in ("title", "name"):
        value = getattr(request, attribute, None)
        if isinstance(value, str):
            return value
    return None


async def _none() -> Sequence[Item]:
    return ()


@frozen(kw_only=True)
class BatchCheck:
    """What ``batch.check()`` found: every row checked, none kept."""

    rows: int
    """Rows read."""
    rejected: int
    """Rows that would be rejected (bad input), every one counted."""
    problems: tuple[tuple[int, tuple[str, ...]], ...]
    """The first rejected rows' numbers and problems (``keep`` of them)."""
    cost_per_row: int | None = None
    """The most a row may cost, in credits: the batch's ``cost_per_row``, or what the
    service charged the videos of the journal's rows (:attr:`cost_rows`), the larger;
    None when nothing tells it (a batch with a budget above 0 is then refused)."""
    cost_given: int | None = None
    """The batch's ``cost_per_row`` setting."""
    cost_rows: tuple[tuple[int, int], ...] = ()
    """The journal's rows whose videos' charges were read: (row, credits) each."""
    sent_before: int = 0
    """Rows an earlier run sent (by the journal): not sent again, and counted against
    the budget as charged."""

    @property
    def ok(self) -> bool:
        """True when no row would be rejected."""
        return self.rejected == 0

    @property
    def to_send(self) -> int:
        """Rows a run would send: neither rejected nor sent by an earlier run."""
        return max(0, self.rows - self.rejected - self.sent_before)

    @property
    def estimate(self) -> int | None:
        """The most the rows to send may cost: :attr:`to_send` x :attr:`cost_per_row`
        credits (None: the cost is unknown; 0 when no row is to be sent)."""
        if self.to_send == 0:
            return 0
        return None if self.cost_per_row is None else self.to_send * self.cost_per_row

    @property
    def charged_before(self) -> int | None:
        """Credits the rows an earlier run sent count against a budget: their charges
        read, the others at :attr:`cost_per_row` (None while that is unknown)."""
        unread = self.sent_before - len(self.cost_rows)
        if unread and self.cost_per_row is None:
            return None
        return sum(c for _, c in self.cost_rows) + unread * (self.cost_per_row or 0)

    def fits(self, budget: int) -> int | None:
        """How many of the rows to send a budget of ``budget`` credits lets through
        (None: the cost is unknown and the budget above 0)."""
        before = self.charged_before
        if budget == 0:
            return 0
        if self.cost_per_row is None or before is None:
            return None
        return min(self.to_send, max(0, budget - before) // self.cost_per_row)


async def check_rows(source: RowSource, *, keep: int = 100) -> BatchCheck:
    """Build every row of ``source`` (opened) and count those with problems; keep the
    first ``keep`` rows' problems and nothing else."""
    rows = rejected = 0
    problems: list[tuple[int, tuple[str, ...]]] = []
    for index, raw in source.rows():
        rows = index + 1
        item = source.build(index, raw)
        if item.problems:
            rejected += 1
            if len(problems) < keep:
                problems.append((index, item.problems))
        if rows % 256 == 0:
            await pause()
    return BatchCheck(rows=rows, rejected=rejected, problems=tuple(problems))
