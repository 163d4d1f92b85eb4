"""The client as a dependency of a handler (FastAPI's ``Depends``, or called in Starlette).

The one module of the package that imports Starlette (``pip install
"vidgen-asyncclient[asgi]"``); FastAPI is Starlette underneath.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

from asyncclient.asgi.lifespan import client_of

if TYPE_CHECKING:
    from asyncclient.client import AsyncClient

__all__ = ["get_client"]


def get_client(connection: HTTPConnection) -> AsyncClient:
    """The client :func:`asyncclient.asgi.lifespan` opened for this application.

    In FastAPI: ``async def view(client: AsyncClient = Depends(get_client))`` (or
    ``Annotated[AsyncClient, Depends(get_client)]``); in Starlette: ``get_client(request)``.

    Raises:
        RuntimeError: The application was started without that lifespan.
    """
    client = client_of(connection.scope)
    if client is None:
        raise RuntimeError(
            "no AsyncClient for this application: start it with "
            "lifespan=asyncclient.asgi.lifespan(make_client)"
        )
    return client
