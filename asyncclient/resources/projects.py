"""Creation of videos in the nine formats.

Each ``create_*`` method builds the request body of its endpoint, checks every
rule of the spec before sending anything (``ValidationError`` lists all
problems), and sends it. :meth:`Projects.create` sends any prepared request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

from asyncclient.awaiting.jobs import Jobs, VideoJob
from asyncclient.errors import AmbiguousCreationError, APIError
from asyncclient.http.caller import Caller
from asyncclient.models.requests import (
    CreationRequest,
)
from asyncclient.models.videos import CreatedProject, SentCreation
from asyncclient.resources._base import Resource
from asyncclient.resources._creation import created_from_envelope, find_created, sent_of
from asyncclient.resources.formats import Formats
from asyncclient.resources.videos import Videos

if TYPE_CHECKING:
    from asyncclient.http.prepared import PreparedCreation

__all__ = ["Projects"]

logger = logging.getLogger("asyncclient")

Metadata = dict[str, Any]


class Projects(Formats, Resource):
    """``client.projects``: one ``create_*`` method per creation endpoint.

    Args:
        caller: The request path.
        jobs: Makes the job each creation returns.
        videos: Where :meth:`reconcile` looks for an ambiguous creation's video.
        webhook: The notification URL a creation without its own ``webhook`` carries
            (the client's ``webhook_url`` with its token).
    """

    def __init__(
        self, caller: Caller, *, jobs: Jobs, videos: Videos, webhook: str | None = None
    ) -> None:
        super().__init__(caller)
        self._jobs = jobs
        self._videos = videos
        self._webhook = webhook
        self._clock_read = asyncio.Lock()

    async def create(self, request: CreationRequest) -> VideoJob:
        """Validate and send any creation request; ``await`` the job for the video.

        Raises:
            ValidationError: Before sending, with every problem found.
            InsufficientCreditsError: The balance does not cover it.
            AmbiguousCreationError: It may or may not have been created (not resent).
        """
        from asyncclient.http.prepared import prepare_creation  # the rules load on first use

        if self._webhook is not None and request.webhook is None:
            request = attrs.evolve(request, webhook=self._webhook)
        return await self.submit(prepare_creation(request))

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        """Send a creation request checked and serialised before (a batch's row).

        Raises:
            InsufficientCreditsError: The balance does not cover it.
            AmbiguousCreationError: It may or may not have been created (not resent).
        """
        request = prepared.request
        # The service's clock is known before a creation leaves (one read, on a client's
        # first creation when nothing else was read): an ambiguous answer is then
        # reconciled on the service's clock, never on ours.
        await self.service_time()
        envelope = await self._caller.send(prepared.wire, creation=request)
        return self._jobs.from_created(created_from_envelope(envelope, request))

    async def reconcile(
        self,
        error: AmbiguousCreationError | SentCreation,
        *,
        skew: float | None = None,
        max_pages: int | None = None,
        claimed: Collection[str] = (),
    ) -> VideoJob | None:
        """Look for the project an ambiguous creation may have made.

        Scans the video list (newest first) for a video of the same format whose name is
        the request's name (a template's title), made after the request left by the
        service's own clock (``error.service_sent_after``, read from the ``Date`` of its
        earlier responses), and not one of ``claimed``. The scan reads back until the
        list's ``createdAt`` passes that time, however many pages that is (the cost is
        what was created since).

        None is not yet the service's word that nothing was made: a request may be
        queued and processed after its reply was lost. Only once
        :data:`~asyncclient.batch.settle.SETTLE_WINDOW` (10 minutes) has passed since
        the request left, longer than any timeout on either side, does None mean that
        nothing was made and the request may be sent again; a batch looks again until
        then and keeps the row pending meanwhile.

        Args:
            error: What the creation raised, or the :class:`SentCreation` it carried
                (looking again with the same one reads only what was made since).
            skew: When the service's clock at sending is unknown
                (``error.service_sent_after`` is None): match projects made up to this
                many seconds before ``error.sent_at`` on this client's clock. A guess,
                so None (the default) refuses instead.
            max_pages: Pages of 100 projects to read at most (None: as many as it
                takes); reaching it before the send time raises, never answers None.
            claimed: Projects already owned by other requests (one project satisfies
                one request only): never matched.

        Returns:
            A job for the project when exactly one unclaimed project matches; ``None``
            when none does yet.

        Raises:
            ReconciliationError: The look cannot prove which project is the request's
                (several match, the service's clock at sending unknown, or ``max_pages``
                reached first): do not resend on it.
            ValidationError: The request had no name to look for.
        """
        video = await find_created(
            self._videos, error, skew=skew, max_pages=max_pages, claimed=claimed
        )
        if video is None:
            return None
        found = CreatedProject(
            project_id=video.project_id,
            video_id=video.id,
            status=str(video.status),
            format=sent_of(error).format,
        )
        return self._jobs.from_created(found)

    def service_now(self) -> datetime | None:
        """A lower bound of the service's clock now (see ``Caller.service_now``)."""
        return self._caller.service_now()

    async def service_time(self) -> datetime | None:
        """A lower bound of the service's clock now; when no reply of the service was
        seen yet, one page of one video is read first to learn it (once: callers that
        ask meanwhile wait for that read). None when that read failed too.

        A batch asks before each creation leaves and records the answer beside it, so
        that an ambiguous creation is reconciled on the service's clock, never on ours.
        """
        if self._caller.service_now() is None:
            async with self._clock_read:  # one read, however many ask at once
                if self._caller.service_now() is None:
                    await self._read_clock()
        return self._caller.service_now()

    async def _read_clock(self) -> None:
        try:
            async for _ in self._videos.list(page_size=1).pages():
                break
        except APIError as exc:  # any reply with a Date taught it all the same
            logger.debug("reading the service's clock: %s", exc)
