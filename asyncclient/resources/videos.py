"""Videos: read one, list all, download one."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Awaitable, Callable
from typing import Protocol

from asyncclient.http.caller import Caller
from asyncclient.models.enums import ProjectType, VideoListStatus
from asyncclient.models.pages import Page
from asyncclient.models.videos import Video, VideoDetail
from asyncclient.resources._base import AsyncPager, Resource, decode_or_raise, page_of
from asyncclient.validation import check_enum, check_id, check_offset, check_page_size, raise_if

__all__ = ["Downloads", "Videos"]

_LIST = "/v1/video/list"


class Downloads(Protocol):
    """What fetches a video's signed file URL to disk (the client's transport does)."""

    async def download_video(
        self,
        read: Callable[[str], Awaitable[Video]],
        video: str | Video,
        path: str | os.PathLike[str],
        *,
        progress: Callable[[int, int | None], None] | None = None,
        chunk_size: int = 64 * 1024,
    ) -> pathlib.Path:
        """Download ``video`` to ``path``, reading its record by ``read`` when it has
        no URL or the URL expired; see :meth:`Videos.download`."""
        ...


class Videos(Resource):
    """``client.videos``.

    Args:
        caller: The request path.
        files: Streams the signed file URLs of downloads (no API key, no rate limit).
    """

    def __init__(self, caller: Caller, *, files: Downloads) -> None:
        super().__init__(caller)
        self._files = files

    async def get(self, video_id: str) -> VideoDetail:
        """Read one video (detail view).

        Args:
            video_id: The video's id.

        Returns:
            The video; ``url`` is set once it is ``COMPLETED``.

        Raises:
            NotFoundError: No such video.
            PermissionDeniedError: The video belongs to another team.
        """
        raise_if(check_id("videoId", video_id))
        path = f"/v1/video/{video_id}"
        envelope = await self._caller.call("GET", path)
        return decode_or_raise(envelope.get("data"), VideoDetail, envelope)

    async def download(
        self,
        video: str | Video,
        path: str | os.PathLike[str],
        *,
        progress: Callable[[int, int | None], None] | None = None,
        chunk_size: int = 64 * 1024,
    ) -> pathlib.Path:
        """Download a completed video to disk, chunk by chunk.

        The signed ``url`` is streamed to ``<file>.part``, checked
        against ``size`` and Content-Length, then renamed to the file (missing
        folders are made). The file URL gets no API key (redirects are followed)
        and is not rate-limited; reading the video is. A URL answering 403
        (expired, valid 24 hours) or 404 is refreshed once by reading the video
        again.

        Args:
            video: A video id, or a ``Video``/``VideoDetail`` (read again when it has no url).
            path: The file to write, or a directory: a path ending in ``/`` (made if
                missing) or an existing directory gets ``<dir>/<video_id>.mp4``.
            progress: Called as ``progress(bytes_done, total_or_None)`` after each chunk.
            chunk_size: Bytes read and written at a time.

        Returns:
            The path of the downloaded file.

        Raises:
            ValueError: The video is not ``COMPLETED`` (its status is named).
            APIStatusError: The file URL failed, e.g. 403 again after a refresh.
            APIResponseValidationError: The bytes do not match ``size`` or Content-Length
                (nothing is left on disk).
            APIConnectionError: The download broke off (nothing is left on disk).
        """
        return await self._files.download_video(
            self.get, video, path, progress=progress, chunk_size=chunk_size
        )

    async def list_page(
        self,
        *,
        type: ProjectType | str | None = None,
        status: VideoListStatus | str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[Video]:
        """One page of the video list (templates excluded).

        ``limit``, ``offset`` and ``total`` count projects; the page holds every
        video of those projects.

        Args:
            type: Project type filter (``all`` by default on the service).
            status: ``draft``, ``processing``, ``completed`` or ``failed``.
            limit: Projects per page, 1 to 100.
            offset: Projects to skip.
        """
        raise_if(
            check_enum("type", type, ProjectType)
            + check_enum("status", status, VideoListStatus)
            + check_page_size("limit", limit, high=100)
            + check_offset("offset", offset)
        )
        params = {"type": type, "status": status, "limit": limit, "offset": offset}
        envelope = await self._caller.call("GET", _LIST, params=params)
        return page_of(envelope, "videos", Video, limit=limit, offset=offset)

    def list(
        self,
        *,
        type: ProjectType | str | None = None,
        status: VideoListStatus | str | None = None,
        page_size: int = 50,
    ) -> AsyncPager[Video]:
        """Every video, page after page: ``async for video in client.videos.list():``.

        Args:
            type: Project type filter.
            status: ``draft``, ``processing``, ``completed`` or ``failed``.
            page_size: Projects per request, 1 to 100.

        Raises:
            ValidationError: At once, for a bad filter or page size.
        """
        raise_if(
            check_enum("type", type, ProjectType)
            + check_enum("status", status, VideoListStatus)
            + check_page_size("page_size", page_size, high=100)
        )

        async def fetch(offset: int, limit: int) -> Page[Video]:
            return await self.list_page(type=type, status=status, limit=limit, offset=offset)

        return AsyncPager(fetch, page_size=page_size)
