"""One run per journal: an OS advisory lock on ``<journal>.lock``, naming its holder.

:meth:`JournalLock.take` opens the sidecar file and takes ``flock(LOCK_EX | LOCK_NB)`` on
it: the lock belongs to that open file, so it lasts until :meth:`JournalLock.release`
or the end of the process, whatever ends it (``kill -9`` too). The holder writes its
pid, host and start into the file; a run refused reads them for its message. Release
removes the file before closing it; a run that locked a file its holder removed
meanwhile sees that the path names another file now, and locks that one instead. On
Windows there is no lock. Also here: the key id a journal records (:func:`key_id`), the
error of a record that could not be written, and making a new file's name durable.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import socket
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from attrs import define

from asyncclient._states import JournalEvent
from asyncclient.errors import JournalLockedError, JournalWriteError

if sys.platform != "win32":
    import fcntl

__all__ = ["JournalLock", "key_id", "sync_directory", "write_error"]

_KEY_CONTEXT = b"asyncclient batch journal key v1\x00"


@define
class JournalLock:
    """The advisory lock of a journal's sidecar file, held while ``fd`` is open."""

    path: Path
    fd: int | None

    @classmethod
    def take(cls, journal: Path, now: Callable[[], datetime]) -> JournalLock:
        """Lock ``<journal>.lock`` and write who holds it.

        Raises:
            JournalLockedError: Another open file holds it (another run, or another
                journal of this process).
        """
        path = journal.with_name(journal.name + ".lock")
        if sys.platform == "win32":  # pragma: no cover
            return cls(path, None)
        for _ in range(100):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _holder(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                raise _locked(journal, holder) from None
            if _same_file(fd, path):
                break
            os.close(fd)  # its holder removed it meanwhile: lock the one there now
        else:
            raise _locked(journal, {})
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": now().isoformat()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(me).encode() + b"\n", 0)
        except OSError:  # who holds it is a courtesy; the lock is held all the same
            pass
        return cls(path, fd)

    def release(self) -> None:
        """Remove the lock file, then let the lock go (closing the file)."""
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = None


def _holder(fd: int) -> dict[str, Any]:
    """What a held lock file says of its holder ({} when it says nothing readable)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0))
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _locked(journal: Path, holder: dict[str, Any]) -> JournalLockedError:
    pid, host = holder.get("pid"), holder.get("host")
    pid = pid if isinstance(pid, int) else None
    host = host if isinstance(host, str) else None
    who = f"pid {pid} on {host}" if pid is not None else "a process its lock file does not name"
    since = f", since {holder['since']}" if holder.get("since") else ""
    return JournalLockedError(
        f"{journal} is in use by another run ({who}{since}): one run per journal; wait "
        "for it to end, or give this run another journal file",
        path=str(journal),
        pid=pid,
        host=host,
    )


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        there = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def write_error(path: Path, event: str, row: Any, reason: str) -> JournalWriteError:
    """The error of a record the journal at ``path`` could not write."""
    what = {
        "batch": "its header",
        JournalEvent.SUBMIT: f"row {row}'s submission (the row was not sent)",
        JournalEvent.ACCEPTED: f"row {row}'s acceptance by the service",
        JournalEvent.REJECTED: f"row {row}'s refusal by the service",
        JournalEvent.DONE: f"row {row}'s end",
    }.get(event, f"a {event} record")
    return JournalWriteError(
        f"{path}: could not record {what}: {reason}; the journal stops here, at "
        "its last whole line",
        path=str(path),
        event=event,
        row=row if isinstance(row, int) else None,
    )


def sync_directory(folder: Path) -> None:
    """Make a new file's name durable too (POSIX; elsewhere a no-op)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def key_id(api_key: str) -> str:
    """What a journal records of the API key it belongs to: 16 hex digits of a SHA-256
    of a fixed context and the key (it tells nothing of the key)."""
    digest = hashlib.sha256(_KEY_CONTEXT + api_key.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]
