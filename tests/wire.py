"""aioresponses, made to work with aiohttp 3.14 (for wire-level unit tests)."""

from __future__ import annotations

from typing import Any

from aiohttp import ClientResponse
from aioresponses import CallbackResult, aioresponses


class _NoWriter:
    output_size = 0


class _Response(ClientResponse):
    """aioresponses 0.7.9 builds responses without the ``stream_writer`` aiohttp 3.14 needs."""

    def __init__(self, method: str, url: Any, **kwargs: Any) -> None:
        kwargs.setdefault("stream_writer", _NoWriter())
        super().__init__(method, url, **kwargs)


class mocked(aioresponses):
    """``aioresponses`` whose registered responses default to the compatible class."""

    def add(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("response_class", _Response)
        super().add(*args, **kwargs)


class Reply(CallbackResult):
    """``CallbackResult`` whose response uses the compatible class."""

    def __init__(self, *args: Any, response_class: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, response_class=response_class or _Response, **kwargs)
