"""A forward proxy for the tests: HTTP ``CONNECT`` tunnels, and a log of what it saw.

Run as a process: ``python tests/connect_proxy.py LOG_PATH``. It listens on a free
loopback port and prints ``listening <port>`` on its first line. Each ``CONNECT``
target is logged as a JSON line ``{"connect": "host:port", "headers": {...}}``; a
request of any other method (a plain request sent to a proxy) is logged as
``{"plain": "<request line>", "headers": {...}}`` and answered 502, never forwarded.
Every byte a client sends (the tunnelled ones too) is appended to ``LOG_PATH + ".raw"``:
what anyone on the proxy could read; every byte relayed back to clients, to
``LOG_PATH + ".down"``.

``--require-auth USER:PASSWORD`` answers 407 to a ``CONNECT`` without those
credentials in ``Proxy-Authorization``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import sys
from pathlib import Path


class Proxy:
    def __init__(self, log: Path, credentials: str | None) -> None:
        self.log = log.open("a", encoding="utf-8")
        self.raw = Path(f"{log}.raw").open("ab")  # noqa: SIM115 - open while it runs
        self.down = Path(f"{log}.down").open("ab")  # noqa: SIM115 - open while it runs
        self.expected_auth = (
            "Basic " + base64.b64encode(credentials.encode()).decode() if credentials else None
        )

    def note(self, record: dict[str, object]) -> None:
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    def seen(self, data: bytes, *, down: bool = False) -> None:
        file = self.down if down else self.raw
        file.write(data)
        file.flush()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        self.seen(head)
        line, *rest = head.decode("latin-1").split("\r\n")
        headers = dict(h.split(": ", 1) for h in rest if ": " in h)
        method, target, _ = line.split(" ", 2)
        if method != "CONNECT":
            self.note({"plain": line, "headers": headers})
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        self.note({"connect": target, "headers": headers})
        if self.expected_auth and headers.get("Proxy-Authorization") != self.expected_auth:
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        host, _, port = target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(
            self.pipe(reader, up_writer, record=True), self.pipe(up_reader, writer, record=False)
        )

    async def pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, record: bool
    ) -> None:
        try:
            while data := await reader.read(65536):
                self.seen(data, down=not record)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(ConnectionError, OSError):
                writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log", type=Path)
    parser.add_argument("--require-auth", default=None, metavar="USER:PASSWORD")
    args = parser.parse_args()
    proxy = Proxy(args.log, args.require_auth)
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"listening {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    sys.exit(0)
