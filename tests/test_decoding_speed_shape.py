"""The fast path of decoding gives what the careful (cattrs) path gives, or gives up.

:func:`asyncclient._convert.decode` first runs a function generated per record that
checks exact JSON types; whatever it does not vouch for is decoded again by cattrs,
which reports every error with its wire path. These tests hold the two paths to the
same answers: the same instances (field types, enum members, time zones included)
and, through ``decode``, the same error lines. Nothing here is timed
(``benchmarks/decoding.py`` measures the speed).
"""

from __future__ import annotations

import copy
import json
import pickle
import types
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncclient._convert import (
    DecodeError,
    _decode_careful,
    _fast_path,
    _lenient_enum,
    converter,
    decode,
    make_converter,
    strict_converter,
    to_camel,
)
from asyncclient.models import (
    AspectRatio,
    CaptionPreset,
    Search,
    TemplateDetail,
    Video,
    VideoDetail,
    VideoSettings,
    VideoStatus,
)
from tests.test_decoding import MODELS
from tests.test_decoding_properties import JSON, RECORDS, RESPONSE_MODELS

DATA = Path(__file__).parent / "data"
FAST = settings(max_examples=200, deadline=None)
MISSED = object()


# -- comparing the two paths ----------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (an enum member is no plain str)."""
    if type(a) is not type(b):
        return False
    if attrs.has(type(a)):
        names = [f.name for f in attrs.fields(type(a))]
        return all(same(getattr(a, n), getattr(b, n)) for n in names) and repr(a) == repr(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, datetime):
        return a == b and a.tzinfo == b.tzinfo and repr(a) == repr(b)
    return bool(a == b)


def outcome(run: Any) -> Any:
    try:
        return run()
    except DecodeError as exc:
        return exc.errors


def check_paths_agree(data: Any, cls: Any) -> Any:
    """Run the fast path, the careful path and decode on ``data``; they must agree."""
    fast = _fast_path(converter, cls)
    assert fast is not None, cls
    try:
        quick = fast(data)
    except Exception:
        quick = MISSED
    careful = outcome(lambda: _decode_careful(data, cls, converter, "data"))
    decoded = outcome(lambda: decode(data, cls))
    if quick is not MISSED:
        assert same(quick, careful), (quick, careful)
    assert same(decoded, careful), (decoded, careful)
    return quick


# -- data shaped like the models, with odd values mixed in ----------------------------------

DIGITS = "0123456789"
TIMESTAMPS = st.one_of(
    st.builds(
        lambda pad, dt, fraction, zone: (
            f"{pad}{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T"
            f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}{fraction}{zone}"
        ),
        st.sampled_from(["", "", "", " "]),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
        st.one_of(
            st.just(""),
            st.text(DIGITS, min_size=1, max_size=9).map(lambda d: "." + d),
            st.text(DIGITS, min_size=1, max_size=6).map(lambda d: "," + d),
        ),
        st.sampled_from(
            ["Z", "Z", "Z", "z", "+00:00", "-00:00", "+01:00", "-23:59", "+0000", "+00", ""]
        )
        | st.sampled_from(["ZZ", "+00:00Z", "Z ", "+00:00:00", "-00:00:30", "+24:00"]),
    ),
    st.builds(lambda dt: dt.isoformat(), st.datetimes(timezones=st.none() | st.just(timezone.utc))),
    st.sampled_from(["", "Z", "2024-05-01Z", "2024-05-01", "2024-05-01T12Z", "20240501T120000Z"]),
    st.sampled_from(["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "9" * 70 + "Z"]),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(),
    st.text(max_size=30),
)


def _base(tp: Any) -> tuple[Any, bool]:
    args = get_args(tp)
    if get_origin(tp) in (Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True  # noqa: UP007
    return tp, False


def wire(tp: Any, clean: bool) -> st.SearchStrategy[Any]:
    """JSON for a field of type ``tp``: what fits; unless ``clean``, now and then anything."""
    base, nullable = _base(tp)
    enum_cls = _lenient_enum(base)
    odd: st.SearchStrategy[Any] = JSON
    if base is str:
        fits: st.SearchStrategy[Any] = st.text(max_size=12)
    elif base is bool:
        fits = st.booleans()
    elif base is int:
        fits = st.integers(min_value=-(2**63), max_value=2**63 - 1)
        odd = st.sampled_from([2**63, -(2**63) - 1, 10**30, 1.0, True]) | JSON
    elif base is float:
        fits = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**63), 2**63 - 1)
        odd = st.sampled_from([float("nan"), float("inf"), 2**63, False]) | JSON
    elif base is datetime:
        fits = TIMESTAMPS
    elif enum_cls is not None:
        fits = st.sampled_from([m.value for m in enum_cls]) | st.text(max_size=8)
    elif isinstance(base, type) and attrs.has(base):
        fits = records(base, clean)
    elif get_origin(base) is list:
        fits = st.lists(wire(get_args(base)[0], clean), max_size=3)
    else:
        fits = JSON
    choices = [fits] * 4 + ([st.none()] if nullable else []) + ([] if clean else [odd])
    return st.one_of(*choices)


