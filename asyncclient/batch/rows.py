"""What a batch works on and reports: rows ready to submit, results, progress, settings."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypedDict

import attrs
from attrs import frozen

from asyncclient._states import RowOutcome
from asyncclient.awaiting.jobs import DEFAULT_WAIT_TIMEOUT
from asyncclient.batch.settle import SETTLE_WINDOW
from asyncclient.errors import ValidationError
from asyncclient.http.prepared import PreparedCreation, check_creation
from asyncclient.models.requests import CreationRequest, TemplateGenerationRequest
from asyncclient.models.videos import VideoDetail

MAX_OPEN = 10_000
"""Rows a batch keeps open (sent and not finished) at most, by default."""

UNREACHABLE_AFTER = 300.0
"""Seconds without an answer of the service after which a batch stops (5 minutes)."""

__all__ = [
    "MAX_OPEN",
    "UNREACHABLE_AFTER",
    "BatchOptions",
    "BatchProgress",
    "BatchSettings",
    "Item",
    "RowResult",
    "batch_id_of",
    "items_from_requests",
    "named",
]


@frozen(kw_only=True)
class BatchSettings:
    """How a batch runs; ``client.batch`` and ``templates.generate_many`` take these as
    keyword arguments (see :class:`BatchOptions`).

    Attributes:
        spacing: Least seconds between two submissions' starts (the service advises about one).
        concurrency: Most creation requests in flight at once.
        journal: Where progress is recorded: a JSON Lines file, or a Redis URL
            ``redis://[:PASSWORD@]HOST:PORT/DB/NAME`` (``rediss://``; NAME names the
            batch) that any process can resume from; running the same batch with it
            again resumes without submitting a row twice.
        accept_journal_loss: Keep a Redis journal on a Redis that can lose writes it
            acknowledged (no AOF ``appendfsync always``, no replica to ``WAIT`` for):
            a crash of that Redis may lose a submission, and its row be paid twice.
            Refused without it.
        journal_lease: Seconds a Redis journal's lease lasts without a beat (the runner
            renews it every third of that): a runner that died is replaced this long
            after its last beat. None: 15 seconds. A file journal's lock needs none.
        on_progress: Called with a :class:`BatchProgress` after each change.
        budget: A cap on the credits the batch may be charged (with its journal:
            every run together); ``0`` sends nothing. A row is sent only while what
            remains covers the most a row may cost; the rows past it are ``skipped``.
            Every row that may have been charged counts: accepted, in flight,
            ``unresolved``, and the rows an earlier run sent (at their videos' charges
            where read). What a row may cost comes from ``cost_per_row``, or from what
            the service charged the videos of the journal's earlier rows, read before
            anything is sent; when neither tells it, a budget above 0 is refused
            before anything is sent (:class:`~asyncclient.errors.ValidationError`).
        cost_per_row: The most one row may cost, in credits (the service does not
            publish it); the larger of it and the journal rows' charges is used.
        wait_timeout: How long to wait for each video (``None``: forever); a row whose
            video is not finished by then stays ``submitted`` (never ``failed``: the
            service goes on making it), and the next run with the journal waits again.
        read_charges: Read the detail of each video this run submitted once it ended
            (one GET per row) for its ``usedCredits``, which the video list leaves
            out: ``batch.report().credits_spent`` is then what the service charged.
        settle_window: Seconds after an ambiguous submission left (its reply lost)
            during which the row stays pending and its project is looked for again
            while the batch goes on; only a look after it that finds nothing lets the
            row be sent again (see :mod:`asyncclient.batch.settle`). 10 minutes.
        unreachable_after: Seconds without any answer of the service (every attempt
            refused a connection, timed out, or met a gateway's 502/503/504) after
            which the batch stops: rows never sent end ``not_sent``, rows accepted stay
            ``submitted`` with their ids in the journal, and ``batch.report().stopped``
            says why (see :mod:`asyncclient.batch.stop`). 5 minutes; None: never stop.
        max_open: Most rows open at once: sent (or picked up from the journal) and not
            finished. The next row waits until one finishes, so a batch never runs
            further ahead of what it has seen finish than this: its memory stays bounded
            (about 8 KB an open row) and polling catches up. 10,000: a plan of 1,000
            requests a minute whose videos take 10 minutes keeps sending at full pace.
    """

    spacing: float = 1.0
    concurrency: int = 4
    journal: str | os.PathLike[str] | None = None
    journal_key: str | None = None
    """The ``key_id`` of the client's API key (the client sets it): the journal records
    it, and refuses a run with another key (``asyncclient.batch.journal``)."""
    journal_opener: Callable[..., Awaitable[Any]] | None = None
    """Opens a journal named by a URL (the client sets it: the Redis one)."""
    accept_journal_loss: bool = False
    journal_lease: float | None = None
    on_progress: Callable[[BatchProgress], None] | None = None
    budget: int | None = None
    cost_per_row: int | None = None
    wait_timeout: float | None = DEFAULT_WAIT_TIMEOUT
    read_charges: bool = False
    settle_window: float = SETTLE_WINDOW
    unreachable_after: float | None = UNREACHABLE_AFTER
    max_open: int = MAX_OPEN

    def __attrs_post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.max_open < self.concurrency:
            raise ValueError(
                f"max_open must be at least concurrency ({self.concurrency}), got {self.max_open}"
            )
        if self.unreachable_after is not None and not self.unreachable_after > 0:
            raise ValueError(
                f"unreachable_after must be more than 0 seconds (or None), "
                f"got {self.unreachable_after}"
            )
        if self.journal_lease is not None and not self.journal_lease > 0:
            raise ValueError(
                f"journal_lease must be more than 0 seconds (or None), got {self.journal_lease}"
            )
        if not self.settle_window >= 0:
            raise ValueError(f"settle_window must be 0 or more seconds, got {self.settle_window}")
        _check_credits("budget", self.budget, 0)
        _check_credits("cost_per_row", self.cost_per_row, 1)


def _check_credits(name: str, value: object, low: int) -> None:
    """A credit setting is None or a whole number of at least ``low`` (a creation
    consumes credits: a row costs at least one)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
        raise ValidationError(
            [f"{name}: must be a whole number of credits, at least {low} (or None), got {value!r}"]
        )


class BatchOptions(TypedDict, total=False):
    """The keyword arguments of a batch: the fields of :class:`BatchSettings`."""

    spacing: float
    concurrency: int
    journal: str | os.PathLike[str] | None
    accept_journal_loss: bool
    journal_lease: float | None
    on_progress: Callable[[BatchProgress], None] | None
    budget: int | None
    cost_per_row: int | None
    wait_timeout: float | None
    read_charges: bool
    settle_window: float
    unreachable_after: float | None
    max_open: int


@frozen(kw_only=True)
class RowResult:
    """The outcome of one row."""

    index: int
    """The row's position in the input (0-based)."""
    status: RowOutcome
    """``completed``, ``failed`` (the service reports the video FAILED), ``rejected``
    (bad input or refused by the service: provably nothing made, nothing paid),
    ``skipped`` (the credit budget was reached), ``unresolved`` (sent, and whether the
    service made it is not known yet: run the batch again with its journal),
    ``not_sent`` (the batch stopped before sending it: the service could not be reached)
    or ``submitted`` (accepted, its video not known finished when the run ended: the
    batch's wait ran out, the video could not be followed, or the batch stopped; it may
    be charged, and a run with the journal awaits it); compares equal to those
    strings."""
    video: VideoDetail | None = None
    """The completed (or failed) video, as the video list shows it: the detail-only
    fields (script, usedCredits, ...) may be None; ``client.videos.get`` reads them."""
    error: str | None = None
    """Why it failed, was rejected or skipped, or is still pending."""
    project_id: str | None = None
    """The row's project, once the service made it."""
    video_id: str | None = None
    """The row's video, once known."""
    title: str | None = None
    """The row's title (a template row) or name (a request), when it has one."""
    before: bool = False
    """True when an earlier run finished the row (reported from the journal: ``video``
    is None; ``client.videos.get(video_id)`` reads it)."""

    @property
    def ok(self) -> bool:
        """True when the row completed."""
        return self.status is RowOutcome.COMPLETED


@frozen(kw_only=True)
class BatchProgress:
    """A snapshot for the progress callback."""

    total: int
    submitted: int
    """Rows this run sent (a resumed batch's earlier submissions are ``resumed``)."""
    completed: int
    failed: int
    rejected: int
    skipped: int
    elapsed: float
    """Seconds since the batch started."""
    unresolved: int = 0
    """Rows sent whose fate the service could not yet tell (see ``RowResult.status``)."""
    not_sent: int = 0
    """Rows never sent because the batch stopped (the service could not be reached)."""
    resumed: int = 0
    """Rows an earlier run sent (read from the journal), awaited by this one, not resent."""
    done_before: int = 0
    """Rows an earlier run saw finished (read from the journal); counted again as
    completed or failed once this run has read them, but not in :attr:`rate`."""

    @property
    def finished(self) -> int:
        """Rows with an outcome: completed, failed, rejected, skipped, unresolved or
        not sent."""
        return (
            self.completed
            + self.failed
            + self.rejected
            + self.skipped
            + self.unresolved
            + self.not_sent
        )

    @property
    def rate(self) -> float:
        """Videos finished (completed or failed) during this run, per minute."""
        done = max(0, self.completed + self.failed - self.done_before)
        return done / self.elapsed * 60 if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until every row is finished at the current rate, if known."""
        left = self.total - self.finished
        if left == 0:
            return 0.0
        return left / self.rate * 60 if self.rate > 0 else None


@frozen
class Item:
    """A row ready to submit (checked and serialised once), or the problems keeping it back."""

    index: int
    prepared: PreparedCreation | None
    problems: tuple[str, ...] = ()
    known: str = ""
    """The fingerprint a journal recorded, for a row picked up and not rebuilt."""

    @property
    def request(self) -> CreationRequest | None:
        """The row's creation request (None when it has problems)."""
        return self.prepared.request if self.prepared else None

    @property
    def fingerprint(self) -> str:
        """A digest of the body sent: the journal tells by it whether a row changed."""
        return self.prepared.fingerprint if self.prepared else self.known

    @classmethod
    def of(cls, index: int, request: CreationRequest | None, found: Sequence[str] = ()) -> Item:
        """Check ``request`` (when the row built one) and keep every problem found."""
        problems = list(found)
        prepared = None
        if request is not None:
            prepared, more = check_creation(request, failures=True)
            problems += more
        return cls(index, None if problems else prepared, tuple(problems))


def items_from_requests(requests: Sequence[CreationRequest]) -> list[Item]:
    """Check each request; the bad ones become items with problems."""
    return [Item.of(i, r) for i, r in enumerate(requests)]


def batch_id_of(*parts: object) -> str:
    """A short stable id for a batch's journal."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def named(request: CreationRequest, name: str) -> CreationRequest:
    """The request with a name, unless it has one (a template request's name is its title)."""
    if isinstance(request, TemplateGenerationRequest) or getattr(request, "name", None):
        return request
    renamed: CreationRequest = attrs.evolve(request, name=name)
    return renamed
