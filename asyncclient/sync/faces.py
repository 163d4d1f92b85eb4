"""The synchronous client's namespaces: each the async one's methods, blocking.

Every method is declared from the async namespace's own function (see ``_bridge``): its
parameters, types and docstring are the async method's, its result the same or its
synchronous twin (:class:`SyncVideoJob`, :class:`SyncPager`, :class:`SyncBatch`).
``tests/test_sync_client.py`` checks that every public method of an async namespace has
its twin here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from asyncclient.awaiting.jobs import Jobs
from asyncclient.resources.integrations import Integrations
from asyncclient.resources.projects import Projects
from asyncclient.resources.schedule import Schedule
from asyncclient.resources.social import Social
from asyncclient.resources.templates import Templates
from asyncclient.resources.videos import Videos
from asyncclient.sync._bridge import (
    Face,
    blocking,
    blocking_batch,
    blocking_job,
    blocking_job_plain,
    blocking_maybe_job,
    blocking_pager,
    blocking_plain,
)

if TYPE_CHECKING:
    from asyncclient.awaiting.poller import JobPoller
    from asyncclient.webhooks import ClientWebhooks, Handler, WebhookReceiver, WebhookReply

__all__ = [
    "SyncIntegrations",
    "SyncJobs",
    "SyncProjects",
    "SyncSchedule",
    "SyncSocial",
    "SyncTemplates",
    "SyncVideos",
    "SyncWebhooks",
]


class SyncVideos(Face):
    """Read, list and download videos."""

    __slots__ = ()
    get = blocking(Videos.get)
    download = blocking(Videos.download)
    list_page = blocking(Videos.list_page)
    list = blocking_pager(Videos.list)


class SyncProjects(Face):
    """Create videos in the nine formats; each returns a
    :class:`SyncVideoJob`."""

    __slots__ = ()
    create = blocking_job(Projects.create)
    create_ugc_ads = blocking_job(Projects.create_ugc_ads)
    create_script_to_video = blocking_job(Projects.create_script_to_video)
    create_product_ads = blocking_job(Projects.create_product_ads)
    create_scenes = blocking_job(Projects.create_scenes)
    create_hook_demo = blocking_job(Projects.create_hook_demo)
    create_talking_avatar = blocking_job(Projects.create_talking_avatar)
    create_ugc_video = blocking_job(Projects.create_ugc_video)
    create_add_captions = blocking_job(Projects.create_add_captions)
    create_from_template = blocking_job(Projects.create_from_template)
    submit = blocking_job(Projects.submit)
    reconcile = blocking_maybe_job(Projects.reconcile)
    service_now = blocking_plain(Projects.service_now)
    service_time = blocking(Projects.service_time)


class SyncTemplates(Face):
    """List and read templates; generate from one in bulk."""

    __slots__ = ()
    get = blocking(Templates.get)
    list_page = blocking(Templates.list_page)
    list = blocking_pager(Templates.list)
    generate_many = blocking_batch(Templates.generate_many)


class SyncIntegrations(Face):
    """Connected social-platform accounts."""

    __slots__ = ()
    list = blocking(Integrations.list)


class SyncSchedule(Face):
    """Schedule posts to social platforms."""

    __slots__ = ()
    create = blocking(Schedule.create)
    list_page = blocking(Schedule.list_page)
    list = blocking_pager(Schedule.list)


class SyncSocial(Face):
    """Social research: account analysis, searches, niche videos."""

    __slots__ = ()
    analyze_account = blocking(Social.analyze_account)
    create_search = blocking(Social.create_search)
    get_search = blocking(Social.get_search)
    search_videos = blocking_pager(Social.search_videos)
    niche_videos_page = blocking(Social.niche_videos_page)
    niche_videos = blocking_pager(Social.niche_videos)


class SyncJobs(Face):
    """Rebuild jobs from stored ids (a :class:`SyncVideoJob` each)."""

    __slots__ = ()
    from_video_id = blocking_job_plain(Jobs.from_video_id)
    from_project_id = blocking_job_plain(Jobs.from_project_id)
    from_created = blocking_job_plain(Jobs.from_created)

    @property
    def poller(self) -> JobPoller:
        """The client's one poller (it runs in the client's loop thread)."""
        poller: JobPoller = self._async.poller
        return poller


_H = TypeVar("_H", bound="Handler")


class SyncWebhooks(Face):
    """The client's notification receiver, for a synchronous web framework's view.

    ``reply = client.webhooks.respond(body, query=..., headers=...)`` answers one
    notification from its raw parts (a Flask or Django view hands them over and returns
    ``reply.body`` with ``reply.status``); see :meth:`ClientWebhooks.respond`.
    """

    __slots__ = ()
    _async: ClientWebhooks

    @property
    def url(self) -> str | None:
        """The notification URL creations carry (with the token), or None when unset."""
        return self._async.url

    @property
    def receiver(self) -> WebhookReceiver:
        """The underlying receiver (its counters)."""
        return self._async.receiver

    @property
    def jobs_finished(self) -> int:
        """Awaited jobs that a notification finished in this process."""
        return self._async.jobs_finished

    def url_for(self, url: str) -> str:
        """``url`` with this receiver's token: what to give a creation as ``webhook``."""
        return self._async.url_for(url)

    def on_event(self, callback: _H) -> _H:
        """Call ``callback`` with each genuine notification, once (usable as a decorator).
        It runs in the client's loop thread: it must not block for long, nor call the
        synchronous client (hand work to a queue instead)."""
        return self._async.on_event(callback)

    def respond(
        self,
        body: bytes,
        *,
        query: Mapping[str, str | Sequence[str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> WebhookReply:
        """Answer one notification (see :meth:`ClientWebhooks.respond`)."""
        return self._loop.call(self._async.respond, body, query=query, headers=headers)
