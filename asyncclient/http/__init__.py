"""The request path: one way for every request to go out and its answer to come back.

Owns: the sans-I/O protocol (``protocol``: build a request, decode status, headers and
body or raise), the service's headers (``headers``), the aiohttp transport
(``transport``, the one module of the core that imports aiohttp's client), streamed
downloads over it (``download``), the caller (``caller``: build, limiter, retry,
transport, decode, follow the rate-limit headers), the gate that lets polling keep a
share of the rate (``gate``) and the optional OpenTelemetry spans (``tracing``).

May import: ``errors``, ``models``, ``validation``, ``_convert``, ``_clock``, ``ratelimit``
and ``retry``. Knows nothing of resources, jobs, batches, the fleet or the faces.
"""
