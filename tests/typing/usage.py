"""Uses the public API as a user would; checked by ``mypy --strict tests/typing`` in CI.

It is never run; a type error here means the public surface changed shape.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import asyncclient
from asyncclient import (
    AspectRatio,
    AsyncClient,
    AvatarScene,
    Batch,
    BatchProgress,
    Caption,
    CaptionPreset,
    CreatedProject,
    Page,
    PlatformData,
    ProductAdSettings,
    RowResult,
    TemplateScene,
    TemplateVariable,
    Video,
    VideoDetail,
    VideoJob,
    VideoScene,
    VideoStatus,
)
from asyncclient.webhooks import WebhookEvent, WebhookReceiver, parse_event


async def main() -> None:
    async with AsyncClient("key", base_url="http://127.0.0.1:8080") as client:
        created: VideoJob = await client.projects.create_product_ads(
            script="Look at this",
            avatar_id="avatar_1",
            voice_id="voice_1",
            product_ad_settings=ProductAdSettings(
                website_url="https://shop.example", avatar_intro_seconds=3
            ),
            aspect_ratio=AspectRatio.RATIO_16_9,
            caption=Caption(preset=CaptionPreset.BEAST, alignment="bottom"),
        )
        video_id: str | None = created.video_id
        finished: VideoDetail = await created
        again: VideoDetail = await created.wait(timeout=60)
        print(finished.url, again.id, created.status, created.progress, created.done())
        async for update in created.updates():
            print(update.status, update.progress)
        if video_id is not None:
            detail: VideoDetail = await client.videos.get(video_id)
            done: bool = detail.status == VideoStatus.COMPLETED
            print(done, detail.duration_in_seconds)
        rebuilt: VideoJob = client.jobs.from_project_id("proj_1")
        print(rebuilt.video_ids)
        origin: CreatedProject | None = created.created
        print(origin)

        await client.projects.create_scenes(
            scenes=[
                AvatarScene(script="Hi", avatar_id="a", voice_id="v"),
                VideoScene(media_id="m1"),
            ]
        )
        await client.projects.create_from_template(
            template_id="tpl_1",
            title="For Ann",
            scenes=[
                TemplateScene(
                    script="Hello {{first_name}}",
                    variables=[TemplateVariable(key="first_name", value="Ann")],
                )
            ],
        )
        async for video in client.videos.list(status="completed", page_size=100):
            v: Video = video
            print(v.id, v.created_at)
        page: Page[Video] = await client.videos.list_page(limit=10)
        print(page.total, page.has_more)

        when = datetime.now(timezone.utc) + timedelta(hours=1)
        post = await client.schedule.create(
            "vid", "int_1", when, PlatformData(title="Hi", tags=["a"]), platform="videosite"
        )
        print(post.schedule_id)
        async for sv in client.social.niche_videos("fitness", platform="clipsite"):
            print(sv.viral_score)
        data = await client.request("GET", "/v1/avatar/list", params={"type": "library"})
        print(data)

        def show(progress: BatchProgress) -> None:
            print(progress.completed, progress.eta)

        batch: Batch = client.templates.generate_many(
            "tpl_1",
            [{"title": "For Ann", "first_name": "Ann"}],
            journal="j.jsonl",
            on_progress=show,
        )
        results: list[RowResult] = await batch
        print([r.status for r in results if r.ok])
        saved: Path = await client.videos.download("vid_1", "out/")
        print(saved)

        async def on_event(event: WebhookEvent) -> None:
            finished: VideoDetail = await event.job(client)
            print(event.status, finished.url)

        receiver = WebhookReceiver(on_event)
        print(receiver.app("/hooks"), parse_event(b"{}").key)

    async with AsyncClient(
        "key",
        base_url="http://127.0.0.1:8080",
        webhook_url="https://backend.example/hooks",
        previous_api_keys=["old-key"],
    ) as fleet_member:
        seen = fleet_member.webhooks.on_event(on_event)
        url: str | None = fleet_member.notification_url
        print(seen, url, fleet_member.webhooks.app("/hooks"), fleet_member.webhooks.handle)

    try:
        AsyncClient()
    except asyncclient.ValidationError as exc:
        errors: list[str] = exc.errors
        print(errors)
    except asyncclient.RateLimitError as exc:
        wait: float | None = exc.retry_after
        print(wait)
