"""The ASGI face: notifications, the client's lifetime and a dependency for FastAPI and Starlette.

- :class:`NotificationApp`: the client's notification receiver as a plain ASGI application
  (``scope, receive, send``; no framework needed), for any ASGI server, and as a route of a
  FastAPI or Starlette application: ``app.add_route("/hooks/video", NotificationApp(),
  methods=["POST"])``. It does all that ``client.webhooks.handle`` does for aiohttp.
- :func:`lifespan`: opens the client when the application starts and closes it when it
  stops: ``FastAPI(lifespan=lifespan(make_client))``.
- :func:`get_client`: the client of that lifespan, for a handler:
  ``client: AsyncClient = Depends(get_client)``. It is the one part that needs Starlette
  (``pip install "vidgen-asyncclient[asgi]"``), loaded when first named.

``import asyncclient`` does not load this package, nor Starlette.
"""

# Owns: the ASGI receiver, the lifespan helper and the dependency. May import: the facade
# (``client``, for types), ``webhooks`` and ``awaiting`` (what the receiver answers), the
# shared core; Starlette in :mod:`asyncclient.asgi.depends` only.

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asyncclient.asgi.lifespan import STATE_KEY, client_of, lifespan
from asyncclient.asgi.receiver import NotificationApp

if TYPE_CHECKING:
    from asyncclient.asgi.depends import get_client

__all__ = ["STATE_KEY", "NotificationApp", "client_of", "get_client", "lifespan"]


def __getattr__(name: str) -> Any:
    if name == "get_client":  # Starlette's types: loaded when first named
        from asyncclient.asgi.depends import get_client

        return get_client
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
