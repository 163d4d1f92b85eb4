"""What a batch's journal says of it, read by any process while the batch runs or after:
``await client.batch_status(journal)``, ``asyncclient batch status JOURNAL``.

Reading takes no lock and writes nothing: the run holding the journal goes on. A file
journal is read line by line (its last line a row wrote tells its state); a Redis one
(``redis://.../NAME``) by the reader the client hands in (the fleet's), a page of rows at
a time. Both feed a :class:`Tally` with each row's last state, and give a
:class:`BatchStatus`.

The outcomes (:attr:`BatchStatus.outcomes`) are those of a batch's results, plus two
for rows the journal shows between sending and an end: ``sending`` (a ``submit``
recorded, no answer of the service yet: in flight, or cut off and to be reconciled by the
next run) and ``submitted`` (accepted by the service, its video not known finished).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from attrs import field, frozen

from asyncclient._states import JournalEvent
from asyncclient.batch.journal_lock import _kernel_holder, _said_at, sidecar_of
from asyncclient.batch.store import is_store_url
from asyncclient.errors import ValidationError

__all__ = ["BatchStatus", "StatusReader", "Tally", "batch_status", "file_status"]

StatusReader = Callable[[str], Awaitable["BatchStatus"]]
"""Reads the status of a journal named by a URL (the client's: the Redis one)."""

SENDING = "sending"
SUBMITTED = "submitted"


def _counts(value: Mapping[str, int]) -> dict[str, int]:
    return dict(value)


@frozen(kw_only=True)
class BatchStatus:
    """A batch as its journal shows it.

    Attributes:
        journal: The journal (its path, or its URL without the password).
        batch_id: The batch's identity its header records (None: no header yet).
        rows: Rows the journal has a record of (rows never reached have none).
        outcomes: How many rows have each outcome: ``completed``, ``failed``,
            ``rejected``, ``skipped``, ``unresolved``, ``not_sent``, ``submitted``
            (accepted, not finished) and ``sending`` (sent, no answer recorded).
        charged_rows: Rows the service accepted (it made their projects): those it
            may charge.
        credits: What the service charged the rows whose charge the journal records
            (a batch records it when it reads each video's detail: ``read_charges``,
            on for ``asyncclient batch``).
        credits_unknown: Charged rows whose charge the journal does not record.
        running: Whether a run holds the journal now.
        holder: Who holds it (``pid N on HOST``), None when nobody does or it does not
            say.
        fence: The holder's fencing number (a Redis journal: each run that took it
            got a higher one).
        last_beat: When the holder last renewed its lease (a Redis journal; by Redis's
            clock), None otherwise.
        beat_age: Seconds since that beat (the lease's length less its time left).
        lease_left: Seconds before the holder's lease lapses without a beat (a Redis
            journal): a run that died is replaced after it.
    """

    journal: str
    batch_id: str | None
    rows: int
    outcomes: Mapping[str, int] = field(converter=_counts)
    charged_rows: int
    credits: int
    credits_unknown: int
    running: bool
    holder: str | None = None
    fence: int | None = None
    last_beat: datetime | None = None
    beat_age: float | None = None
    lease_left: float | None = None

    @property
    def pending(self) -> int:
        """Rows sent whose end the journal does not know yet (``sending`` and
        ``submitted``, and ``unresolved``): what a next run takes up."""
        return sum(self.outcomes.get(name, 0) for name in (SENDING, SUBMITTED, "unresolved"))

    def to_json(self) -> dict[str, Any]:
        """The status as a JSON object (camelCase, as the command line's ``--json``)."""
        return {
            "journal": self.journal,
            "batchId": self.batch_id,
            "rows": self.rows,
            "outcomes": dict(sorted(self.outcomes.items())),
            "pending": self.pending,
            "chargedRows": self.charged_rows,
            "credits": self.credits,
            "creditsUnknown": self.credits_unknown,
            "running": self.running,
            "holder": self.holder,
            "fence": self.fence,
            "lastBeat": self.last_beat.isoformat() if self.last_beat else None,
            "beatAge": self.beat_age,
            "leaseLeft": self.lease_left,
        }


class Tally:
    """Counts rows by outcome and adds up their charges, one row's last state at a time."""

    def __init__(self) -> None:
        self.rows = 0
        self.outcomes: dict[str, int] = {}
        self.charged_rows = 0
        self.credits = 0
        self.credits_unknown = 0

    def add(
        self, event: JournalEvent, status: str | None, project: str | None, credits: Any
    ) -> None:
        """A row whose last record is ``event``; ``status`` its ``done`` status,
        ``project`` the project the service made, ``credits`` its recorded charge."""
        if event is JournalEvent.NONE:
            return
        self.rows += 1
        if event is JournalEvent.SUBMIT:
            name = SENDING
        elif event is JournalEvent.ACCEPTED:
            name = SUBMITTED
        elif event is JournalEvent.REJECTED:
            name = "rejected"
        else:
            name = status or "unresolved"
        self.outcomes[name] = self.outcomes.get(name, 0) + 1
        if project and name != "rejected":
            self.charged_rows += 1
            if type(credits) is int and credits > 0:
                self.credits += credits
            else:
                self.credits_unknown += 1

    def status(self, journal: str, batch_id: str | None, **holder: Any) -> BatchStatus:
        """The :class:`BatchStatus` of what was added."""
        return BatchStatus(
            journal=journal,
            batch_id=batch_id,
            rows=self.rows,
            outcomes=self.outcomes,
            charged_rows=self.charged_rows,
            credits=self.credits,
            credits_unknown=self.credits_unknown,
            **holder,
        )


def file_status(path: str | os.PathLike[str]) -> BatchStatus:
    """The status of a journal file, read line by line without its lock (a blocking
    call: a million rows take a few seconds).

    Raises:
        ValidationError: No such journal file.
        ValueError: A line that is not a journal record (a damaged journal).
    """
    where = Path(path)
    rows: dict[int, tuple[JournalEvent, str | None, str | None, Any]] = {}
    batch_id: str | None = None
    try:
        handle = where.open("rb")
    except FileNotFoundError:
        raise ValidationError([f"journal: no journal file at {where}"]) from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith(b"\n"):
                break  # a line being written (or torn): the next read sees it whole
            try:
                record = json.loads(line)
                if record.get("ev") == "batch":  # the header
                    batch_id = str(record.get("batch"))
                    continue
                index, event = int(record["i"]), JournalEvent(record["ev"])
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"{where}: line {number} is not a journal record") from None
            _, status, project, credits = rows.get(index, (event, None, None, None))
            rows[index] = (
                event,
                record.get("status", status),
                record.get("project") or project,
                record.get("credits", credits),
            )
    tally = Tally()
    for state in rows.values():
        tally.add(*state)
    holder = _file_holder(where)
    return tally.status(str(where), batch_id, running=holder is not None, holder=holder)


def _file_holder(journal: Path) -> str | None:
    """Who holds a journal file's lock now (the kernel's lock table, and what its lock
    file says), None when nobody does."""
    try:
        pid = _kernel_holder(os.stat(journal))
    except OSError:
        return None
    if pid is None:
        return None
    said = _said_at(sidecar_of(journal))
    host = said.get("host") if said.get("pid") == pid else None
    return f"pid {pid}" + (f" on {host}" if isinstance(host, str) else "")


async def batch_status(
    journal: str | os.PathLike[str], *, reader: StatusReader | None = None
) -> BatchStatus:
    """What ``journal`` (a file's path, or a ``redis://`` / ``rediss://`` URL read by
    ``reader``) says of its batch, read while it runs or after.

    Raises:
        ValidationError: No such journal file, or a URL and no reader.
        ValueError: A damaged journal.
        FleetError: Redis could not be read.
    """
    if is_store_url(journal):
        if reader is None:
            raise ValidationError(
                ["journal: a Redis journal's status is read by a client (client.batch_status)"]
            )
        return await reader(str(journal))
    import asyncio

    return await asyncio.to_thread(file_status, journal)
