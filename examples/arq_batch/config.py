"""The worker's settings, read from its environment (arq's settings are a class, made at
import; the SDK's are read once a worker starts, by :func:`Config.from_env`)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from asyncclient import AsyncClient, Plan, PollPolicy

__all__ = ["NAME", "QUEUE_REDIS", "Config"]

QUEUE_REDIS = os.environ.get("ARQ_BATCH_QUEUE_REDIS", "redis://127.0.0.1:6379/1")
"""arq's own Redis (its queue, the jobs, their results): ``ARQ_BATCH_QUEUE_REDIS``."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A batch's name: it names the arq job (``batch:<name>``) and the journal."""


@dataclass(frozen=True)
class Config:
    """What the job needs besides its arguments (plain values, no secret: the API key
    and the service's URL are the SDK's own ``ASYNCCLIENT_API_KEY`` and
    ``ASYNCCLIENT_BASE_URL``, read by :class:`~asyncclient.AsyncClient` itself)."""

    journal_redis: str = field(repr=False)
    """``redis://[:PASSWORD@]HOST:PORT/DB`` of the journals: a Redis whose AOF is synced
    on every write (``appendfsync always``), or one with replicas."""
    journal_lease: float = 15.0
    """Seconds a dead worker's journal lease outlives it (the SDK's default)."""
    settle_window: float = 600.0
    """Seconds a row cut off while its request was leaving waits before it is sent again
    (the SDK's default: a request may reach the service late)."""
    claim: float = 30.0
    """Seconds a dead worker's arq claim on the job outlives it (see ``worker.claimed``)."""
    spacing: float = 1.0
    """Least seconds between two creations' starts (the service advises about one)."""
    plan: str | None = None
    """The team's plan (``free``, ``starter``, ``pro``, ``premium``): sizes the rate
    limit; None: the SDK's default (the Free plan's, then what the service announces)."""
    time_scale: float = 1.0
    """Service seconds per real second: the emulator's ``--time-scale``; 1 for the
    service."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """The settings of ``env`` (the process's environment by default).

        Raises:
            ValueError: ``ARQ_BATCH_JOURNAL_REDIS`` is missing or not a Redis URL with
                a database number, or a number is not a positive one.
        """
        env = os.environ if env is None else env
        where = env.get("ARQ_BATCH_JOURNAL_REDIS", "")
        parts = urlsplit(where)
        if parts.scheme not in ("redis", "rediss") or not parts.path.strip("/").isdigit():
            raise ValueError(
                "ARQ_BATCH_JOURNAL_REDIS must name the journals' Redis database: "
                "redis://[:PASSWORD@]HOST:PORT/DB"
            )

        def seconds(variable: str, default: float) -> float:
            try:
                value = float(env.get(variable) or default)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{variable} must be a number above 0, not {env[variable]!r}")
            return value

        return cls(
            journal_redis=where.rstrip("/"),
            journal_lease=seconds("ARQ_BATCH_JOURNAL_LEASE", cls.journal_lease),
            settle_window=seconds("ARQ_BATCH_SETTLE_WINDOW", cls.settle_window),
            claim=seconds("ARQ_BATCH_CLAIM", cls.claim),
            spacing=seconds("ARQ_BATCH_SPACING", cls.spacing),
            plan=env.get("ARQ_BATCH_PLAN") or None,
            time_scale=seconds("ARQ_BATCH_TIME_SCALE", cls.time_scale),
        )

    def journal_url(self, name: str) -> str:
        """The journal of the batch ``name``: the same for every delivery of its job."""
        if NAME.fullmatch(name) is None:
            raise ValueError(f"a batch name is 1 to 100 of A-Z a-z 0-9 . _ -, not {name!r}")
        return f"{self.journal_redis}/{quote(name, safe='')}"

    def client(self) -> AsyncClient:
        """The worker's client: its key and the service's URL from the environment, its
        rate limit (and polling) scaled when the service's clock runs faster."""
        limit = None if self.plan is None else Plan(self.plan).rate_limit
        polling = None
        if self.time_scale != 1.0:
            limit = (limit or Plan.FREE.rate_limit).scaled(self.time_scale)
            usual = PollPolicy()
            polling = PollPolicy(
                min_interval=usual.min_interval / self.time_scale,
                max_interval=usual.max_interval / self.time_scale,
            )
        return AsyncClient(plan=limit, polling=polling)
