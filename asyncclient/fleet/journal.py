"""A batch's journal in Redis: a :class:`~asyncclient.batch.store.JournalStore` that any
process reaching the Redis can resume, named by a URL
``redis://[:PASSWORD@]HOST:PORT/DB/NAME`` (or ``rediss://``), NAME naming the batch.

It keeps the file journal's promises (:mod:`asyncclient.batch.journal`):

- **Bound to its batch and its API key.** ``<prefix>:head``, a hash, names the batch,
  the version and the key's :func:`~asyncclient.batch.journal_lock.key_id` (a hash,
  never the key): a journal of another key is refused
  (:class:`~asyncclient.errors.JournalKeyError`), of another batch too (``ValueError``).
- **Events by the journal's state table** (:data:`asyncclient._states.JOURNAL`).
- **Durable before paid.** ``submit``, ``accepted`` and ``rejected`` return once durable
  (:func:`~asyncclient.fleet.journal_lease.durability`); ``done`` is not waited for.
- **One runner at a time, fenced.** Opening takes ``<prefix>:lease`` (refused with
  :class:`~asyncclient.errors.JournalLockedError` while its holder lives); a beat and
  every write renew it (:data:`LEASE_SECONDS`); a dead runner is replaced once it
  lapses. A run that lost it writes no record (each write is a Lua script checking the
  lease's value and fence first:
  :class:`~asyncclient.fleet.journal_lease.JournalFencedError`) and sends no creation
  (:meth:`RedisJournal.ensure_held`); rows it was sending settle from its lease's end.
- **A write that fails stops the journal.** A Redis error while writing becomes
  :class:`~asyncclient.errors.JournalWriteError`, and every later record is refused (a
  row whose ``submit`` may not be recorded is never sent); elsewhere Redis errors
  become :class:`~asyncclient.errors.FleetError`, never an error of ``redis``.

The rows: ``<prefix>:rows``, a hash of row number to the row's last state as a short
JSON array (:func:`pack`), about 205 bytes a finished row. Opening reads it in bulk
(``HSCAN``); then ``event_of``, ``counts``, ``owns`` and ``open_rows`` are answered from
memory (a byte a row, a digest a project, open rows whole); a finished row's state is
read back when asked for (``journal.rows[i]``), a block at a time. The keys, under
``asyncclient:journal:<NAME>:``: ``head``, ``rows``, ``lease``, ``fence``, ``held``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from attrs import evolve

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient._states import JOURNAL, JournalEvent
from asyncclient.batch.digests import digest_of
from asyncclient.batch.journal_table import MAX_ROWS, RowState, fold
from asyncclient.errors import FleetError, JournalKeyError
from asyncclient.fleet.faults import redis_errors
from asyncclient.fleet.journal_group import GroupWriter, Queued, running_loop
from asyncclient.fleet.journal_lease import (
    Durability,
    JournalDurabilityError,
    JournalFencedError,
    Lease,
    durability,
    is_journal_url,
    parse_url,
)
from asyncclient.fleet.journal_rows import SCAN as SCAN_PAGE
from asyncclient.fleet.journal_rows import RowsView, RowTable, pack, unpack
from asyncclient.fleet.store import CONNECT_SECONDS, IO_SECONDS

if TYPE_CHECKING:
    from asyncclient.batch.store import JournalStore

__all__ = [
    "LEASE_SECONDS",
    "JournalDurabilityError",
    "JournalFencedError",
    "RedisJournal",
    "is_journal_url",
    "open_redis_journal",
    "pack",
    "unpack",
]

logger = logging.getLogger("asyncclient")

VERSION = 1
LEASE_SECONDS = 15.0
"""How long a runner's lease lasts without a beat or a write: a runner that died is
replaced this long after its last one."""
BLOCK = 512
"""Finished rows read back from Redis at once."""
SCAN = 10_000
"""Rows read at once when opening."""

_SYNCED = frozenset({JournalEvent.SUBMIT, JournalEvent.ACCEPTED, JournalEvent.REJECTED})
_TASKS: set[asyncio.Task[Any]] = set()  # closing clients, kept until done


class RedisJournal:
    """A batch's journal in Redis, held by one runner (open it with
    :func:`open_redis_journal`).

    Attributes:
        url: The journal's URL, without its password.
        name: The batch's name in Redis.
        durability: How records of money are made durable.
        holding: The lease's value this runner holds (its fencing number in it).
    """

    def __init__(
        self,
        url: str,
        batch_id: str,
        *,
        now: Callable[[], datetime],
        key: str | None,
        clock: Clock,
        lease_seconds: float,
    ) -> None:
        where = parse_url(url)
        self.url = where.shown
        self.name = where.name
        self.batch_id = batch_id
        self.key = key
        self.now = now
        self.clock = clock
        self.prefix = f"asyncclient:journal:{where.name}"
        self.recorded_key: str | None = None
        self.table = RowTable()
        """Every row's last event, open rows whole, the projects' digests."""
        self._block: tuple[int, list[Any]] = (-1, [])  # finished rows read back
        self._beat: asyncio.Task[None] | None = None
        import redis
        import redis.asyncio as aioredis

        options = {"socket_connect_timeout": CONNECT_SECONDS, "socket_timeout": IO_SECONDS}
        clients: tuple[Any, Any] = (aioredis.from_url, redis.Redis.from_url)  # (see redis_from)
        self._aredis: Any = clients[0](where.database, **options)
        self._redis: Any = clients[1](where.database, **options)
        self._refused: tuple[type[BaseException], ...] = (redis.exceptions.ResponseError,)
        self._scan = self._aredis.register_script(SCAN_PAGE)
        lease_ms = max(1, int(lease_seconds * 1000))
        self.lease = Lease(self._aredis, self._redis, self.prefix, self.url, lease_ms, clock)
        """This run's lease, and the fenced writes made under it."""
        self.writer = GroupWriter(self.lease, self.url, self._apply)
        """Writes the records of a running batch a group at a time."""

    @property
    def holding(self) -> str | None:
        """The lease's value this run holds (its fencing number in it), None once lost."""
        return self.lease.holding

    @property
    def durability(self) -> Durability:
        """How records of money are made durable."""
        return self.lease.durability

    def __repr__(self) -> str:
        return f"<RedisJournal {self.url} holding={self.holding!r}>"

    def key_of(self, part: str) -> str:
        """A Redis key of this journal."""
        return f"{self.prefix}:{part}"

    # -- opening ---------------------------------------------------------------------------

    async def _open(self, accept_journal_loss: bool) -> None:
        self.lease.durability = await durability(
            self._aredis,
            shown=self.url,
            accept_journal_loss=accept_journal_loss,
            refused=self._refused,
        )
        await self.lease.take()
        head = await self._aredis.hgetall(self.key_of("head"))
        head = {_text(k): _text(v) for k, v in head.items()}
        if head and head.get("batch") != self.batch_id:
            raise ValueError(
                f"{self.url} is the journal of another batch; use another name for these rows"
            )
        self.recorded_key = head.get("key") or None
        if self.key and self.recorded_key and self.recorded_key != self.key:
            raise JournalKeyError(
                f"{self.url} belongs to another API key (the journal's key id is "
                f"{self.recorded_key}, this key's is {self.key}): run it with the key that "
                "started it, or give this key a new journal name",
                path=self.url,
            )
        await self._load()
        self._after_lapse()
        if not head or (self.key and self.recorded_key is None):
            fields: dict[str, str] = {"batch": self.batch_id, "version": str(VERSION)}
            if self.key:
                fields["key"] = self.key
            await self.lease.awrite("head", fields, "batch", None, durable=True)
            self.recorded_key = self.key or self.recorded_key
        self._beat = asyncio.get_running_loop().create_task(self.lease.beating())

    def _after_lapse(self) -> None:
        """Rows the last run was sending when its lease lapsed (it may have been paused
        after its last check of the lease, not dead) settle from that lease's end."""
        if (ended := self.lease.previous_end) is not None:
            moved = self.table.sent_no_earlier(self.now() - timedelta(seconds=ended))
            if moved:
                logger.warning("%s: %d rows settle from the last run's lease end", self.url, moved)

    async def _load(self) -> None:
        """Read every row's state in bulk, a page at a time."""
        cursor: Any = 0
        while True:
            cursor, page = await self._scan(keys=[self.key_of("rows")], args=[cursor, SCAN])
            self.table.read_page(page, self.url)
            if int(cursor) == 0:
                break

    # -- what the journal knows ----------------------------------------------------------

    @property
    def rows(self) -> Mapping[int, RowState]:
        """What the journal knows of each row, by row number (read-only); a finished
        row's state is read back from Redis when asked for."""
        return RowsView(self.table, self.state)

    def event_of(self, index: int) -> JournalEvent:
        """The row's last event (``none``: the journal has no record of it)."""
        return self.table.event_of(index)

    def counts(self) -> dict[JournalEvent, int]:
        """How many rows have each last event."""
        return self.table.counts()

    def owns(self, project_id: str) -> bool:
        """Whether a record names this project (a row of the batch owns it)."""
        return digest_of(project_id) in self.table.projects

    def open_rows(self) -> Iterator[RowState]:
        """The rows whose last event is ``submit`` or ``accepted``, by row number."""
        return iter([self.table.open[index] for index in sorted(self.table.open)])

    def state(self, index: int) -> RowState | None:
        """What the journal knows of the row (None: nothing)."""
        event = self.table.event_of(index)
        if event is JournalEvent.NONE:
            return None
        if event in (JournalEvent.SUBMIT, JournalEvent.ACCEPTED):  # open: kept whole
            return self.table.open[index]
        return unpack(index, self._read_back(index))[0]

    def _read_back(self, index: int) -> Any:
        start, raws = self._block
        if not start <= index < start + len(raws) or raws[index - start] is None:
            start = index - index % BLOCK
            fields = list(range(start, min(start + BLOCK, len(self.table.codes))))
            try:
                raws = self._redis.hmget(self.key_of("rows"), fields)
            except redis_errors() as exc:
                raise FleetError(f"{self.url}: reading row {index} failed ({exc!r})") from exc
            self._block = (start, raws)
        raw = raws[index - start]
        if raw is None:
            raise ValueError(f"{self.url}: row {index}'s record is gone: changed while in use")
        return raw

    # -- records ---------------------------------------------------------------------------

    def ensure_held(self, row: int) -> None:
        """Raise :class:`JournalFencedError` unless this run surely holds the journal now:
        called right before each creation of ``row`` leaves (see ``Lease.ensure_held``)."""
        self.lease.ensure_held(row)

    def record(self, event: JournalEvent, index: int, fingerprint: str, **data: Any) -> RowState:
        """Record an event of a row (the events of money durable before it returns):
        one blocking round trip to Redis. A ``done`` record written while a loop runs
        (a row's end, which moves no money) joins the next group write instead and is
        not waited for, as the file journal's ``done`` is flushed, not synced; closing
        writes what is still queued, and a failure to write it stops the journal as any
        other.

        Raises:
            ValueError: The event may not follow the row's last one, or ``index`` is no
                row number (a bug: nothing is written).
            JournalFencedError: Another run took the lease: nothing was written.
            JournalWriteError: Redis failed (the record may or may not be there); every
                later record is refused too.
        """
        state, fields, earlier = self._prepare(event, index, fingerprint, data)
        if event not in _SYNCED and running_loop() is not None:
            self.writer.add(Queued(str(event.value), index, state, earlier, fields), wait=False)
            return state
        self.lease.write("rows", fields, str(event.value), index, durable=event in _SYNCED)
        return self._apply(index, state, earlier)

    async def arecord(
        self, event: JournalEvent, index: int, fingerprint: str, **data: Any
    ) -> RowState:
        """:meth:`record` for a running batch, without blocking the loop: the records
        that rows write meanwhile go to Redis together, in one fenced script (and one
        ``WAIT``), the group commit of the file journal."""
        state, fields, earlier = self._prepare(event, index, fingerprint, data)
        await self.writer.add(Queued(str(event.value), index, state, earlier, fields))
        return state

    def _prepare(
        self, event: JournalEvent, index: int, fingerprint: str, data: dict[str, Any]
    ) -> tuple[RowState, dict[str, bytes], list[str]]:
        if type(index) is not int or not 0 <= index < MAX_ROWS:
            raise ValueError(f"journal: {index!r} is not a row number")
        JOURNAL.check(self.event_of(index), event)
        self.lease.check(str(event.value), index)
        record: dict[str, Any] = {"ev": event.value, "i": index, "fp": fingerprint, **data}
        if event is JournalEvent.SUBMIT:
            record["at"] = self.now().isoformat()
        record = {k: v for k, v in record.items() if v is not None}
        before = self.state(index)
        state = fold(None if before is None else evolve(before), index, [record])
        earlier = list(self.table.earlier.get(index, ()))
        if before and before.project_id and before.project_id != state.project_id:
            earlier.append(before.project_id)
        return state, {str(index): pack(state, earlier)}, earlier

    def _apply(self, index: int, state: RowState, earlier: list[str]) -> RowState:
        self.table.apply(index, state, earlier)
        start, raws = self._block
        if start <= index < start + len(raws):
            raws[index - start] = None  # read it anew
        return state

    # -- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Give the journal up: the records still queued written first (``done``
        records not waited for), then its lease (another run may take it at once) and
        its connections."""
        self.writer.write_now()
        self._give_up()
        with contextlib.suppress(RuntimeError):  # no loop: the connections just go
            task = asyncio.get_running_loop().create_task(self._aredis.aclose())
            _TASKS.add(task)
            task.add_done_callback(_TASKS.discard)

    async def aclose(self) -> None:
        """:meth:`close`, waiting for the connections to close."""
        self.writer.write_now()
        self._give_up()
        with contextlib.suppress(*redis_errors()):
            await self._aredis.aclose()

    def _give_up(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        self.lease.release()
        self._redis.close()


def _text(value: Any) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


if TYPE_CHECKING:  # the batch's protocol, checked by mypy

    def _a_store(journal: RedisJournal) -> JournalStore:
        return journal


async def open_redis_journal(
    url: str,
    batch_id: str,
    *,
    now: Callable[[], datetime] = SYSTEM_CLOCK.now,
    key: str | None,
    accept_journal_loss: bool = False,
    clock: Clock = SYSTEM_CLOCK,
    lease_seconds: float = LEASE_SECONDS,
) -> RedisJournal:
    """Take the Redis journal ``url`` names for one run: ask its Redis what it promises,
    take the lease, read the rows, and keep the lease while the run lasts.

    Args:
        url: ``redis://[:PASSWORD@]HOST:PORT/DB/NAME`` (or ``rediss://``).
        batch_id: Identifies the batch's rows; a journal of other rows is refused.
        now: The wall clock that stamps ``submit`` records (UTC).
        key: The :func:`~asyncclient.batch.journal_lock.key_id` of the run's API key;
            a journal of another key is refused. None: not checked.
        accept_journal_loss: Open on a Redis that can lose writes it acknowledged (a
            crash may lose a submission, and its row be paid for twice).
        clock: What the lease's beat sleeps by.
        lease_seconds: How long the lease lasts without a beat or a write.

    Raises:
        ValueError: Not such a URL; the journal of another batch, or damaged.
        JournalDurabilityError: The Redis can lose acknowledged writes (see above).
        JournalLockedError: Another run holds the lease.
        JournalKeyError: It belongs to another API key.
        JournalWriteError: Its header could not be written.
        FleetError: Redis failed.
        ImportError: The ``redis`` extra is not installed.
    """
    journal = RedisJournal(
        url, batch_id, now=now, key=key, clock=clock, lease_seconds=lease_seconds
    )
    try:
        await journal._open(accept_journal_loss)
    except BaseException as exc:
        await journal.aclose()
        if isinstance(exc, redis_errors()) and not isinstance(exc, FleetError):
            raise FleetError(f"{journal.url}: opening the journal failed ({exc!r})") from exc
        raise
    return journal
