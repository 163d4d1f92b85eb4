"""One thin module per resource: endpoint -> typed method.

A resource's module loads when first named (PEP 562), as a client builds the
resource on first use: ``import asyncclient`` loads only what reads videos.
"""

# May import: ``http`` (the caller, the protocol; never the transport: downloads go through
# the small ``Downloads`` protocol), ``awaiting`` (jobs), ``batch`` (``generate_many``),
# ``models``, ``validation``, ``errors``, ``_convert``, ``_clock``.

import importlib
from typing import TYPE_CHECKING

from asyncclient.resources._base import AsyncPager

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and IDEs
    from asyncclient.resources.integrations import Integrations
    from asyncclient.resources.projects import Projects
    from asyncclient.resources.schedule import Schedule
    from asyncclient.resources.social import NicheVideosPage, Social
    from asyncclient.resources.templates import Templates
    from asyncclient.resources.videos import Videos

_MODULE_OF = {
    "Integrations": "asyncclient.resources.integrations",
    "NicheVideosPage": "asyncclient.resources.social",
    "Projects": "asyncclient.resources.projects",
    "Schedule": "asyncclient.resources.schedule",
    "Social": "asyncclient.resources.social",
    "Templates": "asyncclient.resources.templates",
    "Videos": "asyncclient.resources.videos",
}


def _load(name: str) -> object:
    """Import the module of a resource named for the first time, then keep the name."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value


def _names() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # hidden from type checkers, which see the imports above instead
    __getattr__ = _load  # PEP 562
    __dir__ = _names

__all__ = [
    "AsyncPager",
    "Integrations",
    "NicheVideosPage",
    "Projects",
    "Schedule",
    "Social",
    "Templates",
    "Videos",
]
