"""A reference FastAPI backend for the video service, run by uvicorn as several worker processes.

The twin of :mod:`examples.web_backend` (aiohttp): the same routes, options, environment
and report at shutdown. ``python -m examples.fastapi_backend --workers 4 ...`` runs it
under uvicorn; each worker holds one :class:`asyncclient.AsyncClient`, opened and closed
with the application by :func:`asyncclient.asgi.lifespan`, sharing through Redis the
plan's rate limit, the deduplication of notifications and the waiting for jobs. See
``examples/fastapi_backend/README.md``.

- :mod:`.config`: the command line and environment, as :class:`.config.Settings`.
- :mod:`.app`: the application (``POST /videos``, ``GET /videos/{id}``, ``POST /hooks/video``).
- :mod:`.__main__`: hands the settings to the workers and runs uvicorn.
"""
