"""The service emulator: the video-generation service, simulated on loopback.

``async with Emulator(time_scale=60.0, seed=0) as emu:`` serves every endpoint of
the spec with in-memory state; see ``docs/emulator.md``.
"""

from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._context import Counters, RequestRecord
from asyncclient.emulator._emulator import Emulator
from asyncclient.emulator._faults import FAULT_KINDS, Fault, Faults
from asyncclient.emulator._ratelimit import PLANS
from asyncclient.emulator._seed import Catalog
from asyncclient.emulator._state import DEFAULT_COSTS, DEFAULT_PROCESSING
from asyncclient.emulator._webhooks import RETRY_DELAYS, Attempt

__all__ = [
    "DEFAULT_COSTS",
    "DEFAULT_PROCESSING",
    "FAULT_KINDS",
    "PLANS",
    "RETRY_DELAYS",
    "Attempt",
    "Catalog",
    "Counters",
    "Emulator",
    "Fault",
    "Faults",
    "RequestRecord",
    "ServiceClock",
]
