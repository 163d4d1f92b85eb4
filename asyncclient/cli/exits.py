"""The command line's exit statuses: one table, used by every command and its help."""

from __future__ import annotations

__all__ = [
    "EXIT_CONFIG",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_STATUSES",
    "EXIT_TIMEOUT",
    "EXIT_USAGE",
    "epilog",
]

EXIT_OK = 0
"""Done: every row, video or request succeeded."""
EXIT_ERROR = 1
"""The service, the network or the disk failed: an API error, a connection error, a FAILED
video, a batch journal record that could not be written (the batch stopped there)."""
EXIT_USAGE = 2
"""Bad input or usage: an option, a missing key or URL, an unreadable or empty rows file, a
journal another run holds or of another API key."""
EXIT_CONFIG = EXIT_USAGE  # the name of earlier versions
EXIT_TIMEOUT = 3
"""``videos wait --timeout`` passed before the video finished."""
EXIT_PARTIAL = 4
"""A batch ran, but some rows did not complete (failed, rejected, skipped, unresolved)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT, as shells report it); a batch resumes from its journal."""

EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (EXIT_ERROR, "the service, network or disk failed (API error, FAILED video, journal)"),
    (EXIT_USAGE, "bad input or usage (options, missing key or URL, empty or bad rows file)"),
    (EXIT_TIMEOUT, "timed out (videos wait --timeout)"),
    (EXIT_PARTIAL, "partial failure: some rows of a batch did not complete"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C); run the same batch again to resume"),
)


def epilog() -> str:
    """The exit statuses as the help's closing paragraph."""
    lines = ["exit statuses:"]
    lines += [f"  {code:<5}{meaning}" for code, meaning in EXIT_STATUSES]
    return "\n".join(lines)
