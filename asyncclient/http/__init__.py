"""The request path: one way for every request to go out and its answer to come back."""

# Owns: the sans-I/O protocol (``protocol``: build a request, decode status, headers and
# body or raise), the service's headers (``headers``), a creation checked and built once
# (``prepared``), the aiohttp transport (``transport``, the one module of the core that
# imports aiohttp's client) with its I/O deadlines on loop time (``attempts``), streamed
# downloads over it (``download``), the caller (``caller``: build, limiter, retry,
# transport, decode, follow the rate-limit headers), the gate that lets submissions come
# before polling (``gate``), the optional OpenTelemetry spans (``tracing``), the checks
# of the service's address and a notification URL (``urls``), and the proxy and the
# trusted CAs (``network``).
# May import: ``errors``, ``models``, ``validation``, ``_convert``, ``_clock``,
# ``_states``, ``ratelimit``, ``lanes`` and ``retry``. Knows nothing of resources, jobs,
# batches, the fleet or the faces.
