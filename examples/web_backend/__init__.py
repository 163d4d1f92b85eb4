"""A reference aiohttp backend for the video service, run as a fleet of worker processes.

``python -m examples.web_backend --workers 4 ...`` starts four processes that serve the
same port (``SO_REUSEPORT``). Each holds one :class:`asyncclient.AsyncClient` sharing,
through Redis, the plan's rate limit and the deduplication of notifications with the
others. See ``examples/web_backend/README.md``.

- :mod:`.config`: the command line and environment, as :class:`.config.Settings`.
- :mod:`.app`: the routes (``POST /videos``, ``GET /videos/{id}``, ``POST /hooks/video``).
- :mod:`.worker`: one worker process: its client, its server, its report at shutdown.
- :mod:`.__main__`: the parent, which starts the workers and forwards signals to them.
"""
