"""Awaiting videos: jobs, the one poller that reads for them, and notifications."""

# Owns: :class:`~asyncclient.awaiting.jobs.VideoJob` and ``Jobs`` (``jobs``), a job's
# state table and follower list (``state``), wait deadlines (``deadlines``), the shared
# :class:`~asyncclient.awaiting.poller.Poller` and its ``PollPolicy`` (``poller``), the
# structured-concurrency helpers (``tasks``), and the pure half of notifications: events
# read from a notification (``notifications``) and the token its URL carries (``tokens``).
# May import: ``http`` (tracing), ``models``, ``errors``, ``_convert``, ``_clock``,
# ``_states``, ``ratelimit``. Jobs read videos through a small protocol (``VideoSource``),
# never through the client or ``resources``; nothing here imports ``notebook`` or ``cli``.
