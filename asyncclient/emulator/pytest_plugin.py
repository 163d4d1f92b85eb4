"""Pytest plugin of the emulator (entry point ``pytest11``): the ``asyncclient_*`` fixtures.

Fixtures (function-scoped), prefixed so that they cannot collide with a project's own
fixtures (``client`` and ``emulator`` are common names):

- ``asyncclient_emulator``: a running :class:`~asyncclient.emulator.Emulator` on
  loopback, its ``time_scale`` from the ini option ``asyncclient_emulator_time_scale``
  (default 60).
- ``asyncclient_api_key``: the API key of a new team of that emulator (plan
  ``premium``, 100000 credits).
- ``asyncclient_client``: an ``asyncclient.AsyncClient`` bound to the emulator with
  that key, closed after the test.

The async fixtures are pytest-asyncio fixtures: they work in its strict mode (the
default, where the test needs ``@pytest.mark.asyncio``) and in auto mode, on the
function loop scope unless the project sets ``asyncio_default_fixture_loop_scope``.

This module is imported by every pytest run where asyncclient is installed, so it
imports only pytest at import time and never fails there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

if TYPE_CHECKING:
    from asyncclient.emulator._emulator import Emulator

__all__ = [
    "asyncclient_api_key",
    "asyncclient_client",
    "asyncclient_emulator",
    "pytest_addoption",
]

_INI = "asyncclient_emulator_time_scale"

F = TypeVar("F", bound=Callable[..., Any])


def _async_fixture(func: F) -> F:
    """Mark an async fixture with pytest-asyncio when it is installed."""
    try:
        import pytest_asyncio
    except ImportError:  # pragma: no cover - only needed to use the fixtures
        return cast(F, pytest.fixture(func))
    return cast(F, pytest_asyncio.fixture(func))


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ini option of the emulator's time scale."""
    parser.addini(_INI, "time_scale of the asyncclient_emulator fixture (default 60)", default="60")


@_async_fixture
async def asyncclient_emulator(request: pytest.FixtureRequest) -> AsyncIterator[Emulator]:
    """A running emulator on a free loopback port, stopped after the test."""
    from asyncclient.emulator._emulator import Emulator

    time_scale = float(request.config.getini(_INI) or 60)
    async with Emulator(time_scale=time_scale, seed=0) as emu:
        yield emu


@pytest.fixture
def asyncclient_api_key(asyncclient_emulator: Emulator) -> str:
    """The API key of a new team of the emulator (premium plan, 100000 credits)."""
    return asyncclient_emulator.add_team(plan="premium", credits=100_000)


@_async_fixture
async def asyncclient_client(
    asyncclient_emulator: Emulator, asyncclient_api_key: str
) -> AsyncIterator[Any]:
    """An ``asyncclient.AsyncClient`` talking to the emulator, closed after the test."""
    from asyncclient import AsyncClient, Plan

    # The emulator's clock runs time_scale times faster: so must the client's bucket.
    rate = Plan.PREMIUM.rate_limit.scaled(asyncclient_emulator.clock.time_scale)
    async with AsyncClient(
        api_key=asyncclient_api_key, base_url=asyncclient_emulator.url, plan=rate
    ) as sdk_client:
        yield sdk_client
