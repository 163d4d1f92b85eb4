"""Properties of the client-side request rules: never accept what the spec forbids,
never refuse what it allows (spec parts 2, 4, 7, 8; README "Choices where the spec is silent").

Requests are drawn field by field. Each field is drawn inside its rule (the exact
limit included) or, when the draw allows it, possibly outside: one or a few past the
limit, far past it, an empty required value, a wrong enum value, a wrong type. Each
strategy also states, as the spec's oracle, which wire paths must be refused and with
which reason; validation must refuse exactly those paths (``<field path>: <reason>``,
spec 7), each naming its rule, and accept the request when there are none.

Lengths count characters and the strings mix in 2-, 3- and 4-byte UTF-8 characters;
metadata's "5KB" counts the UTF-8 bytes of the compact JSON text (README, choices),
here written out independently of ``json.dumps``.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import json
import math
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from asyncclient.errors import ValidationError
from asyncclient.http.prepared import prepare_creation
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
    BRollType,
    CaptionPreset,
    FrameModel,
    LipsyncModel,
    MediaType,
    Platform,
    ProjectType,
    ScheduleStatus,
    ScrollMode,
    SocialPlatform,
    TemplateVariableType,
    TextAlignment,
    TextPreset,
    UGCLanguage,
    VideoListStatus,
    VisualPreset,
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
    Point,
    StartEndFrameScene,
    TemplateScene,
    TemplateVariable,
    VideoScene,
)
from asyncclient.resources.integrations import Integrations
from asyncclient.resources.schedule import Schedule
from asyncclient.resources.social import Social
from asyncclient.resources.templates import Templates
from asyncclient.resources.videos import Videos
from asyncclient.validation import problems, unfilled_placeholders, validate

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)
FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
LIGHT = settings(FAST, max_examples=20)  # few fields: fewer examples
LIMITED = settings(FAST, max_examples=10)  # every example also checks both edges

Expect = dict[str, str]
"""Wire path -> a fragment that the problem at that path must contain.

While a value is built the paths are relative (``""`` is the field itself,
``".preset"`` a nested field, ``"[3]"`` an item); the request adds the field's name.
"""
Gen = st.SearchStrategy[tuple[Any, Expect]]

REQUIRED = "required"
NOT_A_STRING = "must be a string"


@dataclass(frozen=True)
class Field:
    """A field's values inside its rule (``good``) and values that may break it (``bad``)."""

    good: Gen
    bad: Gen | None = None


def ok(values: st.SearchStrategy[Any]) -> Gen:
    return values.map(lambda v: (v, {}))


def refused(values: st.SearchStrategy[Any], fragment: str) -> Gen:
    return values.map(lambda v: (v, {"": fragment}))


def camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def nested(expect: Expect) -> Expect:
    return {"." + path: fragment for path, fragment in expect.items()}


def pick(draw: st.DrawFn, field: Field, allow_bad: bool) -> tuple[Any, Expect]:
    use_bad = allow_bad and field.bad is not None and draw(st.booleans())
    return draw(field.bad if use_bad and field.bad is not None else field.good)


@st.composite
def fields_of(
    draw: st.DrawFn, fields: Mapping[str, Field], allow_bad: bool
) -> tuple[dict[str, Any], Expect]:
    """Keyword arguments for a model and the problems they must raise (wire paths)."""
    kwargs: dict[str, Any] = {}
    expect: Expect = {}
    for attr, field in fields.items():
        value, found = pick(draw, field, allow_bad)
        kwargs[attr] = value
        expect.update({camel(attr) + path: fragment for path, fragment in found.items()})
    return kwargs, expect


def built(cls: type, fields: Mapping[str, Field], allow_bad: bool) -> Gen:
    return fields_of(fields, allow_bad).map(lambda kv: (cls(**kv[0]), nested(kv[1])))


@st.composite
def requests_of(draw: st.DrawFn, cls: type, fields: Mapping[str, Field]) -> tuple[Any, Expect]:
    """A request; half of the draws keep every field inside its rule."""
    kwargs, expect = draw(fields_of(fields, draw(st.booleans())))
    return cls(**kwargs), expect


# -- values -----------------------------------------------------------------------------

MULTIBYTE = "é日😀ßΩ\u0301"  # 2-, 3- and 4-byte UTF-8, a combining mark: one character each
CHARS = st.characters(codec="utf-8") | st.sampled_from(MULTIBYTE)


def of_length(n: int, chunk: str) -> str:
    """``n`` characters made of ``chunk`` repeated (long strings without a long draw)."""
    return (chunk * (n // len(chunk) + 1))[:n]


def strings(
    lengths: st.SearchStrategy[int], alphabet: st.SearchStrategy[str] = CHARS
) -> st.SearchStrategy[str]:
    return st.builds(of_length, lengths, st.text(alphabet, min_size=1, max_size=3))


def upto(low: int, high: int) -> st.SearchStrategy[int]:
    """``low`` to ``high``, both limits drawn often."""
    return st.sampled_from((low, high)) | st.integers(low, high)


def past(high: int) -> st.SearchStrategy[int]:
    """One or a few past ``high``, or far past it."""
    return st.integers(high + 1, high + 3) | st.just(3 * high + 7)


NOT_STRINGS = st.sampled_from([42, 4.5, True, b"bytes", ["x"]])


def text(high: int | None, *, required: bool = False, empty_ok: bool = False) -> Field:
    """A string of at most ``high`` characters (no limit when ``None``).

    Optional: ``None`` and ``""`` count as omitted (README, choices). Required: ``None``
    and ``""`` are refused, unless ``empty_ok`` (template scene scripts and values).
    """
    low = 1 if required and not empty_ok else 0
    if high is None:
        good = ok(strings(upto(low, 300) | st.just(20_000)))
    else:
        good = ok(strings(upto(low, high)))
    bads = [refused(NOT_STRINGS, NOT_A_STRING)]
    if high is not None:
        bads.append(refused(strings(past(high)), f"{high} characters"))
    if required:
        bads.append(refused(st.just(None) if empty_ok else st.sampled_from([None, ""]), REQUIRED))
    else:
        good = good | ok(st.none())
    return Field(good, st.one_of(*bads))


ALL_ENUM_VALUES = sorted(
    {
        str(member.value)
        for cls in (
            AspectRatio, BRollType, CaptionPreset, FrameModel, LipsyncModel, MediaType, Platform,
            ProjectType, ScheduleStatus, ScrollMode, SocialPlatform, TemplateVariableType,
            TextAlignment, TextPreset, UGCLanguage, VideoListStatus, VisualPreset,
        )
        for member in cls
    }
)  # fmt: skip


def choice(enum_cls: type[enum.Enum], *, required: bool = False) -> Field:
    """A member of ``enum_cls`` or its exact plain value (``""`` is no member)."""
    values = [str(m.value) for m in enum_cls]
    good = ok(st.sampled_from(list(enum_cls)) | st.sampled_from(values))
    near = st.sampled_from(values).flatmap(
        lambda v: st.sampled_from([v.upper(), v.capitalize(), f" {v}", f"{v} ", v + "_", v[:-1]])
    )
    unknown = (
        near
        | st.sampled_from(ALL_ENUM_VALUES)  # another enumeration's value, e.g. photosite
        | st.text(CHARS, min_size=1, max_size=12)
    ).filter(lambda s: s not in values and s != "")
    bad = refused(unknown | st.sampled_from([7, 1.5, True]), "invalid")
    if required:
        bad = bad | refused(st.sampled_from([None, ""]), REQUIRED)
    else:
        good = good | ok(st.none())
        bad = bad | refused(st.just(""), "invalid")
    return Field(good, bad)


FINITE = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**12), 10**12)
    | st.sampled_from([0, -0.0, 1e-300, 1e300])
)
NOT_NUMBERS = refused(
    st.sampled_from([math.nan, math.inf, -math.inf, True, False, "1", [1]]), "finite number"
)


def number(low: float | None = None, high: float | None = None) -> Field:
    """An optional finite number, within ``low..high`` when bounded (avatarIntroSeconds)."""
    if low is None or high is None:
        return Field(ok(st.none() | FINITE), NOT_NUMBERS)
    inside = (
        st.floats(low, high)
        | st.integers(int(low), int(high))
        | st.sampled_from([low, high, int(low), int(high)])
    )
    outside = (
        st.floats(max_value=low, exclude_max=True, allow_nan=False, allow_infinity=False)
        | st.floats(min_value=high, exclude_min=True, allow_nan=False, allow_infinity=False)
        | st.integers(max_value=int(low) - 1)
        | st.integers(min_value=int(high) + 1)
        | st.sampled_from([math.nextafter(low, -math.inf), math.nextafter(high, math.inf)])
    )
    bad = refused(outside, f"between {low:g} and {high:g}") | NOT_NUMBERS
    return Field(ok(st.none() | inside), bad)


