"""Social research: account analysis, searches, niche videos."""

from __future__ import annotations

from attrs import frozen

from asyncclient._convert import unstructure
from asyncclient.models.enums import SocialPlatform
from asyncclient.models.identified import stamp, stamp_all
from asyncclient.models.pages import Page
from asyncclient.models.requests import AnalyzeAccountRequest, SearchRequest
from asyncclient.models.social import AnalyzedAccount, Niche, Search, SearchCreated, SocialVideo
from asyncclient.resources._base import AsyncPager, Resource, decode_or_raise, page_of
from asyncclient.validation import (
    check_enum,
    check_id,
    check_offset,
    check_page_size,
    raise_if,
    validate,
)

__all__ = ["NicheVideosPage", "Social"]


@frozen(kw_only=True)
class NicheVideosPage(Page[SocialVideo]):
    """A page of a niche's trending videos, with the niche itself."""

    niche: Niche | None = None


class Social(Resource):
    """``client.social``."""

    async def analyze_account(
        self, username: str, platform: SocialPlatform | str
    ) -> AnalyzedAccount:
        """Analyse a social account (may consume credits).

        Args:
            username: Without a leading ``@`` (one is removed for you).
            platform: ``clipsite`` or ``videosite``.

        Raises:
            BadRequestError: The account was analysed already (use the refresh endpoint).
            NotFoundError: No such account.
        """
        name = username.strip().removeprefix("@") if isinstance(username, str) else username
        request = AnalyzeAccountRequest(username=name, platform=platform)
        validate(request)
        envelope = await self._caller.call("POST", request.PATH, json=unstructure(request))
        data = envelope.get("data")
        raw = data.get("account") if isinstance(data, dict) else None
        return decode_or_raise(raw, AnalyzedAccount, envelope, path="data.account")

    async def create_search(
        self, search_term: str, platform: SocialPlatform | str, *, limit: int | None = None
    ) -> SearchCreated:
        """Search a platform (credits per video scraped); the same term and platform
        update the existing search instead of making a new one.

        Args:
            search_term: 1 to 200 characters after trimming.
            platform: ``clipsite`` or ``videosite``.
            limit: Videos to scrape, 1 to 50 (service default 20).
        """
        request = SearchRequest(
            search_term=search_term.strip() if isinstance(search_term, str) else search_term,
            platform=platform,
            limit=limit,
        )
        validate(request)
        envelope = await self._caller.call("POST", request.PATH, json=unstructure(request))
        return decode_or_raise(envelope.get("data"), SearchCreated, envelope)

    async def get_search(
        self, search_id: str, *, limit: int | None = None, offset: int | None = None
    ) -> Search:
        """Read a search with a page of its videos and its pagination.

        ``offset`` is not shown in the spec; it is sent only when given.
        """
        raise_if(
            check_id("searchId", search_id)
            + (check_page_size("limit", limit, high=50) if limit is not None else [])
            + check_offset("offset", offset)
        )
        path = f"/v1/social/search/{search_id}"
        envelope = await self._caller.call("GET", path, params={"limit": limit, "offset": offset})
        return decode_or_raise(envelope.get("data"), Search, envelope)

    def search_videos(self, search_id: str, *, page_size: int = 50) -> AsyncPager[SocialVideo]:
        """Every video of a search, page after page."""
        raise_if(check_id("searchId", search_id) + check_page_size("page_size", page_size, high=50))

        async def fetch(offset: int, limit: int) -> Page[SocialVideo]:
            search = await self.get_search(search_id, limit=limit, offset=offset)
            pagination = search.pagination
            videos = search.videos or []
            page = Page(
                items=videos,
                total=pagination.total if pagination else len(videos),
                limit=pagination.limit if pagination else limit,
                offset=pagination.offset if pagination else offset,
            )
            stamp_all([page, *videos], search.request_id)
            return page

        return AsyncPager(fetch, page_size=page_size)

    async def niche_videos_page(
        self,
        niche_id: str,
        *,
        platform: SocialPlatform | str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> NicheVideosPage:
        """One page of a niche's trending videos.

        Raises:
            NotFoundError: Unknown niche.
        """
        raise_if(
            check_id("nicheId", niche_id)
            + check_enum("platform", platform, SocialPlatform)
            + check_page_size("limit", limit, high=50)
            + check_offset("offset", offset)
        )
        path = f"/v1/niche/{niche_id}/videos"
        params = {"platform": platform, "limit": limit, "offset": offset}
        envelope = await self._caller.call("GET", path, params=params)
        data = envelope.get("data")
        page = page_of(envelope, "videos", SocialVideo, limit=limit, offset=offset)
        raw_niche = data.get("niche") if isinstance(data, dict) else None
        niche = (
            decode_or_raise(raw_niche, Niche, envelope, path="data.niche") if raw_niche else None
        )
        made = NicheVideosPage(
            items=page.items, total=page.total, limit=page.limit, offset=page.offset, niche=niche
        )
        stamp(made, envelope.request_id)
        return made

    def niche_videos(
        self,
        niche_id: str,
        *,
        platform: SocialPlatform | str | None = None,
        page_size: int = 20,
    ) -> AsyncPager[SocialVideo]:
        """Every trending video of a niche, page after page.

        ``async for v in client.social.niche_videos("fitness"):``
        """
        raise_if(
            check_id("nicheId", niche_id)
            + check_enum("platform", platform, SocialPlatform)
            + check_page_size("page_size", page_size, high=50)
        )

        async def fetch(offset: int, limit: int) -> Page[SocialVideo]:
            return await self.niche_videos_page(
                niche_id, platform=platform, limit=limit, offset=offset
            )

        return AsyncPager(fetch, page_size=page_size)