def records(cls: type, clean: bool) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object for ``cls``: its wire keys (optional ones may be left out), maybe more."""
    attrs.resolve_types(cls)
    required, optional = {}, {}
    for a in attrs.fields(cls):
        target = required if a.default is attrs.NOTHING else optional
        target[to_camel(a.name)] = st.deferred(lambda tp=a.type: wire(tp, clean))
    shaped = st.fixed_dictionaries(required, optional=optional)
    extra = st.dictionaries(st.text(max_size=6), JSON, max_size=2)
    return st.builds(lambda d, more: {**more, **d}, shaped, extra) | shaped


SHAPED = st.tuples(st.sampled_from(RESPONSE_MODELS), st.booleans()).flatmap(
    lambda c: st.tuples(st.just(c[0]), records(*c))
)


# -- properties -----------------------------------------------------------------------------


@pytest.mark.heavy
@FAST
@given(SHAPED)
def test_fast_and_careful_paths_agree_on_model_shaped_json(case: tuple[type, Any]) -> None:
    cls, data = case
    check_paths_agree(data, cls)


@pytest.mark.heavy
@FAST
@given(st.sampled_from(RESPONSE_MODELS), st.one_of(RECORDS, JSON))
def test_fast_and_careful_paths_agree_on_any_json(cls: type, data: Any) -> None:
    check_paths_agree(data, cls)


@pytest.mark.heavy
@FAST
@given(st.sampled_from([Video, VideoDetail, Search]).flatmap(lambda c: st.lists(records(c, True))))
def test_fast_and_careful_paths_agree_on_lists(data: list[Any]) -> None:
    for cls in (Video, VideoDetail, Search):
        check_paths_agree(data, list[cls])  # type: ignore[valid-type]


@FAST
@given(TIMESTAMPS)
def test_fast_and_careful_paths_agree_on_timestamps(value: Any) -> None:
    check_paths_agree({"id": "v", "status": "STARTED", "createdAt": value}, Video)


# -- recorded payloads and chosen cases -----------------------------------------------------


@pytest.mark.parametrize("filename", sorted(p.name for p in DATA.glob("*.json")))
def test_every_recorded_payload_decodes_on_the_fast_path(
    filename: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads((DATA / filename).read_text(encoding="utf-8"))
    cls = MODELS[filename.split("-", 1)[0]]
    expected = decode(data, cls, conv=strict_converter)

    def careful(*args: Any) -> Any:
        raise AssertionError(f"the careful path ran for {filename}")

    monkeypatch.setattr("asyncclient._convert._decode_careful", careful)
    assert same(decode(data, cls), expected)
    assert same(decode([data, data], list[cls]), [expected, expected])  # type: ignore[valid-type]


VIDEO = {"id": "v", "status": "STARTED"}


class _Dict(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("data", "field", "expected"),
    [
        ({**VIDEO, "durationInSeconds": 30}, "duration_in_seconds", 30.0),
        ({**VIDEO, "status": "ARCHIVED"}, "status", "ARCHIVED"),
        ({**VIDEO, "status": "COMPLETED"}, "status", VideoStatus.COMPLETED),
        (
            {**VIDEO, "createdAt": "2024-05-01T14:00:00+02:00"},
            "created_at",
            datetime(2024, 5, 1, 14, tzinfo=timezone(timedelta(hours=2))),
        ),
        (
            {**VIDEO, "createdAt": "2024-05-01T12:00:00"},
            "created_at",
            datetime(2024, 5, 1, 12, tzinfo=timezone.utc),
        ),
        (
            {**VIDEO, "createdAt": "2024-05-01T12:00:00.5Z"},
            "created_at",
            datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=timezone.utc),
        ),
        ({**VIDEO, "createdAt": 0}, "created_at", datetime(1970, 1, 1, tzinfo=timezone.utc)),
        ({**VIDEO, "name": None, "thumbnail": None}, "name", None),
        ({**VIDEO, "newField": {"x": [1]}}, "id", "v"),
        (  # a nested value the fast path does not know goes to that field's own hook
            {**VIDEO, "videoSettings": _Dict(aspectRatio="ratio_1_1")},
            "video_settings",
            VideoSettings(aspect_ratio=AspectRatio.RATIO_1_1),
        ),
    ],
)
def test_odd_but_valid_values_stay_on_the_fast_path(
    data: dict[str, Any], field: str, expected: Any
) -> None:
    quick = check_paths_agree(data, VideoDetail)
    assert quick is not MISSED
    assert same(getattr(quick, field), expected)


@pytest.mark.parametrize(
    "data",
    [
        _Dict(VIDEO),
        {"status": "STARTED"},
        {**VIDEO, "status": None},
        {**VIDEO, "progress": True},
        {**VIDEO, "progress": 2**63},
        {**VIDEO, "durationInSeconds": float("nan")},
        {**VIDEO, "createdAt": ""},
        {**VIDEO, "createdAt": "yesterday"},
        {**VIDEO, "createdAt": "9999-12-31T23:59:59-01:00"},
        {**VIDEO, "videoSettings": {"caption": {"preset": 7}}},
        {**VIDEO, "videoSettings": []},
        [VIDEO],
        None,
    ],
)
def test_the_fast_path_gives_up_and_the_careful_path_answers(data: Any) -> None:
    quick = check_paths_agree(data, VideoDetail)
    assert quick is MISSED


def test_a_list_gives_up_as_a_whole_and_reports_like_before() -> None:
    good = json.loads((DATA / "Video-list-item.json").read_text(encoding="utf-8"))
    data = [good, {**good, "id": 5}, good, "x"]
    assert check_paths_agree(data, list[Video]) is MISSED
    with pytest.raises(DecodeError) as info:
        decode(data, list[Video])
    assert info.value.errors == [
        "data[1].id: expected str, got int",
        "data[3]: expected a JSON object, got str",
    ]


def test_unknown_enum_values_are_the_same_str_object() -> None:
    data = {**VIDEO, "videoSettings": {"caption": {"preset": "sparkle"}}}
    video = decode(data, VideoDetail)
    assert video.video_settings is not None and video.video_settings.caption is not None
    assert video.video_settings.caption.preset == "sparkle"
    assert type(video.video_settings.caption.preset) is str
    known = decode({**VIDEO, "videoSettings": {"caption": {"preset": "retroTV"}}}, VideoDetail)
    assert known.video_settings is not None and known.video_settings.caption is not None
    assert known.video_settings.caption.preset is CaptionPreset.RETRO_TV


# -- what the fast path builds --------------------------------------------------------------


def test_an_instance_from_the_fast_path_is_a_plain_frozen_model() -> None:
    data = json.loads((DATA / "VideoDetail-completed.json").read_text(encoding="utf-8"))
    fast = _fast_path(converter, VideoDetail)
    assert fast is not None
    video = fast(data)
    careful = _decode_careful(data, VideoDetail, converter, "data")
    assert type(video) is VideoDetail
    assert video == careful and hash(video) == hash(careful) and repr(video) == repr(careful)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        video.id = "other"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        del video.name  # type: ignore[misc]
    assert same(pickle.loads(pickle.dumps(video)), careful)
    assert same(copy.deepcopy(video), careful)
    assert attrs.evolve(video, id="w").id == "w"
    assert converter.unstructure(video) == data


def test_templates_decode_on_the_fast_path_with_nested_lists() -> None:
    data = json.loads((DATA / "TemplateDetail-basic.json").read_text(encoding="utf-8"))
    assert check_paths_agree(data, TemplateDetail) is not MISSED


def test_the_strict_converter_has_no_fast_path() -> None:
    assert _fast_path(strict_converter, Video) is None
    with pytest.raises(DecodeError):
        decode({**VIDEO, "extra": 1}, Video, conv=strict_converter)


def test_a_hook_registered_later_is_not_bypassed() -> None:
    conv = make_converter()
    assert _fast_path(conv, Video) is not None
    conv.register_structure_hook(str, lambda value, _: str(value).upper())
    assert _fast_path(conv, Video) is None
    assert decode({"id": "v", "status": "STARTED"}, Video, conv=conv).id == "V"


@attrs.frozen(kw_only=True)
class _Checked:
    count: int = attrs.field(validator=attrs.validators.ge(0))
    label: str | None = None


@attrs.frozen(kw_only=True)
class _PostInit:
    count: int
    seen: list[int] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self.seen.append(self.count)


@attrs.frozen(kw_only=True, slots=False)
class _Unslotted:
    count: int
    when: datetime | None = None


@attrs.frozen(kw_only=True)
class _WithFactory:
    tags: list[str] = attrs.Factory(list)


def test_classes_whose_init_does_more_are_built_by_their_init() -> None:
    assert decode({"count": 3}, _Checked) == _Checked(count=3)
    with pytest.raises(DecodeError):
        decode({"count": -1}, _Checked)
    assert decode({"count": 3}, _PostInit).seen == [3]
    unslotted = decode({"count": 3, "when": "2024-05-01T12:00:00Z"}, _Unslotted)
    assert unslotted == _Unslotted(count=3, when=datetime(2024, 5, 1, 12, tzinfo=timezone.utc))
    assert decode({}, _WithFactory) == _WithFactory()
    assert decode({"tags": ["a"]}, _WithFactory) == _WithFactory(tags=["a"])
