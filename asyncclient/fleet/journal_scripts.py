"""The Lua scripts of a Redis journal's lease: take it, keep it, let it go, and write
under it (every write checks the lease and renews it, in one step on the server)."""

from __future__ import annotations

__all__ = ["HELD_MS", "OURS", "RELEASE", "RENEW", "TAKE", "WRITE"]

HELD_MS = 86_400_000  # ``<prefix>:held``'s life, set anew by each take, beat and write:
# its time left tells the next holder when the last one's lease ended (Redis's clock).

# Take the lease when it is free. KEYS[1] the lease, KEYS[2] the fencing counter, KEYS[3]
# held (its milliseconds left returned fourth, -2 when none).
# ARGV: the holder, the lease's milliseconds. The value: "<holder> <fence> <milliseconds>"
# (a reader tells the last beat from the time left). Returns {1, value} when taken, else
# {0, the holder's value, its milliseconds left}.
TAKE = """
local value = redis.call('GET', KEYS[1])
if value then return {0, value, redis.call('PTTL', KEYS[1])} end
local fence = redis.call('INCR', KEYS[2])
local held = redis.call('PTTL', KEYS[3])
value = ARGV[1] .. ' ' .. fence .. ' ' .. ARGV[2]
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
redis.call('SET', KEYS[3], '1', 'PX', 86400000)
return {1, value, 0, held}
"""

# ours(lease, fence, value, ms): whether the lease is still this run's: it holds the
# value this run took (``value``), or it lapsed and the fencing counter is still at this
# run's fence, so no run took the lease since; then it is set again. A run whose loop was
# held up past its lease, and that nobody replaced, goes on; one replaced never does.
OURS = """
local function ours(lease, fence, value, ms)
  local now = redis.call('GET', lease)
  if now then return now == value end
  if redis.call('GET', fence) ~= string.match(value, '^%S+ (%d+) ') then return false end
  redis.call('SET', lease, value, 'PX', ms)
  return true
end
"""

# Keep the lease. KEYS[1] the lease, KEYS[2] held, KEYS[3] the fencing counter; ARGV: the
# value held, its ms. 1 or 0.
RENEW = (
    OURS
    + """
if not ours(KEYS[1], KEYS[3], ARGV[1], ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', 86400000)
return 1
"""
)

# Let the lease go, if still ours (nothing more is sent: held goes too). KEYS[1] the
# lease, KEYS[2] held, KEYS[3] the fencing counter, moved on so that a beat or a write of
# this run still on its way cannot take the lease again (see ``ours``); ARGV[1] the value
# held.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('INCR', KEYS[3])
  return redis.call('DEL', KEYS[1], KEYS[2])
end
return 0
"""

# A fenced write. KEYS[1] the lease, KEYS[2] a hash, KEYS[3] held, KEYS[4] the fencing
# counter. ARGV: the lease value held, the lease's milliseconds, then field, value pairs
# for the hash. Returns 0 (nothing written) when the lease is not ours any more, else 1
# (written, the lease renewed).
WRITE = (
    OURS
    + """
if not ours(KEYS[1], KEYS[4], ARGV[1], ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], '1', 'PX', 86400000)
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
return 1
"""
)
