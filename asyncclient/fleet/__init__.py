"""The fleet: processes that share one API key share one poller and one bucket, on Redis."""

# Owns: the Redis store (``store``: registrations, the lease, published changes, kept
# outcomes), what a process awaits (``registry``), the typed, versioned records that
# processes write to each other (``wire``), the fleet's poller (``poller``: beats, lease,
# listening, rounds; ``shadows``: the holder's copies of registered jobs), the token
# bucket shared through Redis (``bucket``), a batch's journal in Redis (``journal``: the
# batch's ``JournalStore`` protocol, with its fenced lease and durability check in
# ``journal_lease`` and its records of rows in ``journal_rows``) and what a failing Redis
# raises (``faults``: every Redis error becomes a fallback or an ``errors.FleetError``,
# never a ``redis`` one).
# May import: ``awaiting`` (the poller it composes, job state), ``http.gate``, ``models``,
# ``errors``, ``_convert``, ``_clock``, ``_states``, ``ratelimit``, and ``batch`` for the
# journal store only (the protocol it implements, the row state, the state table's codes;
# ``batch`` never imports ``fleet``). Loads ``redis`` only when used; nothing here imports
# ``notebook`` or ``cli``.
