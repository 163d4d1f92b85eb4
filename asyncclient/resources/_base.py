"""What every resource module shares: the client reference, decoding, pagination."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from asyncclient._convert import DecodeError, decode
from asyncclient.errors import APIResponseValidationError
from asyncclient.models.pages import Page

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient

__all__ = ["AsyncPager", "Resource", "decode_or_raise", "page_of"]

T = TypeVar("T")


def decode_or_raise(data: Any, cls: type[T], *, where: str, path: str = "data") -> T:
    """Decode ``data`` into ``cls``; a mismatch raises APIResponseValidationError.

    Args:
        data: Decoded JSON.
        cls: Target type.
        where: ``METHOD /path`` for the error message.
        path: Where ``data`` sits in the response body (``data.account``).
    """
    try:
        return decode(data, cls, path=path)
    except DecodeError as exc:
        method, _, path = where.partition(" ")
        raise APIResponseValidationError(
            f"cannot decode the response: {exc}",
            body=_as_json(data),
            errors=exc.errors,
            method=method,
            path=path,
        ) from exc


def page_of(data: Any, key: str, cls: type[T], *, where: str, limit: int, offset: int) -> Page[T]:
    """Build a :class:`Page` from ``{<key>: [...], total, limit, offset}``."""
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        method, _, path = where.partition(" ")
        raise APIResponseValidationError(
            f"cannot decode the response: data.{key}: expected a list",
            body=_as_json(data),
            errors=[f"data.{key}: expected a list"],
            method=method,
            path=path,
        )
    items = decode_or_raise(data[key], list[cls], where=where, path=f"data.{key}")  # type: ignore[valid-type]
    total = data.get("total")
    return Page(
        items=items,
        total=int(total) if isinstance(total, int) else len(items),
        limit=int(data.get("limit") or limit),
        offset=int(data.get("offset") or offset),
    )


def _as_json(data: Any) -> str:
    """The part of the response that did not fit, as JSON text (what the service sent)."""
    try:
        return json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(data)


class Resource:
    """Base of the resource namespaces (``client.videos`` and so on)."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class AsyncPager(Generic[T]):
    """Iterates every item of a paginated list, fetching pages as it goes.

    ``async for item in pager`` yields items; ``pager.pages()`` yields whole
    pages. Nothing is fetched before iteration starts. Items whose ``id`` was
    already yielded (the list shifted between pages) are skipped.
    """

    def __init__(
        self,
        fetch: Callable[[int, int], Awaitable[Page[T]]],
        *,
        page_size: int,
        offset: int = 0,
    ) -> None:
        self._fetch = fetch
        self._page_size = page_size
        self._offset = offset

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()

    async def _items(self) -> AsyncIterator[T]:
        seen: set[Any] = set()
        async for page in self.pages():
            for item in page.items:
                key = getattr(item, "id", None)
                if key is not None:
                    if key in seen:
                        continue
                    seen.add(key)
                yield item

    async def pages(self) -> AsyncIterator[Page[T]]:
        """Yield each page in turn until the list is exhausted."""
        offset = self._offset
        while True:
            page = await self._fetch(offset, self._page_size)
            yield page
            step = page.limit or self._page_size
            # A page that is not the one asked for means the offset was ignored: stop
            # rather than loop over the first page.
            if not page.items or page.offset != offset or offset + step >= page.total:
                return
            offset += step

    async def collect(self) -> list[T]:
        """Every item in a list (mind the size of what you ask for)."""
        return [item async for item in self]
