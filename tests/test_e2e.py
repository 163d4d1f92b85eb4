"""The SDK end to end against the emulator over real loopback HTTP (and HTTPS)."""

from __future__ import annotations

import asyncio
import ssl
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import trustme

from asyncclient import (
    AmbiguousCreationError,
    AsyncClient,
    AuthenticationError,
    AvatarScene,
    Caption,
    InsufficientCreditsError,
    MediaType,
    NotFoundError,
    PermissionDeniedError,
    Plan,
    PlatformData,
    PresetSettings,
    ProductAdSettings,
    TemplateScene,
    TemplateVariable,
    ValidationError,
    VideoFailedError,
    VideoScene,
    VideoStatus,
)
from asyncclient.emulator import Emulator
from tests.conftest import connect

SCALE = 60.0


pytestmark = pytest.mark.emulator(seed=1)


def sdk(emu: Emulator, key: str, plan: Plan = Plan.PREMIUM, **kw: Any) -> AsyncClient:
    return connect(emu, key, plan=plan, **kw)


async def test_every_format_is_created_and_completes(emu: Emulator, client: AsyncClient) -> None:
    cat = emu.catalog
    a, v, vid, img = cat.avatars[0], cat.voices[0], cat.media_videos[0], cat.media_images[0]
    made = [
        await client.projects.create_ugc_ads(script="Buy", avatar_id=a, voice_id=v, media=[vid]),
        await client.projects.create_script_to_video(
            script="A story",
            voice_id=v,
            media_type=MediaType.AI_IMAGES,
            preset_settings=PresetSettings(preset="anime"),
        ),
        await client.projects.create_product_ads(
            script="Look",
            avatar_id=a,
            voice_id=v,
            product_ad_settings=ProductAdSettings(website_url="https://shop.example"),
        ),
        await client.projects.create_scenes(
            scenes=[AvatarScene(script="Hi", avatar_id=a, voice_id=v), VideoScene(media_id=vid)]
        ),
        await client.projects.create_hook_demo(avatar_id=a, text="Wait for it", media=[img]),
        await client.projects.create_talking_avatar(script="Hello", avatar_id=a, voice_id=v),
        await client.projects.create_ugc_video(
            script="Hola",
            avatar_id=a,
            voice_id=v,
            caption=Caption(preset="beast"),
            aspect_ratio="ratio_9_16",
            language="es",
        ),
        await client.projects.create_add_captions(media=vid),
        await client.projects.create_from_template(
            template_id="tpl_thanks",
            title="Thanks Ann",
            scenes=[
                TemplateScene(
                    script="Thank you {{first_name}}",
                    variables=[TemplateVariable(key="first_name", value="Ann")],
                )
            ],
        ),
    ]
    assert made[4].status == "COMPLETED"  # hook plus demo: done at once
    assert made[8].status == "STARTED" and made[8].video_id is None  # "processing"
    assert made[3].video_id is None and made[3].project_id
    emu.advance(1000)
    videos = await asyncio.wait_for(asyncio.gather(*made), 10)
    for job, video in zip(made, videos, strict=True):
        assert job.done() and job.status == "COMPLETED", job
        assert video.status == VideoStatus.COMPLETED, (job.format, video.message)
        assert video.id == job.video_id and video.project_id == job.project_id
        assert video.url and video.progress == 100
        assert video.duration_in_seconds == pytest.approx((video.duration_in_frames or 0) / 25)


