"""The service emulator: the video-generation service, simulated on loopback.

``async with Emulator(time_scale=60.0, seed=0) as emu:`` serves every endpoint of
the spec with in-memory state; see ``docs/emulator.md``.

Faults (``emu.faults.add(route, kind, ...)`` or ``POST /_emulator/faults``), by kind:
``status`` and ``rate_burst`` (a 429 with ``Retry-After``) answer without processing;
``latency`` delays, then processes; ``drop_before`` resets the connection unprocessed;
``drop_after``, ``status_after`` (a 5xx), ``malformed`` (truncated JSON with 200),
``hold_reply`` (the reply held ``latency`` seconds), ``garbage_headers`` (nonsense
rate-limit headers), ``ok_without_ids`` (``200 {"success": true}`` naming no id),
``proxy_503`` (a proxy's HTML 503) and ``gzip_bomb`` (200 with a gzip body inflating to
``size`` bytes, 1 GiB by default, made as it is sent) process the request first, so a
creation's project exists and is charged whatever the client saw. A client that gives up
(its timeout shorter than a ``latency``) does not stop the request: it is processed.
``emu.counters.faults`` counts them by kind; the request log names each request's fault,
and for creations its title and project.
See :mod:`asyncclient.emulator._faults` for the parameters.
"""

# May import: the enumerations of ``models`` (pure data shared with the SDK, spec 2.1); it
# keeps its own request rules. Its pytest plugin may import the client. The core never
# imports it.

from asyncclient.emulator._clock import ServiceClock
from asyncclient.emulator._context import Counters, RequestRecord
from asyncclient.emulator._emulator import Emulator
from asyncclient.emulator._faults import FAULT_KINDS, GARBAGE_HEADERS, Fault, Faults
from asyncclient.emulator._ratelimit import PLANS
from asyncclient.emulator._seed import Catalog
from asyncclient.emulator._state import DEFAULT_COSTS, DEFAULT_PROCESSING
from asyncclient.emulator._thread import EmulatorThread, serve_in_thread
from asyncclient.emulator._webhooks import RETRY_DELAYS, Attempt

__all__ = [
    "DEFAULT_COSTS",
    "DEFAULT_PROCESSING",
    "FAULT_KINDS",
    "GARBAGE_HEADERS",
    "PLANS",
    "RETRY_DELAYS",
    "Attempt",
    "Catalog",
    "Counters",
    "Emulator",
    "EmulatorThread",
    "Fault",
    "Faults",
    "RequestRecord",
    "ServiceClock",
    "serve_in_thread",
]
