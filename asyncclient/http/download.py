"""Download a completed video to disk: stream, check the size, refresh an expired URL.

Spec 2.3: a completed video's ``url`` is a signed download URL valid 24 hours and
its ``size`` is in bytes. The file goes to ``<target>.part`` chunk by chunk (the
whole file is never in memory), then is renamed over the target (``os.replace``).
The file URL gets no API key and does not go through the rate limiter; reading the
video record (``GET /v1/video/{id}``) does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import IO, Any, Protocol

from asyncclient.errors import APIResponseValidationError, APIStatusError, status_error_class
from asyncclient.http.protocol import Stream, redact_url
from asyncclient.models.enums import VideoStatus
from asyncclient.models.videos import Video

__all__ = ["FileSource", "Progress", "download_video", "target_path"]

Progress = Callable[[int, int | None], None]
"""``progress(bytes_done, total_or_None)``, called after each chunk is written."""

_REFRESH_STATUSES = (403, 404)  # an expired signature (spec 2.3: 24 hours) or a moved file
_ERROR_BODY_LIMIT = 4096


class FileSource(Protocol):
    """What streams a file URL: the transport's ``stream_get`` (no API key, no limiter)."""

    def stream_get(self, url: str, *, chunk_size: int = ...) -> AbstractAsyncContextManager[Stream]:
        """Open a GET of ``url``; its body comes chunk by chunk."""
        ...


class _Refresh(Exception):
    """The file URL answered 403 or 404: read the video again for a fresh URL."""

    def __init__(self, error: APIStatusError) -> None:
        super().__init__(str(error))
        self.error = error


def target_path(path: str | os.PathLike[str], video_id: str) -> Path:
    """Where a download goes: a directory gets ``<path>/<video_id>.mp4``, else ``path``.

    ``path`` is a directory when it ends in a path separator (``out/``; missing
    folders are made when the file is written) or names an existing directory;
    anything else is the file to write.

    Args:
        path: A file or directory path. (A ``pathlib.Path`` drops a trailing
            separator: pass ``"out/"`` as a string to mean a folder not made yet.)
        video_id: Names the file in a directory.

    Returns:
        The file to write.

    Raises:
        ValueError: The video id cannot be a file name.
    """
    text = os.fspath(path)
    separators = tuple(s for s in ("/", os.sep, os.altsep) if s)
    target = Path(text)
    if text.endswith(separators) or target.is_dir():
        name = f"{video_id}.mp4"
        if Path(name).name != name:
            raise ValueError(f"video id {video_id!r} cannot be used as a file name")
        target = target / name
    return target


def _url_of(video: Video) -> str:
    """The signed URL of a completed video, else ``ValueError`` naming the status."""
    if video.status != VideoStatus.COMPLETED:
        detail = f": {video.message}" if video.message else ""
        raise ValueError(
            f"video {video.id} is {video.status}, not COMPLETED; nothing to download{detail}"
        )
    if not video.url:
        raise ValueError(f"video {video.id} is COMPLETED but has no download url")
    return video.url


