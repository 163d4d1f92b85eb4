"""Uses the synchronous client as a user would; checked by ``mypy --strict tests/typing``.

It is never run: each annotation below must hold for the sync face's inferred types
(the parameters and results of the async methods, the jobs, pagers and batches turned
into their synchronous twins). ``reveal_type`` is not used; a wrong type fails mypy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from asyncclient import (
    Client,
    JobUpdate,
    Page,
    RowResult,
    SyncBatch,
    SyncPager,
    SyncVideoJob,
    Template,
    TemplateDetail,
    Video,
    VideoDetail,
)
from asyncclient.webhooks import WebhookReply


def main() -> None:
    with Client("key", base_url="http://127.0.0.1:8080") as client:
        job: SyncVideoJob = client.projects.create_talking_avatar(
            script="Hello", avatar_id="avatar_1", voice_id="voice_1", name="greeting"
        )
        detail: VideoDetail = job.wait(timeout=600)
        updates: Iterator[JobUpdate] = job.updates()
        status: str | None = job.status
        again: VideoDetail = client.videos.get(detail.id)
        pager: SyncPager[Video] = client.videos.list(type="ugc_video", page_size=50)
        for video in pager:
            name: str | None = video.name
        pages: Iterator[Page[Video]] = pager.pages()
        page: Page[Video] = client.videos.list_page(limit=10, offset=0)
        file: Path = client.videos.download(detail, "videos/")
        templates: SyncPager[Template] = client.templates.list()
        template: TemplateDetail = client.templates.get("tpl_welcome")
        batch: SyncBatch = client.templates.generate_many(
            "tpl_welcome", [{"title": "For Ann", "first_name": "Ann"}], spacing=1.0
        )
        results: list[RowResult] = batch.wait()
        for result in batch:
            ok: bool = result.ok
        rebuilt: SyncVideoJob = client.jobs.from_video_id(detail.id)
        maybe: SyncVideoJob | None = None
        reply: WebhookReply = client.webhooks.respond(b"{}", query={"token": ["t"]})
        answer: int = reply.status
        anything: object = client.request("GET", "/v1/integration/list")
        del (
            updates,
            status,
            again,
            name,
            pages,
            page,
            file,
            templates,
            template,
            results,
            ok,
            rebuilt,
            maybe,
            answer,
            anything,
        )
