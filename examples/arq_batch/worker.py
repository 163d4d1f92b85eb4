"""The arq side: one job that runs a batch from its Redis journal, and the worker's
settings.

arq delivers a job at least once. A delivery whose worker died is made again, by any
worker, once the dead one's claim on the job (arq's ``in-progress`` key) has expired;
the job then runs the same batch with the same journal, which resumes it: rows already
sent are never sent again, rows cut off are reconciled with the service first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from arq import Retry
from arq.connections import ArqRedis, RedisSettings
from arq.constants import in_progress_key_prefix
from arq.worker import func
from redis.exceptions import RedisError

from asyncclient import AsyncClient, JournalLockedError, JournalWriteError, RowOutcome

from .config import QUEUE_REDIS, Config

__all__ = ["JOB", "BatchResult", "WorkerSettings", "claimed", "run_batch"]

JOB = "run_batch"
"""The job's name in arq's queue."""

BatchResult = dict[str, Any]
"""What the job returns (arq keeps it ``keep_result``): see :func:`run_batch`."""

LONGEST_BATCH = timedelta(hours=12)
"""arq's ``timeout`` of the job: a batch still running after it is cancelled and its job
failed (its journal keeps what was done: enqueue it again to finish it)."""

MAX_TRIES = 50
"""Deliveries of one job at most: each crash, each "journal still held", each run that
left rows pending takes one."""

PENDING_RETRY = 30.0
"""Seconds before a run that left rows pending (the service could not be reached, a
video not finished in time) is tried again."""

log = logging.getLogger("arq.batch")
"""Under ``arq``: the ``arq`` command shows its lines with its own."""


@contextlib.asynccontextmanager
async def claimed(redis: ArqRedis, job_id: str, seconds: float) -> AsyncIterator[None]:
    """Hold arq's claim on ``job_id`` for ``seconds`` at a time, renewed every third of
    that, for as long as the block runs.

    arq claims a job it starts with its ``in-progress`` key, for the job's timeout plus
    10 seconds, and never renews it: a worker killed mid-job leaves the job unclaimed
    only that long after it started (12 hours here). Renewing a short claim instead lets
    another worker take the job ``seconds`` after this one died. A claim that lapses
    while this worker lives (a stalled loop, Redis unreachable) only lets a second
    delivery start: the journal's lease refuses it (:func:`run_batch` retries it later).
    """
    key = in_progress_key_prefix + job_id
    span = int(seconds * 1000)

    async def renew() -> None:
        while True:
            try:
                await redis.set(key, b"1", px=span)
            except RedisError as exc:  # the next beat tries again; the journal fences
                log.warning("job %s: claim not renewed: %s", job_id, exc)
            await asyncio.sleep(seconds / 3)

    beat = asyncio.ensure_future(renew())
    try:
        yield
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat


async def run_batch(
    ctx: dict[str, Any], name: str, rows: list[dict[str, str]], template_id: str
) -> BatchResult:
    """Run (or resume) the batch ``name``: one video of ``template_id`` per row.

    Returns:
        ``{"name", "rows", "outcomes", "completed", "credits_spent", "resumed",
        "submitted_before", "job_try"}``: ``outcomes`` counts the rows by outcome
        (``completed``, ``failed``, ``rejected``, ...); ``credits_spent`` is what the
        service charged the rows this delivery sent (earlier deliveries' rows were
        charged then); ``submitted_before`` counts the rows earlier deliveries sent;
        ``job_try`` is arq's count of deliveries.

    Raises:
        arq.Retry: Another run holds the journal (a dead worker's lease not lapsed yet,
            or a second delivery of a job still running), the journal refused a write
            (its lease was taken over), or the run left rows for a next one.
    """
    config: Config = ctx["batch_config"]
    client: AsyncClient = ctx["batch_client"]
    async with claimed(ctx["redis"], ctx["job_id"], config.claim):
        batch = client.templates.generate_many(
            template_id,
            rows,
            journal=config.journal_url(name),
            journal_lease=config.journal_lease,
            settle_window=config.settle_window,
            spacing=config.spacing,
            read_charges=True,
        )
        try:
            await batch
        except JournalLockedError as exc:
            log.info("batch %s: %s; retrying in %.0f s", name, exc, config.journal_lease)
            raise Retry(defer=config.journal_lease) from exc
        except JournalWriteError as exc:  # fenced: another delivery holds the journal now
            log.warning("batch %s: %s; retrying in %.0f s", name, exc, config.journal_lease)
            raise Retry(defer=config.journal_lease) from exc
    report = batch.report()
    if report.pending:
        log.warning("batch %s: %d rows left for a next run", name, report.pending)
        raise Retry(defer=PENDING_RETRY)
    return {
        "name": name,
        "rows": report.rows,
        "outcomes": {str(o.value): n for o, n in report.outcomes.items() if n},
        "completed": report.count(RowOutcome.COMPLETED),
        "credits_spent": report.credits_spent,
        "resumed": report.resuming,
        "submitted_before": report.submitted_before,
        "job_try": ctx["job_try"],
    }


async def startup(ctx: dict[str, Any]) -> None:
    """One client for the worker process, shared by every job it runs."""
    config = Config.from_env()
    ctx["batch_config"] = config
    ctx["batch_client"] = config.client()


async def shutdown(ctx: dict[str, Any]) -> None:
    client: AsyncClient | None = ctx.get("batch_client")
    if client is not None:
        await client.aclose()


class WorkerSettings:
    """``arq examples.arq_batch.WorkerSettings`` (or ``python -m arq ...``)."""

    functions = [func(run_batch, name=JOB, timeout=LONGEST_BATCH, max_tries=MAX_TRIES)]
    on_startup = startup
    on_shutdown = shutdown
    redis_settings = RedisSettings.from_dsn(QUEUE_REDIS)
    keep_result = timedelta(days=1)
    """How long the enqueuer can read a finished job's result; while it is kept, the same
    batch is not enqueued again (``start_batch`` answers its job)."""
