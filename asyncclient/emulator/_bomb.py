"""The ``gzip_bomb`` fault's reply: a small gzip body that inflates to ``size`` bytes.

The body is made as it is sent, never held: a gzip header, then the same deflate piece
again and again (each one inflates to :data:`PIECE` bytes of filler and is compressed on
its own, ending at a full flush, so every copy is the same bytes), a last piece for the
rest, and the gzip trailer (the CRC-32 of every inflated byte and their count). A GiB
takes about a MiB on the wire; the emulator holds a piece at a time.
"""

from __future__ import annotations

import struct
import zlib

from aiohttp import web

__all__ = ["HEAD", "PIECE", "gzip_bomb"]

PIECE = 256 * 1024
"""Inflated bytes of one repeated deflate piece."""
HEAD = b'{"success": true, "data": {"padding": "'
"""What the inflated body starts with (then filler: it never ends as JSON)."""
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # deflate, no name, no mtime
_FILLER = b"a"
_BATCH = 64  # pieces a write


def _deflated(data: bytes, *, last: bool) -> bytes:
    """``data`` as raw deflate blocks of their own, ending byte-aligned (or the stream)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(
        zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH
    )


async def gzip_bomb(request: web.Request, size: int) -> web.StreamResponse:
    """Send ``200`` with ``Content-Encoding: gzip`` whose body inflates to ``size`` bytes.

    A client that goes away ends the reply (the rest is never made).
    """
    response = web.StreamResponse(
        status=200, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    await response.prepare(request)
    head = HEAD[:size]
    filler = _FILLER * PIECE
    piece = _deflated(filler, last=False)
    crc = zlib.crc32(head)
    left = size - len(head)
    try:
        await response.write(_GZIP_HEADER + _deflated(head, last=False))
        while left >= PIECE:
            count = min(_BATCH, left // PIECE)
            for _ in range(count):
                crc = zlib.crc32(filler, crc)
            left -= count * PIECE
            await response.write(piece * count)
        tail = filler[:left]
        trailer = struct.pack("<II", zlib.crc32(tail, crc), size & 0xFFFFFFFF)
        await response.write(_deflated(tail, last=True) + trailer)
        await response.write_eof()
    except (ConnectionError, RuntimeError):  # the client gave up (reset, or transport closed)
        pass
    return response
