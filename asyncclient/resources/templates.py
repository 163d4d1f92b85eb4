"""Templates: list and read (spec 4.19, 4.20).

The spec does not name the list's query parameters; we send ``type``,
``limit`` and ``offset``, the names the other lists use.
"""

from __future__ import annotations

from asyncclient.models.enums import ProjectType
from asyncclient.models.pages import Page
from asyncclient.models.templates import Template, TemplateDetail
from asyncclient.resources._base import AsyncPager, Resource, decode_or_raise, page_of
from asyncclient.validation import check_enum, check_id, check_offset, check_page_size, raise_if

__all__ = ["Templates"]

_LIST = "/v1/template/list"


class Templates(Resource):
    """``client.templates``."""

    async def get(self, template_id: str) -> TemplateDetail:
        """Read one template of the caller's team, with its scenes and variables.

        Raises:
            NotFoundError: No such template (or not the caller's team's).
        """
        raise_if(check_id("templateId", template_id))
        path = f"/v1/template/{template_id}"
        envelope = await self._client._call("GET", path)
        return decode_or_raise(envelope.get("data"), TemplateDetail, where=f"GET {path}")

    async def list_page(
        self, *, type: ProjectType | str | None = None, limit: int = 50, offset: int = 0
    ) -> Page[Template]:
        """One page of templates.

        Args:
            type: Video type filter (``class``, ``ugc_ads``, ...).
            limit: 1 to 100.
            offset: Templates to skip.
        """
        raise_if(
            check_enum("type", type, ProjectType)
            + check_page_size("limit", limit, high=100)
            + check_offset("offset", offset)
        )
        params = {"type": type, "limit": limit, "offset": offset}
        envelope = await self._client._call("GET", _LIST, params=params)
        return page_of(
            envelope.get("data"),
            "templates",
            Template,
            where=f"GET {_LIST}",
            limit=limit,
            offset=offset,
        )

    def list(
        self, *, type: ProjectType | str | None = None, page_size: int = 50
    ) -> AsyncPager[Template]:
        """Every template: ``async for t in client.templates.list():``."""
        raise_if(
            check_enum("type", type, ProjectType)
            + check_page_size("page_size", page_size, high=100)
        )

        async def fetch(offset: int, limit: int) -> Page[Template]:
            return await self.list_page(type=type, limit=limit, offset=offset)

        return AsyncPager(fetch, page_size=page_size)
