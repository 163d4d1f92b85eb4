"""Creation of videos in the nine formats (spec 4.1 to 4.9).

Each ``create_*`` method builds the request body of its endpoint, checks every
rule of the spec before sending anything (``ValidationError`` lists all
problems), and sends it. :meth:`Projects.create` sends any prepared request.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

from asyncclient.awaiting.jobs import Jobs, VideoJob
from asyncclient.errors import AmbiguousCreationError
from asyncclient.http.caller import Caller
from asyncclient.models.common import (
    AdSettings,
    Audio,
    Caption,
    GameplaySettings,
    PresetSettings,
    ProductAdSettings,
    TextSettings,
)
from asyncclient.models.enums import AspectRatio, LipsyncModel, MediaType, UGCLanguage
from asyncclient.models.requests import (
    AddCaptionsRequest,
    CreationRequest,
    HookDemoRequest,
    ProductAdsRequest,
    ScenesRequest,
    ScriptToVideoRequest,
    TalkingAvatarRequest,
    TemplateGenerationRequest,
    UGCAdsRequest,
    UGCVideoRequest,
)
from asyncclient.models.scenes import Scene, TemplateScene
from asyncclient.models.videos import CreatedProject
from asyncclient.resources._base import Resource
from asyncclient.resources._creation import created_from_envelope, find_created
from asyncclient.resources.videos import Videos

if TYPE_CHECKING:
    from asyncclient.http.prepared import PreparedCreation

__all__ = ["Projects"]

Metadata = dict[str, Any]


class Projects(Resource):
    """``client.projects``: one ``create_*`` method per creation endpoint.

    Args:
        caller: The request path.
        jobs: Makes the job each creation returns.
        videos: Where :meth:`reconcile` looks for an ambiguous creation's video.
        webhook: The notification URL a creation without its own ``webhook`` carries
            (the client's ``webhook_url`` with its token).
    """

    def __init__(
        self, caller: Caller, *, jobs: Jobs, videos: Videos, webhook: str | None = None
    ) -> None:
        super().__init__(caller)
        self._jobs = jobs
        self._videos = videos
        self._webhook = webhook

    async def create(self, request: CreationRequest) -> VideoJob:
        """Validate and send any creation request; ``await`` the job for the video.

        Raises:
            ValidationError: Before sending, with every problem found.
            InsufficientCreditsError: The balance does not cover it.
            AmbiguousCreationError: It may or may not have been created (not resent).
        """
        from asyncclient.http.prepared import prepare_creation  # the rules load on first use

        if self._webhook is not None and request.webhook is None:
            request = attrs.evolve(request, webhook=self._webhook)
        return await self.submit(prepare_creation(request))

    async def submit(self, prepared: PreparedCreation) -> VideoJob:
        """Send a creation request checked and serialised before (a batch's row).

        Raises:
            InsufficientCreditsError: The balance does not cover it.
            AmbiguousCreationError: It may or may not have been created (not resent).
        """
        request = prepared.request
        envelope = await self._caller.send(prepared.wire, creation=request)
        return self._jobs.from_created(created_from_envelope(envelope, request))

    async def reconcile(
        self,
        error: AmbiguousCreationError,
        *,
        skew: float = 300.0,
        max_pages: int = 20,
        claimed: Collection[str] = (),
    ) -> VideoJob | None:
        """Look for the project an ambiguous creation may have made.

        Scans the video list (newest first) for a video of the same format whose name is
        the request's name (a template's title), made after the request left by the
        service's own clock (``error.service_sent_after``, read from the ``Date`` of its
        earlier responses; ``skew`` seconds before ``error.sent_at`` on ours only when
        the service's is unknown), and not one of ``claimed``.

        None is not yet the service's word that nothing was made: a request may be
        queued and processed after its reply was lost. Only once
        :data:`~asyncclient.batch.settle.SETTLE_WINDOW` (10 minutes) has passed since
        the request left, longer than any timeout on either side, does None mean that
        nothing was made and the request may be sent again; a batch looks again until
        then and keeps the row pending meanwhile.

        Args:
            error: What the creation raised.
            skew: Allowed difference between our clock and the service's, in seconds,
                when the service's is unknown.
            max_pages: Pages of 100 projects to scan at most.
            claimed: Projects already owned by other requests (one project satisfies
                one request only): never matched.

        Returns:
            A job for the project when exactly one unclaimed project matches; ``None``
            when none does yet.

        Raises:
            AmbiguousCreationError: Several projects match; their ids are in the message.
            ValidationError: The request had no name to look for.
        """
        video = await find_created(
            self._videos, error, skew=skew, max_pages=max_pages, claimed=claimed
        )
        if video is None:
            return None
        found = CreatedProject(
            project_id=video.project_id,
            video_id=video.id,
            status=str(video.status),
            format=error.format,
        )
        return self._jobs.from_created(found)

    def service_now(self) -> datetime | None:
        """A lower bound of the service's clock now (see ``Caller.service_now``)."""
        return self._caller.service_now()

    async def create_ugc_ads(
        self,
        *,
        script: str,
        avatar_id: str,
        voice_id: str | None = None,
        media: list[str],
        lipsync_model: LipsyncModel | str | None = None,
        ad_settings: AdSettings | None = None,
        music_id: str | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        caption: Caption | None = None,
        audio: Audio | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """UGC ad: an avatar with b-roll from 1 to 50 uploaded media (spec 4.1).

        Without ``voice_id`` the avatar's default voice is used (spec 4.1).
        """
        return await self.create(
            UGCAdsRequest(
                script=script,
                avatar_id=avatar_id,
                voice_id=voice_id,
                media=media,
                lipsync_model=lipsync_model,
                ad_settings=ad_settings,
                music_id=music_id,
                aspect_ratio=aspect_ratio,
                caption=caption,
                audio=audio,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_script_to_video(
        self,
        *,
        script: str,
        voice_id: str,
        media_type: MediaType | str,
        preset_settings: PresetSettings | None = None,
        media: list[str] | None = None,
        gameplay_settings: GameplaySettings | None = None,
        music_id: str | None = None,
        caption: Caption | None = None,
        audio: Audio | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        add_stickers: bool | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Script to video: narration over generated, uploaded or gameplay media (spec 4.2)."""
        return await self.create(
            ScriptToVideoRequest(
                script=script,
                voice_id=voice_id,
                media_type=media_type,
                preset_settings=preset_settings,
                media=media,
                gameplay_settings=gameplay_settings,
                music_id=music_id,
                caption=caption,
                audio=audio,
                aspect_ratio=aspect_ratio,
                add_stickers=add_stickers,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_product_ads(
        self,
        *,
        script: str,
        product_ad_settings: ProductAdSettings,
        avatar_id: str,
        voice_id: str,
        lipsync_model: LipsyncModel | str | None = None,
        music_id: str | None = None,
        caption: Caption | None = None,
        audio: Audio | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        add_stickers: bool | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Product ad: an avatar before a scrolling capture of a web page (spec 4.3)."""
        return await self.create(
            ProductAdsRequest(
                script=script,
                product_ad_settings=product_ad_settings,
                avatar_id=avatar_id,
                voice_id=voice_id,
                lipsync_model=lipsync_model,
                music_id=music_id,
                caption=caption,
                audio=audio,
                aspect_ratio=aspect_ratio,
                add_stickers=add_stickers,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_scenes(
        self,
        *,
        scenes: list[Scene],
        music_id: str | None = None,
        caption: Caption | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        add_stickers: bool | None = None,
        audio: Audio | None = None,
        language: str | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Multi-scene storyboard of 1 to 50 scenes (spec 4.4).

        The response names the project only; the video is found by project id.
        """
        return await self.create(
            ScenesRequest(
                scenes=scenes,
                music_id=music_id,
                caption=caption,
                aspect_ratio=aspect_ratio,
                add_stickers=add_stickers,
                audio=audio,
                language=language,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_hook_demo(
        self,
        *,
        avatar_id: str,
        text: str,
        text_settings: TextSettings | None = None,
        media: list[str] | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        music_id: str | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Hook plus demo: a text hook over media, made in real time (spec 4.5).

        The result is ``COMPLETED`` at once.
        """
        return await self.create(
            HookDemoRequest(
                avatar_id=avatar_id,
                text=text,
                text_settings=text_settings,
                media=media,
                aspect_ratio=aspect_ratio,
                music_id=music_id,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_talking_avatar(
        self,
        *,
        script: str,
        avatar_id: str,
        voice_id: str,
        music_id: str | None = None,
        lipsync_model: LipsyncModel | str | None = None,
        caption: Caption | None = None,
        audio: Audio | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Talking avatar (spec 4.6)."""
        return await self.create(
            TalkingAvatarRequest(
                script=script,
                avatar_id=avatar_id,
                voice_id=voice_id,
                music_id=music_id,
                lipsync_model=lipsync_model,
                caption=caption,
                audio=audio,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_ugc_video(
        self,
        *,
        script: str,
        avatar_id: str,
        voice_id: str,
        caption: Caption,
        aspect_ratio: AspectRatio | str,
        language: UGCLanguage | str,
        music_id: str | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """UGC video in English or Spanish (spec 4.7)."""
        return await self.create(
            UGCVideoRequest(
                script=script,
                avatar_id=avatar_id,
                voice_id=voice_id,
                caption=caption,
                aspect_ratio=aspect_ratio,
                language=language,
                music_id=music_id,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_add_captions(
        self,
        *,
        media: str,
        caption: Caption | None = None,
        add_stickers: bool | None = None,
        music_id: str | None = None,
        name: str | None = None,
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """Captions transcribed onto an uploaded video (spec 4.8)."""
        return await self.create(
            AddCaptionsRequest(
                media=media,
                caption=caption,
                add_stickers=add_stickers,
                music_id=music_id,
                name=name,
                webhook=webhook,
                metadata=metadata,
            )
        )

    async def create_from_template(
        self,
        *,
        template_id: str,
        title: str,
        scenes: list[TemplateScene],
        caption: bool = True,
        language: str = "en",
        type: str = "class",
        webhook: str | None = None,
        metadata: Metadata | None = None,
    ) -> VideoJob:
        """A video from a template, with a value for every ``{{variable}}`` (spec 4.9).

        The response names the project only (status ``processing``).

        A placeholder of a scene script without a variable is sent (the service
        accepts it) and the video then fails (spec 4.9 rule 2); ``""`` is a valid
        value. Batches (``templates.generate_many``) refuse such a row instead.

        Raises:
            ValidationError: What the service would refuse, before sending.
        """
        return await self.create(
            TemplateGenerationRequest(
                template_id=template_id,
                title=title,
                scenes=scenes,
                caption=caption,
                language=language,
                type=type,
                webhook=webhook,
                metadata=metadata,
            )
        )
