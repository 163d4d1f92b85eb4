"""The batch journal's errors, re-exported by :mod:`asyncclient.errors` (the tree is there).

Import them from ``asyncclient.errors`` (or ``asyncclient``): this module only makes room.
"""

from __future__ import annotations

__all__ = ["JournalError", "JournalKeyError", "JournalLockedError", "JournalWriteError"]


class JournalError(Exception):
    """A batch's journal cannot be used or written; no row is sent on its account.

    Subclasses: :class:`JournalLockedError`, :class:`JournalKeyError`,
    :class:`JournalWriteError`.

    Attributes:
        path: The journal file.
    """

    def __init__(self, message: str, *, path: str):
        super().__init__(message)
        self.path = path


class JournalLockedError(JournalError):
    """Another run holds the journal (one run per journal): refused before reading it.

    Attributes:
        pid: The holder's process id, as its lock file says (None when unreadable).
        host: The holder's host name, likewise.
    """

    def __init__(self, message: str, *, path: str, pid: int | None, host: str | None):
        super().__init__(message, path=path)
        self.pid = pid
        self.host = host


class JournalKeyError(JournalError):
    """The journal belongs to another API key (it records a hash of the key, never the
    key): resuming it with this one would read its rows wrongly."""


class JournalWriteError(JournalError):
    """A record was not written whole and synced (a full disk, a file size limit, a
    short write): the file was cut back to its last whole line and the run stops; a
    ``submit`` record that failed means its row was not sent.

    Attributes:
        event: The record's event (``submit``, ``accepted``, ...; ``batch`` the header).
        row: The record's row, None for the header.
    """

    def __init__(self, message: str, *, path: str, event: str, row: int | None):
        super().__init__(message, path=path)
        self.event = event
        self.row = row
