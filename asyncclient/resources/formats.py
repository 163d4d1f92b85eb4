"""The nine ``create_*`` methods of ``client.projects``: each builds its endpoint's request
and hands it to :meth:`Projects.create`, which checks every rule before sending."""

from __future__ import annotations

from typing import Any

from asyncclient.awaiting.jobs import VideoJob
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

__all__ = ["Formats"]

Metadata = dict[str, Any]


class Formats:
    """The creation methods of ``client.projects`` (:class:`Projects` is one)."""

    __slots__ = ()

    async def create(self, request: CreationRequest) -> VideoJob:
        """Check and send any creation request (:meth:`Projects.create` does it)."""
        raise NotImplementedError

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
        """Make a UGC-style ad: an avatar speaks ``script`` over b-roll cut from your media.

        Args:
            script: What the avatar says.
            avatar_id: The avatar (from the avatar list).
            voice_id: Its voice; without it, the avatar's own.
            media: 1 to 50 uploaded media ids or URLs for the b-roll.
            name: The project's name (how a batch finds it again).
            webhook: Where the service notifies when the video ends.

        ``ad_settings``, ``caption``, ``audio``, ``aspect_ratio``, ``music_id``,
        ``lipsync_model`` and ``metadata`` (echoed in the notification) are optional.

        Returns:
            A :class:`VideoJob`: ``await job`` for the finished video.

        Raises:
            ValidationError: A rule broken, before anything is sent (all of them).
            InsufficientCreditsError: The balance does not cover it.
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
        """Make a narrated video: ``script`` read by ``voice_id`` over generated images
        (``media_type`` ``generated``, styled by ``preset_settings``), your own media, or
        gameplay footage.

        Args:
            script: What is said.
            voice_id: Who says it.
            media_type: ``generated``, ``uploaded`` or ``gameplay``: what the video shows.

        ``preset_settings``, ``media`` or ``gameplay_settings`` describe the chosen media;
        ``music_id``, ``caption``, ``audio``, ``aspect_ratio``, ``add_stickers``, ``name``,
        ``webhook`` and ``metadata`` are optional.

        Returns:
            A :class:`VideoJob`; ``await job`` for the finished video.

        Raises:
            ValidationError: A rule broken, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
        """
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
        """Make a product ad: an avatar introduces a product, then its web page scrolls by.

        Args:
            script: What the avatar says about the product.
            avatar_id: Who says it.
            product_ad_settings: The page's URL (``website_url``), how long the avatar
                speaks first and how the page scrolls.

        ``voice_id``, ``caption``, ``audio``, ``aspect_ratio``, ``music_id``, ``name``,
        ``webhook`` and ``metadata`` are optional.

        Returns:
            A :class:`VideoJob`; ``await job`` for the finished video.

        Raises:
            ValidationError: A rule broken, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
        """
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
        """Make a storyboard video of 1 to 50 ``scenes`` (avatar, video, picture in
        picture, start and end frame), each with its own script.

        The service names only the project at first; the job finds the video by it.

        Returns:
            A :class:`VideoJob`; ``await job`` for the finished video.

        Raises:
            ValidationError: A rule broken, in any scene, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
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
        """Make a hook video: ``text`` over ``avatar_id``, then your demo ``media``; it is
        made at once, so the job is ``COMPLETED`` when this returns (``await job``).

        Raises:
            ValidationError: A rule broken, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
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
        """Make a talking-head video: ``avatar_id`` says ``script`` in ``voice_id``.

        Args:
            script: What the avatar says.
            avatar_id: Who says it (from the avatar list).
            voice_id: In which voice.
            name: The project's name (how a batch finds it again).
            webhook: Where the service notifies when the video ends.

        ``music_id``, ``lipsync_model``, ``caption``, ``audio`` and ``metadata`` (echoed
        in the notification) are optional.

        Returns:
            A :class:`VideoJob`: ``await job`` (or ``job.wait(timeout=...)``) for the
            finished video's :class:`VideoDetail`.

        Raises:
            ValidationError: A rule broken, before anything is sent (all of them).
            InsufficientCreditsError: The balance does not cover it.
        """
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
        """Make a UGC-style video in English or Spanish: ``avatar_id`` says ``script`` in
        ``voice_id``, with ``caption``, in the ``aspect_ratio`` and ``language`` given
        (``await`` the job for the video).

        Raises:
            ValidationError: A rule broken, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
        """
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
        """Add captions to a video of yours: its speech is transcribed onto it.

        Args:
            media: The uploaded video (an id or URL).

        ``caption``, ``add_stickers``, ``music_id``, ``name``, ``webhook`` and ``metadata``
        are optional.

        Returns:
            A :class:`VideoJob`; ``await job`` for the captioned video.

        Raises:
            ValidationError: A rule broken, before anything is sent.
            InsufficientCreditsError: The balance does not cover it.
        """
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
        """Make one video titled ``title`` from the template ``template_id``: each scene's
        ``{{variable}}`` gets a value.

        ``scenes`` follow the template's (``client.templates.get``); the service names
        only the project at first. A placeholder left without a value is sent (the
        service accepts it) and the video then fails; ``""`` is a valid value.
        ``templates.generate_many`` makes many at once and refuses such rows instead.

        Returns:
            A :class:`VideoJob`; ``await job`` for the finished video.

        Raises:
            ValidationError: What the service would refuse, before sending.
            InsufficientCreditsError: The balance does not cover it.
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
