"""The client's lifetime in an ASGI application: opened at startup, closed at shutdown.

``FastAPI(lifespan=lifespan(make_client))`` (or Starlette's ``lifespan=``): at startup
``make_client()`` makes the client in the server's event loop, after any fork of its
workers; at shutdown the client is closed (its poller stopped, its connections and the
Redis connection it made closed). The client is kept where handlers find it: in the
lifespan's state (the ASGI ``state`` every request's scope copies) under
:data:`STATE_KEY`, and as ``app.state.asyncclient`` for a server without lifespan state.
:func:`client_of` reads it back from a request's scope. Nothing here imports Starlette.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from asyncclient.errors import ValidationError

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient

__all__ = ["STATE_KEY", "ClientFactory", "Lifespan", "client_of", "lifespan"]

STATE_KEY = "asyncclient"
"""The name of the client in the lifespan's state and on ``app.state``."""

ClientFactory = Callable[[], "AsyncClient | Awaitable[AsyncClient]"]
"""What :func:`lifespan` takes: makes the client (a function or a coroutine function)."""

Lifespan = Callable[[Any], AbstractAsyncContextManager[dict[str, Any]]]
"""An ASGI framework's ``lifespan=``: given the application, a context to run it in."""


def lifespan(make_client: ClientFactory) -> Lifespan:
    """A lifespan that opens the client with the application and closes it with it.

    Args:
        make_client: Makes the client at startup (``lambda: AsyncClient(...)``, or a
            coroutine function). Register ``client.webhooks.on_event`` callbacks in it.

    Returns:
        For FastAPI or Starlette's ``lifespan=``; or, to run beside a lifespan of your
        own, ``async with lifespan(make_client)(app) as state:`` inside it (``state``
        maps :data:`STATE_KEY` to the client; yield it on from yours).

    Raises:
        ValidationError: ``make_client`` is not callable; at startup, it made no
            ``AsyncClient``.
    """
    if not callable(make_client):
        raise ValidationError(["make_client: must be a callable that returns an AsyncClient"])

    @asynccontextmanager
    async def run(app: Any) -> AsyncIterator[dict[str, Any]]:
        client = await _make(make_client)
        async with client:
            state = getattr(app, "state", None)
            if state is not None:
                setattr(state, STATE_KEY, client)
            try:
                yield {STATE_KEY: client}
            finally:
                if state is not None and getattr(state, STATE_KEY, None) is client:
                    delattr(state, STATE_KEY)

    return run


async def _make(make_client: ClientFactory) -> AsyncClient:
    from asyncclient.client import AsyncClient

    made = make_client()
    client = await made if inspect.isawaitable(made) else made
    if not isinstance(client, AsyncClient):
        raise ValidationError(
            [f"make_client: must return an AsyncClient, not {type(client).__name__}"]
        )
    return client


def client_of(scope: Mapping[str, Any]) -> AsyncClient | None:
    """The client :func:`lifespan` opened, as a request's ``scope`` reaches it; None if
    the application was started without it."""
    state = scope.get("state")
    if isinstance(state, Mapping) and (client := state.get(STATE_KEY)) is not None:
        return client  # type: ignore[no-any-return]
    app_state = getattr(scope.get("app"), "state", None)
    return getattr(app_state, STATE_KEY, None)
