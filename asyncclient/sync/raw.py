"""``Client.with_raw_response``: the async raw-response face, blocking.

``client.with_raw_response.videos.get(video_id)`` runs the async client's raw call in
the client's loop and returns its :class:`~asyncclient.RawResponse`; a job it made is
handed back as a :class:`~asyncclient.SyncVideoJob` (``raw.value.wait()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from asyncclient.awaiting.jobs import VideoJob
from asyncclient.http.options import RawNamespace, RawResponse, RawResponses
from asyncclient.sync._loop import LoopThread
from asyncclient.sync.jobs import SyncVideoJob

__all__ = ["SyncRawNamespace", "SyncRawResponses"]


class SyncRawNamespace:
    """A namespace of ``Client.with_raw_response``: its request methods, blocking, each
    returning a :class:`~asyncclient.RawResponse`."""

    __slots__ = ("_loop", "_raw")

    def __init__(self, raw: RawNamespace, loop: LoopThread) -> None:
        self._raw = raw
        self._loop = loop

    def __getattr__(self, name: str) -> Callable[..., RawResponse[Any]]:
        method = getattr(self._raw, name)  # AttributeError for what sends no request
        loop = self._loop

        def call(*args: Any, **kwargs: Any) -> RawResponse[Any]:
            raw: RawResponse[Any] = loop.call(method, *args, **kwargs)
            if isinstance(raw.value, VideoJob):
                return attrs.evolve(raw, value=SyncVideoJob(raw.value, loop))
            return raw

        call.__name__ = call.__qualname__ = name
        return call

    def __repr__(self) -> str:
        return f"<sync {self._raw!r}>"


class SyncRawResponses:
    """``Client.with_raw_response``: each namespace with methods that block and return
    a :class:`~asyncclient.RawResponse`."""

    __slots__ = ("_loop", "_raw")

    def __init__(self, raw: RawResponses, loop: LoopThread) -> None:
        self._raw = raw
        self._loop = loop

    def __getattr__(self, name: str) -> SyncRawNamespace:
        if name.startswith("_"):
            raise AttributeError(name)
        # Namespaces are built in the loop (as the client's own are).
        namespace: RawNamespace = self._loop.call(getattr, self._raw, name)
        return SyncRawNamespace(namespace, self._loop)

    def __repr__(self) -> str:
        return f"<sync {self._raw!r}>"
