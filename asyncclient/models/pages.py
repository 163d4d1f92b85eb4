"""One page of a paginated list."""

from __future__ import annotations

from typing import Generic, TypeVar

from attrs import frozen

from asyncclient.models.identified import Identified

__all__ = ["Page"]

T = TypeVar("T")


@frozen(kw_only=True)
class Page(Identified, Generic[T]):
    """One page of results, with the list's ``total``, ``limit`` and ``offset``.

    For the video list, ``limit``, ``offset`` and ``total`` count projects, and
    ``items`` holds every video of those projects.
    """

    items: list[T]
    total: int
    limit: int
    offset: int

    @property
    def has_more(self) -> bool:
        """True when items exist after this page."""
        return self.offset + self.limit < self.total
