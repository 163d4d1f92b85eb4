"""Social research: analysed accounts, searches, social videos, niches."""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from asyncclient.models.enums import KeywordsStatus, SocialPlatform
from asyncclient.models.identified import Identified

__all__ = [
    "AccountAnalytics",
    "AccountStats",
    "AnalyzedAccount",
    "Creator",
    "Niche",
    "Pagination",
    "Search",
    "SearchAnalytics",
    "SearchCreated",
    "SocialMusic",
    "SocialVideo",
    "SocialVideoStats",
]


@frozen(kw_only=True)
class AccountStats:
    """An analyzed account's counts."""

    followers: int | None = None
    following: int | None = None
    videos: int | None = None
    likes: int | None = None


@frozen(kw_only=True)
class AccountAnalytics:
    """An analyzed account's computed analytics."""

    engagement_rate: float | None = None
    virality_score: float | None = None
    avg_views: float | None = None


@frozen(kw_only=True)
class AnalyzedAccount(Identified):
    """A social account and its computed analytics."""

    id: str
    username: str | None = None
    platform: SocialPlatform | str | None = None
    display_name: str | None = None
    bio: str | None = None
    avatar_url: str | None = None
    is_verified: bool | None = None
    stats: AccountStats | None = None
    analytics: AccountAnalytics | None = None
    top_hashtags: list[str] | None = None
    keywords: list[str] | None = None
    last_analyzed: datetime | None = None
    created_at: datetime | None = None
    profile_url: str | None = None


@frozen(kw_only=True)
class Creator:
    """The creator of a social video."""

    username: str | None = None
    display_name: str | None = None
    avatar_url: str | None = None
    followers: int | None = None
    is_verified: bool | None = None


@frozen(kw_only=True)
class SocialVideoStats:
    """A social video's counts."""

    views: int | None = None
    likes: int | None = None
    comments: int | None = None
    shares: int | None = None


@frozen(kw_only=True)
class SocialMusic:
    """The music of a social video, on search results only."""

    title: str | None = None
    artist: str | None = None


@frozen(kw_only=True)
class SocialVideo(Identified):
    """A video found by a search or listed for a niche."""

    id: str
    external_id: str | None = None
    platform: SocialPlatform | str | None = None
    title: str | None = None
    description: str | None = None
    thumbnail_url: str | None = None
    video_url: str | None = None
    duration: float | None = None
    creator: Creator | None = None
    stats: SocialVideoStats | None = None
    viral_score: float | None = None
    engagement_rate: float | None = None
    hashtags: list[str] | None = None
    music: SocialMusic | None = None
    published_at: datetime | None = None


@frozen(kw_only=True)
class SearchAnalytics:
    """A search's averages over its videos."""

    avg_views: float | None = None
    avg_likes: float | None = None
    avg_comments: float | None = None
    avg_shares: float | None = None
    engagement_rate: float | None = None


@frozen(kw_only=True)
class Pagination:
    """Pagination of a search's videos."""

    total: int
    limit: int
    offset: int
    has_more: bool | None = None


@frozen(kw_only=True)
class Search(Identified):
    """A social search; ``videos`` and ``pagination`` on retrieval only."""

    id: str
    search_term: str | None = None
    platform: SocialPlatform | str | None = None
    total_results: int | None = None
    analytics: SearchAnalytics | None = None
    top_hashtags: list[str] | None = None
    music: list[str] | None = None
    keywords: list[str] | None = None
    keywords_status: KeywordsStatus | str | None = None
    videos: list[SocialVideo] | None = None
    pagination: Pagination | None = None
    last_searched: datetime | None = None
    created_at: datetime | None = None


@frozen(kw_only=True)
class SearchCreated(Identified):
    """What ``POST /v1/social/search/create`` answered."""

    search: Search
    videos_found: int | None = None


@frozen(kw_only=True)
class Niche(Identified):
    """A content niche."""

    id: str
    label: str | None = None
    emoji: str | None = None
    description: str | None = None