def flag(*, required: bool = False) -> Field:
    bad = refused(st.sampled_from([0, 1, "true", "yes", "false"]), "true or false")
    good = ok(st.booleans())
    if required:
        bad = bad | refused(st.none(), REQUIRED)
    else:
        good = good | ok(st.none())
    return Field(good, bad)


HEX_DIGITS = "0123456789abcdefABCDEF"


def hex_colour(*, also: str | None = None) -> Field:
    """spec 2.2 "hex color": '#' optional, 3, 4, 6 or 8 hex digits (README, choices)."""
    digits = st.sampled_from([3, 4, 6, 8]).flatmap(
        lambda n: st.text(st.sampled_from(HEX_DIGITS), min_size=n, max_size=n)
    )
    colours = st.builds(lambda hash_, d: hash_ + d, st.sampled_from(["", "#"]), digits)
    good = ok(st.none() | st.just("") | colours | (st.just(also) if also else st.nothing()))
    wrong_count = st.sampled_from([1, 2, 5, 7, 9]).flatmap(
        lambda n: st.text(st.sampled_from(HEX_DIGITS), min_size=n, max_size=n)
    )
    not_hex = st.builds(
        lambda d, at, c: d[:at] + c + d[at + 1 :],
        digits,
        st.integers(0, 2),
        st.sampled_from("gGzx# é"),
    )
    others = st.sampled_from(["red", "##fff", "#", "none", "Transparent", 42])
    others = others if also else others | st.just("transparent")
    bad_values = st.builds(lambda h, d: h + d, st.sampled_from(["", "#"]), wrong_count | not_hex)
    return Field(good, refused(bad_values | others, "hex colour"))


URL_CHARS = st.sampled_from(list("abz09-_.~/?=&%é日😀"))


