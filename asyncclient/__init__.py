"""asyncclient: the asyncio-first SDK for the video-generation service."""

from asyncclient._version import __version__

__all__ = ["__version__"]
