"""The Celery app and the settings a paid batch needs of it.

Each setting and why (``docs/queue-celery.md`` says more):

- ``task_acks_late``: a task's message is acknowledged when the task ends, not when it
  starts; until then Redis keeps it (kombu's ``unacked`` hash), and a worker killed
  mid-batch leaves it there to be delivered again.
- ``task_reject_on_worker_lost``: when only the pool's child dies (SIGKILL, the OOM
  killer), the worker puts the message back at once instead of acknowledging it as
  failed.
- ``broker_transport_options["visibility_timeout"]``: how long an unacknowledged
  message waits before any worker delivers it again (a whole worker died: nobody is
  left to put it back). ``unacked_restore_interval`` and ``unacked_restore_throttle``
  (kombu 5.7 and later; older ones ignore them and sweep about every 100 s): how often
  each worker sweeps for such messages.
- ``worker_prefetch_multiplier = 1``: a worker reserves no message it is not running,
  which would wait for the visibility timeout too when it dies.
- ``worker_deduplicate_successful_tasks``: a redelivered message of a task the result
  backend already shows ``SUCCESS`` is acknowledged without running it.
- ``task_track_started`` and a result backend: the web process sees ``STARTED``, then
  the batch's counts.
"""

from __future__ import annotations

from typing import Any

from celery import Celery  # type: ignore[import-untyped]

from examples.celery_batch.settings import Settings

__all__ = ["app", "celery_config", "create_app"]

RESULTS_KEPT = 7 * 24 * 3600
"""Seconds the result backend keeps a batch's result."""


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery's configuration for ``settings``."""
    return {
        "broker_url": settings.broker_url,
        "result_backend": settings.result_backend,
        "broker_transport_options": {
            "visibility_timeout": settings.visibility_timeout,
            "unacked_restore_interval": max(1, round(settings.restore_interval)),
            "unacked_restore_throttle": 1,
        },
        "broker_connection_retry_on_startup": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_track_started": True,
        "worker_prefetch_multiplier": 1,
        "worker_deduplicate_successful_tasks": True,
        "result_expires": RESULTS_KEPT,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
    }


def create_app(settings: Settings | None = None) -> Any:
    """A Celery app configured by ``settings`` (default: the environment's), with the
    batch task registered."""
    from examples.celery_batch.tasks import register

    settings = settings or Settings.from_env()
    app = Celery("examples.celery_batch")
    app.conf.update(celery_config(settings))
    register(app, settings)
    return app


app = create_app()
"""The app ``celery -A examples.celery_batch worker`` runs."""
