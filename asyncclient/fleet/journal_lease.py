"""What a Redis journal (:mod:`asyncclient.fleet.journal`) asks of its Redis: where it
is (the journal's URL), what it promises of an acknowledged write, and the lease of one
runner with its fencing number.

A journal's URL is ``redis://[:PASSWORD@]HOST:PORT/DB/NAME`` (or ``rediss://``), NAME
naming the batch; :func:`parse_url` splits it into the URL of the database and NAME.

Durability (:func:`durability`): a ``submit`` record must survive a crash of Redis
before its request leaves. Redis acknowledges a write once it is in memory; it is on
disk at that moment only with ``appendonly yes`` and ``appendfsync always``. Otherwise
a write survives a crash of the primary only on its replicas: ``WAIT`` after the write
returns once the replicas have it. So a journal opens in one of three ways: ``fsync``
(an AOF synced on every write: durable on ack), ``replicas`` (``WAIT`` for every replica
connected at open after each record of money), or, only when the caller said so with
``accept_journal_loss=True``, ``accepted-loss``. A Redis that refuses ``CONFIG`` (a
managed one) is asked about its replicas only. Any other is refused with
:class:`JournalDurabilityError`.

The lease: ``<prefix>:lease`` holds ``<holder> <fence>`` with a time to live,
``<prefix>:fence`` the fencing number Redis increments at each take. Every write is a
Lua script that first checks the lease still holds this runner's value, renews it and
only then writes (:data:`WRITE`): a runner paused past its lease, which another runner
took meanwhile, cannot write a single record.
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

from asyncclient.errors import JournalError, JournalWriteError

__all__ = [
    "RELEASE",
    "RENEW",
    "SCAN",
    "TAKE",
    "WRITE",
    "Durability",
    "JournalDurabilityError",
    "JournalFencedError",
    "JournalUrl",
    "durability",
    "holder_id",
    "is_journal_url",
    "parse_holder",
    "parse_url",
]

# Take the lease when it is free. KEYS[1] the lease, KEYS[2] the fencing counter.
# ARGV: the holder, the lease's milliseconds. Returns {1, value} when taken, else
# {0, the holder's value, its milliseconds left}.
TAKE = """
local value = redis.call('GET', KEYS[1])
if value then return {0, value, redis.call('PTTL', KEYS[1])} end
local fence = redis.call('INCR', KEYS[2])
value = ARGV[1] .. ' ' .. fence
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return {1, value, 0}
"""

# Keep the lease. KEYS[1] the lease; ARGV: the value held, the milliseconds. 1 or 0.
RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# Let the lease go, if still ours. KEYS[1] the lease; ARGV[1] the value held.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# A page of a hash, in one string (a reply of one element reads much faster than one
# of thousands). KEYS[1] the hash; ARGV: the cursor, the count. Returns {the next
# cursor, "field<TAB>value" lines joined by newlines} (a record, JSON, has neither raw).
SCAN = r"""
local page = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local found, lines = page[2], {}
for i = 1, #found, 2 do lines[#lines + 1] = found[i] .. '\t' .. found[i + 1] end
return {page[1], table.concat(lines, '\n')}
"""

# A fenced write. KEYS[1] the lease, KEYS[2] a hash. ARGV: the lease value held, the
# lease's milliseconds, then field, value pairs for the hash. Returns 0 (nothing
# written) when the lease is not ours any more, else 1 (written, the lease renewed).
WRITE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
return 1
"""


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
        ValueError: Not such a URL (the message names the expected form).
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
        raise ValueError(f"a Redis journal is named {form}, not {_hidden(url)!r}")
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
