"""A paid batch run by Celery with the synchronous client, resumed after a worker dies.

``celery -A examples.celery_batch worker --concurrency 1`` runs the workers; a web
handler queues a batch with :func:`enqueue_batch` and reads it with
:func:`batch_status`. The task keeps its progress in a Redis journal: a worker killed
mid-batch leaves its message unacknowledged, Redis delivers it again after the
visibility timeout, and the next worker resumes the journal, paying for no row twice.
See ``docs/queue-celery.md``.

- :mod:`.settings`: the environment, as :class:`.settings.Settings`.
- :mod:`.app`: the Celery app and the settings a paid batch needs of it.
- :mod:`.tasks`: the task, and each worker process's client.
- :mod:`.web`: the web side (queue a batch, read its state).
"""

from examples.celery_batch.app import app, celery_config, create_app
from examples.celery_batch.settings import Settings
from examples.celery_batch.tasks import RUN_BATCH, deliveries_key
from examples.celery_batch.web import batch_status, enqueue_batch, task_id_of

__all__ = [
    "RUN_BATCH",
    "Settings",
    "app",
    "batch_status",
    "celery_config",
    "create_app",
    "deliveries_key",
    "enqueue_batch",
    "task_id_of",
]
