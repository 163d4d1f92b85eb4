"""The web side: enqueue a batch (once, however often it is asked), read its outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from arq.connections import ArqRedis
from arq.jobs import Job, JobStatus

from .config import NAME
from .worker import JOB

__all__ = ["batch_outcome", "job_id_of", "start_batch"]

EXPIRES = timedelta(days=7)
"""arq's ``_expires`` of a batch's job: no delivery starts after it (arq's default, a
day, would fail a batch whose last delivery comes later)."""


def job_id_of(name: str) -> str:
    """The arq job of the batch ``name``."""
    return f"batch:{name}"


async def start_batch(
    arq_pool: ArqRedis,
    name: str,
    rows: Sequence[Mapping[str, str]],
    *,
    template_id: str = "tpl_welcome",
) -> str:
    """Enqueue the batch ``name`` (a video of ``template_id`` per row) and answer its job
    id, at once: a worker runs it. The job is named by the batch, so asking twice (a
    retried request, a double click) enqueues it once, while arq keeps the job or its
    result; its journal is named by the batch too, so any worker resumes it.

    Raises:
        ValueError: ``name`` is not 1 to 100 of ``A-Z a-z 0-9 . _ -``.
    """
    if NAME.fullmatch(name) is None:
        raise ValueError(f"a batch name is 1 to 100 of A-Z a-z 0-9 . _ -, not {name!r}")
    job_id = job_id_of(name)
    await arq_pool.enqueue_job(
        JOB, name, [dict(row) for row in rows], template_id, _job_id=job_id, _expires=EXPIRES
    )  # None when it was enqueued already: the same job either way
    return job_id


async def batch_outcome(arq_pool: ArqRedis, job_id: str) -> tuple[JobStatus, Any]:
    """The job's status, and its result once complete: the dict ``run_batch`` returned,
    or the exception that failed the job (None before it completed)."""
    job = Job(job_id, arq_pool)
    status = await job.status()
    if status is not JobStatus.complete:
        return status, None
    info = await job.result_info()
    return status, None if info is None else info.result
