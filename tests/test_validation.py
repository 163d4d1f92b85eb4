"""Client-side request rules (spec parts 2, 4, 7 and 8): asyncclient.validation."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from attrs import evolve

from asyncclient.errors import ValidationError
from asyncclient.models.common import (
    AdSettings,
    Audio,
    Caption,
    GameplaySettings,
    PresetSettings,
    ProductAdSettings,
    TextSettings,
)
from asyncclient.models.enums import (
    AspectRatio,
    CaptionPreset,
    LipsyncModel,
    MediaType,
    Platform,
    ProjectType,
    SocialPlatform,
    TextAlignment,
    UGCLanguage,
    VideoListStatus,
)
from asyncclient.models.requests import (
    AddCaptionsRequest,
    AnalyzeAccountRequest,
    HookDemoRequest,
    PlatformData,
    ProductAdsRequest,
    ScenesRequest,
    ScheduleRequest,
    ScriptToVideoRequest,
    SearchRequest,
    TalkingAvatarRequest,
    TemplateGenerationRequest,
    UGCAdsRequest,
    UGCVideoRequest,
)
from asyncclient.models.scenes import (
    AvatarBox,
    AvatarScene,
    PictureInPictureScene,
    StartEndFrameScene,
    TemplateScene,
    TemplateVariable,
    VideoScene,
)
from asyncclient.validation import (
    check_enum,
    check_id,
    check_offset,
    check_page_size,
    check_range,
    problems,
    raise_if,
    unfilled_placeholders,
    validate,
)

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)
HOOK = "https://hooks.example/done"

UGC_ADS = UGCAdsRequest(script="Hello", avatar_id="av1", voice_id="vo1", media=["m1"])
S2V = ScriptToVideoRequest(
    script="Hello",
    voice_id="vo1",
    media_type=MediaType.AI_IMAGES,
    preset_settings=PresetSettings(preset="anime", quality="pro"),
)
PRODUCT = ProductAdsRequest(
    script="Hello",
    product_ad_settings=ProductAdSettings(website_url="https://shop.example/p/1"),
    avatar_id="av1",
    voice_id="vo1",
)
AVATAR_SCENE = AvatarScene(script="Hi", avatar_id="av1", voice_id="vo1")
SCENES = ScenesRequest(scenes=[AVATAR_SCENE, VideoScene(media_id="m1")], language="en")
HOOK_DEMO = HookDemoRequest(avatar_id="av1", text="Stop scrolling")
TALKING = TalkingAvatarRequest(script="Hello", avatar_id="av1", voice_id="vo1")
UGC_VIDEO = UGCVideoRequest(
    script="Hola",
    avatar_id="av1",
    voice_id="vo1",
    caption=Caption(preset="classic"),
    aspect_ratio="ratio_9_16",
    language="es",
)
CAPTIONS = AddCaptionsRequest(media="vid1")
T_SCENE = TemplateScene(
    script="Hi {{first_name}}, meet {{ product }}",
    variables=[
        TemplateVariable(key="first_name", value="Ana"),
        TemplateVariable(key="product", value=""),
    ],
)
TEMPLATE = TemplateGenerationRequest(template_id="tpl1", title="Spring", scenes=[T_SCENE])
SCHEDULE = ScheduleRequest(
    video_id="v1",
    integration_id="i1",
    scheduled_date_time=NOW + timedelta(hours=1),
    platform_data=PlatformData(title="T", description="D", tags=["a"], privacy_status="public"),
)
ANALYZE = AnalyzeAccountRequest(username="@maker", platform="clipsite")
SEARCH = SearchRequest(search_term="  cooking  ", platform=SocialPlatform.VIDEOSITE, limit=50)

BASELINES: dict[str, Any] = {
    "ugc_ads": UGC_ADS,
    "script_to_video": S2V,
    "product_ads": PRODUCT,
    "scenes": SCENES,
    "hook_demo": HOOK_DEMO,
    "talking_avatar": TALKING,
    "ugc_video": UGC_VIDEO,
    "add_captions": CAPTIONS,
    "template": TEMPLATE,
    "schedule": SCHEDULE,
    "analyze": ANALYZE,
    "search": SEARCH,
}


def found(request: Any, platform: Platform | str | None = None) -> list[str]:
    return problems(request, now=NOW, platform=platform)


@pytest.mark.parametrize("name", list(BASELINES))
@pytest.mark.parametrize("platform", [None, *Platform])
def test_baselines_pass(name: str, platform: Platform | None) -> None:
    assert found(BASELINES[name], platform) == []
    validate(BASELINES[name], now=NOW, platform=platform)


def test_full_baselines_pass() -> None:
    """Every optional field set to a valid value raises nothing."""
    common: dict[str, Any] = {"name": "n" * 100, "webhook": HOOK, "metadata": {"a": [1, None]}}
    caption = Caption(preset=CaptionPreset.RETRO_TV, alignment="middle", disabled=False)
    audio = Audio(speed=1.1, stability=0, similarity_boost=1, style=0.5, use_speaker_boost=True)
    requests = [
        evolve(
            UGC_ADS,
            lipsync_model=LipsyncModel.PRO,
            ad_settings=AdSettings(b_roll_type="rounded-cover", remove_avatar_background=True),
            music_id="mu1",
            aspect_ratio=AspectRatio.RATIO_1_1,
            caption=caption,
            audio=audio,
            **common,
        ),
        evolve(S2V, media_type="gameplay", gameplay_settings=GameplaySettings(selected_game="x")),
        evolve(S2V, media_type="media", preset_settings=None, media=["m1"], add_stickers=True),
        evolve(
            PRODUCT,
            product_ad_settings=ProductAdSettings(
                website_url="https://shop.example:8443/a?b=c",
                avatar_intro_seconds=2.5,
                scroll_interval=1,
                scroll_mode="loop",
            ),
            **common,
        ),
        evolve(
            SCENES,
            scenes=[
                PictureInPictureScene(script="s", avatar_id="a", voice_id="v", media_id="m"),
                StartEndFrameScene(
                    start_frame_media_id="a",
                    end_frame_media_id="b",
                    frame_prompt="p",
                    frame_model="modelb_3_1",
                    frame_duration=5,
                ),
                VideoScene(media_id="m", script="", voice_id=""),
            ],
            **common,
        ),
        evolve(
            HOOK_DEMO,
            text_settings=TextSettings(
                preset="slicedText",
                alignment=TextAlignment.TOP,
                text_color="#FFaa00",
                background_color="transparent",
            ),
            media=["m"] * 50,
        ),
        evolve(TEMPLATE, scenes=[evolve(T_SCENE, avatar=AvatarBox(id="a"), voice="v")] * 20),
    ]
    for request in requests:
        assert found(request) == []


# -- one problem each: (request, expected lines) -----------------------------------------

LONG_HOOK = "https://h.example/" + "a" * (500 - len("https://h.example/"))
CASES: dict[str, tuple[Any, list[str]]] = {
    # scripts (spec 4.1, 7, 8.2)
    "script empty": (evolve(UGC_ADS, script=""), ["script: script is required"]),
    "script None": (evolve(TALKING, script=None), ["script: script is required"]),
    "script not str": (evolve(TALKING, script=5), ["script: must be a string"]),
    "script 10000 ok": (evolve(PRODUCT, script="x" * 10000), []),
    "script 10001": (
        evolve(UGC_VIDEO, script="x" * 10001),
        ["script: script cannot exceed 10000 characters"],
    ),
    # hook text (spec 4.5)
    "text empty": (evolve(HOOK_DEMO, text=""), ["text: text is required"]),
    "text 5000 ok": (evolve(HOOK_DEMO, text="x" * 5000), []),
    "text 5001": (evolve(HOOK_DEMO, text="x" * 5001), ["text: text cannot exceed 5000 characters"]),
    # name and ids (spec 2.2, 8.2)
    "name 101": (evolve(CAPTIONS, name="n" * 101), ["name: must be at most 100 characters"]),
    "avatarId 30 ok": (evolve(TALKING, avatar_id="a" * 30), []),
    "avatarId 31": (
        evolve(TALKING, avatar_id="a" * 31),
        ["avatarId: must be at most 30 characters"],
    ),
    "voiceId 31": (evolve(UGC_ADS, voice_id="v" * 31), ["voiceId: must be at most 30 characters"]),
    "musicId 31": (evolve(CAPTIONS, music_id="m" * 31), ["musicId: must be at most 30 characters"]),
    "hook avatarId 31": (
        evolve(HOOK_DEMO, avatar_id="a" * 31),
        ["avatarId: must be at most 30 characters"],
    ),
    "product avatarId empty": (evolve(PRODUCT, avatar_id=""), ["avatarId: avatar ID is required"]),
    "product voiceId empty": (evolve(PRODUCT, voice_id=""), ["voiceId: voice ID is required"]),
    # webhook (spec 4, 7, 8.2)
    "webhook http": (
        evolve(UGC_ADS, webhook="http://h.example"),
        ["webhook: must be a valid HTTPS URL"],
    ),
    "webhook no host": (
        evolve(TALKING, webhook="https:///x"),
        ["webhook: must be a valid HTTPS URL"],
    ),
    "webhook not a URL": (
        evolve(TEMPLATE, webhook="hooks"),
        ["webhook: must be a valid HTTPS URL"],
    ),
    "webhook bad port": (
        evolve(TALKING, webhook="https://h.example:99999/"),
        ["webhook: must be a valid HTTPS URL"],
    ),
    "webhook 500 ok": (evolve(UGC_ADS, webhook=LONG_HOOK), []),
    "webhook 501": (
        evolve(UGC_ADS, webhook=LONG_HOOK + "b"),
        ["webhook: must be at most 500 characters"],
    ),
    "webhook not str": (evolve(UGC_ADS, webhook=1), ["webhook: must be a string"]),
    # metadata (spec 4, 8.2): '{"k":"..."}' is 8 bytes plus the value
    "metadata 5120 ok": (evolve(UGC_ADS, metadata={"k": "x" * 5112}), []),
    "metadata 5121": (
        evolve(UGC_ADS, metadata={"k": "x" * 5113}),
        ["metadata: metadata cannot exceed 5KB (5120 bytes as JSON, got 5121)"],
    ),
    "metadata counts UTF-8 bytes": (
        evolve(TEMPLATE, metadata={"k": "\u00e9" * 2557}),
        ["metadata: metadata cannot exceed 5KB (5120 bytes as JSON, got 5122)"],
    ),
    "metadata not dict": (
        evolve(UGC_ADS, metadata=["a"]),
        ["metadata: must be an object (a dict)"],
    ),
    "metadata not JSON": (
        evolve(UGC_ADS, metadata={"a": {1, 2}}),
        ["metadata: must be JSON-serialisable"],
    ),
    "metadata NaN": (
        evolve(UGC_ADS, metadata={"a": float("nan")}),
        ["metadata: must be JSON-serialisable"],
    ),
    # enums (spec 2.1)
    "aspectRatio": (
        evolve(UGC_ADS, aspect_ratio="x"),
        ["aspectRatio: invalid value 'x' (use ratio_9_16, ratio_16_9 or ratio_1_1)"],
    ),
    "aspectRatio member name": (
        evolve(HOOK_DEMO, aspect_ratio="RATIO_1_1"),
        ["aspectRatio: invalid value 'RATIO_1_1' (use ratio_9_16, ratio_16_9 or ratio_1_1)"],
    ),
    "lipsyncModel": (
        evolve(UGC_ADS, lipsync_model="max"),
        ["lipsyncModel: invalid lipsync model (use base or pro)"],
    ),
    "caption.alignment": (
        evolve(TALKING, caption=Caption(alignment="centre")),
        ["caption.alignment: alignment value invalid (use top, middle or bottom)"],
    ),
    "caption.preset": (
        evolve(CAPTIONS, caption=Caption(preset="x")),
        ["caption.preset: invalid caption preset 'x'"],
    ),
    "caption.disabled": (
        evolve(CAPTIONS, caption=Caption(disabled="no")),
        ["caption.disabled: must be true or false"],
    ),
    "caption wrong class": (
        evolve(CAPTIONS, caption={"preset": "x"}),
        ["caption: must be a Caption"],
    ),
    "adSettings.bRollType": (
        evolve(UGC_ADS, ad_settings=AdSettings(b_roll_type="diagonal")),
        [
            "adSettings.bRollType: invalid value 'diagonal'"
            " (use down, up, left, right, rounded-cover or full-width)"
        ],
    ),
    "productAdSettings.scrollMode": (
        evolve(
            PRODUCT,
            product_ad_settings=ProductAdSettings(website_url="https://a.b", scroll_mode="x"),
        ),
        ["productAdSettings.scrollMode: invalid value 'x' (use restart, loop, once or fixed)"],
    ),
    "textSettings": (
        evolve(
            HOOK_DEMO, text_settings=TextSettings(preset="x", alignment="left", text_color="red")
        ),
        [
            "textSettings.preset: invalid text preset 'x'",
            "textSettings.alignment: alignment value invalid (use top, middle or bottom)",
            "textSettings.textColor: must be a hex colour",
        ],
    ),
    "textSettings.backgroundColor": (
        evolve(HOOK_DEMO, text_settings=TextSettings(background_color="#12345")),
        ["textSettings.backgroundColor: must be a hex colour or 'transparent'"],
    ),
    "addStickers": (evolve(S2V, add_stickers="yes"), ["addStickers: must be true or false"]),
    "audio": (
        evolve(TALKING, audio=Audio(speed="fast", use_speaker_boost=1)),
        ["audio.speed: must be a finite number", "audio.useSpeakerBoost: must be true or false"],
    ),
    # product ads (spec 4.3, 7)
    **{
        f"avatarIntroSeconds {seconds}": (
            evolve(
                PRODUCT,
                product_ad_settings=ProductAdSettings(
                    website_url="https://a.example", avatar_intro_seconds=seconds
                ),
            ),
            [f"productAdSettings.avatarIntroSeconds: {reason}"] if reason else [],
        )
        for seconds, reason in [
            (1, None),
            (30, None),
            (1.5, None),
            (0, "number must be between 1 and 30"),
            (31, "number must be between 1 and 30"),
            (30.5, "number must be between 1 and 30"),
            (-1, "number must be between 1 and 30"),
            (float("nan"), "must be a finite number"),
            (True, "must be a finite number"),
        ]
    },
    "audio huge int is a number": (evolve(TALKING, audio=Audio(speed=10**400)), []),
    "audio infinity": (
        evolve(TALKING, audio=Audio(stability=float("inf"))),
        ["audio.stability: must be a finite number"],
    ),
    "mediaType unhashable": (
        evolve(S2V, media_type=["media"], preset_settings=None),
        ["mediaType: invalid value ['media'] (use ai-images, ai-videos, media or gameplay)"],
    ),
    "websiteUrl empty": (
        evolve(PRODUCT, product_ad_settings=ProductAdSettings(website_url="")),
        ["productAdSettings.websiteUrl: website URL is required"],
    ),
    "websiteUrl http": (
        evolve(PRODUCT, product_ad_settings=ProductAdSettings(website_url="http://shop.example")),
        ["productAdSettings.websiteUrl: invalid website URL"],
    ),
    "websiteUrl no host": (
        evolve(PRODUCT, product_ad_settings=ProductAdSettings(website_url="https://")),
        ["productAdSettings.websiteUrl: invalid website URL"],
    ),
    "productAdSettings None": (
        evolve(PRODUCT, product_ad_settings=None),
        ["productAdSettings: product ad settings are required"],
    ),
    # script to video (spec 4.2)
    "mediaType invalid": (
        evolve(S2V, media_type="images"),
        ["mediaType: invalid value 'images' (use ai-images, ai-videos, media or gameplay)"],
    ),
    "mediaType None": (evolve(S2V, media_type=None), ["mediaType: media type is required"]),
    "preset needed, no settings": (
        evolve(S2V, preset_settings=None),
        ["presetSettings.preset: preset is required"],
    ),
    "preset needed, empty": (
        evolve(S2V, media_type="ai-videos", preset_settings=PresetSettings(preset="")),
        ["presetSettings.preset: preset is required"],
    ),
    "preset not needed for media": (
        evolve(S2V, media_type=MediaType.MEDIA, preset_settings=None, media=["m"]),
        [],
    ),
    "preset invalid": (
        evolve(S2V, preset_settings=PresetSettings(preset="oil")),
        ["presetSettings.preset: invalid visual style preset 'oil'"],
    ),
    "media needed": (
        evolve(S2V, media_type="media", preset_settings=None),
        ["media: at least 1 media item is required when mediaType is media"],
    ),
    "gameplay needed": (
        evolve(S2V, media_type="gameplay", preset_settings=None),
        ["gameplaySettings: gameplay settings are required when mediaType is gameplay"],
    ),
    # media counts (spec 4.1, 4.2, 4.5, 8.2)
    "media 50 ok": (evolve(UGC_ADS, media=["m"] * 50), []),
    "media 51": (
        evolve(UGC_ADS, media=["m"] * 51),
        ["media: cannot have more than 50 media items"],
    ),
    "media 51 s2v": (
        evolve(S2V, media=["m"] * 51),
        ["media: cannot have more than 50 media items"],
    ),
    "media 51 hook": (
        evolve(HOOK_DEMO, media=["m"] * 51),
        ["media: cannot have more than 50 media items"],
    ),
    "ugc-ads media empty": (
        evolve(UGC_ADS, media=[]),
        ["media: at least 1 media item is required"],
    ),
    "ugc-ads media None": (
        evolve(UGC_ADS, media=None),
        ["media: at least 1 media item is required"],
    ),
    "media item empty": (
        evolve(UGC_ADS, media=["m", ""]),
        ["media[1]: media ID must be a non-empty string"],
    ),
    "media not a list": (evolve(UGC_ADS, media="m1"), ["media: must be a list of media IDs"]),
    "add-captions media": (evolve(CAPTIONS, media=""), ["media: media ID is required"]),
    # UGC video (spec 4.7)
    "ugc language fr": (
        evolve(UGC_VIDEO, language="fr"),
        ["language: invalid language (use en or es)"],
    ),
    "ugc language member": (evolve(UGC_VIDEO, language=UGCLanguage.EN), []),
    "ugc language empty": (evolve(UGC_VIDEO, language=""), ["language: language is required"]),
    "ugc caption None": (evolve(UGC_VIDEO, caption=None), ["caption: caption is required"]),
    "ugc aspectRatio None": (
        evolve(UGC_VIDEO, aspect_ratio=None),
        ["aspectRatio: aspect ratio is required"],
    ),
}


@pytest.mark.parametrize(("request_", "expected"), CASES.values(), ids=CASES.keys())
def test_one_rule(request_: Any, expected: list[str]) -> None:
    assert found(request_) == expected


# -- scenes (spec 4.4) -------------------------------------------------------------------

SCENE_CASES: dict[str, tuple[list[Any], list[str]]] = {
    "avatar scene all missing": (
        [AvatarScene(script="", avatar_id="", voice_id="")],
        [
            "scenes[0].script: script is required for avatar scenes",
            "scenes[0].avatarId: avatar ID is required for avatar scenes",
            "scenes[0].voiceId: voice ID is required for avatar scenes",
        ],
    ),
    "video scene media": (
        [AVATAR_SCENE, VideoScene(media_id="")],
        ["scenes[1].mediaId: media ID is required for video scenes"],
    ),
    "video scene optional fields": (
        [VideoScene(media_id="m", script="x" * 10001, voice_id="v" * 31)],
        [
            "scenes[0].script: script cannot exceed 10000 characters",
            "scenes[0].voiceId: must be at most 30 characters",
        ],
    ),
    "picture in picture": (
        [PictureInPictureScene(script="s", avatar_id="a" * 31, voice_id="v", media_id="")],
        [
            "scenes[0].avatarId: must be at most 30 characters",
            "scenes[0].mediaId: media ID is required for picture-in-picture scenes",
        ],
    ),
    "start end frame": (
        [
            StartEndFrameScene(
                start_frame_media_id="",
                end_frame_media_id="b",
                frame_prompt="",
                frame_model="modelc",
                frame_duration=True,
            )
        ],
        [
            "scenes[0].startFrameMediaId: start frame media ID is required"
            " for start/end frame scenes",
            "scenes[0].framePrompt: frame prompt is required for start/end frame scenes",
            "scenes[0].frameModel: invalid value 'modelc' (use modela_2_5 or modelb_3_1)",
            "scenes[0].frameDuration: must be a finite number",
        ],
    ),
    "avatar scene ids 31": (
        [evolve(AVATAR_SCENE, avatar_id="a" * 31, voice_id="v" * 31)],
        [
            "scenes[0].avatarId: must be at most 30 characters",
            "scenes[0].voiceId: must be at most 30 characters",
        ],
    ),
    "avatar scene ids 30 ok": ([evolve(AVATAR_SCENE, avatar_id="a" * 30, voice_id="v" * 30)], []),
    "script 10000 ok": ([evolve(AVATAR_SCENE, script="x" * 10000)], []),
    "script 10001": (
        [evolve(AVATAR_SCENE, script="x" * 10001)],
        ["scenes[0].script: script cannot exceed 10000 characters"],
    ),
    "no scenes": ([], ["scenes: at least one scene is required"]),
    "50 scenes ok": ([AVATAR_SCENE] * 50, []),
    "51 scenes": ([AVATAR_SCENE] * 51, ["scenes: cannot have more than 50 scenes"]),
    "not a scene": (
        [AVATAR_SCENE, {"type": "avatar"}],
        [
            "scenes[1]: must be an AvatarScene, VideoScene, PictureInPictureScene"
            " or StartEndFrameScene"
        ],
    ),
}


@pytest.mark.parametrize(("scenes", "expected"), SCENE_CASES.values(), ids=SCENE_CASES.keys())
def test_scenes(scenes: list[Any], expected: list[str]) -> None:
    assert found(evolve(SCENES, scenes=scenes)) == expected


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"scenes": None}, ["scenes: at least one scene is required"]),
        ({"language": "eng"}, ["language: must be 2 characters"]),
        ({"language": "e"}, ["language: must be 2 characters"]),
        ({"music_id": "m" * 31}, ["musicId: must be at most 30 characters"]),
        ({"webhook": "ftp://x.example"}, ["webhook: must be a valid HTTPS URL"]),
    ],
)
def test_scenes_request_fields(changes: dict[str, Any], expected: list[str]) -> None:
    assert found(evolve(SCENES, **changes)) == expected


# -- template generation (spec 4.9, 8.3) -------------------------------------------------


def tvar(key: Any = "k", value: Any = "v", type: Any = "text") -> TemplateVariable:
    return TemplateVariable(key=key, value=value, type=type)


def tscene(script: Any = "Hi {{k}}", variables: Any = None) -> TemplateScene:
    return TemplateScene(script=script, variables=[tvar()] if variables is None else variables)


TEMPLATE_CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "type empty": ({"type": ""}, ["type: type is required"]),
    "templateId empty": ({"template_id": ""}, ["templateId: template ID is required"]),
    "templateId 20 ok": ({"template_id": "t" * 20}, []),
    "templateId 21": ({"template_id": "t" * 21}, ["templateId: must be at most 20 characters"]),
    "title empty": ({"title": ""}, ["title: title is required"]),
    "title 100 ok": ({"title": "t" * 100}, []),
    "title 101 ok (spec 8.3)": ({"title": "t" * 101}, []),
    "title 200 ok": ({"title": "t" * 200}, []),
    "title 201": ({"title": "t" * 201}, ["title: must be at most 200 characters"]),
    "caption not bool": ({"caption": "yes"}, ["caption: must be true or false"]),
    "caption None": ({"caption": None}, ["caption: caption is required"]),
    "language empty": ({"language": ""}, ["language: language is required"]),
    "language 3": ({"language": "eng"}, ["language: must be at most 2 characters"]),
    "no scenes": ({"scenes": []}, ["scenes: at least one scene is required"]),
    "20 scenes ok": ({"scenes": [tscene()] * 20}, []),
    "21 scenes": ({"scenes": [tscene()] * 21}, ["scenes: cannot have more than 20 scenes"]),
    "not a template scene": ({"scenes": [AVATAR_SCENE]}, ["scenes[0]: must be a TemplateScene"]),
    "script None": ({"scenes": [tscene(script=None)]}, ["scenes[0].script: script is required"]),
    "script empty ok": ({"scenes": [tscene(script="")]}, []),
    "script 5000 ok": ({"scenes": [tscene(script="x" * 4992 + "{{k}}...")]}, []),
    "script 5001": (
        {"scenes": [tscene(script="x" * 5001)]},
        ["scenes[0].script: script cannot exceed 5000 characters"],
    ),
    "missing variable": (
        {"scenes": [tscene(), tscene(script="Hi {{first_name}} {{k}}")]},
        ["scenes[1].script: missing value for variable 'first_name'"],
    ),
    "placeholders are case-sensitive": (
        {"scenes": [tscene(script="Hi {{Name}}", variables=[tvar("name")])]},
        ["scenes[0].script: missing value for variable 'Name'"],
    ),
    "missing reported once per name": (
        {"scenes": [tscene(script="{{a}} {{a}} {{b}}", variables=[])]},
        [
            "scenes[0].script: missing value for variable 'a'",
            "scenes[0].script: missing value for variable 'b'",
        ],
    ),
    "empty value is valid": ({"scenes": [tscene(variables=[tvar(value="")])]}, []),
    "value None": (
        {"scenes": [tscene(variables=[tvar(value=None)])]},
        ["scenes[0].variables[0].value: value is required"],
    ),
    "variables None": (
        {"scenes": [TemplateScene(script="x", variables=None)]},  # type: ignore[arg-type]
        ["scenes[0].variables: variables are required"],
    ),
    "20 variables ok": (
        {"scenes": [tscene(variables=[tvar(f"k{i}") for i in range(19)] + [tvar()])]},
        [],
    ),
    "21 variables": (
        {"scenes": [tscene(variables=[tvar(f"k{i}") for i in range(20)] + [tvar()])]},
        ["scenes[0].variables: cannot have more than 20 variables"],
    ),
    "key 100 ok": ({"scenes": [tscene(script="", variables=[tvar("k" * 100)])]}, []),
    "key 101": (
        {"scenes": [tscene(script="", variables=[tvar("k" * 101)])]},
        ["scenes[0].variables[0].key: must be at most 100 characters"],
    ),
    "key empty": (
        {"scenes": [tscene(script="", variables=[tvar("")])]},
        ["scenes[0].variables[0].key: key is required"],
    ),
    "value 2000 ok": ({"scenes": [tscene(variables=[tvar(value="v" * 2000)])]}, []),
    "value 2001": (
        {"scenes": [tscene(variables=[tvar(value="v" * 2001)])]},
        ["scenes[0].variables[0].value: must be at most 2000 characters"],
    ),
    "type invalid": (
        {"scenes": [tscene(variables=[tvar(type="image")])]},
        ["scenes[0].variables[0].type: invalid value 'image' (use text or media)"],
    ),
    "media value URL": (
        {"scenes": [tscene(variables=[tvar(value="logo.png", type="media")])]},
        ["scenes[0].variables[0].value: must be a URL for a media variable"],
    ),
    "media value ok": (
        {"scenes": [tscene(variables=[tvar(value="http://cdn.example/l.png", type="media")])]},
        [],
    ),
    "duplicate key is not refused": (
        {"scenes": [tscene(), tscene(variables=[tvar(), tvar("j"), tvar()])]},
        [],
    ),
    "voice 31": (
        {"scenes": [evolve(tscene(), voice="v" * 31)]},
        ["scenes[0].voice: must be at most 30 characters"],
    ),
    "avatar id 31": (
        {"scenes": [evolve(tscene(), avatar=AvatarBox(id="a" * 31))]},
        ["scenes[0].avatar.id: must be at most 30 characters"],
    ),
}


@pytest.mark.parametrize(
    ("changes", "expected"), TEMPLATE_CASES.values(), ids=TEMPLATE_CASES.keys()
)
def test_template_generation(changes: dict[str, Any], expected: list[str]) -> None:
    assert found(evolve(TEMPLATE, **changes)) == expected


def test_an_unfilled_placeholder_is_sent_but_reported() -> None:
    # spec 4.9 rule 2: the service accepts it and the generation fails
    request = evolve(TEMPLATE, scenes=[tscene(), tscene(script="Hi {{Name}} {{k}}")])
    validate(request, now=NOW)  # not refused
    expected = ["scenes[1].script: missing value for variable 'Name'"]
    assert unfilled_placeholders(request) == expected
    assert problems(request, now=NOW) == expected  # a batch does not pay for it
    assert problems(request, now=NOW, failures=False) == []


def test_ugc_ads_voice_is_optional() -> None:
    # spec 4.1: marked required, yet the avatar's default voice is used when omitted
    assert found(evolve(UGC_ADS, voice_id=None)) == []
    assert found(evolve(UGC_ADS, voice_id="v" * 31)) == ["voiceId: must be at most 30 characters"]


# -- schedule (spec 4.12) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"video_id": ""}, ["videoId: video ID is required"]),
        ({"integration_id": None}, ["integrationId: integration ID is required"]),
        (
            {"scheduled_date_time": datetime(2030, 1, 1, 13)},
            ["scheduledDateTime: must be timezone-aware"],
        ),
        ({"scheduled_date_time": NOW}, ["scheduledDateTime: must be in the future"]),
        (
            {"scheduled_date_time": NOW - timedelta(days=1)},
            ["scheduledDateTime: must be in the future"],
        ),
        ({"scheduled_date_time": NOW + timedelta(seconds=1)}, []),
        (
            {"scheduled_date_time": datetime(2030, 1, 1, 13, tzinfo=timezone(timedelta(hours=2)))},
            ["scheduledDateTime: must be in the future"],
        ),
        (
            {"scheduled_date_time": "2031-01-01T00:00:00Z"},
            ["scheduledDateTime: must be a datetime"],
        ),
        ({"platform_data": None}, []),
        ({"platform_data": {"title": "x"}}, ["platformData: must be a PlatformData"]),
    ],
)
def test_schedule(changes: dict[str, Any], expected: list[str]) -> None:
    assert found(evolve(SCHEDULE, **changes)) == expected


def test_schedule_now_defaults_to_the_clock() -> None:
    past = evolve(SCHEDULE, scheduled_date_time=datetime.now(timezone.utc) - timedelta(seconds=5))
    future = evolve(SCHEDULE, scheduled_date_time=datetime.now(timezone.utc) + timedelta(hours=1))
    assert problems(past) == ["scheduledDateTime: must be in the future"]
    assert problems(future) == []


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        problems(SCHEDULE, now=datetime(2030, 1, 1))


def pdata(**fields: Any) -> ScheduleRequest:
    return evolve(SCHEDULE, platform_data=PlatformData(**fields))


PLATFORM_CASES: list[tuple[Any, ScheduleRequest, list[str]]] = [
    # platform-independent (platform unknown)
    (None, pdata(description="d" * 5000, title="t" * 300), []),
    (
        None,
        pdata(description="d" * 5001),
        ["platformData.description: must be at most 5000 characters"],
    ),
    (None, pdata(tags="a,b"), ["platformData.tags: must be a list of strings"]),
    (None, pdata(tags=["a", 1]), ["platformData.tags[1]: must be a string"]),
    (None, pdata(tags=["t"] * 31, privacy_status="secret"), []),
    (
        "othersite",
        pdata(description="d" * 5001),
        ["platformData.description: must be at most 5000 characters"],
    ),
    (None, pdata(made_for_kids="no"), ["platformData.madeForKids: must be true or false"]),
    # videosite
    (Platform.VIDEOSITE, pdata(title="t" * 100, tags=["t"] * 30, privacy_status="unlisted"), []),
    ("videosite", pdata(title="t" * 101), ["platformData.title: must be at most 100 characters"]),
    (
        "videosite",
        pdata(description="d" * 5001),
        ["platformData.description: must be at most 5000 characters"],
    ),
    ("videosite", pdata(tags=["t"] * 31), ["platformData.tags: cannot have more than 30 tags"]),
    (
        "videosite",
        pdata(privacy_status="secret"),
        ["platformData.privacyStatus: invalid value 'secret' (use public, private or unlisted)"],
    ),
    ("videosite", pdata(made_for_kids=1), ["platformData.madeForKids: must be true or false"]),
    # clipsite and photosite: 2200 for the description as sent; tags and title do not count
    ("clipsite", pdata(title="t" * 500, description="d" * 2200, tags=["t"] * 31), []),
    (
        "clipsite",
        pdata(description="d" * 2201),
        ["platformData.description: must be at most 2200 characters"],
    ),
    ("clipsite", pdata(description="d" * 2200), []),
    (
        "photosite",
        pdata(description="d" * 2201),
        ["platformData.description: must be at most 2200 characters"],
    ),
    ("photosite", pdata(description="d" * 2196, tags=["ab"]), []),
    ("photosite", pdata(description="d" * 2196, tags=["#ab"]), []),
    ("clipsite", pdata(description="d" * 2190, tags=["t" * 30]), []),
    ("clipsite", pdata(description=None, tags=["x" * 2198]), []),
    ("clipsite", pdata(description=5), ["platformData.description: must be a string"]),
]


@pytest.mark.parametrize(("platform", "request_", "expected"), PLATFORM_CASES)
def test_platform_data(platform: Any, request_: ScheduleRequest, expected: list[str]) -> None:
    assert found(request_, platform) == expected


# -- social research (spec 4.15, 4.16) ---------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (evolve(ANALYZE, username="@"), ["username: username is required"]),
        (evolve(ANALYZE, username=""), ["username: username is required"]),
        (evolve(ANALYZE, username="maker"), []),
        (evolve(ANALYZE, username="the maker"), []),  # normalized by the service
        (evolve(ANALYZE, username="  @ "), ["username: username is required"]),
        (
            evolve(ANALYZE, platform="photosite"),
            ["platform: invalid value 'photosite' (use clipsite or videosite)"],
        ),
        (evolve(ANALYZE, platform=None), ["platform: platform is required"]),
        (evolve(SEARCH, search_term="   "), ["searchTerm: search term is required"]),
        (evolve(SEARCH, search_term=" " + "s" * 200 + " "), []),
        (evolve(SEARCH, search_term="s" * 201), ["searchTerm: must be at most 200 characters"]),
        (
            evolve(SEARCH, platform="tv"),
            ["platform: invalid value 'tv' (use clipsite or videosite)"],
        ),
        (evolve(SEARCH, limit=None), []),
        (evolve(SEARCH, limit=1), []),
        (evolve(SEARCH, limit=0), ["limit: must be between 1 and 50"]),
        (evolve(SEARCH, limit=51), ["limit: must be between 1 and 50"]),
        (evolve(SEARCH, limit=True), ["limit: must be an integer"]),
    ],
)
def test_social(request_: Any, expected: list[str]) -> None:
    assert found(request_) == expected


# -- several problems at once, in field order --------------------------------------------


def test_every_problem_is_reported_in_field_order() -> None:
    request = evolve(
        UGC_ADS,
        script="",
        avatar_id="a" * 31,
        media=[],
        lipsync_model="x",
        name="n" * 101,
        webhook="http://h.example",
        metadata={"k": "x" * 6000},
    )
    assert found(request) == [
        "script: script is required",
        "avatarId: must be at most 30 characters",
        "media: at least 1 media item is required",
        "lipsyncModel: invalid lipsync model (use base or pro)",
        "name: must be at most 100 characters",
        "webhook: must be a valid HTTPS URL",
        "metadata: metadata cannot exceed 5KB (5120 bytes as JSON, got 6008)",
    ]


def test_long_non_https_webhook_gives_two_lines() -> None:
    request = evolve(TALKING, webhook="http://" + "h" * 500)
    assert found(request) == [
        "webhook: must be at most 500 characters",
        "webhook: must be a valid HTTPS URL",
    ]


def test_validate_raises_one_error_listing_all() -> None:
    request = evolve(TALKING, script="", webhook="http://h.example")
    with pytest.raises(ValidationError) as info:
        validate(request, now=NOW)
    assert isinstance(info.value, ValueError)
    assert info.value.errors == ["script: script is required", "webhook: must be a valid HTTPS URL"]
    assert "script: script is required" in str(info.value)


def test_unknown_request_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no validation rules for str"):
        problems("body")  # type: ignore[arg-type]


# -- the helpers the resources use for query and path parameters -------------------------


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (check_range("x", None, low=1, high=30), []),
        (check_range("x", 1, low=1, high=30), []),
        (check_range("x", 30, low=1, high=30), []),
        (check_range("x", 31, low=1, high=30), ["x: must be between 1 and 30"]),
        (check_range("x", 2.0, low=1, high=30), ["x: must be an integer"]),  # type: ignore[arg-type]
        (check_page_size("limit", 100, high=100), []),
        (check_page_size("limit", 101, high=100), ["limit: must be between 1 and 100"]),
        (check_page_size("limit", 0, high=100), ["limit: must be between 1 and 100"]),
        (check_offset("offset", 0), []),
        (check_offset("offset", None), []),
        (check_offset("offset", -1), ["offset: must be 0 or more"]),
        (check_offset("offset", 2**63 - 1), []),
        (check_offset("offset", 2**63), [f"offset: must be at most {2**63 - 1}"]),
        (check_offset("offset", "1"), ["offset: must be an integer"]),  # type: ignore[arg-type]
        (check_enum("status", None, VideoListStatus), []),
        (check_enum("status", "failed", VideoListStatus), []),
        (check_enum("status", VideoListStatus.DRAFT, VideoListStatus), []),
        (
            check_enum("status", "FAILED", VideoListStatus),
            ["status: invalid value 'FAILED' (use draft, processing, completed or failed)"],
        ),
        (check_enum("type", "reels", ProjectType), ["type: invalid value 'reels'"]),
        (
            check_enum("platform", 1, Platform),
            ["platform: invalid value 1 (use videosite, clipsite or photosite)"],
        ),
        (check_id("videoId", "abc-123_X"), []),
        (check_id("videoId", ""), ["videoId: is required"]),
        (check_id("videoId", None), ["videoId: is required"]),
        (check_id("videoId", 5), ["videoId: must be a string"]),
        *(
            (
                check_id("videoId", f"a{ch}b"),
                ["videoId: must not contain '/', '?', '#' or whitespace"],
            )
            for ch in "/?# \t\n"
        ),
    ],
)
def test_helpers(result: list[str], expected: list[str]) -> None:
    assert result == expected


def test_an_id_is_refused_for_exactly_the_characters_str_isspace_calls_space() -> None:
    # Every code point: the id check refuses what the per-character rule refused.
    refused = "videoId: must not contain '/', '?', '#' or whitespace"
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        expected = [refused] if ch in "/?#" or ch.isspace() else []
        assert check_id("videoId", f"v{ch}1") == expected, hex(code)


def test_raise_if() -> None:
    raise_if([])
    with pytest.raises(ValidationError) as info:
        raise_if(["a: b", "c: d"])
    assert info.value.errors == ["a: b", "c: d"]
