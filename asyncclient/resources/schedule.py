"""Scheduled posts."""

from __future__ import annotations

from datetime import datetime

from asyncclient._convert import unstructure
from asyncclient.http.caller import Caller
from asyncclient.models.enums import Platform, ScheduleStatus
from asyncclient.models.pages import Page
from asyncclient.models.requests import PlatformData, ScheduleRequest
from asyncclient.models.schedule import ScheduledPost, ScheduledPostCreated
from asyncclient.resources._base import AsyncPager, Resource, decode_or_raise, page_of
from asyncclient.resources.integrations import Integrations
from asyncclient.validation import check_enum, check_offset, check_page_size, raise_if, validate

__all__ = ["Schedule"]

_LIST = "/v1/schedule/list"


class Schedule(Resource):
    """``client.schedule``.

    Args:
        caller: The request path.
        integrations: Where an integration's platform is looked up.
    """

    def __init__(self, caller: Caller, *, integrations: Integrations) -> None:
        super().__init__(caller)
        self._integrations = integrations
        self._platforms: dict[str, str] = {}

    async def _platform_of(self, integration_id: str) -> str | None:
        if integration_id not in self._platforms:
            for integration in await self._integrations.list():
                if integration.type is not None:
                    self._platforms[integration.id] = str(integration.type)
        return self._platforms.get(integration_id)

    async def create(
        self,
        video_id: str,
        integration_id: str,
        scheduled_at: datetime,
        platform_data: PlatformData | None = None,
        *,
        platform: Platform | str | None = None,
    ) -> ScheduledPostCreated:
        """Schedule a completed video for publication.

        Args:
            video_id: A completed video of the caller's team.
            integration_id: From ``client.integrations.list()``.
            scheduled_at: Timezone-aware and in the future (15 minutes ahead is advised).
            platform_data: Title, description, tags, ... checked by the platform's rules.
            platform: The integration's platform; when ``platform_data`` is given
                and this is not, it is read once from the integration list.

        Returns:
            The new post (status ``pending``).

        Raises:
            ValidationError: Before any request, for a naive or past time or
                platform data that breaks the platform's rules.
        """
        request = ScheduleRequest(
            video_id=video_id,
            integration_id=integration_id,
            scheduled_date_time=scheduled_at,
            platform_data=platform_data,
        )
        now = self._caller.clock.now()  # spec 4.12: in the future by the client's clock
        validate(request, now=now)  # all platform-independent rules before any request
        if platform_data is not None and platform is None:
            platform = await self._platform_of(integration_id)
        if platform is not None:
            validate(request, now=now, platform=platform)
        envelope = await self._caller.call("POST", request.PATH, json=unstructure(request))
        return decode_or_raise(envelope.get("data"), ScheduledPostCreated, envelope)

    async def list_page(
        self,
        *,
        status: ScheduleStatus | str | None = None,
        platform: Platform | str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[ScheduledPost]:
        """One page of scheduled posts (times are UTC)."""
        raise_if(
            check_enum("status", status, ScheduleStatus)
            + check_enum("platform", platform, Platform)
            + check_page_size("limit", limit, high=100)
            + check_offset("offset", offset)
        )
        params = {"status": status, "platform": platform, "limit": limit, "offset": offset}
        envelope = await self._caller.call("GET", _LIST, params=params)
        return page_of(envelope, "scheduledPosts", ScheduledPost, limit=limit, offset=offset)

    def list(
        self,
        *,
        status: ScheduleStatus | str | None = None,
        platform: Platform | str | None = None,
        page_size: int = 50,
    ) -> AsyncPager[ScheduledPost]:
        """Every scheduled post: ``async for post in client.schedule.list():``."""
        raise_if(
            check_enum("status", status, ScheduleStatus)
            + check_enum("platform", platform, Platform)
            + check_page_size("page_size", page_size, high=100)
        )

        async def fetch(offset: int, limit: int) -> Page[ScheduledPost]:
            return await self.list_page(
                status=status, platform=platform, limit=limit, offset=offset
            )

        return AsyncPager(fetch, page_size=page_size)
