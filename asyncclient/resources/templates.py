"""Templates: list and read (spec 4.19, 4.20).

The spec does not name the list's query parameters; we send ``type``,
``limit`` and ``offset``, the names the other lists use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from asyncclient._template_rows import rows_to_requests
from asyncclient.batch import Batch, BatchProgress, Item, batch_id_of
from asyncclient.jobs import DEFAULT_WAIT_TIMEOUT
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
        return decode_or_raise(envelope.get("data"), TemplateDetail, envelope)

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
        return page_of(envelope, "templates", Template, limit=limit, offset=offset)

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

    def generate_many(
        self,
        template_id: str,
        rows: Iterable[Mapping[str, Any]],
        *,
        title_key: str = "title",
        caption: bool = True,
        language: str = "en",
        webhook: str | None = None,
        metadata: dict[str, Any] | None = None,
        spacing: float = 1.0,
        concurrency: int = 4,
        journal: str | os.PathLike[str] | None = None,
        on_progress: Callable[[BatchProgress], None] | None = None,
        budget: int | None = None,
        cost_per_row: int | None = None,
        wait_timeout: float | None = DEFAULT_WAIT_TIMEOUT,
    ) -> Batch:
        """Generate one video per row from a template (spec 4.9), in bulk.

        A row maps column to value, as a CSV row reads: ``row["title"]`` is the
        video's title and every other key a variable's name
        (``{"title": "For Ann", "first_name": "Ann"}``). The template is fetched
        once and every row checked before the first submission: a missing or
        unknown variable, a bad title or a title used twice makes the row
        ``rejected`` before any credit is spent.

        Args:
            template_id: The template.
            rows: The rows (read at once).
            title_key: The column holding the title.
            caption: Auto-generated captions on or off.
            language: Two-letter language code.
            webhook: HTTPS URL notified for each video.
            metadata: Echoed in each notification.
            spacing: Least seconds between two submissions (spec 8.3: about one).
            concurrency: Most creation requests in flight at once.
            journal: A JSON Lines file to record progress in; running the same
                batch with it again resumes without submitting a row twice.
            on_progress: Called with a :class:`BatchProgress` after each change.
            budget: Credits the batch may spend; later rows are ``skipped``.
            cost_per_row: Credits a row costs; learnt from the first video if omitted.
            wait_timeout: How long to wait for each video.

        Returns:
            A :class:`Batch`: ``await`` it for the results in input order, or
            ``async for`` it for results as they finish.
        """
        raise_if(check_id("templateId", template_id))
        rows = [dict(row) for row in rows]
        options = {
            "title_key": title_key,
            "caption": caption,
            "language": language,
            "webhook": webhook,
            "metadata": metadata,
        }

        async def prepare() -> list[Item]:
            template = await self.get(template_id)
            built = rows_to_requests(template, rows, **options)
            return [Item(i, req, tuple(found)) for i, (req, found) in enumerate(built)]

        return Batch(
            self._client,
            prepare,
            batch_id=batch_id_of("template", template_id),
            spacing=spacing,
            concurrency=concurrency,
            journal=journal,
            on_progress=on_progress,
            budget=budget,
            cost_per_row=cost_per_row,
            wait_timeout=wait_timeout,
        )
