"""The video list's indexes (spec 4.10): each team's rows, oldest first, by type and status.

A page is a slice from the newest end of one index, so no request copies, filters or
sorts a team's projects, however many it has. An index is an ``array`` of rows (4 bytes
each) under ``(team, type or "all", list status or "")``.

A video's list status changes with time (it completes or fails at ``done_at``, spec
3.1): a row still processing waits in a heap by ``done_at``, and moves from the
``processing`` index to the ``completed`` or ``failed`` one when a creation or a list
filtered by status finds it due. Rows complete in about the order they were made, so a
move touches the ends of the indexes; many at once are merged in one pass.
"""

from __future__ import annotations

import bisect
import heapq
from array import array

from asyncclient.emulator._records import COMPLETED, FAILED, SETTLED_MASK, VideoTable

__all__ = ["Listing"]

ANY = ""
"""The status key of an index holding every status."""
_NAMES = {COMPLETED: "completed", FAILED: "failed"}
_ONE_BY_ONE = 32  # more moves than this into one index are merged in one pass


def _remove(index: array[int], rows: list[int]) -> None:
    if len(rows) <= _ONE_BY_ONE:
        for row in rows:
            at = bisect.bisect_left(index, row)
            if at < len(index) and index[at] == row:
                del index[at]
        return
    gone = set(rows)
    start = bisect.bisect_left(index, min(rows))
    kept = [row for row in index[start:] if row not in gone]
    del index[start:]
    index.extend(kept)


def _insert(index: array[int], rows: list[int]) -> None:
    if len(rows) <= _ONE_BY_ONE:
        for row in rows:
            bisect.insort(index, row)
        return
    start = bisect.bisect_left(index, min(rows))  # only the tail from there is merged
    merged = index[start:].tolist() + rows
    merged.sort()
    del index[start:]
    index.extend(merged)


class Listing:
    """Per team: rows in creation order, by project type and by list status."""

    def __init__(self, table: VideoTable) -> None:
        self._table = table
        self._index: dict[tuple[str, str, str], array[int]] = {}
        self._due: list[tuple[float, int]] = []
        """Rows still processing, by ``done_at`` (a row may be here twice: skipped once moved)."""

    def _of(self, key: tuple[str, str, str]) -> array[int]:
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = array("I")
        return index

    def add(self, row: int) -> None:
        """Index a new row (the newest): it is processing until its ``done_at``."""
        table = self._table
        team, ptype = table.team_id(row), table.profiles[row].type
        for scope in ("all", ptype):
            self._of((team, scope, ANY)).append(row)
            self._of((team, scope, "processing")).append(row)
        heapq.heappush(self._due, (table.done[row], row))

    def reschedule(self, row: int) -> None:
        """The row's ``done_at`` moved earlier (a forced failure): move it then."""
        heapq.heappush(self._due, (self._table.done[row], row))

    def settle(self, now: float) -> int:
        """Move every row finished at ``now`` out of ``processing``; return how many moved."""
        table, due = self._table, self._due
        moves: dict[tuple[str, str], list[int]] = {}
        while due and due[0][0] <= now:
            row = heapq.heappop(due)[1]
            if table.flags[row] & SETTLED_MASK:
                continue  # moved already (its done_at moved earlier)
            state = FAILED if row in table.errors else COMPLETED
            table.flags[row] |= state
            team, ptype = table.team_id(row), table.profiles[row].type
            for scope in ("all", ptype):
                moves.setdefault((team, scope), []).append(row)
        for (team, scope), rows in moves.items():
            _remove(self._of((team, scope, "processing")), rows)
            for state, name in _NAMES.items():
                chosen = [row for row in rows if (table.flags[row] & SETTLED_MASK) == state]
                if chosen:
                    _insert(self._of((team, scope, name)), chosen)
        return sum(len(rows) for (_, scope), rows in moves.items() if scope == "all")

    def page(
        self, team: str, ptype: str, status: str | None, offset: int, limit: int, now: float
    ) -> tuple[int, list[int]]:
        """Return the total and the rows of one page, newest first (spec 4.10).

        Args:
            team: the team's id.
            ptype: a project type, or ``all``.
            status: a list status (``draft``, which the emulator never shows, matches none),
                or None for every status.
            offset: projects skipped from the newest.
            limit: projects in the page.
            now: the service time of the request.
        """
        if status is not None:
            self.settle(now)
        index = self._index.get((team, ptype, ANY if status is None else status))
        if index is None:
            return 0, []
        total = len(index)
        end = max(0, total - offset)
        rows = index[max(0, end - limit) : end]
        rows.reverse()
        return total, rows.tolist()
