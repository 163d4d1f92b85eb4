"""SyncPager: every item of a paginated list, as a plain iterator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Generic, TypeVar

from asyncclient.models.pages import Page
from asyncclient.resources._base import AsyncPager
from asyncclient.sync._loop import LoopThread

__all__ = ["SyncPager"]

T = TypeVar("T")


class SyncPager(Generic[T]):
    """``for item in pager`` yields every item, fetching pages as it goes (the twin of
    :class:`~asyncclient.AsyncPager`, whose fetches run in the client's loop).

    Nothing is fetched before iteration starts; each ``for`` starts from the first page.
    """

    __slots__ = ("_loop", "_pager")

    def __init__(self, pager: AsyncPager[T], loop: LoopThread) -> None:
        self._pager = pager
        self._loop = loop

    def __iter__(self) -> Iterator[T]:
        return self._loop.iterate(self._items)

    def _items(self) -> AsyncIterator[T]:
        return aiter(self._pager)

    def pages(self) -> Iterator[Page[T]]:
        """Each page in turn until the list is exhausted."""
        return self._loop.iterate(self._pager.pages)

    def collect(self) -> list[T]:
        """Every item in a list (mind the size of what you ask for)."""
        return self._loop.call(self._pager.collect)