def urls(prefixes: list[str], lengths: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    """URLs of exactly the drawn length (counted in characters), each longer than its prefix."""
    return st.builds(
        lambda p, n, chunk: p + of_length(n - len(p), chunk),
        st.sampled_from(prefixes),
        lengths,
        st.text(URL_CHARS, min_size=1, max_size=3),
    )


HTTPS = ["https://hooks.example/", "HTTPS://h.example:8443/p/", "https://[2001:db8::1]/x/"]
NOT_HTTPS = st.sampled_from(
    [
        "http://hooks.example/done",
        "ftp://hooks.example/done",
        "hooks.example/done",
        "//hooks.example/done",
        "https://",
        "https:///done",
        "https://hooks.example/a b",
        "https://hooks.example:99999/",
        "mailto:ops@hooks.example",
    ]
)
WEBHOOK = Field(
    ok(st.none() | st.just("") | urls(HTTPS, upto(30, 500))),
    refused(urls(HTTPS, past(500)), "500 characters")
    | refused(NOT_HTTPS, "valid HTTPS URL")
    | refused(NOT_STRINGS, NOT_A_STRING),
)
WEBSITE_URL = Field(  # required, no length given
    ok(urls(HTTPS, upto(30, 3000))),
    refused(st.sampled_from([None, ""]), REQUIRED)
    | refused(NOT_HTTPS, "invalid website URL")
    | refused(NOT_STRINGS, NOT_A_STRING),
)

# JSON values without floats: JSON.stringify writes numbers its own way (see the report)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.text(CHARS | st.sampled_from('"\\\n\t\x01\x7f'), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
METADATA_OBJECTS = st.dictionaries(st.text(CHARS, max_size=6), JSON_VALUES, max_size=4)
METADATA = Field(
    ok(st.none() | METADATA_OBJECTS),
    refused(st.sampled_from([["a"], "text", 3]), "must be an object")
    | refused(st.sampled_from([{"k": math.nan}, {"k": {1, 2}}, {"k": object()}]), "JSON")
    | refused(
        st.builds(lambda n, c: {"k": c * n}, st.integers(5200, 6000), st.sampled_from("mé日😀")),
        "5KB",
    ),
)


def _items(draw: st.DrawFn, item: Gen, n: int) -> tuple[list[Any], Expect]:
    """``n`` items cycling over a few drawn ones, with their problems at ``[i]``."""
    pool = draw(st.lists(item, min_size=1, max_size=3))
    values: list[Any] = []
    expect: Expect = {}
    for i in range(n):
        value, found = pool[i % len(pool)]
        values.append(value)
        expect.update({f"[{i}]{path}": fragment for path, fragment in found.items()})
    return values, expect


@st.composite
def _listed(
    draw: st.DrawFn, good: Gen, bad: Gen, high: int | None, min_count: int, allow_bad: bool
) -> tuple[list[Any], Expect]:
    top = 80 if high is None else high  # no limit: draw past any plausible one
    if not allow_bad:
        return _items(draw, good, draw(upto(min_count, top)))
    n = draw(st.sampled_from([0, top + 1]) | st.integers(0, top + 3))
    values, expect = _items(draw, good | bad, n)
    if high is not None and n > high:
        expect[""] = f"more than {high}"
    elif n < min_count:
        expect[""] = REQUIRED
    return values, expect


def listed(
    good: Gen, bad: Gen, *, high: int | None, min_count: int = 0, none_ok: bool = True
) -> Field:
    """A list of at most ``high`` items (media, scenes, variables); ``None``: no limit."""
    good_list: Gen = _listed(good, bad, high, min_count, False)
    bad_list: Gen = _listed(good, bad, high, min_count, True) | refused(
        st.just("not a list"), "must be a list"
    )
    if none_ok:
        good_list = good_list | ok(st.none())
    else:
        bad_list = bad_list | refused(st.none(), REQUIRED)
    return Field(good_list, bad_list)


MEDIA_ID = ok(strings(upto(1, 40)))
NOT_MEDIA_ID = refused(st.sampled_from(["", 42, None]), "non-empty string")
MEDIA_OPTIONAL = listed(MEDIA_ID, NOT_MEDIA_ID, high=50)
MEDIA_REQUIRED = listed(MEDIA_ID, NOT_MEDIA_ID, high=50, min_count=1, none_ok=False)


def obj(cls: type, fields: Mapping[str, Field], *, required: bool = False) -> Field:
    """A nested object; a plain dict is the wrong type (the typed API takes ``cls``)."""
    good = built(cls, fields, False)
    bad = built(cls, fields, True) | refused(st.just({"x": 1}), f"must be a {cls.__name__}")
    if required:
        bad = bad | refused(st.none(), REQUIRED)
    else:
        good = good | ok(st.none())
    return Field(good, bad)


# -- the spec's rules, field by field (spec 2.2, 4, 8.2, 8.3; README choices) ----------------

SCRIPT = text(10000, required=True)
AVATAR_ID = text(30, required=True)
VOICE_ID = text(30, required=True)
MUSIC_ID = text(30)
TAIL = {"name": text(100), "webhook": WEBHOOK, "metadata": METADATA}
CAPTION_FIELDS = {
    "preset": choice(CaptionPreset),
    "alignment": choice(TextAlignment),
    "disabled": flag(),
}
CAPTION = obj(Caption, CAPTION_FIELDS)
AUDIO = obj(
    Audio,
    {
        "speed": number(),
        "stability": number(),
        "similarity_boost": number(),
        "style": number(),
        "use_speaker_boost": flag(),
    },
)
AD_SETTINGS = obj(
    AdSettings, {"b_roll_type": choice(BRollType), "remove_avatar_background": flag()}
)
PRODUCT_AD_SETTINGS = obj(
    ProductAdSettings,
    {
        "website_url": WEBSITE_URL,
        "avatar_intro_seconds": number(1, 30),
        "scroll_interval": number(),
        "scroll_duration": number(),
        "scroll_delay": number(),
        "scroll_mode": choice(ScrollMode),
    },
    required=True,
)
TEXT_SETTINGS = obj(
    TextSettings,
    {
        "preset": choice(TextPreset),
        "alignment": choice(TextAlignment),
        "text_color": hex_colour(),
        "background_color": hex_colour(also="transparent"),
        "disabled": flag(),
    },
)
SCENE_LANGUAGE = Field(  # spec 4.4: exactly 2 characters, optional ("" refused: README)
    ok(st.none() | strings(st.just(2))),
    refused(strings(st.sampled_from([0, 1, 3, 4])), "2 characters")
    | refused(NOT_STRINGS, NOT_A_STRING),
)

SCENE_FIELDS: dict[type, dict[str, Field]] = {
    AvatarScene: {"script": SCRIPT, "avatar_id": AVATAR_ID, "voice_id": VOICE_ID},
    VideoScene: {
        "media_id": text(None, required=True),
        "script": text(10000),
        "voice_id": text(30),
    },
    PictureInPictureScene: {
        "script": SCRIPT,
        "avatar_id": AVATAR_ID,
        "voice_id": VOICE_ID,
        "media_id": text(None, required=True),
    },
    StartEndFrameScene: {
        "start_frame_media_id": text(None, required=True),
        "end_frame_media_id": text(None, required=True),
        "frame_prompt": text(None, required=True),
        "frame_model": choice(FrameModel),
        "frame_duration": number(),
    },
}
SCENES = listed(
    st.one_of(*(built(cls, f, False) for cls, f in SCENE_FIELDS.items())),
    st.one_of(*(built(cls, f, True) for cls, f in SCENE_FIELDS.items()))
    | refused(
        st.sampled_from([{"type": "avatar"}, TemplateScene(script="", variables=[])]), "must be"
    ),
    high=50,
    min_count=1,
    none_ok=False,
)

# template generation (spec 4.9, 8.3): variables, their type and value
VARIABLE_KEY = text(100, required=True)
VARIABLE_TYPE = choice(TemplateVariableType)  # optional, text by default (README)
TEXT_VALUE = text(2000, required=True, empty_ok=True)
MEDIA_VALUE = Field(  # spec 2.9: a URL; "" is still a value (spec 4.9 rule 3)
    ok(st.just("") | urls(["https://cdn.example/", "http://cdn.example/"], upto(25, 2000))),
    refused(urls(["https://cdn.example/"], past(2000)), "2000 characters")
    | refused(
        st.text(CHARS, min_size=1, max_size=20).filter(lambda s: not s.lower().startswith("http"))
        | st.sampled_from(["ftp://cdn.example/a.png", "https://", "logo.png"]),
        "must be a URL",
    )
    | refused(st.none(), REQUIRED),
)


@st.composite
def variables_(draw: st.DrawFn, allow_bad: bool) -> tuple[TemplateVariable, Expect]:
    key, expect = pick(draw, VARIABLE_KEY, allow_bad)
    kind, found = pick(draw, VARIABLE_TYPE, allow_bad)
    expect = {".key" + p: f for p, f in expect.items()}
    expect.update({".type" + p: f for p, f in found.items()})
    value, found = pick(draw, MEDIA_VALUE if kind == "media" else TEXT_VALUE, allow_bad)
    expect.update({".value" + p: f for p, f in found.items()})
    return TemplateVariable(key=key, value=value, type=kind), expect


VARIABLES = listed(
    variables_(False),
    variables_(True) | refused(st.just({"key": "k", "value": "v"}), "must be a TemplateVariable"),
    high=20,
    none_ok=False,  # required; [] is fine (a script without placeholders)
)
POINTS = st.none() | st.builds(Point, x=st.floats(0, 1920), y=st.floats(0, 1080))
TEMPLATE_SCENE_FIELDS = {
    "script": text(5000, required=True, empty_ok=True),
    "variables": VARIABLES,
    "avatar": obj(
        AvatarBox,
        {"id": text(30), "top_left": Field(ok(POINTS)), "bottom_right": Field(ok(POINTS))},
    ),
    "voice": text(30),
}
TEMPLATE_SCENES = listed(
    built(TemplateScene, TEMPLATE_SCENE_FIELDS, False),
    built(TemplateScene, TEMPLATE_SCENE_FIELDS, True)
    | refused(st.just(VideoScene(media_id="m1")), "must be a TemplateScene"),
    high=20,
    min_count=1,
    none_ok=False,
)

# script to video (spec 4.2): what mediaType makes required
S2V_FIELDS = {
    "script": SCRIPT,
    "voice_id": VOICE_ID,
    "music_id": MUSIC_ID,
    "caption": CAPTION,
    "audio": AUDIO,
    "aspect_ratio": choice(AspectRatio),
    "add_stickers": flag(),
    **TAIL,
}
MEDIA_TYPE = choice(MediaType, required=True)
VISUAL_PRESET = choice(VisualPreset)
VISUAL_PRESET_REQUIRED = choice(VisualPreset, required=True)
GAMEPLAY_FIELDS = {"selected_game": text(None), "selected_video": text(None)}
GAMEPLAY_OPTIONAL = obj(GameplaySettings, GAMEPLAY_FIELDS)
GAMEPLAY_REQUIRED = obj(GameplaySettings, GAMEPLAY_FIELDS, required=True)


@st.composite
def script_to_video(draw: st.DrawFn) -> tuple[ScriptToVideoRequest, Expect]:
    allow_bad = draw(st.booleans())
    kwargs, expect = draw(fields_of(S2V_FIELDS, allow_bad))
    media_type, found = pick(draw, MEDIA_TYPE, allow_bad)
    expect.update({"mediaType" + p: f for p, f in found.items()})
    plain = media_type.value if isinstance(media_type, MediaType) else media_type
    # presetSettings.preset: required for ai-images and ai-videos, else optional
    needs_preset = plain in ("ai-images", "ai-videos")
    shapes = ["none", "no preset", "empty preset", "preset"] if allow_bad else ["preset"]
    if not needs_preset and not allow_bad:
        shapes = ["none", "no preset", "preset"]
    shape = draw(st.sampled_from(shapes))
    quality, _ = draw(text(None).good)  # any string: values beyond base and pro not shown
    if shape == "none":
        kwargs["preset_settings"] = None
    else:
        preset: Any = {"no preset": None, "empty preset": ""}.get(shape)
        if shape == "preset":
            rule = VISUAL_PRESET_REQUIRED if needs_preset else VISUAL_PRESET
            preset, found = pick(draw, rule, allow_bad)
            expect.update({"presetSettings.preset" + p: f for p, f in found.items()})
        kwargs["preset_settings"] = PresetSettings(preset=preset, quality=quality)
    if needs_preset and shape in ("none", "no preset", "empty preset"):
        expect["presetSettings.preset"] = REQUIRED
    elif shape == "empty preset":
        expect["presetSettings.preset"] = "invalid"
    # media: required (1 to 50) for mediaType media, else optional (at most 50)
    media, found = pick(draw, MEDIA_REQUIRED if plain == "media" else MEDIA_OPTIONAL, allow_bad)
    kwargs["media"] = media
    expect.update({"media" + p: f for p, f in found.items()})
    # gameplaySettings: required for gameplay
    gameplay = GAMEPLAY_REQUIRED if plain == "gameplay" else GAMEPLAY_OPTIONAL
    settings_, found = pick(draw, gameplay, allow_bad)
    kwargs["gameplay_settings"] = settings_
    expect.update({"gameplaySettings" + p: f for p, f in found.items()})
    return ScriptToVideoRequest(media_type=media_type, **kwargs), expect


FORMATS: dict[str, st.SearchStrategy[tuple[Any, Expect]]] = {
    "ugc-ads": requests_of(
        UGCAdsRequest,
        {
            "script": SCRIPT,
            "avatar_id": AVATAR_ID,
            "voice_id": text(30),  # the avatar's default voice when omitted (README)
            "media": MEDIA_REQUIRED,
            "lipsync_model": choice(LipsyncModel),
            "ad_settings": AD_SETTINGS,
            "music_id": MUSIC_ID,
            "aspect_ratio": choice(AspectRatio),
            "caption": CAPTION,
            "audio": AUDIO,
            **TAIL,
        },
    ),
    "script-to-video": script_to_video(),
    "product-ads": requests_of(
        ProductAdsRequest,
        {
            "script": SCRIPT,
            "product_ad_settings": PRODUCT_AD_SETTINGS,
            "avatar_id": AVATAR_ID,
            "voice_id": VOICE_ID,
            "lipsync_model": choice(LipsyncModel),
            "music_id": MUSIC_ID,
            "caption": CAPTION,
            "audio": AUDIO,
            "aspect_ratio": choice(AspectRatio),
            "add_stickers": flag(),
            **TAIL,
        },
    ),
    "scenes": requests_of(
        ScenesRequest,
        {
            "scenes": SCENES,
            "music_id": MUSIC_ID,
            "caption": CAPTION,
            "aspect_ratio": choice(AspectRatio),
            "add_stickers": flag(),
            "audio": AUDIO,
            "language": SCENE_LANGUAGE,
            **TAIL,
        },
    ),
    "hook-demo": requests_of(
        HookDemoRequest,
        {
            "avatar_id": AVATAR_ID,
            "text": text(5000, required=True),
            "text_settings": TEXT_SETTINGS,
            "media": MEDIA_OPTIONAL,
            "aspect_ratio": choice(AspectRatio),
            "music_id": MUSIC_ID,
            **TAIL,
        },
    ),
    "talking-avatar": requests_of(
        TalkingAvatarRequest,
        {
            "script": SCRIPT,
            "avatar_id": AVATAR_ID,
            "voice_id": VOICE_ID,
            "music_id": MUSIC_ID,
            "lipsync_model": choice(LipsyncModel),
            "caption": CAPTION,
            "audio": AUDIO,
            **TAIL,
        },
    ),
    "ugc-video": requests_of(
        UGCVideoRequest,
        {
            "script": SCRIPT,
            "avatar_id": AVATAR_ID,
            "voice_id": VOICE_ID,
            "caption": obj(Caption, CAPTION_FIELDS, required=True),
            "aspect_ratio": choice(AspectRatio, required=True),
            "language": choice(UGCLanguage, required=True),
            "music_id": MUSIC_ID,
            **TAIL,
        },
    ),
    "add-captions": requests_of(
        AddCaptionsRequest,
        {
            "media": text(None, required=True),
            "caption": CAPTION,
            "add_stickers": flag(),
            "music_id": MUSIC_ID,
            **TAIL,
        },
    ),
    "template": requests_of(
        TemplateGenerationRequest,
        {
            "type": text(None, required=True),
            "template_id": text(20, required=True),
            "title": text(200, required=True),  # 8.3 says 200, 4.9 says 100 (README: 200)
            "caption": flag(required=True),
            "language": text(2, required=True),  # "max 2" (README: 1 or 2)
            "scenes": TEMPLATE_SCENES,
            "webhook": WEBHOOK,
            "metadata": METADATA,
        },
    ),
}

# A valid request of each format (the boundary table's bases), for one-field properties.
VALID: dict[str, Any] = {
    "ugc-ads": UGCAdsRequest(script="Hello", avatar_id="av1", voice_id="vo1", media=["m1"]),
    "script-to-video": ScriptToVideoRequest(
        script="Hello", voice_id="vo1", media_type="media", media=["m1"]
    ),
    "product-ads": ProductAdsRequest(
        script="Hello",
        product_ad_settings=ProductAdSettings(website_url="https://shop.example.com"),
        avatar_id="av1",
        voice_id="vo1",
    ),
    "scenes": ScenesRequest(scenes=[VideoScene(media_id="m1")]),
    "hook-demo": HookDemoRequest(avatar_id="av1", text="Stop scrolling"),
    "talking-avatar": TalkingAvatarRequest(script="Hello", avatar_id="av1", voice_id="vo1"),
    "ugc-video": UGCVideoRequest(
        script="Hello",
        avatar_id="av1",
        voice_id="vo1",
        caption=Caption(),
        aspect_ratio="ratio_9_16",
        language="en",
    ),
    "add-captions": AddCaptionsRequest(media="m1"),
    "template": TemplateGenerationRequest(
        template_id="tpl_promo",
        title="Promo",
        scenes=[TemplateScene(script="Hi", variables=[])],
    ),
}


# -- checking ---------------------------------------------------------------------------


def refusals(request: Any, **options: Any) -> list[str]:
    """The problems :func:`validate` raises (none: accepted)."""
    try:
        validate(request, now=NOW, **options)
    except ValidationError as exc:
        return exc.errors or ["<a ValidationError without problems>"]
    return []


def assert_refused_exactly(found: list[str], expect: Expect) -> None:
    """A problem at each expected path naming its rule, and none anywhere else."""
    reasons: dict[str, list[str]] = {}
    for line in found:
        path, sep, reason = line.partition(": ")
        assert sep and reason, f"not '<field path>: <reason>': {line!r}"
        reasons.setdefault(path, []).append(reason)
    assert set(reasons) == set(expect), f"refused {found}, expected {expect}"
    for path, fragment in expect.items():
        assert any(fragment in r for r in reasons[path]), (path, fragment, reasons[path])


def paths(found: list[str]) -> set[str]:
    return {line.partition(": ")[0] for line in found}


# -- creation: the nine formats ---------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@FAST
@given(data=st.data())
def test_a_creation_is_refused_exactly_where_the_spec_forbids(
    fmt: str, data: st.DataObject
) -> None:
    """Every field of every format: limits, enumerations, types, conditional requirements."""
    request, expect = data.draw(FORMATS[fmt], label="request")
    found = refusals(request)
    assert_refused_exactly(found, expect)
    # projects.create goes through prepare_creation: the same problems, or a JSON body
    if found:
        with pytest.raises(ValidationError) as refused_:
            prepare_creation(request)
        assert refused_.value.errors == found
    else:
        assert isinstance(json.loads(prepare_creation(request).wire.body or b""), dict)


# -- each limit on its own: at the limit accepted, one past refused ----------------------------


@dataclass(frozen=True)
class Limit:
    """A field of a valid request set to ``n`` characters (or items): ``low..high`` allowed."""

    make: Callable[[Any], Any]
    path: str
    low: int
    high: int | None
    platform: Platform | None = None
    item: Any = "m1"
    """What a list of ``n`` repeats (count limits)."""


def _top(fmt: str, attr: str) -> Callable[[Any], Any]:
    return lambda value: attrs.evolve(VALID[fmt], **{attr: value})


def _scene(fmt: str, scene: Any) -> Callable[[Any], Any]:
    """``VALID[fmt]`` whose only scene is ``scene`` with the changed field(s)."""
    return lambda changes: attrs.evolve(VALID[fmt], scenes=[attrs.evolve(scene, **changes)])


_AVATAR_SCENE = AvatarScene(script="Hi", avatar_id="av1", voice_id="vo1")
_TEMPLATE_SCENE = TemplateScene(
    script="Hi", variables=[TemplateVariable(key="k", value="v")], avatar=AvatarBox(id="a")
)
_IN_AN_HOUR = ScheduleRequest(
    video_id="v1", integration_id="i1", scheduled_date_time=NOW + timedelta(hours=1)
)


def _platform_data(attr: str) -> Callable[[Any], Any]:
    return lambda value: attrs.evolve(_IN_AN_HOUR, platform_data=PlatformData(**{attr: value}))


def _variable(attr: str) -> Callable[[Any], Any]:
    variable = _TEMPLATE_SCENE.variables[0]
    return lambda value: attrs.evolve(
        VALID["template"],
        scenes=[attrs.evolve(_TEMPLATE_SCENE, variables=[attrs.evolve(variable, **{attr: value})])],
    )


_WITH_SCRIPT = ["ugc-ads", "script-to-video", "product-ads", "talking-avatar", "ugc-video"]
_WITH_AVATAR = ["ugc-ads", "product-ads", "hook-demo", "talking-avatar", "ugc-video"]
_WITH_NAME = sorted(set(VALID) - {"template"})
LENGTHS: dict[str, Limit] = {
    **{f"{f} script": Limit(_top(f, "script"), "script", 1, 10000) for f in _WITH_SCRIPT},
    **{f"{f} name": Limit(_top(f, "name"), "name", 0, 100) for f in _WITH_NAME},
    **{f"{f} musicId": Limit(_top(f, "music_id"), "musicId", 0, 30) for f in _WITH_NAME},
    **{f"{f} avatarId": Limit(_top(f, "avatar_id"), "avatarId", 1, 30) for f in _WITH_AVATAR},
    **{f"{f} voiceId": Limit(_top(f, "voice_id"), "voiceId", 1, 30) for f in _WITH_SCRIPT[1:]},
    "ugc-ads voiceId (optional)": Limit(_top("ugc-ads", "voice_id"), "voiceId", 0, 30),
    "hook-demo text": Limit(_top("hook-demo", "text"), "text", 1, 5000),
    "scenes language": Limit(_top("scenes", "language"), "language", 2, 2),
    "avatar scene script": Limit(
        lambda v: _scene("scenes", _AVATAR_SCENE)({"script": v}), "scenes[0].script", 1, 10000
    ),
    "avatar scene avatarId": Limit(
        lambda v: _scene("scenes", _AVATAR_SCENE)({"avatar_id": v}), "scenes[0].avatarId", 1, 30
    ),
    "video scene voiceId": Limit(
        lambda v: _scene("scenes", VideoScene(media_id="m1"))({"voice_id": v}),
        "scenes[0].voiceId",
        0,
        30,
    ),
    "template templateId": Limit(_top("template", "template_id"), "templateId", 1, 20),
    "template title": Limit(_top("template", "title"), "title", 1, 200),
    "template language": Limit(_top("template", "language"), "language", 1, 2),
    "template scene script": Limit(
        lambda v: _scene("template", _TEMPLATE_SCENE)({"script": v}), "scenes[0].script", 0, 5000
    ),
    "template scene voice": Limit(
        lambda v: _scene("template", _TEMPLATE_SCENE)({"voice": v}), "scenes[0].voice", 0, 30
    ),
    "template scene avatar.id": Limit(
        lambda v: _scene("template", _TEMPLATE_SCENE)({"avatar": AvatarBox(id=v)}),
        "scenes[0].avatar.id",
        0,
        30,
    ),
    "template variable key": Limit(_variable("key"), "scenes[0].variables[0].key", 1, 100),
    "template variable value": Limit(_variable("value"), "scenes[0].variables[0].value", 0, 2000),
    "videosite title": Limit(
        _platform_data("title"), "platformData.title", 0, 100, Platform.VIDEOSITE
    ),
    "videosite description": Limit(
        _platform_data("description"), "platformData.description", 0, 5000, Platform.VIDEOSITE
    ),
    "clipsite description": Limit(
        _platform_data("description"), "platformData.description", 0, 2200, Platform.CLIPSITE
    ),
    "photosite description": Limit(
        _platform_data("description"), "platformData.description", 0, 2200, Platform.PHOTOSITE
    ),
    "clipsite title (no limit)": Limit(
        _platform_data("title"), "platformData.title", 0, None, Platform.CLIPSITE
    ),
    "searchTerm": Limit(
        lambda v: SearchRequest(search_term=v, platform="clipsite"), "searchTerm", 1, 200
    ),
}

_MEDIA_TYPE_MEDIA = attrs.evolve(VALID["script-to-video"], media_type=MediaType.MEDIA)
COUNTS: dict[str, Limit] = {
    "ugc-ads media": Limit(_top("ugc-ads", "media"), "media", 1, 50),
    "script-to-video media (mediaType media)": Limit(
        lambda v: attrs.evolve(_MEDIA_TYPE_MEDIA, media=v), "media", 1, 50
    ),
    "script-to-video media (ai-videos)": Limit(
        lambda v: attrs.evolve(
            _MEDIA_TYPE_MEDIA,
            media_type="ai-videos",
            preset_settings=PresetSettings(preset="anime"),
            media=v,
        ),
        "media",
        0,
        50,
    ),
    "hook-demo media": Limit(_top("hook-demo", "media"), "media", 0, 50),
    "scenes": Limit(_top("scenes", "scenes"), "scenes", 1, 50, item=VideoScene(media_id="m1")),
    "template scenes": Limit(_top("template", "scenes"), "scenes", 1, 20, item=_TEMPLATE_SCENE),
    "template variables": Limit(
        lambda v: _scene("template", _TEMPLATE_SCENE)({"variables": v}),
        "scenes[0].variables",
        0,
        20,
        item=TemplateVariable(key="k", value="v"),
    ),
    "videosite tags": Limit(_platform_data("tags"), "platformData.tags", 0, 30, Platform.VIDEOSITE),
    "clipsite tags (no limit)": Limit(
        _platform_data("tags"), "platformData.tags", 0, None, Platform.CLIPSITE
    ),
    "photosite tags (no limit)": Limit(
        _platform_data("tags"), "platformData.tags", 0, None, Platform.PHOTOSITE
    ),
}


def _sizes(limit: Limit, drawn: int) -> list[int]:
    """Both sides of both limits, and one size drawn anywhere up to a little past the top."""
    top = 3000 if limit.high is None else limit.high
    return sorted({*range(max(limit.low - 1, 0), limit.low + 1), top, top + 1, drawn})


def _expected(limit: Limit, n: int, too_many: str) -> Expect:
    """No problem inside ``low..high``; else one at the field naming the broken side."""
    if n > (math.inf if limit.high is None else limit.high):
        return {limit.path: too_many}
    if n < limit.low:
        return {limit.path: f"{limit.low} characters" if limit.low == limit.high else REQUIRED}
    return {}


@pytest.mark.parametrize("rule", sorted(LENGTHS))
@LIMITED
@given(data=st.data())
def test_a_length_limit_counts_characters_and_holds_at_its_exact_value(
    rule: str, data: st.DataObject
) -> None:
    """``n`` characters (multibyte mixed in) are accepted exactly when ``low <= n <= high``."""
    limit = LENGTHS[rule]
    drawn = data.draw(st.integers(0, (limit.high or 3000) + 3), label="n")
    alphabet = VISIBLE if limit.path == "searchTerm" else CHARS  # a search term is trimmed
    chunk = data.draw(st.text(alphabet, min_size=1, max_size=3), label="chunk")
    for n in _sizes(limit, drawn):
        found = refusals(limit.make(of_length(n, chunk)), platform=limit.platform)
        assert_refused_exactly(found, _expected(limit, n, f"{limit.high} characters"))


@pytest.mark.parametrize("rule", sorted(COUNTS))
@LIMITED
@given(data=st.data())
def test_a_count_limit_holds_at_its_exact_value(rule: str, data: st.DataObject) -> None:
    """``n`` items (media, scenes, variables, tags) accepted exactly when ``low <= n <= high``."""
    limit = COUNTS[rule]
    drawn = data.draw(st.integers(0, (limit.high or 3000) + 3), label="n")
    for n in _sizes(limit, drawn):
        found = refusals(limit.make([limit.item] * n), platform=limit.platform)
        assert_refused_exactly(found, _expected(limit, n, f"more than {limit.high}"))


# -- script to video: what each mediaType requires (spec 4.2), every combination ----------

NEEDED_BY = {
    "ai-images": "presetSettings.preset",
    "ai-videos": "presetSettings.preset",
    "media": "media",
    "gameplay": "gameplaySettings",
}


@pytest.mark.parametrize("media_type", [*MediaType, *(m.value for m in MediaType)], ids=repr)
def test_script_to_video_requires_exactly_what_its_media_type_needs(
    media_type: MediaType | str,
) -> None:
    """Exhaustive: a preset, media or gameplay settings, given or not, for each mediaType."""
    for preset, media, gameplay in itertools.product(
        [None, PresetSettings(quality="pro"), PresetSettings(preset="anime")],
        [None, [], ["m1"]],
        [None, GameplaySettings()],
    ):
        request = ScriptToVideoRequest(
            script="Hi",
            voice_id="vo1",
            media_type=media_type,
            preset_settings=preset,
            media=media,
            gameplay_settings=gameplay,
        )
        given_ = {
            "presetSettings.preset": preset is not None and preset.preset is not None,
            "media": bool(media),
            "gameplaySettings": gameplay is not None,
        }
        needed = NEEDED_BY[str(media_type)]
        assert_refused_exactly(refusals(request), {} if given_[needed] else {needed: REQUIRED})


# -- metadata "max 5KB": UTF-8 bytes of the compact JSON text (README, choices) --------------

_TWO_CHAR_ESCAPES = frozenset('"\\\b\f\n\r\t')


def _json_char_bytes(ch: str) -> int:
    if ch in _TWO_CHAR_ESCAPES:
        return 2  # \" \\ \b \f \n \r \t
    if ch < " ":
        return 6  # \u00XX
    return len(ch.encode("utf-8"))  # non-ASCII is not escaped


def json_bytes(value: Any) -> int:
    """``Buffer.byteLength(JSON.stringify(value))``, written out (no floats)."""
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int):
        return len(str(value))
    if isinstance(value, str):
        return 2 + sum(_json_char_bytes(ch) for ch in value)
    if isinstance(value, list):
        return 2 + sum(json_bytes(v) for v in value) + max(len(value) - 1, 0)
    assert isinstance(value, dict)
    pairs = sum(json_bytes(str(k)) + 1 + json_bytes(v) for k, v in value.items())
    return 2 + pairs + max(len(value) - 1, 0)