async def test_status_errors_map_to_exceptions(emu: Emulator, client: AsyncClient) -> None:
    async with sdk(emu, "not-a-key") as bad:
        with pytest.raises(AuthenticationError, match="x-api-key"):
            await bad.integrations.list()
    async with sdk(emu, emu.add_team(permitted=False)) as unpaid:
        with pytest.raises(PermissionDeniedError):
            await unpaid.integrations.list()
    with pytest.raises(NotFoundError, match="Video not found"):
        await client.videos.get("vid_nope")
    other_key = emu.add_team(plan="premium", credits=100)
    cat = emu.catalog
    async with sdk(emu, other_key) as other:
        theirs = await other.projects.create_talking_avatar(
            script="Mine", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
    assert theirs.video_id is not None
    with pytest.raises(PermissionDeniedError):
        await client.videos.get(theirs.video_id)


async def test_not_enough_credits(emu: Emulator) -> None:
    key = emu.add_team(plan="premium", credits=0)
    async with sdk(emu, key) as poor:
        with pytest.raises(InsufficientCreditsError) as info:
            await poor.projects.create_talking_avatar(
                script="Hi", avatar_id=emu.catalog.avatars[0], voice_id=emu.catalog.voices[0]
            )
    assert info.value.message == "not enough credits"
    assert emu.credits(key) == 0


async def test_invalid_input_sends_nothing(emu: Emulator, client: AsyncClient) -> None:
    before = len(emu.requests)
    with pytest.raises(ValidationError) as info:
        await client.projects.create_talking_avatar(
            script="", avatar_id="a" * 31, voice_id="v", webhook="http://x.example/hook"
        )
    assert len(info.value.errors) == 3
    assert len(emu.requests) == before


async def test_pagination_counts_projects(emu: Emulator, client: AsyncClient) -> None:
    a = emu.catalog.avatars[0]
    for i in range(23):
        await client.projects.create_hook_demo(avatar_id=a, text=f"hook {i}", name=f"h{i}")
    page = await client.videos.list_page(type="hook_demo", limit=10, offset=20)
    assert (page.total, page.limit, page.offset, len(page.items)) == (23, 10, 20, 3)
    names = [v.name async for v in client.videos.list(type="hook_demo", page_size=10)]
    assert sorted(names) == sorted(f"h{i}" for i in range(23))


async def test_schedule_and_social_round_trip(emu: Emulator, client: AsyncClient) -> None:
    done = await client.projects.create_hook_demo(avatar_id=emu.catalog.avatars[0], text="Go")
    assert done.video_id is not None
    integrations = await client.integrations.list()
    videosite = next(i for i in integrations if i.type == "videosite")
    when = datetime.now(timezone.utc) + timedelta(hours=2)
    post = await client.schedule.create(
        done.video_id, videosite.id, when, PlatformData(title="Launch", tags=["a", "b"])
    )
    assert post.status == "pending"
    emu.advance(3 * 3600)
    posts = [p async for p in client.schedule.list()]
    assert [(p.id, p.status) for p in posts] == [(post.schedule_id, "published")]
    with pytest.raises(ValidationError, match=r"platformData\.tags"):
        await client.schedule.create(
            done.video_id, videosite.id, when, PlatformData(tags=["t"] * 31)
        )

    account_name = emu.catalog.accounts["clipsite"][0]
    account = await client.social.analyze_account("@" + account_name, "clipsite")
    assert account.username == account_name
    created = await client.social.create_search("home workout", "clipsite", limit=12)
    assert created.search.keywords_status == "pending"
    found = [v async for v in client.social.search_videos(created.search.id, page_size=5)]
    assert len(found) == 12 and len({v.id for v in found}) == 12
    niche = await client.social.niche_videos_page("fitness", limit=3)
    assert niche.niche is not None and niche.niche.id == "fitness" and len(niche.items) == 3
    with pytest.raises(NotFoundError):
        await client.social.niche_videos_page("no-such-niche")


async def test_saturating_a_free_plan_gets_no_429() -> None:
    scale = 600.0  # Free's 10 a minute become 100 a second
    async with Emulator(time_scale=scale) as emu:
        key = emu.add_team(plan="free", credits=10)
        rate = Plan.FREE.rate_limit.scaled(scale)
        async with AsyncClient(key, base_url=emu.url, plan=rate) as free:
            # 60 requests against a burst of 20: the bucket paces the other 40.
            await asyncio.gather(*(free.integrations.list() for _ in range(60)))
        assert emu.counters.rate_limited == 0
        assert emu.counters.statuses[200] == 60


async def test_dropped_creation_is_not_resent_and_reconciles(
    emu: Emulator, client: AsyncClient
) -> None:
    emu.faults.add("POST /v1/project/create/talking-avatar", "drop_after", times=1)
    cat = emu.catalog
    with pytest.raises(AmbiguousCreationError) as info:
        await client.projects.create_talking_avatar(
            script="Once", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="only-once"
        )
    team = emu.team_id(client._transport._api_key)
    assert emu.counters.projects[team] == 1  # created exactly once, not resent
    found = await client.projects.reconcile(info.value)
    assert found is not None and found.video_id is not None
    video = await client.videos.get(found.video_id)
    assert video.name == "only-once"


async def test_reconcile_finds_nothing_when_nothing_was_made(
    emu: Emulator, client: AsyncClient
) -> None:
    emu.faults.add("POST /v1/project/create/talking-avatar", "status", status=502, times=1)
    cat = emu.catalog
    with pytest.raises(AmbiguousCreationError) as info:
        await client.projects.create_talking_avatar(
            script="Never", avatar_id=cat.avatars[0], voice_id=cat.voices[0], name="ghost"
        )
    assert await client.projects.reconcile(info.value) is None


async def test_https_with_a_private_ca() -> None:
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(server_ctx)
    client_ctx = ssl.create_default_context()
    ca.configure_trust(client_ctx)
    async with Emulator(time_scale=SCALE, ssl=server_ctx) as emu:
        assert emu.url.startswith("https://127.0.0.1:")
        async with sdk(emu, emu.add_team(), ssl_context=client_ctx) as client:
            integrations = await client.integrations.list()
    assert {i.type for i in integrations} == {"videosite", "clipsite", "photosite"}


async def test_an_unfilled_placeholder_is_sent_and_the_video_fails(
    emu: Emulator, client: AsyncClient
) -> None:
    # Spec 4.9 rule 2: the service takes it and the generation fails; the SDK sends it.
    scene = TemplateScene(script="Thank you {{first_name}}", variables=[])
    job = await client.projects.create_from_template(
        template_id="tpl_thanks", title="Nobody", scenes=[scene]
    )
    assert [r.path for r in emu.requests if r.method == "POST"] == ["/v1/project/create"]
    emu.advance(1000)
    with pytest.raises(VideoFailedError):
        await asyncio.wait_for(job, 5)
