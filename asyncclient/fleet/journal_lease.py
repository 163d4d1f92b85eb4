"""What a Redis journal (:mod:`asyncclient.fleet.journal`) asks of its Redis: where it
is (:func:`parse_url`: ``redis://[:PASSWORD@]HOST:PORT/DB/NAME``, NAME the batch), what
it promises of an acknowledged write, and the lease of one runner.

Durability (:func:`durability`): a ``submit`` record must survive a crash of Redis before
its request leaves: ``fsync`` (AOF ``appendfsync always``: on disk when acknowledged),
``replicas`` (``WAIT`` for every replica connected at open after each record of money),
or, only with ``accept_journal_loss=True``, ``accepted-loss``; else
:class:`JournalDurabilityError`. A Redis refusing ``CONFIG`` is asked of its replicas.

The lease: ``<prefix>:lease`` holds ``<holder> <fence> <milliseconds>`` with a time to
live, ``<prefix>:fence`` the fencing number. Every write is a Lua script that checks the
lease is still this run's, renews it, then writes (:data:`WRITE`): a run paused past its
lease cannot write a record, and (:meth:`Lease.ensure_held`) sends no creation.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import uuid
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

from asyncclient._clock import Clock
from asyncclient._states import JournalEvent
from asyncclient.errors import (
    JournalError,
    JournalLockedError,
    JournalWriteError,
    ValidationError,
)
from asyncclient.fleet.faults import redis_errors
from asyncclient.fleet.journal_scripts import HELD_MS, RELEASE, RENEW, TAKE, WRITE

__all__ = [
    "RELEASE",
    "RENEW",
    "TAKE",
    "WRITE",
    "Durability",
    "JournalDurabilityError",
    "JournalFencedError",
    "JournalUrl",
    "Lease",
    "durability",
    "holder_id",
    "is_journal_url",
    "parse_holder",
    "parse_url",
]

logger = logging.getLogger("asyncclient")

WAIT_MS = 2000
"""How long a record of money waits for the replicas (``WAIT``)."""


class JournalDurabilityError(JournalError):
    """The Redis of a journal can lose writes it acknowledged (no AOF synced on every
    write, no replica to ``WAIT`` for): a ``submit`` record could vanish in a crash and
    its row be paid for twice. Refused unless ``accept_journal_loss=True``.

    Attributes:
        reason: What the Redis said of itself, in words.
    """

    def __init__(self, message: str, *, path: str, reason: str):
        super().__init__(message, path=path)
        self.reason = reason


class JournalFencedError(JournalWriteError):
    """Another runner took the journal's lease (this one was paused, or cut off from
    Redis, past the lease's time): nothing was written, the row is not sent, and every
    later record is refused."""


class JournalUrl(NamedTuple):
    """A journal's URL, split."""

    database: str
    """The URL of the Redis database (password and query kept)."""
    name: str
    """The batch's name in it."""
    shown: str
    """The journal's URL without its password (for messages and logs)."""


def is_journal_url(where: object) -> bool:
    """Whether a batch's ``journal`` setting names a Redis journal (not a file)."""
    return isinstance(where, str) and where.startswith(("redis://", "rediss://"))


def parse_url(url: str) -> JournalUrl:
    """Split ``redis://[:PASSWORD@]HOST:PORT/DB/NAME`` (or ``rediss://``).

    Raises:
        ValidationError: Not such a URL (the message names the expected form).
    """
    form = "redis://[:PASSWORD@]HOST:PORT/DB/NAME (or rediss://)"
    parts = urlsplit(url)
    db, _, name = parts.path.lstrip("/").partition("/")
    if (
        parts.scheme not in ("redis", "rediss")
        or not parts.hostname
        or not db.isdigit()
        or not name
    ):
        raise ValidationError([f"journal: a Redis journal is named {form}, not {_hidden(url)!r}"])
    database = urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, ""))
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    port = f":{parts.port}" if parts.port else ""
    shown = f"{parts.scheme}://{host}{port}/{db}/{name}"
    return JournalUrl(database, unquote(name), shown)


