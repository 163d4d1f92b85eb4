"""What every resource module shares: the caller, decoding, pagination."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

from asyncclient._convert import DecodeError, decode
from asyncclient.errors import APIResponseValidationError
from asyncclient.http.caller import Caller
from asyncclient.http.protocol import Envelope
from asyncclient.models.identified import stamp, stamp_all
from asyncclient.models.pages import Page

__all__ = ["AsyncPager", "Resource", "decode_or_raise", "page_of"]

T = TypeVar("T")


def _undecodable(envelope: Envelope, errors: list[str]) -> APIResponseValidationError:
    return APIResponseValidationError(
        f"cannot decode the response: {'; '.join(errors)}",
        body=envelope.raw or _as_json(dict(envelope)),
        status_code=envelope.status or None,
        errors=errors,
        method=envelope.method or None,
        path=envelope.path or None,
    )


def decode_or_raise(data: Any, cls: type[T], envelope: Envelope, *, path: str = "data") -> T:
    """Decode ``data`` (a part of ``envelope``) into ``cls``.

    Args:
        data: Decoded JSON.
        cls: Target type.
        envelope: The response it came from (for the error's body, status, method, path).
        path: Where ``data`` sits in the response body (``data.account``).

    The result (each item of a list) carries the envelope's ``request_id``.

    Raises:
        APIResponseValidationError: With the raw body and one line per problem.
    """
    try:
        decoded = decode(data, cls, path=path)
    except DecodeError as exc:
        error = _undecodable(envelope, exc.errors)
        error.request_id = envelope.request_id
        raise error from exc
    if isinstance(decoded, list):
        stamp_all(decoded, envelope.request_id)
    else:
        stamp(decoded, envelope.request_id)
    return decoded


def page_of(envelope: Envelope, key: str, cls: type[T], *, limit: int, offset: int) -> Page[T]:
    """Build a :class:`Page` from ``data: {<key>: [...], total, limit, offset}``.

    ``total``, ``limit`` and ``offset`` that are no int in range (a string, a
    float, ``true``, a negative or 64-bit-overflowing number) are not trusted:
    ``total`` falls back to the items' count, the others to what was asked.
    """
    data = envelope.get("data")
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        error = _undecodable(envelope, [f"data.{key}: expected a list"])
        error.request_id = envelope.request_id
        raise error
    items = decode_or_raise(data[key], list[cls], envelope, path=f"data.{key}")  # type: ignore[valid-type]
    page = Page(
        items=items,
        total=_count(data.get("total"), len(items)),
        limit=_count(data.get("limit"), limit) or limit,
        offset=_count(data.get("offset"), offset) or offset,
    )
    stamp(page, envelope.request_id)
    return page


def _count(value: Any, default: int) -> int:
    """``value`` when it is a JSON integer from 0 to 2**63 - 1, else ``default``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return default


def _as_json(data: Any) -> str:
    """The part of the response that did not fit, as JSON text (what the service sent)."""
    try:
        return json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(data)
    except RecursionError:  # nested too deeply to show (repr would recurse as deep)
        return f"<{type(data).__name__} nested too deeply to show>"


class Resource:
    """Base of the resource namespaces (``client.videos`` and so on).

    Args:
        caller: The request path every method sends through.
    """

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

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
