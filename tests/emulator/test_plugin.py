"""The pytest plugin's fixtures (registered through the pytest11 entry point)."""

from __future__ import annotations

from typing import Any

import aiohttp

from asyncclient.emulator import Emulator


async def test_emulator_fixture(asyncclient_emulator: Emulator, asyncclient_api_key: str) -> None:
    assert asyncclient_emulator.url.startswith("http://127.0.0.1:")
    assert asyncclient_emulator.clock.time_scale == 60.0
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            asyncclient_emulator.url + "/v1/integration/list",
            headers={"x-api-key": asyncclient_api_key},
        ) as resp,
    ):
        assert resp.status == 200


async def test_client_fixture(asyncclient_client: Any, asyncclient_emulator: Emulator) -> None:
    integrations = await asyncclient_client.integrations.list()
    assert [i.id for i in integrations] == asyncclient_emulator.catalog.integrations
