"""The list pages of one polling round: read where the watched jobs are, not every page.

The video list is newest first, and ``limit``/``offset`` count projects (spec 4.10). A
project never moves relative to the older ones, so its place counted from the oldest,
its *rank* (``total - offset``), stays the same however many projects are made after it.
A job seen once on a page keeps its rank (:attr:`JobState.list_rank`); the next round
reads the page at ``total - rank``, wherever that is, instead of every page above it.

What a round reads, in this order:

- **New jobs** (never seen) are among the newest projects: the pages from the top, one
  after the other, until every new job is found, at most as many pages as they and the
  projects made since the last round (and since this round's first page) fill, plus two.
- **Jobs with a rank**: the page that starts at each one's offset now, one page for the
  jobs it holds. A job not on it (more projects were made while the round read) is
  looked for again at the offset the page's own ``total`` gives, up to :data:`CHASES`
  times; one whose offset falls on the page and is not there is not in the list (its rank
  is forgotten, and an id read or the next round finds it).
- **Jobs placed below** a scan that did not find them (:attr:`JobState.list_below`: the
  highest rank they can have; a resumed batch's rows that an earlier process sent) are
  read from there down, in this round, to the end of the list if need be: one pass,
  once, after which each has its rank. One not found by the end of the list is not in
  it: it is taken for new again.

Up to ``at_once`` pages are in flight together; each is taken in as it comes, and the
next one goes out at once (a slow page holds up no other). The round reads no page that
the unseen jobs cannot need. Every job the pages did not find is returned, for the round
to read by id (or, for a job that knows no video, to place for the next round).
"""

from __future__ import annotations

import asyncio
import bisect
import math
from collections.abc import Awaitable, Callable

from asyncclient.awaiting.state import JobState
from asyncclient.awaiting.tasks import TaskScope
from asyncclient.models.pages import Page
from asyncclient.models.videos import Video

__all__ = ["CHASES", "EXTRA_PAGES", "PAGE", "ListScan", "list_cost"]

PAGE = 100
EXTRA_PAGES = 2
"""Pages read from the top beyond what the new jobs and the projects made since fill."""
CHASES = 3
"""Times a job with a rank is looked for again in one round, where the list moved it."""
_SLACK = 2
"""Places left at the end of a page, at least, while the list grows (see ``_slack``)."""

ReadPage = Callable[[int], Awaitable[Page[Video]]]
Take = Callable[[Page[Video], int], set[int]]


