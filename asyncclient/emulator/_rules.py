"""Request rules of the creation endpoints (spec 4.1 to 4.9, 7, 8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asyncclient.emulator._seed import Catalog
from asyncclient.emulator._validate import Checker, is_https_url, is_web_url
from asyncclient.models import enums

__all__ = ["RULES", "check_template_generation"]

Body = dict[str, Any]


def _ugc_ads(c: Checker, b: Body) -> None:
    # spec 4.1; voiceId marked required, yet the avatar's default voice is used when omitted
    c.script(b)
    c.ref(b, "avatarId", "avatarId", "avatar", required=True)
    c.ref(b, "voiceId", "voiceId", "voice")
    c.media_list(b, required=True, min_items=1)
    c.lipsync(b)
    ad = c.obj(b, "adSettings", "adSettings")
    if ad is not None:
        c.enum(ad, "bRollType", "adSettings.bRollType", list(enums.BRollType))
        c.boolean(ad, "removeAvatarBackground", "adSettings.removeAvatarBackground")
    c.aspect_ratio(b)
    c.caption(b)
    c.audio(b)


def _script_to_video(c: Checker, b: Body) -> None:
    # spec 4.2
    c.script(b)
    c.ref(b, "voiceId", "voiceId", "voice", required=True)
    media_type = c.enum(b, "mediaType", "mediaType", list(enums.MediaType), required=True)
    preset = c.obj(b, "presetSettings", "presetSettings")
    if media_type in ("ai-images", "ai-videos") or preset is not None:
        p = preset or {}
        if media_type in ("ai-images", "ai-videos") and p.get("preset") is None:
            c.add("presetSettings.preset", "preset is required")
        else:
            c.enum(p, "preset", "presetSettings.preset", list(enums.VisualPreset))
        c.string(p, "quality", "presetSettings.quality")  # values beyond base, pro: not shown
    c.media_list(b, required=media_type == "media", min_items=1 if media_type == "media" else 0)
    game = c.obj(b, "gameplaySettings", "gameplaySettings", required=media_type == "gameplay")
    if game is not None:
        c.string(game, "selectedGame", "gameplaySettings.selectedGame")
        c.string(game, "selectedVideo", "gameplaySettings.selectedVideo")
    c.aspect_ratio(b)
    c.boolean(b, "addStickers", "addStickers")
    c.caption(b)
    c.audio(b)


def _product_ads(c: Checker, b: Body) -> None:
    # spec 4.3
    c.script(b)
    settings = c.obj(b, "productAdSettings", "productAdSettings", required=True)
    if settings is not None:
        url = settings.get("websiteUrl")
        if url is None or url == "":
            c.add("productAdSettings.websiteUrl", "website URL is required")
        elif not isinstance(url, str) or not is_https_url(url):
            c.add("productAdSettings.websiteUrl", "invalid website URL")
        c.number(
            settings, "avatarIntroSeconds", "productAdSettings.avatarIntroSeconds", low=1, high=30
        )
        for key in ("scrollInterval", "scrollDuration", "scrollDelay"):
            c.number(settings, key, f"productAdSettings.{key}")
        c.enum(settings, "scrollMode", "productAdSettings.scrollMode", list(enums.ScrollMode))
    c.ref(b, "avatarId", "avatarId", "avatar", required=True)
    c.ref(b, "voiceId", "voiceId", "voice", required=True)
    c.lipsync(b)
    c.aspect_ratio(b)
    c.boolean(b, "addStickers", "addStickers")
    c.caption(b)
    c.audio(b)


# spec 4.4 and 7: the required fields of each scene type, with the words of the messages
_SCENE_NEEDS = {
    "avatar": (("script", "script"), ("avatarId", "avatar ID"), ("voiceId", "voice ID")),
    "video": (("mediaId", "media ID"),),
    "picture_in_picture": (
        ("script", "script"),
        ("avatarId", "avatar ID"),
        ("voiceId", "voice ID"),
        ("mediaId", "media ID"),
    ),
    "start_end_frame": (
        ("startFrameMediaId", "start frame media ID"),
        ("endFrameMediaId", "end frame media ID"),
        ("framePrompt", "frame prompt"),
    ),
}
_SCENE_LABEL = {
    "avatar": "avatar scenes",
    "video": "video scenes",
    "picture_in_picture": "picture-in-picture scenes",
    "start_end_frame": "start/end frame scenes",
}


def _scene(c: Checker, scene: Any, path: str) -> None:
    if not isinstance(scene, dict):
        c.add(path, "must be an object")
        return
    kind = c.enum(scene, "type", f"{path}.type", list(_SCENE_NEEDS), required=True)
    if kind is None:
        return
    missing = [(k, words) for k, words in _SCENE_NEEDS[kind] if scene.get(k) in (None, "")]
    for key, words in missing:  # spec 7 "avatar scene fields", per field: scenes[0].script
        c.add(f"{path}.{key}", f"{words} is required for {_SCENE_LABEL[kind]}")
    if missing:
        return
    c.string(scene, "script", f"{path}.script", max_len=10000)
    c.ref(scene, "avatarId", f"{path}.avatarId", "avatar")
    c.ref(scene, "voiceId", f"{path}.voiceId", "voice")
    for key in ("mediaId", "startFrameMediaId", "endFrameMediaId"):
        if key in scene:
            c.media_id(scene[key], f"{path}.{key}")
    c.string(scene, "framePrompt", f"{path}.framePrompt")  # length: not shown
    c.enum(scene, "frameModel", f"{path}.frameModel", list(enums.FrameModel))
    c.number(scene, "frameDuration", f"{path}.frameDuration")  # unit and bounds: not shown


def _scenes(c: Checker, b: Body) -> None:
    # spec 4.4
    scenes = b.get("scenes")
    if scenes is None or scenes == []:
        c.add("scenes", "at least one scene is required")
    elif not isinstance(scenes, list):
        c.add("scenes", "must be an array")
    elif len(scenes) > 50:
        c.add("scenes", "cannot have more than 50 scenes")
    else:
        for i, scene in enumerate(scenes):
            _scene(c, scene, f"scenes[{i}]")
    lang = b.get("language")  # spec 4.4: exactly 2 characters, so "" is refused too
    if lang is not None and (not isinstance(lang, str) or len(lang) != 2):
        c.add("language", "language must be exactly 2 characters")
    c.aspect_ratio(b)
    c.boolean(b, "addStickers", "addStickers")
    c.caption(b)
    c.audio(b)


def _hook_demo(c: Checker, b: Body) -> None:
    # spec 4.5
    c.ref(b, "avatarId", "avatarId", "avatar", required=True)
    c.string(b, "text", "text", required=True, max_len=5000)
    ts = c.obj(b, "textSettings", "textSettings")
    if ts is not None:
        c.enum(ts, "preset", "textSettings.preset", list(enums.TextPreset))
        c.alignment(ts, "textSettings.alignment")
        c.hex_colour(ts, "textColor", "textSettings.textColor")
        c.hex_colour(ts, "backgroundColor", "textSettings.backgroundColor", also="transparent")
        c.boolean(ts, "disabled", "textSettings.disabled")
    c.media_list(b, required=False)
    c.aspect_ratio(b)


def _talking_avatar(c: Checker, b: Body) -> None:
    # spec 4.6
    c.script(b)
    c.ref(b, "avatarId", "avatarId", "avatar", required=True)
    c.ref(b, "voiceId", "voiceId", "voice", required=True)
    c.lipsync(b)
    c.caption(b)
    c.audio(b)


def _ugc_video(c: Checker, b: Body) -> None:
    # spec 4.7
    c.script(b)
    c.ref(b, "avatarId", "avatarId", "avatar", required=True)
    c.ref(b, "voiceId", "voiceId", "voice", required=True)
    c.caption(b, required=True)
    c.aspect_ratio(b, required=True)
    c.enum(
        b,
        "language",
        "language",
        list(enums.UGCLanguage),
        required=True,
        reason="invalid language (use en or es)",
    )


def _add_captions(c: Checker, b: Body) -> None:
    # spec 4.8, spec 7 (captions media missing)
    media = b.get("media")
    if media is None or media == "":
        c.add("media", "media ID is required")
    elif not isinstance(media, str):
        c.add("media", "must be a string")
    elif media in c.catalog.media_images:
        c.add("media", "media is not a video")
    elif media not in c.catalog.media_videos:
        c.add("media", "media not found")
    c.boolean(b, "addStickers", "addStickers")
    c.caption(b)


RULES: dict[str, Callable[[Checker, Body], None]] = {
    "ugc-ads": _ugc_ads,
    "script-to-video": _script_to_video,
    "product-ads": _product_ads,
    "scenes": _scenes,
    "hook-demo": _hook_demo,
    "talking-avatar": _talking_avatar,
    "ugc-video": _ugc_video,
    "add-captions": _add_captions,
}


def _template_scene(c: Checker, scene: Any, path: str) -> None:
    if not isinstance(scene, dict):
        c.add(path, "must be an object")
        return
    c.string(scene, "script", f"{path}.script", required=True, max_len=5000, min_len=0)
    c.ref(scene, "voice", f"{path}.voice", "voice")
    avatar = c.obj(scene, "avatar", f"{path}.avatar")
    if avatar is not None:
        c.ref(avatar, "id", f"{path}.avatar.id", "avatar")
    variables = scene.get("variables")
    if not isinstance(variables, list):
        c.add(
            f"{path}.variables",
            "variables is required" if variables is None else "must be an array",
        )
        return
    if len(variables) > 20:
        c.add(f"{path}.variables", "cannot have more than 20 variables")
        return
    for j, var in enumerate(variables):
        vpath = f"{path}.variables[{j}]"
        if not isinstance(var, dict):
            c.add(vpath, "must be an object")
            continue
        c.string(var, "key", f"{vpath}.key", required=True, max_len=100)
        kind = c.enum(var, "type", f"{vpath}.type", list(enums.TemplateVariableType))
        value = c.string(var, "value", f"{vpath}.value", required=True, max_len=2000, min_len=0)
        # spec 2.9: a media variable's value is a URL; "" stays valid (spec 4.9 rule 3)
        if kind == "media" and value and not is_web_url(value):
            c.add(f"{vpath}.value", "must be a URL for a media variable")


def check_template_generation(catalog: Catalog, c: Checker, b: Body) -> None:
    """Check a template generation body (spec 4.9, 8.3)."""
    tid = c.string(b, "templateId", "templateId", required=True, max_len=20)
    templates = {t["id"]: t for t in catalog.records["templates"]}
    if tid is not None and tid not in templates:
        c.add("templateId", f"template {tid} not found")
    kind = c.string(b, "type", "type", required=True)
    if kind is not None and tid in templates and kind != templates[tid]["type"]:
        c.add("type", f"must match the template type ({templates[tid]['type']})")
    c.string(b, "title", "title", required=True, max_len=200)  # spec 8.3 (4.9 says 100)
    c.boolean(b, "caption", "caption", required=True)
    c.string(b, "language", "language", required=True, max_len=2)
    scenes = b.get("scenes")
    if scenes is None or scenes == []:
        c.add("scenes", "at least one scene is required")
    elif not isinstance(scenes, list):
        c.add("scenes", "must be an array")
    elif len(scenes) > 20:
        c.add("scenes", "cannot have more than 20 scenes")
    else:
        for i, scene in enumerate(scenes):
            _template_scene(c, scene, f"scenes[{i}]")
    c.webhook(b)
    c.metadata(b)
