"""What the processes of a fleet share through Redis, keyed by a hash of their API key.

Several worker processes (often on several machines) that hold one API key share one
rate limit and one video list. With ``AsyncClient(redis=...)`` they share, through that
Redis and under a name derived from a hash of the key (never the key itself):

- the token bucket (:class:`~asyncclient.fleet.bucket.RedisTokenBucket`);
- the deduplication of notifications (:class:`FleetStore` claims): a notification, and
  every copy of it that the service sends or retries, reaches the user's callbacks once
  across the fleet, and only once it was taken (a refused or failed copy never makes
  the genuine one count as a duplicate);
- the polling of pending jobs: each process registers the jobs it awaits (``jobs``, a
  hash of ``<process>/<job>`` to what the job follows), keeps an ``alive`` key of its
  own fresh, and competes for one ``lease``; its holder polls for every registered job
  of a live process, and publishes what it reads on the fleet's channel. The lease's
  value is its holder and a fencing number (``lease:fence``, incremented by Redis at
  each acquisition): a lease whose holder has no live ``alive`` key, or whose value
  is not one of ours, is taken over at the next beat; and every write of the holder
  (renewing, publishing) checks, atomically, that its value is still the lease's, so a
  holder that was paused past its lease and woke cannot act on it;
- job outcomes: every finished video's record (read by the lease holder, or confirmed
  from a notification) is kept for a day under its video id and its project id, so a
  process that starts awaiting a job after it finished learns it at once.

The keys, under ``asyncclient:fleet:<hash of the key>:``: ``hook:busy:*``,
``hook:seen:*`` (notifications), ``jobs``, ``alive:<process>``, ``lease``,
``lease:fence``, ``done:v:<video id>``, ``done:p:<project id>`` and the channel
``changes``.

Every method raises :class:`~asyncclient.errors.FleetError` (never an error of
``redis``) when Redis fails or answers oddly (:mod:`~asyncclient.fleet.faults`).

Install the extra: ``pip install "vidgen-asyncclient[redis]"``.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable
from typing import Any, NamedTuple

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.errors import FleetError
from asyncclient.fleet.faults import wrapped

__all__ = ["FleetStore", "Registration", "fleet_name", "redis_from"]

SEEN_SECONDS = 24 * 3600
"""How long a taken notification is remembered: the service's retries end 21 minutes
after the first attempt (spec 6); a day covers copies that come much later."""

CLAIM_SECONDS = 120.0
"""How long a process may hold a notification it is handling before another may take
it over (a process that died while handling one)."""

CONNECT_SECONDS = 5.0
"""How long connecting to a Redis given by URL may take."""

IO_SECONDS = 5.0
"""How long one command to a Redis given by URL may take (an I/O deadline: a Redis that
hangs makes the fleet fall back rather than stall every request)."""

DONE_SECONDS = 24 * 3600
"""How long a finished video's record is kept for processes that await it later."""

# Delete KEYS[1] only if it still holds ARGV[1] (a claim is released by its holder only).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# One beat of a process. KEYS[1] its alive key, KEYS[2] the lease, KEYS[3] the fencing
# counter. ARGV: the process, the alive key's and the lease's milliseconds, '1' to take
# or keep the lease ('0' to let it go), the lease value it holds ('' none), the prefix
# of alive keys. Returns {1 when it holds the lease, plus 2 when its alive key had
# lapsed; the lease value it holds ('' none); the milliseconds another's lease has
# left}. A lease is "<process> <fencing number>"; one of another shape or type, or
# whose holder's alive key lapsed, is held by no live process: taken over at once.
_BEAT = """
local lapsed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then lapsed = 2 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
local value = false
if redis.call('TYPE', KEYS[2])['ok'] == 'string' then value = redis.call('GET', KEYS[2]) end
local holder = value and string.match(value, '^(%S+) %d+$')
if ARGV[4] ~= '1' then
  if holder == ARGV[1] then redis.call('DEL', KEYS[2]) end
  return {lapsed, '', 0}
end
if value and value == ARGV[5] then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {lapsed + 1, value, 0}
end
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[6] .. holder) == 1 then
  return {lapsed, '', math.max(0, redis.call('PTTL', KEYS[2]))}
end
local fence = redis.pcall('INCR', KEYS[3])
if type(fence) ~= 'number' then  -- a damaged counter: start it again
  redis.call('DEL', KEYS[3])
  fence = redis.call('INCR', KEYS[3])
end
value = ARGV[1] .. ' ' .. fence
redis.call('SET', KEYS[2], value, 'PX', ARGV[3])
return {lapsed + 1, value, 0}
"""

