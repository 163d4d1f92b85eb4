"""Scheduled posts and integrations."""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from asyncclient.models.enums import Platform, ScheduleStatus
from asyncclient.models.identified import Identified

__all__ = [
    "Integration",
    "IntegrationAccount",
    "PostPlatformData",
    "PostVideo",
    "ScheduledPost",
    "ScheduledPostCreated",
]


@frozen(kw_only=True)
class IntegrationAccount:
    """The social account behind an integration."""

    id: str | None = None
    name: str | None = None
    username: str | None = None
    avatar_url: str | None = None


@frozen(kw_only=True)
class Integration(Identified):
    """A connected social-platform account."""

    id: str
    type: Platform | str | None = None
    """Platform value."""
    identifier: str | None = None
    account: IntegrationAccount | None = None


@frozen(kw_only=True)
class PostVideo:
    """The video of a scheduled post."""

    id: str | None = None
    name: str | None = None
    url: str | None = None
    thumbnail: str | None = None
    duration_in_seconds: float | None = None


@frozen(kw_only=True)
class PostPlatformData:
    """Publication details as the service stored them (a failure's detail too)."""

    title: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    privacy_status: str | None = None
    made_for_kids: bool | None = None
    error: str | None = None
    """Failure detail, when publishing failed."""


@frozen(kw_only=True)
class ScheduledPost(Identified):
    """A post scheduled for publication."""

    id: str
    status: ScheduleStatus | str
    scheduled_date_time: datetime | None = None
    platform: Platform | str | None = None
    integration: Integration | None = None
    video: PostVideo | None = None
    platform_data: PostPlatformData | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@frozen(kw_only=True)
class ScheduledPostCreated(Identified):
    """What ``POST /v1/schedule/create`` answered."""

    schedule_id: str
    status: ScheduleStatus | str
    scheduled_date_time: datetime | None = None
    platform: Platform | str | None = None
    video_id: str | None = None
