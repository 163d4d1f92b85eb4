"""The aiohttp application of the emulator."""

from __future__ import annotations

from aiohttp import web

from asyncclient.emulator._context import CTX, Context
from asyncclient.emulator._control import add_control_routes
from asyncclient.emulator._middleware import service_middleware
from asyncclient.emulator._routes_docs import add_docs_routes
from asyncclient.emulator._routes_social import add_social_routes
from asyncclient.emulator._routes_video import add_video_routes

__all__ = ["build_app"]


def build_app(ctx: Context) -> web.Application:
    """Return the application serving the service API, the control API, files, and the
    service's description with its explorer."""
    app = web.Application(middlewares=[service_middleware])
    app[CTX] = ctx
    add_video_routes(app)
    add_social_routes(app)
    add_control_routes(app)
    add_docs_routes(app)
    return app
