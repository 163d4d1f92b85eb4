"""Notebook displays: the text and HTML views of jobs and batches, updated live.

Jobs and batches show themselves in a notebook through IPython display ids, updated as
they change; IPython stays optional, and nothing of it is loaded until something shows.

How it attaches: :func:`attach` registers IPython display formatters for
``VideoJob`` and ``Batch`` by type name (nothing is imported for it); each formatter
loads ``display`` or ``live`` when it first shows something. ``import asyncclient``
calls :func:`attach_to_running_shell`, which attaches to the IPython shell running
now, if there is one (a Jupyter kernel, a terminal IPython); ``%load_ext
asyncclient.notebook`` attaches to a shell started later.
"""

# Owns: the text and HTML views of jobs and batches (``display``) and their live
# updates through IPython display ids (``live``). It attaches from outside, through what
# jobs and batches offer everyone (``job.updates()``, ``batch.subscribe``, their phase
# and progress), and reaches them through small protocols; IPython stays optional.
# May import: ``awaiting`` (jobs' text, job state), ``batch`` (its text and phase),
# ``models``, ``errors``, ``_states``. Nothing under ``awaiting/`` or ``batch/`` imports it.
# This module imports nothing at all until it shows something: IPython is never imported
# here (a shell that exists has loaded it already).

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "SHOWN_TYPES",
    "attach",
    "attach_to_running_shell",
    "load_ipython_extension",
    "snapshot",
]

SHOWN_TYPES = {
    "job": ("asyncclient.awaiting.jobs", "VideoJob"),
    "batch": ("asyncclient.batch.runner", "Batch"),
}
"""The types the notebook shows, by module and name (as IPython's formatters key them)."""


def _display_job(job: Any) -> None:
    """IPython shows a job (a cell's value, or ``display(job)``): in a Jupyter kernel,
    while it runs, updated in place until it ends (the job is followed, hence polled,
    meanwhile); otherwise a snapshot."""
    from asyncclient.notebook.live import display_job

    display_job(job)


def _job_html(job: Any) -> str:
    """A snapshot as HTML: status and progress, then the video player, or the message."""
    from asyncclient.notebook.display import job_html

    return job_html(job.state)


def _display_batch(batch: Any) -> None:
    """IPython shows a batch: in a Jupyter kernel, updated in place from its start to
    its end (displaying it starts nothing); otherwise a snapshot."""
    from asyncclient.notebook.live import display_batch

    display_batch(batch)


def _batch_html(batch: Any) -> str:
    """A snapshot as HTML: the progress summary, then the table of rows once ended."""
    from asyncclient.notebook.display import batch_html

    return batch_html(batch)


def snapshot(shown: Any) -> dict[str, str]:
    """A job's or a batch's view now, as ``text/plain`` and ``text/html`` (what a
    frontend other than IPython shows: ``_repr_mimebundle_`` reads it).

    Args:
        shown: A ``VideoJob`` or a ``Batch``.

    Raises:
        TypeError: Something else.
    """
    from asyncclient.notebook.display import batch_bundle, job_bundle

    kind = (type(shown).__module__, type(shown).__name__)
    if kind == SHOWN_TYPES["job"]:
        return job_bundle(shown.state)
    if kind == SHOWN_TYPES["batch"]:
        return batch_bundle(shown)
    raise TypeError(f"the notebook shows jobs and batches, not {type(shown).__name__}")


def attach(shell: Any) -> None:
    """Show jobs and batches in ``shell`` (an IPython ``InteractiveShell``): register
    its display formatters for them, by type name. Attaching twice is harmless.

    Args:
        shell: The shell (``get_ipython()``).
    """
    formatter = shell.display_formatter
    html = formatter.formatters["text/html"]
    shows = formatter.ipython_display_formatter
    for key, (show, as_html) in {
        "job": (_display_job, _job_html),
        "batch": (_display_batch, _batch_html),
    }.items():
        module, name = SHOWN_TYPES[key]
        shows.for_type_by_name(module, name, show)
        html.for_type_by_name(module, name, as_html)


def attach_to_running_shell() -> bool:
    """Attach to the IPython shell running now, if IPython is loaded and one runs.

    Returns:
        Whether there was a shell to attach to.
    """
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    if shell is None:
        return False
    attach(shell)
    return True


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext asyncclient.notebook``: attach to this shell."""
    attach(ipython)