# Keep finished videos' records and publish a message. KEYS[1] the lease, then each
# finished video's key and, when it has a project, its project's key. ARGV: the lease
# value the publisher holds ('' for a notification's record, which any process may
# publish), the channel, the message, the seconds records are kept, then per finished
# video: its id, '1' when a project key follows its key, its record. Returns 0 (nothing
# written) when the lease's value is not the publisher's any more, else 1.
_PUBLISH = """
if ARGV[1] ~= '' then
  if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then return 0 end
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
end
local k = 2
for i = 5, #ARGV, 3 do
  redis.call('SET', KEYS[k], ARGV[i + 2], 'EX', ARGV[4])
  k = k + 1
  if ARGV[i + 1] == '1' then
    redis.call('HSET', KEYS[k], ARGV[i], ARGV[i + 2])
    redis.call('EXPIRE', KEYS[k], ARGV[4])
    k = k + 1
  end
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""


def fleet_name(api_key: str) -> str:
    """The namespace of ``api_key``'s fleet in Redis: a hash of the key, never the key."""
    digest = hashlib.sha256(api_key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"asyncclient:fleet:{digest}"


def redis_from(redis: Any) -> tuple[Any, bool]:
    """A ``redis.asyncio.Redis`` from a URL or a client; True when we made it (and close it).

    Raises:
        ImportError: A URL was given and the ``redis`` extra is not installed.
    """
    if not isinstance(redis, str):
        return redis, False
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'redis=...: install the extra, pip install "vidgen-asyncclient[redis]"'
        ) from exc
    # A Redis that cannot be reached, or hangs, answers within seconds, not a TCP
    # timeout's minutes (the URL's own socket_connect_timeout and socket_timeout win).
    from_url: Any = aioredis.from_url  # typed from redis 6 on, not before (arq wants < 6)
    client = from_url(redis, socket_connect_timeout=CONNECT_SECONDS, socket_timeout=IO_SECONDS)
    return client, True


class Registration(NamedTuple):
    """One process's registration of a job it awaits."""

    process: str
    job: str
    """The job's key in the fleet (what it follows; see :func:`~asyncclient.fleet.wire.job_key`)."""
    spec: bytes
    """What the job follows, as the registering process wrote it."""