async def download_video(
    read: Callable[[str], Awaitable[Video]],
    transport: FileSource,
    video: str | Video,
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    chunk_size: int = 64 * 1024,
) -> Path:
    """Download ``video`` to ``path``; see :meth:`Videos.download`.

    Args:
        read: Reads a video record by id (through the client's limiter).
        transport: Streams the file URL.
        video: A video id, or a record (read again when it has no url).
        path: A file path, or a directory (see :func:`target_path`).
        progress: Called with ``(bytes_done, total_or_None)`` after each chunk.
        chunk_size: Largest chunk read and written at once, in bytes.

    Returns:
        The path of the downloaded file.

    Raises:
        ValueError: The video is not COMPLETED, or a bad argument.
        APIStatusError: The file URL failed (403 or 404 even after a fresh read).
        APIResponseValidationError: The bytes do not match ``size`` or Content-Length.
        APIConnectionError: The download broke off.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    video_id = video if isinstance(video, str) else video.id
    target = target_path(path, video_id)
    record = video if isinstance(video, Video) and video.url else await read(video_id)
    try:
        await _fetch(transport, record, target, progress, chunk_size)
    except _Refresh:
        # The URL we held expired (spec 2.3, valid 24 hours): a fresh read signs a new one.
        record = await read(video_id)
        try:
            await _fetch(transport, record, target, progress, chunk_size)
        except _Refresh as again:
            raise again.error from None
    return target


async def _fetch(
    transport: FileSource,
    video: Video,
    target: Path,
    progress: Progress | None,
    chunk_size: int,
) -> None:
    """One attempt: stream the video's URL into ``target``."""
    url = _url_of(video)
    where = redact_url(url)
    async with transport.stream_get(url, chunk_size=chunk_size) as stream:
        if stream.status >= 300:
            error = await _status_error(stream, where)
            if stream.status in _REFRESH_STATUSES:
                raise _Refresh(error)
            raise error
        expected = _expected_size(video, stream, where)
        await _write(stream, target, expected, progress, where)


def _expected_size(video: Video, stream: Stream, where: str) -> int | None:
    """The size to check: Content-Length, else the record's ``size`` (spec 2.3)."""
    length = _content_length(stream.headers)
    size = video.size if video.size and video.size > 0 else None
    if length is not None and size is not None and length != size:
        raise _size_error(where, stream.status, f"Content-Length is {length}, size is {size}")
    return length if length is not None else size


def _content_length(headers: Mapping[str, str]) -> int | None:
    encoding = headers.get("Content-Encoding", "identity").lower()
    value = headers.get("Content-Length")
    if encoding != "identity" or value is None or not value.strip().isdigit():
        return None  # a compressed length does not count the bytes we write
    return int(value)


def _size_error(where: str, status: int, detail: str) -> APIResponseValidationError:
    return APIResponseValidationError(
        f"download size mismatch: {detail}",
        status_code=status,
        errors=[f"size: {detail}"],
        method="GET",
        path=where,
    )


async def _write(
    stream: Stream,
    target: Path,
    expected: int | None,
    progress: Progress | None,
    where: str,
) -> None:
    """Write the body to ``<target>.part`` (its folders made first), check the size,
    rename it to ``target``."""
    part = target.with_name(target.name + ".part")
    await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
    sink = await asyncio.to_thread(part.open, "wb")
    done = 0
    try:
        async for chunk in stream.chunks:
            done += len(chunk)
            if expected is not None and done > expected:
                raise _size_error(where, stream.status, f"more than the expected {expected} bytes")
            await asyncio.to_thread(sink.write, chunk)
            if progress is not None:
                progress(done, expected)
        if expected is not None and done != expected:
            raise _size_error(where, stream.status, f"got {done} bytes, expected {expected}")
        await asyncio.to_thread(_finish, sink)
        os.replace(part, target)
    except BaseException:
        sink.close()
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        raise


def _finish(sink: IO[bytes]) -> None:
    """Flush to the disk before the rename makes the file visible."""
    sink.flush()
    os.fsync(sink.fileno())
    sink.close()


async def _status_error(stream: Stream, where: str) -> APIStatusError:
    """The error for a failed file URL, with the start of its body."""
    raw = b""
    async for chunk in stream.chunks:
        raw += chunk
        if len(raw) >= _ERROR_BODY_LIMIT:
            break
    text = raw[:_ERROR_BODY_LIMIT].decode("utf-8", errors="replace")
    body: Any = text
    message = text.strip() or f"HTTP {stream.status}"
    with contextlib.suppress(ValueError):
        body = json.loads(text)
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            message = body["message"]
    cls = status_error_class(stream.status, message)
    return cls(
        f"download failed: {message}",
        status_code=stream.status,
        body=body,
        headers=stream.headers,
        method="GET",
        path=where,
    )