def _hidden(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//***@", url)


def holder_id() -> str:
    """This runner's name in a lease: its pid, host and a random part."""
    host = re.sub(r"\s", "_", socket.gethostname()) or "?"
    return f"{os.getpid()}@{host}#{uuid.uuid4().hex[:12]}"


def parse_holder(value: str) -> tuple[int | None, str | None]:
    """The pid and host of a lease's value (None where it does not say)."""
    found = re.match(r"^(\d+)@([^#\s]*)#", value)
    if found is None:
        return None, None
    return int(found.group(1)), found.group(2) or None


class Durability(NamedTuple):
    """What a journal does to make a record of money durable."""

    mode: str
    """``fsync`` (durable on ack), ``replicas`` (``WAIT``) or ``accepted-loss``."""
    replicas: int
    """The replicas to ``WAIT`` for after each record of money (0: none)."""
    said: str
    """What the Redis said of itself, in words."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def durability(
    redis: Any, *, shown: str, accept_journal_loss: bool, refused: tuple[type[BaseException], ...]
) -> Durability:
    """Ask the Redis at hand what it promises of an acknowledged write.

    Args:
        redis: A ``redis.asyncio`` client.
        shown: The journal's URL, for messages.
        accept_journal_loss: Open on a Redis that can lose acknowledged writes.
        refused: What a refused command raises (``ResponseError``: a managed Redis).

    Raises:
        JournalDurabilityError: It can lose acknowledged writes, and the caller did not
            accept that.
    """
    config: dict[str, str] | None
    try:
        raw = await redis.config_get("append*")
        config = {_text(k): _text(v) for k, v in dict(raw).items()}
    except refused:  # CONFIG is refused: a managed Redis, asked about its replicas only
        config = None
    try:
        info = await redis.info("replication")
        replicas = int(info.get("connected_slaves", 0))
    except refused:
        replicas = 0
    if config is None:
        said = "it does not show its configuration (CONFIG is refused)"
    else:
        said = (
            f"appendonly {config.get('appendonly', '?')}, "
            f"appendfsync {config.get('appendfsync', '?')}"
        )
    said += f", {replicas} replica{'s' if replicas != 1 else ''} connected"
    if config and config.get("appendonly") == "yes" and config.get("appendfsync") == "always":
        return Durability("fsync", 0, said)
    if replicas:
        return Durability("replicas", replicas, said)
    if accept_journal_loss:
        return Durability("accepted-loss", 0, said)
    raise JournalDurabilityError(
        f"{shown}: this Redis can lose writes it acknowledged ({said}), so a row's "
        "submission could be lost in a crash and the row paid for twice; configure "
        "'appendonly yes' with 'appendfsync always', or replicas (each record waits for "
        "them with WAIT), or accept the risk: accept_journal_loss=True",
        path=shown,
        reason=said,
    )


class Lease:
    """A run's lease on a journal, and every write made under it: fenced (a Lua script
    checks the lease's value first), waited for by the replicas when that is how the
    journal is durable, and, once one failed, refused from then on.

    Args:
        aredis: A ``redis.asyncio`` client (taking, beats, :meth:`awrite`).
        redis: A ``redis`` client (:meth:`write`, :meth:`release`: blocking calls).
        prefix: The journal's keys' prefix.
        shown: The journal's URL, for messages.
        lease_ms: How long the lease lasts without a beat or a write.
        clock: What beats sleep by.
    """

    def __init__(
        self, aredis: Any, redis: Any, prefix: str, shown: str, lease_ms: int, clock: Clock
    ) -> None:
        self.prefix, self.shown, self.lease_ms, self.clock = prefix, shown, lease_ms, clock
        self.holding: str | None = None
        """The lease's value this run holds (its fencing number in it), None once lost."""
        self.broken: str | None = None
        """Why records are refused (a write failed, the lease was lost), None while not."""
        self.fenced = False
        """Whether records are refused because another run took the lease."""
        self.durability = Durability("accepted-loss", 0, "")
        self.sure_until = 0.0
        """Until when (monotonic) this run surely holds the lease: half a lease after the
        start of its last confirmed renewal (a take, a beat or a write)."""
        self.previous_end: float | None = None
        """Seconds since the lease of the run before this one ended, when it ended without
        giving the lease up (it died, or was paused past it); None otherwise."""
        self._aredis, self._redis = aredis, redis
        self._ascripts = {s: aredis.register_script(s) for s in (TAKE, RENEW, WRITE)}
        self._scripts = {s: redis.register_script(s) for s in (RELEASE, RENEW, WRITE)}
        self._renew_keys = [self.key("lease"), self.key("held"), self.key("fence")]

    def key(self, part: str) -> str:
        """A Redis key of the journal."""
        return f"{self.prefix}:{part}"

    async def take(self) -> None:
        """Take the lease, or raise :class:`JournalLockedError` naming its live holder."""
        keys = [self.key("lease"), self.key("fence"), self.key("held")]
        started = self.clock.monotonic()
        answer = await self._ascripts[TAKE](keys=keys, args=[holder_id(), self.lease_ms])
        taken, value, left = int(answer[0]), _text(answer[1]), int(answer[2])
        if not taken:
            pid, host = parse_holder(value)
            raise JournalLockedError(
                f"{self.shown} is held by another run ({value.split(' ')[0]}, for "
                f"{left / 1000:.1f} s more unless it renews its lease): one run per journal",
                path=self.shown,
                pid=pid,
                host=host,
            )
        self.holding = value
        self._renewed(started)
        if int(answer[3]) > 0:  # the last holder renewed this long ago, its lease ended after
            self.previous_end = max(HELD_MS - int(answer[3]) - self.lease_ms, 0) / 1000

    async def beating(self) -> None:
        """Renew the lease every third of its time, until it is lost or given up."""
        while self.holding is not None:
            await self.clock.sleep(self.lease_ms / 3000)
            value = self.holding
            if value is None:
                return
            try:
                started = self.clock.monotonic()
                kept = await self._ascripts[RENEW](
                    keys=self._renew_keys, args=[value, self.lease_ms]
                )
            except redis_errors() as exc:  # the next write says so, or the next beat
                logger.warning("%s: could not renew the journal's lease: %r", self.shown, exc)
                continue
            if int(kept) != 1:
                self.lost()
                return
            self._renewed(started)

    def _renewed(self, started: float) -> None:
        self.sure_until = max(self.sure_until, started + self.lease_ms / 2000)

    def ensure_held(self, row: int | None) -> None:
        """Return only while this run surely holds the lease (a creation may leave now):
        known from a renewal under half a lease ago, else asked of Redis (blocking).

        Raises:
            JournalFencedError: Another run took it: the creation must not leave.
            JournalWriteError: Redis could not say.
        """
        self._held(JournalEvent.SUBMIT, row)
        if self.clock.monotonic() < self.sure_until:
            return
        started, args = self.clock.monotonic(), [self.holding, self.lease_ms]
        try:
            kept = self._scripts[RENEW](keys=self._renew_keys, args=args)
        except redis_errors() as exc:
            raise self.error(JournalEvent.SUBMIT, row, f"lease unconfirmed: {exc!r}") from exc
        self._written(kept, JournalEvent.SUBMIT, row, started)

    def lost(self) -> None:
        """Another run took the lease: every later record is refused."""
        self.broken = "another run took the journal's lease (this one was paused past it)"
        self.fenced = True
        logger.error("%s: %s", self.shown, self.broken)
        self.holding = None

    def release(self) -> None:
        """Give the lease up, if still held (a blocking call; a failure is logged: the
        lease lapses by itself)."""
        holding, self.holding = self.holding, None
        if holding is not None:
            try:
                self._scripts[RELEASE](keys=self._renew_keys, args=[holding])
            except redis_errors() as exc:
                logger.warning("%s: could not give the lease up: %r", self.shown, exc)

    def check(self, event: str, row: int | None) -> None:
        """Raise the error of a record refused because an earlier one was lost."""
        if self.broken is not None:
            reason = f"an earlier record was lost ({self.broken})"
            if self.fenced:  # found by the beat before a write found it: the same refusal
                reason = self.broken
            raise self.error(event, row, reason, fenced=self.fenced)

    def error(
        self, event: str, row: int | None, reason: str, *, fenced: bool = False
    ) -> JournalWriteError:
        """The error of a record that could not be written."""
        what = {
            "batch": "its header",
            JournalEvent.SUBMIT: f"row {row}'s submission (the row was not sent)",
            JournalEvent.ACCEPTED: f"row {row}'s acceptance by the service",
            JournalEvent.REJECTED: f"row {row}'s refusal by the service",
            JournalEvent.DONE: f"row {row}'s end",
        }.get(event, f"a {event} record")
        kind = JournalFencedError if fenced else JournalWriteError
        return kind(
            f"{self.shown}: could not record {what}: {reason}; the journal stops here",
            path=self.shown,
            event=event,
            row=row,
        )

    async def awrite(
        self, part: str, fields: dict[str, Any], event: str, row: int | None, *, durable: bool
    ) -> None:
        """Write ``fields`` into the hash ``part``, fenced; once the replicas have it
        too when ``durable`` and that is how the journal is durable.

        Raises:
            JournalFencedError: The lease is not this run's (nothing was written).
            JournalWriteError: Redis failed, or the replicas did not confirm it.
        """
        self._held(event, row)
        try:
            keys = [self.key("lease"), self.key(part), self.key("held"), self.key("fence")]
            started = self.clock.monotonic()
            answer = await self._ascripts[WRITE](keys=keys, args=self._args(fields))
            self._written(answer, event, row, started)
            if durable and self.durability.replicas:
                self._acked(await self._aredis.wait(self.durability.replicas, WAIT_MS), event, row)
        except redis_errors() as exc:
            self.broken = f"Redis failed: {exc!r}"
            raise self.error(event, row, self.broken) from exc

    def write(
        self, part: str, fields: dict[str, Any], event: str, row: int | None, *, durable: bool
    ) -> None:
        """:meth:`awrite`, blocking."""
        self._held(event, row)
        try:
            keys = [self.key("lease"), self.key(part), self.key("held"), self.key("fence")]
            started = self.clock.monotonic()
            answer = self._scripts[WRITE](keys=keys, args=self._args(fields))
            self._written(answer, event, row, started)
            if durable and self.durability.replicas:
                self._acked(self._redis.wait(self.durability.replicas, WAIT_MS), event, row)
        except redis_errors() as exc:
            self.broken = f"Redis failed: {exc!r}"
            raise self.error(event, row, self.broken) from exc

    def _held(self, event: str, row: int | None) -> None:
        if self.holding is None:
            self.broken = self.broken or "the journal is closed"
            raise self.error(event, row, self.broken, fenced=True)

    def _args(self, fields: dict[str, Any]) -> list[Any]:
        args: list[Any] = [self.holding or "", self.lease_ms]
        for name, value in fields.items():
            args += [name, value]
        return args

    def _written(self, answer: Any, event: str, row: int | None, started: float) -> None:
        if int(answer) != 1:
            self.lost()
            raise self.error(event, row, "another run took the journal's lease", fenced=True)
        self._renewed(started)

    def _acked(self, acked: Any, event: str, row: int | None) -> None:
        if int(acked) < self.durability.replicas:
            replicas = self.durability.replicas
            self.broken = f"{acked} of {replicas} replicas confirmed it within {WAIT_MS} ms"
            raise self.error(event, row, self.broken)