class FleetStore:
    """One fleet's shared state in Redis.

    Args:
        redis: A ``redis.asyncio.Redis`` client.
        api_key: Names the fleet (hashed).
        clock: Sleeps while another process holds a claim (the client's clock).
    """

    def __init__(self, redis: Any, api_key: str, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.redis = redis
        self.name = fleet_name(api_key)
        self.process = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        """This process's id in the fleet (unique across machines and restarts)."""
        self.clock = clock
        """The clock this store waits by (the client's)."""
        self.holding: str | None = None
        """The lease's value while this process holds it (its fencing number in it)."""
        self._release = redis.register_script(_RELEASE)
        self._beat = redis.register_script(_BEAT)
        self._publish = redis.register_script(_PUBLISH)

    def __repr__(self) -> str:
        return f"<FleetStore {self.name} process={self.process}>"

    def key(self, *parts: str) -> str:
        """A Redis key of this fleet."""
        return ":".join((self.name, *parts))

    # -- notifications, once across the fleet --------------------------------------------

    @wrapped("claiming a notification")
    async def claim_event(self, event_key: str, *, poll: float = 0.05) -> bool:
        """Claim a notification for this process: False when the fleet already took it.

        While another process handles a copy, this waits for its outcome: taken (then
        False), or released without being taken (then this process may handle it).
        """
        busy, seen = self.key("hook", "busy", event_key), self.key("hook", "seen", event_key)
        while True:
            if await self.redis.exists(seen):
                return False
            if await self.redis.set(busy, self.process, nx=True, px=int(CLAIM_SECONDS * 1000)):
                if await self.redis.exists(seen):  # taken between the two calls
                    await self._release(keys=[busy], args=[self.process])
                    return False
                return True
            await self.clock.sleep(poll)

    @wrapped("settling a notification")
    async def settle_event(self, event_key: str, *, taken: bool) -> None:
        """End this process's claim: remembered across the fleet when it was taken."""
        if taken:
            await self.redis.set(self.key("hook", "seen", event_key), b"1", ex=SEEN_SECONDS)
        await self._release(keys=[self.key("hook", "busy", event_key)], args=[self.process])

    # -- the shared poller: registrations, liveness, the lease ---------------------------

    @property
    def channel(self) -> str:
        """The fleet's channel, on which the lease holder publishes what moved."""
        return self.key("changes")

    @wrapped("a beat")
    async def beat(self, *, alive_ms: int, lease_ms: int, lead: bool) -> tuple[bool, bool, float]:
        """Keep this process alive for ``alive_ms``; take or keep the lease for
        ``lease_ms`` when ``lead``, else let it go.

        A lease is kept only under the fencing number this process took it with
        (:attr:`holding`); one held by no live process is taken over at once.

        Returns:
            Whether this process holds the lease now, whether its alive key had lapsed
            (the fleet may have dropped its registrations), and the seconds another
            holder's lease has left (0 when this process holds it or none does).
        """
        answer = await self._beat(
            keys=[self.key("alive", self.process), self.key("lease"), self.key("lease", "fence")],
            args=[
                self.process,
                alive_ms,
                lease_ms,
                "1" if lead else "0",
                self.holding or "",
                self.key("alive", ""),
            ],
        )
        try:
            flags, value, left = int(answer[0]), answer[1], int(answer[2])
            if isinstance(value, bytes):
                value = value.decode("utf-8", "surrogateescape")
        except (TypeError, ValueError, IndexError, KeyError) as exc:
            raise FleetError(f"fleet store: a beat answered {answer!r}") from exc
        held = bool(flags & 1)
        self.holding = str(value) if held and value else None
        return held, bool(flags & 2), left / 1000

    @wrapped("registering jobs")
    async def register(self, added: dict[str, bytes], removed: Iterable[str]) -> None:
        """Add this process's registrations (job key to spec) and drop others of its own."""
        fields = [f"{self.process}/{job}" for job in removed]
        pipe = self.redis.pipeline(transaction=False)
        if added:
            mapping = {f"{self.process}/{k}": v for k, v in added.items()}
            pipe.hset(self.key("jobs"), mapping=mapping)
        if fields:
            pipe.hdel(self.key("jobs"), *fields)
        if added or fields:
            await pipe.execute()

    @wrapped("reading registrations")
    async def registrations(self) -> list[Registration]:
        """Every registration of a live process; those of processes that ended (their
        alive key lapsed) are dropped from the shared set here."""
        raw: dict[bytes, bytes] = await self.redis.hgetall(self.key("jobs"))
        found = []
        for field, spec in raw.items():
            process, _, job = field.decode("utf-8", "surrogateescape").partition("/")
            found.append(Registration(process, job, spec))
        processes = sorted({r.process for r in found})
        if not processes:
            return []
        flags = await self.redis.mget([self.key("alive", p) for p in processes])
        gone = {p for p, flag in zip(processes, flags, strict=True) if flag is None}
        if gone:
            dead = [f"{r.process}/{r.job}" for r in found if r.process in gone]
            await self.redis.hdel(self.key("jobs"), *dead)
        return [r for r in found if r.process not in gone]

    # -- outcomes and changes --------------------------------------------------------------

    @wrapped("publishing")
    async def publish(
        self,
        message: bytes,
        finished: Iterable[tuple[str, str | None, bytes]],
        *,
        fenced: bool = True,
    ) -> bool:
        """Keep each finished video's record (video id, project id, record), then
        publish ``message`` to every listening process.

        Args:
            message: What every listening process reads.
            finished: The finished videos' records to keep.
            fenced: Write only while this process holds the lease under its fencing
                number (what the lease holder reads); False for what any process may
                tell (a notification's record).

        Returns:
            False when nothing was written: this process does not hold the lease (any
            more); :attr:`holding` is then cleared.
        """
        if fenced and self.holding is None:
            return False
        keys = [self.key("lease")]
        args: list[Any] = [self.holding if fenced else "", self.channel, message, DONE_SECONDS]
        for video_id, project_id, record in finished:
            keys.append(self.key("done", "v", video_id))
            if project_id:
                keys.append(self.key("done", "p", project_id))
            args += [video_id, "1" if project_id else "0", record]
        if await self._publish(keys=keys, args=args) == 1:
            return True
        self.holding = None
        return False

    @wrapped("reading kept outcomes")
    async def finished(self, video_ids: list[str], project_ids: list[str]) -> list[bytes]:
        """The kept records of these videos and of the videos of these projects."""
        pipe = self.redis.pipeline(transaction=False)
        if video_ids:
            pipe.mget([self.key("done", "v", v) for v in video_ids])
        for project_id in project_ids:
            pipe.hvals(self.key("done", "p", project_id))
        if not video_ids and not project_ids:
            return []
        results = await pipe.execute()
        records: list[bytes] = []
        if video_ids:
            records.extend(r for r in results.pop(0) if r is not None)
        for values in results:
            records.extend(values)
        return records
