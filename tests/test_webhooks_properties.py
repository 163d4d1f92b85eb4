"""``parse_event`` is total: whatever it is given, it returns an event or raises only
``WebhookPayloadError`` (never RecursionError, OverflowError, TypeError...)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from asyncclient.webhooks import WebhookEvent, WebhookPayloadError, parse_event

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.sampled_from([1e20, -1e20, 1e300, 2**63, 253402300800, "2026-11-22T10:00:00Z"])
    | st.text(max_size=20)
    | st.sampled_from(["COMPLETED", "FAILED", "completed", "failed", "project.completed"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
"""Any JSON value (floats include inf and nan, which ``json.dumps`` writes as Infinity/NaN)."""

# Shapes close to a notification, so that every field's reading is reached.
form_a = st.fixed_dictionaries(
    {"data": st.fixed_dictionaries({}, optional={
        k: json_values for k in ("videoId", "status", "url", "shareUrl", "error", "projectId")
    } | {"metadata": st.dictionaries(st.sampled_from(["projectId", "x"]), json_values)})},
    optional={"status": json_values, "message": json_values},
)  # fmt: skip
form_b = st.fixed_dictionaries(
    {"event": json_values, "status": st.sampled_from(["completed", "failed"]) | json_values},
    optional={
        "projectId": json_values,
        "message": json_values,
        "createdAt": json_values,
        "completedAt": json_values,
        "metadata": json_values,
        "video": st.dictionaries(
            st.sampled_from(["id", "url", "duration", "thumbnail", "aspectRatio", "resolution"]),
            json_values,
        ),
    },
)
notifications = form_a | form_b | json_values


def parses_or_refuses(body: Any) -> None:
    try:
        event = parse_event(body)
    except WebhookPayloadError:
        return
    assert isinstance(event, WebhookEvent) and event.status in ("COMPLETED", "FAILED")
    assert isinstance(event.key, str)


@FAST
@given(st.binary(max_size=512))
@example(b"\xff\xfe{}")
@example(b"[" * 50_000)
@example(b'{"event": "x", "status": "completed", "video": ' + b"[" * 50_000 + b"}")
def test_any_bytes(body: bytes) -> None:
    parses_or_refuses(body)


@pytest.mark.heavy
@FAST
@given(notifications)
@example({"event": "x", "status": "completed", "createdAt": 1e20})
@example({"event": "x", "status": "completed", "completedAt": 10**30})
@example({"event": "x", "status": "completed", "video": {"duration": 10**400}})
def test_any_json_value_as_bytes_and_as_text(value: Any) -> None:
    text = json.dumps(value)
    parses_or_refuses(text)
    parses_or_refuses(text.encode())


@pytest.mark.heavy
@FAST
@given(notifications)
@example({"event": "x", "status": 10**5000})
@example({"data": {"status": ["COMPLETED"]}, "status": 10**5000})
def test_any_json_value_already_decoded(value: Any) -> None:
    parses_or_refuses(value)


@FAST
@given(st.integers(min_value=0, max_value=3000), st.sampled_from(["[", '{"a":']))
def test_any_nesting(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    parses_or_refuses(opener * depth + "1" + closer * depth)
