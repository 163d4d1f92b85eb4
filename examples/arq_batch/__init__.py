"""A batch run as an arq job, resumed by another worker after a crash.

- :func:`start_batch` (in a web handler) enqueues the batch ``name`` as the arq job
  ``batch:<name>``, once however often it is asked.
- :func:`run_batch` (in an arq worker: ``arq examples.arq_batch.WorkerSettings``) runs
  it with the journal ``<ARQ_BATCH_JOURNAL_REDIS>/<name>``; a delivery of the same job
  after a worker died resumes that journal: nothing sent twice, nothing lost.
- :func:`batch_outcome` reads the job's status and, once complete, its result.

The environment: ``ASYNCCLIENT_API_KEY``, ``ASYNCCLIENT_BASE_URL`` (the SDK's),
``ARQ_BATCH_QUEUE_REDIS`` (arq's Redis), ``ARQ_BATCH_JOURNAL_REDIS`` (the journals'
Redis, AOF ``appendfsync always``), and optional ``ARQ_BATCH_JOURNAL_LEASE``,
``ARQ_BATCH_SETTLE_WINDOW``, ``ARQ_BATCH_CLAIM``, ``ARQ_BATCH_SPACING``,
``ARQ_BATCH_PLAN``, ``ARQ_BATCH_TIME_SCALE``. See docs/queue-arq.md.
"""

from .config import Config
from .web import batch_outcome, job_id_of, start_batch
from .worker import JOB, BatchResult, WorkerSettings, claimed, run_batch

__all__ = [
    "JOB",
    "BatchResult",
    "Config",
    "WorkerSettings",
    "batch_outcome",
    "claimed",
    "job_id_of",
    "run_batch",
    "start_batch",
]
