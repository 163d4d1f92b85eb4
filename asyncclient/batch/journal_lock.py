"""One run per journal: an OS advisory lock on the journal file itself, whatever name
reaches it, and a sidecar ``<journal>.lock`` naming its holder.

:meth:`JournalLock.take` opens the journal (creating it, empty, if missing) and takes
``flock(LOCK_EX | LOCK_NB)`` on it. The lock belongs to the file, not to the name: a
symlink, a hard link, a relative path from another directory or a bind mount reaches the
same lock, and a second journal of this process on the same file is refused as well (two
``open`` calls are two open files, and their ``flock`` locks conflict). It lasts until
:meth:`JournalLock.release` or the end of the process, whatever ends it (``kill -9``
too). Then it resolves the path, once (absolute, symlinks followed: the run's sidecar
and index stay its file's wherever its working directory goes), locks the sidecar
``<resolved journal>.lock`` the same way and writes its pid, host and start into it; a
run refused reads them for its message. On Linux the kernel's lock table
(``/proc/locks``) names the holder's pid when the sidecar does not (a holder that came
by a hard link or a bind mount wrote the sidecar of another name). The sidecar's lock
also keeps one run per resolved name where a file system emulates ``flock`` with POSIX
locks (NFS), whose lock on the journal the closing of any other descriptor of the
journal in the holder's process lets go. Release removes the sidecar before letting the
locks go; a run that locked a file its holder removed or replaced meanwhile sees that
the path names another file now, and locks that one instead. On Windows there is no
lock. Also here: the key id a journal records (:func:`key_id`), the error of a record
that could not be written, and making a new file's name durable.
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

__all__ = ["JournalLock", "key_id", "sidecar_of", "sync_directory", "write_error"]

_KEY_CONTEXT = b"asyncclient batch journal key v1\x00"
_HELD = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
_TRIES = 100  # a file its holder removed or replaced between our open and our lock
_KERNEL_LOCKS = "/proc/locks"


@define
class JournalLock:
    """A journal's advisory locks, held while their files are open: the journal's own
    (``fd``, the one a run is refused by, whatever name it came by) and its sidecar's
    (``sidecar``, at :attr:`path`, which names the holder)."""

    journal: Path
    """The journal's path as it resolved when the lock was taken (absolute, symlinks
    followed): what the run names its sidecar and index from, wherever its working
    directory goes."""
    fd: int | None
    sidecar: int | None = None

    @property
    def path(self) -> Path:
        """The sidecar: ``<resolved journal>.lock``."""
        return sidecar_of(self.journal)

    @classmethod
    def take(cls, journal: Path, now: Callable[[], datetime]) -> JournalLock:
        """Lock the journal file (created, empty, if missing), then its sidecar
        ``<resolved journal>.lock``, and write who holds them.

        Raises:
            JournalLockedError: Another open file holds either (another run, through
                whatever name, or another journal of this process).
        """
        if sys.platform == "win32":  # pragma: no cover
            return cls(_resolved(journal), None)
        fd = _lock(journal, journal)
        try:
            resolved = _resolved(journal)  # the journal exists now: its name resolves
            sidecar = _lock(sidecar_of(resolved), journal, journal_fd=fd)
        except BaseException:
            os.close(fd)
            raise
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": now().isoformat()}
        try:
            os.ftruncate(sidecar, 0)
            os.pwrite(sidecar, json.dumps(me).encode() + b"\n", 0)
        except OSError:  # who holds it is a courtesy; the lock is held all the same
            pass
        return cls(resolved, fd, sidecar)

    def release(self) -> None:
        """Remove the sidecar, then let the locks go (closing the files)."""
        if self.sidecar is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(self.sidecar)
            self.sidecar = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def sidecar_of(journal: Path) -> Path:
    """The sidecar that names a journal's holder: ``<journal>.lock``, beside the file the
    path resolves to (symlinks followed, ``..`` and a relative path made absolute)."""
    resolved = _resolved(journal)
    return resolved.with_name(resolved.name + ".lock")


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _lock(path: Path, journal: Path, *, journal_fd: int | None = None) -> int:
    """Open ``path`` (created if missing) and ``flock`` it, exclusive, without waiting;
    the descriptor that holds the lock. ``journal_fd``: the journal's, held already, when
    ``path`` is its sidecar.

    Raises:
        JournalLockedError: Another open file holds the lock.
    """
    mode = 0o666 if journal_fd is None else 0o644  # the journal's: as open() makes it
    for _ in range(_TRIES):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            try:
                if exc.errno not in _HELD:
                    raise
                held_by = _said(fd) if journal_fd is not None else _holder(journal, fd)
            finally:
                os.close(fd)
            raise _locked(journal, held_by) from None
        if _same_file(fd, path):
            return fd
        os.close(fd)  # its holder removed it meanwhile: lock the one there now
    raise _locked(journal, {})


def _holder(journal: Path, fd: int) -> dict[str, Any]:
    """Who holds the lock of the journal open as ``fd``: what the sidecar of its resolved
    name says, unless the kernel names another process of this host (the holder came by
    another name, or its sidecar is stale); {} when neither says."""
    said = _said_at(sidecar_of(journal))
    pid = _kernel_holder(os.fstat(fd))
    host = socket.gethostname()
    if pid is not None and (said.get("pid"), said.get("host")) != (pid, host):
        return {"pid": pid, "host": host}
    return said


def _said_at(path: Path) -> dict[str, Any]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        return _said(fd)
    finally:
        os.close(fd)


def _said(fd: int) -> dict[str, Any]:
    """What a sidecar says of its holder ({} when it says nothing readable)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0))
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _kernel_holder(st: os.stat_result) -> int | None:
    """The pid the kernel's lock table (Linux: ``/proc/locks``) gives the holder of an
    exclusive ``flock`` on the file of ``st``; None where there is no table, or it names
    no visible process (one of another pid namespace shows as 0)."""
    try:
        with open(_KERNEL_LOCKS, "rb") as fh:
            table = fh.read()
    except OSError:
        return None
    exact: set[int] = set()
    same_inode: set[int] = set()
    for line in table.splitlines():
        # b"1: FLOCK  ADVISORY  WRITE 4242 fe:00:2148439 0 EOF" (a waiter's has "->")
        fields = line.split()
        if len(fields) < 6 or fields[1:2] != [b"FLOCK"] or fields[3:4] != [b"WRITE"]:
            continue
        try:
            pid = int(fields[4])
            major, minor, inode = fields[5].split(b":")
            dev = (int(major, 16), int(minor, 16))
            number = int(inode)
        except ValueError:
            continue
        if pid <= 0 or number != st.st_ino:
            continue
        same_inode.add(pid)
        if dev == (os.major(st.st_dev), os.minor(st.st_dev)):
            exact.add(pid)
    # an overlay file system gives stat another device than the lock's: the inode alone
    found = exact or same_inode
    return found.pop() if len(found) == 1 else None


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
