"""The recipe's settings, read from the environment (the worker and the web process
read the same variables).

The SDK's own variables need nothing here: ``Client()`` reads ``ASYNCCLIENT_API_KEY``
and ``ASYNCCLIENT_BASE_URL`` itself.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from asyncclient import Plan, PollPolicy, RateLimit

__all__ = ["BATCH_NAME", "Settings"]

BATCH_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""What a batch's name may be: it names its journal in Redis and its Celery task."""


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a number of seconds above 0, got {text!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """Where the queue, the results and the journals live, and how a batch runs.

    Its ``repr`` shows no URL (a Redis URL may hold a password).
    """

    broker_url: str = field(repr=False)
    """``CELERY_BROKER_URL``: Celery's broker (a Redis database)."""
    result_backend: str = field(repr=False)
    """``CELERY_RESULT_BACKEND``: where the tasks' results are kept."""
    journal_redis: str = field(repr=False)
    """``BATCH_JOURNAL_REDIS``: the Redis database of the batches' journals,
    ``redis://HOST:PORT/DB``; its server must run with ``appendfsync always`` (or have a
    replica), else the SDK refuses it."""
    visibility_timeout: float = 7200.0
    """``BATCH_VISIBILITY_TIMEOUT``: seconds after which Redis delivers again a task
    that no worker acknowledged (a dead worker's). Above the longest batch you run."""
    restore_interval: float = 60.0
    """``BATCH_RESTORE_INTERVAL``: seconds between a worker's sweeps for such tasks."""
    journal_lease: float = 15.0
    """``BATCH_JOURNAL_LEASE``: how long a dead worker's journal lease outlives it."""
    settle_window: float = 600.0
    """``BATCH_SETTLE_WINDOW``: how long a row whose request may have left when its
    worker died is left pending before it is looked for and, if absent, sent again."""
    spacing: float = 1.0
    """``BATCH_SPACING``: least seconds between two creation requests."""
    locked_retry_after: float | None = None
    """``BATCH_LOCKED_RETRY_AFTER``: seconds before a delivery that found the journal
    held by another run tries again; None: the journal lease's length."""
    max_retries: int = 240
    """``BATCH_MAX_RETRIES``: tries after the first before the task fails."""
    plan: str | None = None
    """``BATCH_PLAN``: the team's plan (sizes the client's rate limit); None: the
    client starts at the Free plan's and adopts what the service says."""
    time_scale: float = 1.0
    """``BATCH_TIME_SCALE``: service seconds per real second (the emulator's
    ``--time-scale``; 1 against the service)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings of ``env`` (default: ``os.environ``), defaults for the rest.

        Raises:
            ValueError: A variable holds what it cannot.
        """
        env = os.environ if env is None else env
        plan = env.get("BATCH_PLAN", "").strip().lower() or None
        if plan is not None:
            Plan(plan)  # ValueError for an unknown plan
        retry_after = env.get("BATCH_LOCKED_RETRY_AFTER", "").strip()
        return cls(
            broker_url=env.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1"),
            result_backend=env.get("CELERY_RESULT_BACKEND", "redis://127.0.0.1:6379/2"),
            journal_redis=env.get("BATCH_JOURNAL_REDIS", "redis://127.0.0.1:6379/0").rstrip("/"),
            visibility_timeout=_seconds(env, "BATCH_VISIBILITY_TIMEOUT", 7200.0),
            restore_interval=_seconds(env, "BATCH_RESTORE_INTERVAL", 60.0),
            journal_lease=_seconds(env, "BATCH_JOURNAL_LEASE", 15.0),
            settle_window=_seconds(env, "BATCH_SETTLE_WINDOW", 600.0),
            spacing=_seconds(env, "BATCH_SPACING", 1.0),
            locked_retry_after=(
                _seconds(env, "BATCH_LOCKED_RETRY_AFTER", 1.0) if retry_after else None
            ),
            max_retries=int(env.get("BATCH_MAX_RETRIES", "240")),
            plan=plan,
            time_scale=_seconds(env, "BATCH_TIME_SCALE", 1.0),
        )

    def journal_url(self, name: str) -> str:
        """The journal of the batch ``name``: ``redis://HOST:PORT/DB/NAME``."""
        return f"{self.journal_redis}/{name}"

    @property
    def retry_after(self) -> float:
        """Seconds before a delivery refused by the journal's lease tries again."""
        return self.journal_lease if self.locked_retry_after is None else self.locked_retry_after

    def rate_limit(self) -> RateLimit | None:
        """The plan's limit in real time (scaled when the service's clock runs faster)."""
        if self.plan is None:
            return None
        limit = Plan(self.plan).rate_limit
        return limit if self.time_scale == 1.0 else limit.scaled(self.time_scale)

    def polling(self) -> PollPolicy | None:
        """The client's polling, scaled like the service's clock; None (the SDK's
        default) at scale 1."""
        if self.time_scale == 1.0:
            return None
        usual = PollPolicy()
        return PollPolicy(
            min_interval=usual.min_interval / self.time_scale,
            max_interval=usual.max_interval / self.time_scale,
        )
