"""The batch task: one paid batch, run with the synchronous client, resumable from its
Redis journal whichever worker the queue delivers it to, however often.

A worker process makes its :class:`asyncclient.Client` on its first task (never in the
parent of a prefork pool: a client used before a fork is not to be used after it) and
closes it when the process ends (``worker_process_shutdown``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis
from celery.signals import worker_process_shutdown, worker_shutdown  # type: ignore[import-untyped]

from asyncclient import Client, JournalLockedError, JournalWriteError, RowOutcome, RowResult
from asyncclient.batch import BatchReport
from examples.celery_batch.settings import Settings

__all__ = [
    "DELIVERIES_KEPT",
    "PENDING_RETRY",
    "RUN_BATCH",
    "close_client",
    "deliveries_key",
    "register",
]

RUN_BATCH = "examples.celery_batch.run_batch"
"""The task's name: what the web process sends (it need not import this module)."""

PENDING_RETRY = 60.0
"""Seconds before a run that left rows pending (the service unreachable, a video not
finished within the wait) runs again."""

DELIVERIES_KEPT = 100
"""Entries of a batch's delivery log kept (the newest)."""

_lock = threading.Lock()
_client: tuple[int, Client] | None = None  # (the process that made it, the client)


def worker_client(settings: Settings) -> Client:
    """This process's client, made on first use (in the process that uses it)."""
    global _client
    with _lock:
        if _client is None or _client[0] != os.getpid():
            # A client inherited through a fork is dropped, never used nor closed here.
            client = Client(plan=settings.rate_limit(), polling=settings.polling())
            _client = (os.getpid(), client)
        return _client[1]


def close_client(**_: Any) -> None:
    """Close this process's client, if it made one (when the worker process ends)."""
    global _client
    with _lock:
        made, _client = _client, None
    if made is not None and made[0] == os.getpid():
        made[1].close()


worker_process_shutdown.connect(close_client, weak=False)  # a prefork pool's child
worker_shutdown.connect(close_client, weak=False)  # the solo and threads pools


def deliveries_key(name: str) -> str:
    """The Redis list (in the journals' database) logging each delivery of batch ``name``."""
    return f"celery-batch:{name}:deliveries"


def _log(settings: Settings, name: str, request: Any, event: str, **more: Any) -> None:
    """Add an entry to the batch's delivery log: which worker, which try, whether the
    broker delivered the message again, and what happened."""
    delivery = request.delivery_info or {}
    entry = {
        "event": event,
        "task_id": request.id,
        "worker": request.hostname,
        "pid": os.getpid(),
        "retries": request.retries,
        "redelivered": bool(delivery.get("redelivered")),
        "at": time.time(),
        **more,
    }
    key = deliveries_key(name)
    log = redis.Redis.from_url(settings.journal_redis)
    try:
        pipe = log.pipeline(transaction=False)
        pipe.rpush(key, json.dumps(entry))
        pipe.ltrim(key, -DELIVERIES_KEPT, -1)
        pipe.expire(key, 7 * 24 * 3600)
        pipe.execute()
    finally:
        log.close()


def summary(name: str, results: Sequence[RowResult], report: BatchReport) -> dict[str, Any]:
    """What the task returns (kept by the result backend): the batch's rows by outcome,
    and what this delivery sent and was charged."""
    return {
        "batch": name,
        "rows": len(results),
        "outcomes": {outcome.value: report.count(outcome) for outcome in RowOutcome},
        "resumed": report.resuming,
        "submitted_before": report.submitted_before,
        "submitted": report.submitted,
        "accepted": report.accepted,
        "credits_spent": report.credits_spent,
    }


def run_batch(
    task: Any,
    settings: Settings,
    name: str,
    rows: Sequence[Mapping[str, Any]],
    template: str,
) -> dict[str, Any]:
    """Run (or resume) the batch ``name``; the body of the Celery task.

    Raises:
        celery.exceptions.Retry: The journal is held by another run (a worker that died
            moments ago and whose lease has not lapsed, or one still running it), or
            this run lost it (a write refused: another run took the lease over, or Redis
            failed; the row concerned was not sent), or rows are left for a later run:
            the task runs again later.
    """
    request = task.request
    _log(settings, name, request, "start")
    client = worker_client(settings)
    batch = client.templates.generate_many(
        template,
        rows,
        journal=settings.journal_url(name),
        journal_lease=settings.journal_lease,
        settle_window=settings.settle_window,
        spacing=settings.spacing,
        read_charges=True,
    )
    try:
        results = batch.wait()
    except (JournalLockedError, JournalWriteError) as exc:
        event = "locked" if isinstance(exc, JournalLockedError) else "write-failed"
        _log(settings, name, request, event, error=str(exc))
        raise task.retry(
            exc=exc, countdown=settings.retry_after, max_retries=settings.max_retries
        ) from None
    report = batch.report()
    done = summary(name, results, report)
    if report.pending:
        _log(settings, name, request, "pending", pending=report.pending)
        raise task.retry(countdown=PENDING_RETRY, max_retries=settings.max_retries)
    _log(
        settings, name, request, "done",
        outcomes=done["outcomes"], submitted=done["submitted"], credits_spent=done["credits_spent"],
    )  # fmt: skip
    return done


def register(app: Any, settings: Settings) -> Any:
    """Register the batch task on ``app`` (named :data:`RUN_BATCH`); returns it.

    Called as ``run_batch(name, rows, template="tpl_welcome")``.
    """

    def batch_task(
        self: Any, name: str, rows: list[dict[str, Any]], template: str = "tpl_welcome"
    ) -> dict[str, Any]:
        return run_batch(self, settings, name, rows, template)

    return app.task(bind=True, name=RUN_BATCH, max_retries=settings.max_retries)(batch_task)
