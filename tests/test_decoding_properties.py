"""Properties of decoding: any JSON into any response model is an instance or a DecodeError.

The JSON is drawn with the models' own wire keys as well as random ones, so that
decoding reaches the hooks of every field (timestamps, enums, numbers, lists).
"""

from __future__ import annotations

import contextlib
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncclient import models
from asyncclient._convert import (
    MAX_ERRORS,
    DecodeError,
    converter,
    decode,
    strict_converter,
    to_camel,
)
from asyncclient.errors import APIResponseValidationError
from asyncclient.http.protocol import Envelope
from asyncclient.models import (
    AnalyzedAccount,
    CreatedProject,
    Integration,
    Niche,
    ScheduledPost,
    ScheduledPostCreated,
    Search,
    SearchCreated,
    SocialVideo,
    Template,
    TemplateDetail,
    Video,
    VideoDetail,
)
from asyncclient.resources._base import decode_or_raise, page_of

RESPONSE_MODELS: list[type[Any]] = [
    AnalyzedAccount,
    CreatedProject,
    Integration,
    Niche,
    ScheduledPost,
    ScheduledPostCreated,
    Search,
    SearchCreated,
    SocialVideo,
    Template,
    TemplateDetail,
    Video,
    VideoDetail,
]
FAST = settings(max_examples=200, deadline=None)

WIRE_KEYS = sorted(
    {
        to_camel(a.name)
        for name in models.__all__
        if attrs.has(cls := getattr(models, name))
        for a in attrs.fields(cls)
    }
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(),
    st.sampled_from([1e20, -1e20, float("nan"), float("inf"), 2**63, -(2**63) - 1]),
    st.text(max_size=30),
    st.sampled_from(["COMPLETED", "STARTED", "pending", "clipsite", "ratio_9_16", "text"]),
    st.sampled_from(
        ["2024-05-01T12:00:00Z", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"]
    ),
)
KEYS = st.sampled_from(WIRE_KEYS) | st.text(max_size=8)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=8),
    max_leaves=12,
)
RECORDS = st.dictionaries(KEYS, JSON, max_size=8)


def _decoded(data: Any, cls: Any, conv: Any = converter) -> Any:
    """The instance, or the DecodeError's lines; anything else raised fails the test."""
    try:
        return decode(data, cls, conv=conv)
    except DecodeError as exc:
        return exc.errors


def _is_short_report(errors: Any) -> bool:
    return 1 <= len(errors) <= MAX_ERRORS + 1 and all(isinstance(e, str) for e in errors)


@pytest.mark.heavy
@FAST
@given(st.sampled_from(RESPONSE_MODELS), st.one_of(RECORDS, JSON))
def test_any_json_decodes_or_raises_decode_error(cls: type[Any], data: Any) -> None:
    for conv in (converter, strict_converter):
        result = _decoded(data, cls, conv)
        assert isinstance(result, cls) or _is_short_report(result), result


@pytest.mark.heavy
@FAST
@given(st.sampled_from(RESPONSE_MODELS), st.lists(RECORDS | JSON, max_size=8))
def test_any_json_list_decodes_or_raises_decode_error(cls: type[Any], data: list[Any]) -> None:
    result = _decoded(data, list[cls])  # type: ignore[valid-type]
    decoded = all(isinstance(item, cls) for item in result)
    assert decoded or _is_short_report(result), result


@FAST
@given(st.sampled_from(RESPONSE_MODELS), JSON, JSON)
def test_resources_raise_only_response_validation_errors(
    cls: type[Any], data: Any, page: Any
) -> None:
    with contextlib.suppress(APIResponseValidationError):
        decode_or_raise(data, cls, Envelope({"success": True, "data": data}))
    paged = Envelope({"success": True, "data": page})
    try:
        result = page_of(paged, "videos", cls, limit=50, offset=0)
    except APIResponseValidationError:
        return
    assert result.total >= 0 and result.limit > 0 and result.offset >= 0
