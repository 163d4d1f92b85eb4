"""The status of a batch whose journal is in Redis, read by any process without its lease
(:func:`read_redis_status`; ``client.batch_status("redis://.../NAME")``).

It reads the journal's ``head``, its lease (the holder, its fencing number, the lease's
length, the time left) and its rows a page at a time (the same ``HSCAN`` script a run
opens with), and writes nothing: the run holding the journal goes on. The last beat is
Redis's clock (``TIME``) less the part of the lease already gone.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from asyncclient.batch.journal_table import EVENTS
from asyncclient.batch.status import BatchStatus, Tally
from asyncclient.errors import FleetError
from asyncclient.fleet.faults import redis_errors
from asyncclient.fleet.journal_lease import parse_holder, parse_url
from asyncclient.fleet.journal_rows import SCAN
from asyncclient.fleet.store import redis_from

__all__ = ["read_redis_status"]

PAGE = 2000
"""Rows read at once."""


async def read_redis_status(url: str) -> BatchStatus:
    """What the Redis journal at ``url`` says of its batch.

    Raises:
        ValidationError: Not a journal URL (naming the rule).
        ValueError: A record that does not read (a damaged journal).
        FleetError: Redis could not be read.
    """
    where = parse_url(url)
    prefix = f"asyncclient:journal:{where.name}"
    client, _ = redis_from(where.database)
    try:
        scan = client.register_script(SCAN)
        async with client.pipeline(transaction=True) as pipe:
            pipe.hget(f"{prefix}:head", "batch")
            pipe.get(f"{prefix}:lease")
            pipe.pttl(f"{prefix}:lease")
            pipe.time()
            batch, lease, left_ms, (seconds, micros) = await pipe.execute()
        tally = Tally()
        cursor: Any = 0
        while True:
            cursor, page = await scan(keys=[f"{prefix}:rows"], args=[cursor, PAGE])
            _add_page(tally, page, where.shown)
            if int(cursor) == 0:
                break
    except redis_errors() as exc:
        raise FleetError(f"{where.shown}: could not read the journal ({exc!r})") from exc
    finally:
        await client.aclose()
    now = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(
        seconds=int(seconds), microseconds=int(micros)
    )
    holder: dict[str, Any] = {"running": lease is not None}
    if lease is not None:
        value = lease.decode() if isinstance(lease, bytes) else str(lease)
        parts = value.split(" ")
        pid, host = parse_holder(value)
        holder["holder"] = f"pid {pid} on {host}" if pid is not None else parts[0]
        holder["fence"] = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        if int(left_ms) >= 0:
            holder["lease_left"] = int(left_ms) / 1000
            if len(parts) > 2 and parts[2].isdigit():  # the lease's length: since the beat
                age = max(int(parts[2]) - int(left_ms), 0)
                holder["beat_age"] = age / 1000
                holder["last_beat"] = now - timedelta(milliseconds=age)
    name = batch.decode() if isinstance(batch, bytes) else batch
    return tally.status(where.shown, name, **holder)


def _add_page(tally: Tally, page: bytes, where: str) -> None:
    """Add a page of ``row<TAB>record`` lines (see :func:`~.journal_rows.pack`)."""
    for line in page.split(b"\n") if page else ():
        _, _, raw = line.partition(b"\t")
        try:
            items = json.loads(raw)
            code = items[0]
            if type(code) is not int or not 0 < code < len(EVENTS):
                raise ValueError("no such event")
            items += [None] * (12 - len(items))
        except (ValueError, TypeError, IndexError) as exc:
            raise ValueError(f"{where}: damaged, a record does not read ({exc})") from None
        tally.add(EVENTS[code], items[5], items[3], items[11])