def list_cost(jobs: list[JobState], total: int | None, step: int = PAGE) -> int:
    """About how many pages a list round over ``jobs`` reads (to weigh it against one
    read by id a video): the first, the pages the ranked jobs lie on, and the pages
    the new and placed jobs fill."""
    ranked: set[int] = set()
    fresh = placed = 0
    for job in jobs:
        if job.list_rank and total is not None:
            ranked.add(max(0, total - job.list_rank) // step)
        elif job.list_below:
            placed += 1
        else:
            fresh += 1
    top = max(1, math.ceil(fresh / step))  # the new jobs' pages, from the first
    return top + len(ranked - set(range(top))) + math.ceil(placed / step)


class _Target:
    """A job with a rank, and the times it was looked for again this round."""

    __slots__ = ("chases", "job", "rank", "taken")

    def __init__(self, job: JobState) -> None:
        self.job = job
        self.rank = job.list_rank
        self.chases = 0
        self.taken = False


class _Run:
    """Pages read one after the other from ``cursor``, for ``members`` (jobs that lie
    somewhere below it), at most up to ``end``."""

    __slots__ = ("at_end", "cursor", "end", "in_flight", "members", "reached")

    def __init__(self, members: list[JobState], cursor: int, pages: int, step: int) -> None:
        self.members = {id(j) for j in members}
        self.cursor = self.reached = cursor
        self.end = cursor + pages * step
        self.in_flight = 0
        self.at_end = False  # a page of the run showed the end of the list


class ListScan:
    """The pages of one round over ``jobs``, read through ``read_page``.

    Args:
        read_page: Reads the page at an offset (waiting its turn at the gate).
        take: Takes a page's records into the jobs (setting the rank of each it shows);
            returns the ``id()`` of every watched job the page showed.
        at_once: Pages in flight together, at most.
    """

    def __init__(self, read_page: ReadPage, take: Take, *, at_once: int, lead: int = 0) -> None:
        self._read_page = read_page
        self._take = take
        self._at_once = at_once
        self.found: set[int] = set()
        self.total = 0
        """The list's length, as the latest page read told it."""
        self.step = PAGE
        self._targets: list[_Target] = []
        self._keys: list[int] = []  # -rank of each target, ascending: offsets ascending
        self._next_target = 0
        self._chases: list[_Target] = []
        self._fresh: _Run | None = None  # the new jobs' pages, from the top
        self._placed: _Run | None = None  # the placed jobs' pages, from the highest place
        self._first_total = 0
        self._in_flight = 0
        self.lead = lead
        """Projects made while the last page was in flight (where to expect a job)."""
        self.moving = lead > 0
        """Whether the list grew (since the last round, or while this one read)."""
        self._arrived: asyncio.Queue[tuple[int, Page[Video], list[_Target], _Run | None]] = (
            asyncio.Queue()
        )

    async def run(self, jobs: list[JobState], *, grown_since: int | None) -> list[JobState]:
        """Read the pages; return the jobs they did not show.

        ``grown_since``: the list's length at the last round (None on the first), so the
        projects made since (by anyone) widen the scan of new jobs.
        """
        first = await self._read_page(0)
        self.total = self._first_total = first.total
        self.found |= self._take(first, 0)
        self.step = step = first.limit or PAGE
        unseen = [j for j in jobs if id(j) not in self.found and not j.done()]
        if first.limit >= first.total or not first.items or not unseen:
            return self._missing(jobs)
        grown = max(0, first.total - grown_since) if grown_since is not None else 0
        self.moving = self.moving or grown > 0
        fresh = [j for j in unseen if not j.list_rank and not j.list_below]
        placed = [j for j in unseen if not j.list_rank and j.list_below]
        self._targets = sorted((_Target(j) for j in unseen if j.list_rank), key=_by_offset)
        self._keys = [-t.rank for t in self._targets]
        if fresh:
            pages = math.ceil(len(fresh) / step) + EXTRA_PAGES + math.ceil(grown / step)
            self._fresh = _Run(fresh, step, pages, step)
        if placed:  # read down from the highest place, to the end of the list if need be
            highest = max(j.list_below for j in placed)
            start = max(step, self.total - highest)
            self._placed = _Run(placed, start, math.ceil(first.total / step) + 1, step)
        await self._pages()
        return self._missing(jobs)

    def _missing(self, jobs: list[JobState]) -> list[JobState]:
        """The jobs not found; one without a rank is placed below where its run read (or,
        when that run reached the end of the list, taken for new again)."""
        missing = [j for j in jobs if id(j) not in self.found]
        for run in (self._fresh, self._placed):
            if run is None:
                continue
            for job in missing:
                if id(job) in run.members and not job.list_rank:
                    job.list_below = 0 if run.at_end else max(0, self.total - run.reached)
        return missing

    def _offset(self, target: _Target) -> int:
        """Where ``target`` lies when a page requested now is served: by the list's
        length, and by the projects made while the last page was in flight."""
        return max(0, self.total + self.lead - target.rank)

    def _next(self) -> tuple[int, list[_Target], _Run | None] | None:
        """The next page to read, the targets it is for, and the run it belongs to: a
        chase first, then the new jobs' pages from the top, then each ranked job's
        page, then the pages below where the placed jobs may lie."""
        if self._chases:
            return self._chase()
        if self._fresh is not None and self._wants(self._fresh):
            return self._run_page(self._fresh)
        while self._next_target < len(self._targets):
            target = self._targets[self._next_target]
            if target.taken or id(target.job) in self.found:
                self._next_target += 1
                continue
            start = self._offset(target)
            return start, self._targets_within(start, start + self.step - self._slack()), None
        if self._placed is not None and self._wants(self._placed):
            return self._run_page(self._placed)
        return None

    def _wants(self, run: _Run) -> bool:
        """Whether ``run`` reads another page now: some of its jobs are unseen, more than
        its pages in flight can hold, and it has not reached its end (which the projects
        made since the round's first page push further down)."""
        unseen = len(run.members - self.found)
        end = run.end + (self.total - self._first_total)
        return unseen > run.in_flight * self.step and run.cursor < end and not run.at_end

    def _run_page(self, run: _Run) -> tuple[int, list[_Target], _Run]:
        start = run.cursor
        run.cursor += self.step
        return start, self._targets_within(start, start + self.step), run

    def _slack(self) -> int:
        """Places a page read for jobs leaves at its end: none while the list stands
        still; while it grows, room for half as many again as the lead allows for (up
        to a quarter of the page)."""
        return min(self.step // 4, max(_SLACK, self.lead // 2)) if self.moving else 0

    def _targets_within(self, start: int, end: int) -> list[_Target]:
        """The targets whose offset now lies in ``[start, end)``, not yet taken."""
        now = self.total + self.lead  # offset = now - rank = now + key
        low = bisect.bisect_left(self._keys, start - now)
        high = bisect.bisect_left(self._keys, end - now)
        taken: list[_Target] = []
        for target in self._targets[low:high]:
            if not target.taken and id(target.job) not in self.found:
                target.taken = True
                taken.append(target)
        return taken

    def _chase(self) -> tuple[int, list[_Target], _Run | None]:
        """A page at the shallowest chased target, for the chased targets it can hold."""
        self._chases.sort(key=self._offset)
        start = self._offset(self._chases[0])
        end = start + self.step - self._slack()
        held = 1
        while held < len(self._chases) and self._offset(self._chases[held]) < end:
            held += 1
        taken, self._chases = self._chases[:held], self._chases[held:]
        return start, taken, None

    async def _read(self, offset: int, targets: list[_Target], run: _Run | None) -> None:
        asked = self.total
        page = await self._read_page(offset)
        self.lead = max(0, page.total - asked)  # how far the list moved while it flew
        self.moving = self.moving or page.total > asked
        self._arrived.put_nowait((offset, page, targets, run))

    async def _pages(self) -> None:
        async with TaskScope() as scope:
            while True:
                while self._in_flight < self._at_once:
                    chosen = self._next()
                    if chosen is None:
                        break
                    offset, targets, run = chosen
                    scope.start(self._read, offset, targets, run)
                    self._in_flight += 1
                    if run is not None:
                        run.in_flight += 1
                if not self._in_flight:
                    return
                offset, page, targets, run = await self._arrived.get()
                self._in_flight -= 1
                self.total = max(self.total, page.total)
                self.found |= self._take(page, offset)
                held = _projects_in(page)
                if run is not None:
                    run.in_flight -= 1
                    run.reached = max(run.reached, offset + held)
                    if held < self.step:  # the list ends here: the run reads no further
                        run.at_end = True
                self._look_again(offset, page, held, targets)

    def _look_again(
        self, offset: int, page: Page[Video], held: int, targets: list[_Target]
    ) -> None:
        """Its targets a page did not show: look again where the page says they are now."""
        for target in targets:
            job = target.job
            if id(job) in self.found or job.done():
                continue
            now = page.total - target.rank  # its offset when this page was read
            if offset <= now < offset + held or (held < self.step and now >= offset):
                job.list_rank = 0  # not where its rank says: not in the list (any more)
                continue
            target.chases += 1
            if target.chases <= CHASES:
                self._chases.append(target)


def _by_offset(target: _Target) -> int:
    return -target.rank


def _projects_in(page: Page[Video]) -> int:
    """How many projects a page holds (its videos come grouped by project)."""
    count, last = 0, None
    for video in page.items:
        if video.project_id is None or video.project_id != last:
            count += 1
        last = video.project_id
    return count
