"""Templates: list and read.

The spec does not name the list's query parameters; we send ``type``,
``limit`` and ``offset``, the names the other lists use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.http.caller import Caller
from asyncclient.models.enums import ProjectType
from asyncclient.models.pages import Page
from asyncclient.models.templates import Template, TemplateDetail
from asyncclient.resources._base import AsyncPager, Resource, decode_or_raise, page_of
from asyncclient.validation import check_enum, check_id, check_offset, check_page_size, raise_if

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from asyncclient.batch.rows import BatchOptions
    from asyncclient.batch.runner import Batch, JobMaker, Submitter

__all__ = ["Templates"]

_LIST = "/v1/template/list"


class Templates(Resource):
    """``client.templates``.

    Args:
        caller: The request path.
        submitter: Submits a batch's rows (``client.projects``).
        jobs: Makes jobs for rows a journal knows (``client.jobs``).
        clock: Paces batches.
        webhook: The notification URL a batch's rows carry unless the call gives one
            (the client's ``webhook_url`` with its token).
        journal_key: The key id a batch's journal records (the client's API key's).
        journal_opener: Opens a batch's journal named by a URL (the client's Redis one).
    """

    def __init__(
        self,
        caller: Caller,
        *,
        submitter: Submitter,
        jobs: JobMaker,
        clock: Clock = SYSTEM_CLOCK,
        webhook: str | None = None,
        journal_key: str | None = None,
        journal_opener: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        super().__init__(caller)
        self._webhook = webhook
        self._journal_key = journal_key
        self._journal_opener = journal_opener
        self._submitter = submitter
        self._jobs = jobs
        self._clock = clock

    async def get(self, template_id: str) -> TemplateDetail:
        """Read one template of the caller's team, with its scenes and variables.

        Raises:
            NotFoundError: No such template (or not the caller's team's).
        """
        raise_if(check_id("templateId", template_id))
        path = f"/v1/template/{template_id}"
        envelope = await self._caller.call("GET", path)
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
        envelope = await self._caller.call("GET", _LIST, params=params)
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
        **options: Unpack[BatchOptions],
    ) -> Batch:
        """Generate one video per row from a template, in bulk.

        A row maps column to value, as a CSV row reads: ``row["title"]`` is the
        video's title and every other key a variable's name
        (``{"title": "For Ann", "first_name": "Ann"}``). The template is fetched
        once and every row checked before the first submission: a missing or
        unknown variable, a bad title or a title used twice makes the row
        ``rejected`` before any credit is spent.

        Args:
            template_id: The template.
            rows: The rows: a list, a generator or a file's reader (``csv.DictReader``),
                read one at a time as they are sent; each row is checked before it is
                sent (``await batch.check()`` checks them all first).
            title_key: The column holding the title.
            caption: Auto-generated captions on or off.
            language: Two-letter language code.
            webhook: HTTPS URL notified for each video.
            metadata: Echoed in each notification.
            **options: How the batch runs: ``spacing`` (default 1 s, as the service
                advises for bulk template requests),
                ``concurrency``, ``journal``, ``on_progress``, ``budget``,
                ``cost_per_row``, ``wait_timeout`` (see :class:`BatchSettings`).

        Returns:
            A :class:`Batch`: ``await`` it for the results in input order, or
            ``async for`` it for results as they finish.
        """
        # the batch machinery loads on first use
        from asyncclient.batch.rows import BatchSettings
        from asyncclient.batch.runner import Batch, batch_id_of
        from asyncclient.batch.template_rows import TemplateSource

        raise_if(check_id("templateId", template_id))
        settings = BatchSettings(
            **options, journal_key=self._journal_key, journal_opener=self._journal_opener
        )

        async def fetch() -> TemplateDetail:
            return await self.get(template_id)

        source = TemplateSource(
            fetch,
            rows,
            title_key=title_key,
            caption=caption,
            language=language,
            webhook=webhook if webhook is not None else self._webhook,
            metadata=metadata,
        )
        return Batch(
            source,
            submitter=self._submitter,
            jobs=self._jobs,
            batch_id=batch_id_of("template", template_id),
            clock=self._clock,
            settings=settings,
            gate=self._caller.gate,
            reach=self._caller.reach,
        )
