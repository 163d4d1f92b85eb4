"""Stopping the emulator while clients are still connecting closes every socket it accepted."""

from __future__ import annotations

import asyncio
import gc
import warnings

from asyncclient.emulator import Emulator


async def _stop_while_connecting(connections: int) -> int:
    emu = Emulator()
    await emu.start()
    port = int(emu.url.rsplit(":", 1)[1])
    opening = [
        asyncio.ensure_future(asyncio.open_connection("127.0.0.1", port))
        for _ in range(connections)
    ]
    await emu.stop()  # the connections reach the listener while it stops
    for result in await asyncio.gather(*opening, return_exceptions=True):
        if isinstance(result, tuple):
            result[1].close()
    return port


async def test_connections_accepted_as_it_stops_are_closed_not_left_to_the_collector() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ports = [await _stop_while_connecting(20) for _ in range(5)]
        await asyncio.sleep(0.05)
        gc.collect()
    leaked = [
        str(w.message)
        for w in caught
        if issubclass(w.category, ResourceWarning)
        and any(f"'127.0.0.1', {port})" in str(w.message) for port in ports)
    ]
    assert leaked == []


async def test_a_stopped_emulator_refuses_connections_and_starts_again() -> None:
    emu = Emulator()
    await emu.start()
    port = int(emu.url.rsplit(":", 1)[1])
    await emu.stop()
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        pass
    else:  # pragma: no cover - the assertion below names the failure
        raise AssertionError("a stopped emulator still accepts connections")
    await emu.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(emu.url.rsplit(":", 1)[1]))
        writer.write(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert (await reader.readline()).startswith(b"HTTP/1.1 ")
        writer.close()
    finally:
        await emu.stop()