@FAST
@given(
    fmt=st.sampled_from(sorted(VALID)),
    base=METADATA_OBJECTS,
    target=st.sampled_from([5119, 5120, 5121, 5122]) | st.integers(4000, 7000),
    fill=st.sampled_from("mé日😀"),
)
def test_metadata_is_refused_exactly_past_5120_utf8_bytes(
    fmt: str, base: dict[str, Any], target: int, fill: str
) -> None:
    """An object of exactly ``target`` bytes, however many characters: refused past 5120."""
    base.pop("pad", None)
    need = target - json_bytes({**base, "pad": ""})
    assume(need >= 0)
    width = len(fill.encode("utf-8"))
    metadata = {**base, "pad": fill * (need // width) + "a" * (need % width)}
    assert json_bytes(metadata) == target
    found = refusals(attrs.evolve(VALID[fmt], metadata=metadata))
    if target <= 5120:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith("metadata: ") and "5KB" in found[0]


# -- template placeholders (spec 4.9 rules 1-3) -----------------------------------------

PLACEHOLDER_NAMES = st.sampled_from(["name", "Name", "NAME", "first_name", "discount", "x1", "_t"])
PLAIN_TEXT = st.text(CHARS.filter(lambda c: c not in "{}"), max_size=6)


@st.composite
def placeholder_scenes(draw: st.DrawFn) -> tuple[TemplateScene, list[str]]:
    """A scene whose script has ``{{placeholders}}``, and the names no variable fills."""
    parts = draw(
        st.lists(PLAIN_TEXT.map(lambda t: ("text", t)) | PLACEHOLDER_NAMES.map(lambda n: ("ph", n)))
    )
    script = "".join("{{" + part + "}}" if kind == "ph" else part for kind, part in parts)
    keys = draw(st.lists(PLACEHOLDER_NAMES, max_size=4))  # a key given twice is fine (README)
    values = draw(st.lists(st.just("") | st.text(CHARS, max_size=5), min_size=4, max_size=4))
    variables = [TemplateVariable(key=k, value=v) for k, v in zip(keys, values, strict=False)]
    unfilled = list(
        dict.fromkeys(part for kind, part in parts if kind == "ph" and part not in keys)
    )
    return TemplateScene(script=script, variables=variables), unfilled


@FAST
@given(st.lists(placeholder_scenes(), min_size=1, max_size=4))
def test_placeholders_without_a_value_are_sent_but_reported(
    scenes: list[tuple[TemplateScene, list[str]]],
) -> None:
    """Case-sensitive, per scene, "" is a value; the service accepts and the video fails."""
    request = attrs.evolve(VALID["template"], scenes=[scene for scene, _ in scenes])
    assert refusals(request) == []  # rule 2: "generation fails", not a 400
    expected = [
        f"scenes[{i}].script: missing value for variable '{name}'"
        for i, (_, unfilled) in enumerate(scenes)
        for name in unfilled
    ]
    assert sorted(problems(request, now=NOW)) == sorted(expected)
    assert sorted(unfilled_placeholders(request)) == sorted(expected)


# -- schedule (spec 4.12; README choices) -----------------------------------------------

OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@FAST
@given(
    micros=st.sampled_from([-1, 0, 1]) | st.integers(-(10**13), 10**13),
    tz=OFFSETS,
    platform=st.sampled_from([None, *Platform]),
)
def test_the_scheduled_time_is_accepted_exactly_when_in_the_future(
    micros: int, tz: timezone, platform: Platform | None
) -> None:
    when = (NOW + timedelta(microseconds=micros)).astimezone(tz)
    request = ScheduleRequest(video_id="v1", integration_id="i1", scheduled_date_time=when)
    found = refusals(request, platform=platform)
    if micros > 0:
        assert found == []
    else:
        assert found == ["scheduledDateTime: must be in the future"]


TIME = Field(
    ok(
        st.builds(
            lambda s, tz: (NOW + timedelta(seconds=s)).astimezone(tz), upto(1, 10**8), OFFSETS
        )
    ),
    refused(
        st.builds(
            lambda s, tz: (NOW - timedelta(seconds=s)).astimezone(tz), upto(0, 10**8), OFFSETS
        ),
        "future",
    )
    | refused(st.just(NOW.replace(tzinfo=None) + timedelta(days=1)), "timezone")
    | refused(st.just("2031-01-01T00:00:00Z"), "datetime")
    | refused(st.none(), REQUIRED),
)
TAG = ok(st.text(CHARS, max_size=12))
NOT_A_TAG = refused(st.sampled_from([42, None, ["t"]]), NOT_A_STRING)
PRIVACY = Field(
    ok(st.none() | st.sampled_from(["public", "private", "unlisted"])),
    refused(
        st.sampled_from(["Public", "secret", "hidden", " public", ""])
        | st.text(CHARS, min_size=1, max_size=8).filter(
            lambda s: s not in ("public", "private", "unlisted")
        ),
        "invalid",
    )
    | refused(NOT_STRINGS, NOT_A_STRING),
)


def platform_rules(platform: str | None) -> dict[str, Field]:
    """platformData per platform; clipsite and photosite ignore title, tag count, privacy."""
    videosite = platform == "videosite"
    short = platform in ("clipsite", "photosite")
    return {
        "title": text(100 if videosite else None),
        "description": text(2200 if short else 5000),
        "tags": listed(TAG, NOT_A_TAG, high=30 if videosite else None),
        "privacy_status": PRIVACY if videosite else text(None),
        "made_for_kids": flag(),
    }


@st.composite
def schedules(draw: st.DrawFn) -> tuple[ScheduleRequest, Platform | str | None, Expect]:
    allow_bad = draw(st.booleans())
    platform = draw(st.sampled_from([None, *Platform, *(str(p) for p in Platform), "tiktok"]))
    plain = str(platform) if platform is not None else None
    kwargs, expect = draw(
        fields_of(
            {
                "video_id": text(None, required=True),
                "integration_id": text(None, required=True),
                "scheduled_date_time": TIME,
                "platform_data": obj(PlatformData, platform_rules(plain)),
            },
            allow_bad,
        )
    )
    return ScheduleRequest(**kwargs), platform, expect


@FAST
@given(schedules())
def test_a_schedule_is_refused_exactly_where_its_platform_forbids(
    drawn: tuple[ScheduleRequest, Platform | str | None, Expect],
) -> None:
    request, platform, expect = drawn
    assert_refused_exactly(refusals(request, platform=platform), expect)


@FAST
@given(schedules(), st.sampled_from(list(Platform)))
def test_the_platform_independent_check_never_refuses_what_a_platform_accepts(
    drawn: tuple[ScheduleRequest, Platform | str | None, Expect], platform: Platform
) -> None:
    """schedule.create validates before it knows the platform: that must be no stricter."""
    request = drawn[0]
    assert paths(refusals(request)) <= paths(refusals(request, platform=platform))


@FAST
@given(
    platform=st.sampled_from([Platform.CLIPSITE, Platform.PHOTOSITE]),
    length=upto(2150, 2200),
    chunk=st.text(CHARS, min_size=1, max_size=3),
    tags=st.lists(st.text(CHARS, min_size=5, max_size=20), min_size=10, max_size=60),
)
def test_hashtags_appended_to_a_clip_or_photo_description_do_not_count(
    platform: Platform, length: int, chunk: str, tags: list[str]
) -> None:
    """The 2200 limit is on the description as sent (README, choices), whatever the tags."""
    description = of_length(length, chunk)
    with_hashtags = description + "".join(f" #{tag}" for tag in tags)
    assert len(with_hashtags) > 2200  # what the platform shows is longer
    data = PlatformData(description=description, tags=tags)
    request = ScheduleRequest(
        video_id="v1", integration_id="i1", scheduled_date_time=NOW + timedelta(hours=1),
        platform_data=data,
    )  # fmt: skip
    assert refusals(request, platform=platform) == []
    longer = attrs.evolve(data, description=of_length(2201, chunk))  # one past, same tags
    found = refusals(attrs.evolve(request, platform_data=longer), platform=platform)
    assert len(found) == 1 and found[0].startswith("platformData.description: ")
    assert "2200 characters" in found[0]


# -- social research (spec 4.15, 4.16; README choices) ------------------------------------

SPACES = st.text(st.sampled_from([" ", "\t", "\n", "\r", "\u00a0", "\u3000"]), max_size=4)
VISIBLE = st.characters(
    codec="utf-8", exclude_categories=["Zs", "Zl", "Zp", "Cc", "Cf"], exclude_characters="@"
).filter(lambda c: not c.isspace())


def padded(cores: st.SearchStrategy[str], *, at: bool = False) -> st.SearchStrategy[str]:
    """``cores`` with surrounding whitespace (and a leading '@'), which the service drops."""
    ats = st.sampled_from(["", "@"]) if at else st.just("")
    return st.builds(lambda a, b, c, d: a + b + c + d, SPACES, ats, cores, SPACES)


USERNAME = Field(
    ok(padded(strings(upto(1, 40), VISIBLE), at=True) | st.just("@@name")),
    refused(padded(st.just(""), at=True), REQUIRED) | refused(NOT_STRINGS, NOT_A_STRING),
)
SEARCH_TERM = Field(
    ok(padded(strings(upto(1, 200), VISIBLE))),
    refused(padded(strings(past(200), VISIBLE)), "200 characters")
    | refused(padded(st.just("")), REQUIRED)
    | refused(NOT_STRINGS, NOT_A_STRING),
)


def page(high: int, *, none_ok: bool = False) -> Field:
    """A page size / limit: an integer from 1 to ``high`` (spec 4.16, 8.2)."""
    good = ok(upto(1, high) | (st.none() if none_ok else st.nothing()))
    bad = refused(
        st.sampled_from([0, high + 1]) | st.integers(max_value=0) | st.integers(min_value=high + 1),
        f"between 1 and {high}",
    ) | refused(st.sampled_from([2.5, 10.0, True, "10"]), "integer")
    return Field(good, bad)


def offset(*, none_ok: bool = False) -> Field:
    good = ok(st.just(0) | st.integers(0, 10**9) | (st.none() if none_ok else st.nothing()))
    bad = refused(st.just(-1) | st.integers(max_value=-1), "0 or more") | refused(
        st.sampled_from([1.5, False, "3"]), "integer"
    )
    return Field(good, bad)


SOCIAL: dict[str, st.SearchStrategy[tuple[Any, Expect]]] = {
    "analyze": requests_of(
        AnalyzeAccountRequest,
        {"username": USERNAME, "platform": choice(SocialPlatform, required=True)},
    ),
    "search": requests_of(
        SearchRequest,
        {
            "search_term": SEARCH_TERM,
            "platform": choice(SocialPlatform, required=True),
            "limit": page(50, none_ok=True),
        },
    ),
}


@pytest.mark.parametrize("kind", sorted(SOCIAL))
@LIGHT
@given(data=st.data())
def test_a_social_request_is_refused_exactly_where_the_spec_forbids(
    kind: str, data: st.DataObject
) -> None:
    request, expect = data.draw(SOCIAL[kind], label="request")
    assert_refused_exactly(refusals(request), expect)


# -- list queries: what the resources check before any request ----------------------------


class Sent(Exception):
    """Raised by the fake caller: the request passed validation and would leave now."""


class FakeCaller:
    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        raise Sent(method, path, kwargs)


def _resources() -> dict[str, Any]:
    caller: Any = FakeCaller()
    return {
        "videos": Videos(caller, files=None),  # type: ignore[arg-type]
        "schedule": Schedule(caller, integrations=Integrations(caller)),
        "templates": Templates(caller, submitter=None, jobs=None),  # type: ignore[arg-type]
        "social": Social(caller),
    }


RESOURCES = _resources()
Call = Callable[..., Coroutine[Any, Any, Any]]
QUERIES: dict[str, tuple[Call, dict[str, Field]]] = {
    "videos.list_page": (
        RESOURCES["videos"].list_page,
        {
            "type": choice(ProjectType),
            "status": choice(VideoListStatus),
            "limit": page(100),
            "offset": offset(),
        },
    ),
    "schedule.list_page": (
        RESOURCES["schedule"].list_page,
        {
            "status": choice(ScheduleStatus),
            "platform": choice(Platform),
            "limit": page(100),
            "offset": offset(),
        },
    ),
    "templates.list_page": (  # README: the video list's types, limit 1 to 100, offset
        RESOURCES["templates"].list_page,
        {"type": choice(ProjectType), "limit": page(100), "offset": offset()},
    ),
    "social.niche_videos_page": (
        lambda **kw: RESOURCES["social"].niche_videos_page("fitness", **kw),
        {"platform": choice(SocialPlatform), "limit": page(50), "offset": offset()},
    ),
    "social.get_search": (  # README: limit 1 to 50, offset 0 or more, both optional
        lambda **kw: RESOURCES["social"].get_search("srch_1", **kw),
        {"limit": page(50, none_ok=True), "offset": offset(none_ok=True)},
    ),
}


@pytest.mark.parametrize("query", sorted(QUERIES))
@LIGHT
@given(data=st.data())
def test_a_list_query_is_refused_exactly_where_the_spec_forbids(
    query: str, data: st.DataObject
) -> None:
    call, fields = QUERIES[query]
    params, expect = data.draw(fields_of(fields, data.draw(st.booleans())), label="params")
    assert_refused_exactly(sent_or_refused(call, **params), expect)


def sent_or_refused(call: Call, **params: Any) -> list[str]:
    """The problems that stopped the request, or none when it reached the caller."""
    try:
        asyncio.run(call(**params))
    except ValidationError as exc:
        return exc.errors or ["<a ValidationError without problems>"]
    except Sent:
        return []
    raise AssertionError("neither refused nor sent")


PAGERS: dict[str, tuple[Callable[[Any], Any], int]] = {
    "videos.list": (lambda n: RESOURCES["videos"].list(page_size=n), 100),
    "schedule.list": (lambda n: RESOURCES["schedule"].list(page_size=n), 100),
    "templates.list": (lambda n: RESOURCES["templates"].list(page_size=n), 100),
    "social.niche_videos": (lambda n: RESOURCES["social"].niche_videos("fit", page_size=n), 50),
    "social.search_videos": (lambda n: RESOURCES["social"].search_videos("s1", page_size=n), 50),
}


@pytest.mark.parametrize("pager", sorted(PAGERS))
@LIGHT
@given(data=st.data())
def test_a_page_size_is_refused_at_once_exactly_outside_the_list_limit(
    pager: str, data: st.DataObject
) -> None:
    make, high = PAGERS[pager]
    field = page(high)
    assert field.bad is not None
    size, expect = data.draw(field.good | field.bad, label="page_size")
    try:
        make(size)
    except ValidationError as exc:
        assert_refused_exactly(exc.errors, {"page_size" + p: f for p, f in expect.items()})
    else:
        assert expect == {}


# -- numeric ranges: both edges on every example ------------------------------------------


def _pager_problems(make: Callable[[Any], Any], size: Any) -> list[str]:
    try:
        make(size)
    except ValidationError as exc:
        return exc.errors
    return []


def _param_check(call: Call, param: str) -> Callable[[Any], list[str]]:
    return lambda value: sent_or_refused(call, **{param: value})


def _page_size_check(make: Callable[[Any], Any]) -> Callable[[Any], list[str]]:
    return lambda value: _pager_problems(make, value)


@dataclass(frozen=True)
class Range:
    """``check(value)`` -> problems; ``low..high`` allowed (integers unless ``real``)."""

    check: Callable[[Any], list[str]]
    path: str
    low: float
    high: float | None
    real: bool = False


_PRODUCT = VALID["product-ads"]
RANGES: dict[str, Range] = {
    "search limit": Range(
        lambda v: refusals(SearchRequest(search_term="x", platform="clipsite", limit=v)),
        "limit",
        1,
        50,
    ),
    "avatarIntroSeconds": Range(
        lambda v: refusals(
            attrs.evolve(
                _PRODUCT,
                product_ad_settings=attrs.evolve(
                    _PRODUCT.product_ad_settings, avatar_intro_seconds=v
                ),
            )
        ),
        "productAdSettings.avatarIntroSeconds",
        1,
        30,
        real=True,
    ),
    **{
        f"{name} {param}": Range(
            _param_check(call, param),
            param,
            0 if param == "offset" else 1,
            None if param == "offset" else (100 if "list_page" in name else 50),
        )
        for name, (call, fields) in QUERIES.items()
        for param in ("limit", "offset")
        if param in fields
    },
    **{
        f"{name} page_size": Range(_page_size_check(make), "page_size", 1, high)
        for name, (make, high) in PAGERS.items()
    },
}


@pytest.mark.parametrize("rule", sorted(RANGES))
@LIMITED
@given(data=st.data())
def test_a_numeric_range_holds_at_both_edges(rule: str, data: st.DataObject) -> None:
    """At each limit accepted, just past it refused with the range; and one drawn value."""
    limit = RANGES[rule]
    top = 10**6 if limit.high is None else limit.high
    if limit.real:
        drawn = data.draw(st.floats(limit.low - 5, top + 5), label="value")
        below, above = math.nextafter(limit.low, -math.inf), math.nextafter(top, math.inf)
    else:
        drawn = data.draw(st.integers(int(limit.low) - 5, int(top) + 5), label="value")
        below, above = int(limit.low) - 1, int(top) + 1
    for value in (below, limit.low, top, above, drawn):
        found = limit.check(value)
        if limit.low <= value and (limit.high is None or value <= limit.high):
            assert found == [], (value, found)
        elif limit.high is None:
            assert_refused_exactly(found, {limit.path: f"{limit.low:g} or more"})
        else:
            assert_refused_exactly(found, {limit.path: f"between {limit.low:g} and {top:g}"})


# -- enumerations: every member accepted, every near miss refused --------------------------


@dataclass(frozen=True)
class Enumeration:
    """``check(value)`` -> problems for a field that takes one of ``cls``'s values."""

    check: Callable[[Any], list[str]]
    path: str
    cls: type[Any]
    required: bool = False


def _creation_field(fmt: str, path: str, base: Any = None) -> Callable[[Any], list[str]]:
    """Problems of ``VALID[fmt]`` (or ``base``) with the attribute path ``path`` set."""

    def check(value: Any) -> list[str]:
        def put(obj: Any, attrs_: list[str]) -> Any:
            head, *rest = attrs_
            if head == "[0]":
                return [put(obj[0], rest)]
            return attrs.evolve(obj, **{head: put(getattr(obj, head), rest) if rest else value})

        return refusals(put(base if base is not None else VALID[fmt], path.split(".")))

    return check


_ALL_MEDIA = attrs.evolve(
    VALID["script-to-video"],
    preset_settings=PresetSettings(preset="anime"),
    gameplay_settings=GameplaySettings(selected_game="blockgame"),
)
_WITH_OBJECTS = {
    "talking-avatar": attrs.evolve(VALID["talking-avatar"], caption=Caption()),
    "ugc-ads": attrs.evolve(VALID["ugc-ads"], ad_settings=AdSettings()),
    "hook-demo": attrs.evolve(VALID["hook-demo"], text_settings=TextSettings()),
    "scenes": attrs.evolve(
        VALID["scenes"],
        scenes=[
            StartEndFrameScene(start_frame_media_id="a", end_frame_media_id="b", frame_prompt="z")
        ],
    ),
}


_URL_VALUE_SCENE = TemplateScene(  # a value fit for both types: text and media
    script="Hi", variables=[TemplateVariable(key="logo", value="https://cdn.example/logo.png")]
)


def _query_field(query: str, param: str) -> Callable[[Any], list[str]]:
    return lambda value: sent_or_refused(QUERIES[query][0], **{param: value})


ENUMERATIONS: dict[str, Enumeration] = {
    **{
        f"{f} aspectRatio": Enumeration(
            _creation_field(f, "aspect_ratio"), "aspectRatio", AspectRatio
        )
        for f in ("ugc-ads", "script-to-video", "product-ads", "scenes", "hook-demo")
    },
    "ugc-video aspectRatio": Enumeration(
        _creation_field("ugc-video", "aspect_ratio"), "aspectRatio", AspectRatio, required=True
    ),
    **{
        f"{f} lipsyncModel": Enumeration(
            _creation_field(f, "lipsync_model"), "lipsyncModel", LipsyncModel
        )
        for f in ("ugc-ads", "product-ads", "talking-avatar")
    },
    "caption.preset": Enumeration(
        _creation_field("", "caption.preset", _WITH_OBJECTS["talking-avatar"]),
        "caption.preset",
        CaptionPreset,
    ),
    "caption.alignment": Enumeration(
        _creation_field("", "caption.alignment", _WITH_OBJECTS["talking-avatar"]),
        "caption.alignment",
        TextAlignment,
    ),
    "adSettings.bRollType": Enumeration(
        _creation_field("", "ad_settings.b_roll_type", _WITH_OBJECTS["ugc-ads"]),
        "adSettings.bRollType",
        BRollType,
    ),
    "mediaType": Enumeration(
        _creation_field("", "media_type", _ALL_MEDIA), "mediaType", MediaType, required=True
    ),
    "presetSettings.preset (ai-images)": Enumeration(
        _creation_field(
            "", "preset_settings.preset", attrs.evolve(_ALL_MEDIA, media_type="ai-images")
        ),
        "presetSettings.preset",
        VisualPreset,
        required=True,
    ),
    "productAdSettings.scrollMode": Enumeration(
        _creation_field("product-ads", "product_ad_settings.scroll_mode"),
        "productAdSettings.scrollMode",
        ScrollMode,
    ),
    "textSettings.preset": Enumeration(
        _creation_field("", "text_settings.preset", _WITH_OBJECTS["hook-demo"]),
        "textSettings.preset",
        TextPreset,
    ),
    "textSettings.alignment": Enumeration(
        _creation_field("", "text_settings.alignment", _WITH_OBJECTS["hook-demo"]),
        "textSettings.alignment",
        TextAlignment,
    ),
    "scene frameModel": Enumeration(
        _creation_field("", "scenes.[0].frame_model", _WITH_OBJECTS["scenes"]),
        "scenes[0].frameModel",
        FrameModel,
    ),
    "ugc-video language": Enumeration(
        _creation_field("ugc-video", "language"), "language", UGCLanguage, required=True
    ),
    "template variable type": Enumeration(
        _creation_field(
            "",
            "scenes.[0].variables.[0].type",
            attrs.evolve(VALID["template"], scenes=[_URL_VALUE_SCENE]),
        ),
        "scenes[0].variables[0].type",
        TemplateVariableType,
    ),
    "analyze platform": Enumeration(
        lambda v: refusals(AnalyzeAccountRequest(username="creator", platform=v)),
        "platform",
        SocialPlatform,
        required=True,
    ),
    "search platform": Enumeration(
        lambda v: refusals(SearchRequest(search_term="cooking", platform=v)),
        "platform",
        SocialPlatform,
        required=True,
    ),
    "videos.list_page type": Enumeration(
        _query_field("videos.list_page", "type"), "type", ProjectType
    ),
    "videos.list_page status": Enumeration(
        _query_field("videos.list_page", "status"), "status", VideoListStatus
    ),
    "schedule.list_page status": Enumeration(
        _query_field("schedule.list_page", "status"), "status", ScheduleStatus
    ),
    "schedule.list_page platform": Enumeration(
        _query_field("schedule.list_page", "platform"), "platform", Platform
    ),
    "templates.list_page type": Enumeration(
        _query_field("templates.list_page", "type"), "type", ProjectType
    ),
    "social.niche_videos_page platform": Enumeration(
        _query_field("social.niche_videos_page", "platform"), "platform", SocialPlatform
    ),
}


def _near_misses(value: str) -> set[str]:
    return {value.upper(), value.capitalize(), value.title(), f" {value}", f"{value} ", value[:-1]}


@pytest.mark.parametrize("rule", sorted(ENUMERATIONS))
@settings(LIMITED, max_examples=4)  # the members and near misses are all checked each time
@given(other=st.sampled_from(ALL_ENUM_VALUES) | st.text(CHARS, min_size=1, max_size=12))
def test_an_enumeration_accepts_its_members_and_refuses_any_near_miss(
    rule: str, other: str
) -> None:
    """Exact, case-sensitive values (as enum members or plain strings); ``""`` is no member."""
    field = ENUMERATIONS[rule]
    values = [str(m.value) for m in field.cls]
    for member in field.cls:
        assert field.check(member) == [] and field.check(str(member.value)) == [], member
    misses = {miss for v in values for miss in _near_misses(v)} | {other, "", None}
    for value in sorted(misses - set(values), key=repr):
        missing = value is None or value == ""
        if value is None and not field.required:
            assert field.check(value) == []
        else:
            reason = REQUIRED if field.required and missing else "invalid"
            assert_refused_exactly(field.check(value), {field.path: reason})
