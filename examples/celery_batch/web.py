"""The web side: a handler enqueues a batch and reads where it stands.

The web process sends the task by its name (:data:`RUN_BATCH`): it needs the broker and
the result backend, not the worker's code, nor an API key of the service.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from examples.celery_batch.settings import BATCH_NAME
from examples.celery_batch.tasks import RUN_BATCH

__all__ = ["batch_status", "enqueue_batch", "task_id_of"]


def task_id_of(name: str) -> str:
    """The Celery task id of the batch ``name``: one name, one id, whichever delivery
    or retry runs it, so its status is found by the batch's name."""
    return f"video-batch-{name}"


def _default_app() -> Any:
    from examples.celery_batch.app import app

    return app


def enqueue_batch(
    name: str,
    rows: Iterable[Mapping[str, Any]],
    *,
    template: str = "tpl_welcome",
    app: Any = None,
) -> str:
    """Queue the batch ``name`` (its rows in the message); returns its task id.

    ``name`` names its journal: queueing the same name and rows again runs nothing
    twice (the run resumes, or is told the batch is done); other rows under a name
    already used are refused by the journal (the task fails).

    Raises:
        ValueError: ``name`` is not 1 to 100 letters, digits, ``.``, ``_`` or ``-``.
    """
    if not BATCH_NAME.fullmatch(name):
        raise ValueError(f"a batch name is 1 to 100 of A-Z a-z 0-9 . _ - , not {name!r}")
    app = app or _default_app()
    result = app.send_task(
        RUN_BATCH,
        args=(name, [dict(row) for row in rows]),
        kwargs={"template": template},
        task_id=task_id_of(name),
    )
    return str(result.id)


def batch_status(name: str, *, app: Any = None) -> dict[str, Any]:
    """Where the batch ``name`` stands: ``{"batch", "state"}`` (``PENDING`` when unknown,
    ``STARTED``, ``RETRY``, ``SUCCESS`` with ``result``: the task's counts, ``FAILURE``
    with ``error``).

    It reads the result backend's record (a ``SUCCESS`` is kept: a later run of the same
    batch, which resumes its finished journal, does not replace it). Not through
    ``AsyncResult``:
    with the Redis backend, an ``AsyncResult`` dropped while another one's state is
    being read can hang the reading thread (its ``__del__`` unsubscribes on the same
    connection), which polling it from a web handler does.
    """
    app = app or _default_app()
    meta = app.backend.get_task_meta(task_id_of(name), cache=False)
    state = str(meta.get("status", "PENDING"))
    answer: dict[str, Any] = {"batch": name, "state": state}
    if state == "SUCCESS":
        answer["result"] = meta.get("result")
    elif state in ("FAILURE", "RETRY"):
        answer["error"] = repr(meta.get("result"))
    return answer
