"""Answers generated from the OpenAPI document's response schemas by hypothesis-jsonschema
decode, strictly and as the client decodes them.

A second generator beside Schemathesis' (``test_sdk_against_document.py``), and one that
takes each schema's numbers as written: an integer spans what the document allows (its
``format: int64`` bounds), a number any finite double. An answer is as a JavaScript
service writes it and Python's ``json`` reads it back (:func:`as_written`: ``1e20`` comes as
the integer ``100000000000000000000``).

hypothesis-jsonschema 0.23.1 generates objects through a private Hypothesis API that
Hypothesis has since changed (``many.more()``), so :func:`answers` builds the objects and
arrays itself from the inlined schema and asks hypothesis-jsonschema for every scalar (strings
with their formats, patterns and lengths; bounded integers and numbers; enumerations). What
an ``if``/``then`` or a ``not`` adds is left to the document's own validator, which every
generated answer passes before it is decoded.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from asyncclient._convert import converter, decode, strict_converter
from asyncclient.http.protocol import Envelope
from asyncclient.models import social
from asyncclient.resources._base import page_of
from tests.contract.test_sdk_against_document import (
    DECODED,
    IDS,
    Decoded,
    as_written,
    deref,
    fold,
    in_range,
    inline,
    success_schema,
    validator,
)

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

GENERATED = settings(
    max_examples=25,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the examples are large
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
LONGEST_LIST = 3
"""Items a generated array holds at most (its ``minItems`` if more): enough for a page."""
SCALAR_KEYWORDS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "boolean": (),
    "null": (),
}
DESCRIBES_NOTHING = {"description", "examples", "default", "format", "title"}
LEFT_TO_THE_VALIDATOR = {"if", "then", "else", "not"}
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(), inner, max_size=2),
    max_leaves=4,
)


def answers(schema: dict[str, Any], *, closed: bool) -> st.SearchStrategy[Any]:
    """Values of ``schema`` (inlined and folded: no ``$ref`` or ``allOf`` left); objects are
    ``closed`` to their documented fields, else they may carry a few more."""
    known = set(SCALAR_KEYWORDS["string"] + SCALAR_KEYWORDS["integer"])
    known |= {"type", "properties", "required", "additionalProperties", "items", "minItems"}
    known |= {"maxItems", "enum", "const"} | DESCRIBES_NOTHING | LEFT_TO_THE_VALIDATOR
    unknown = set(schema) - known
    if unknown:  # e.g. oneOf: the document's answers have none; generating it is work to do
        raise NotImplementedError(f"no generator for {sorted(unknown)} in answers")
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kinds = schema.get("type")
    if kinds is None:
        return ANY_JSON
    parts = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if kind == "object":
            parts.append(objects(schema, closed=closed))
        elif kind == "array":
            top = max(schema.get("minItems", 0), min(schema.get("maxItems", 3), LONGEST_LIST))
            item = answers(schema.get("items", {}), closed=closed)
            parts.append(st.lists(item, min_size=schema.get("minItems", 0), max_size=top))
        else:
            own = {k: schema[k] for k in SCALAR_KEYWORDS[kind] if k in schema}
            parts.append(from_schema({"type": kind, **own}))
    return st.one_of(parts)


def objects(schema: dict[str, Any], *, closed: bool) -> st.SearchStrategy[dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {name: answers(sub, closed=closed) for name, sub in props.items()}
    fixed = st.fixed_dictionaries(
        {name: fields.get(name, ANY_JSON) for name in sorted(required)},
        optional={name: s for name, s in fields.items() if name not in required},
    )
    if closed and props:
        return fixed
    names = st.text(max_size=8).filter(lambda name: name not in props)
    extra = st.dictionaries(names, ANY_JSON, max_size=2)
    return st.tuples(extra, fixed).map(lambda pair: {**pair[0], **pair[1]})


def generated(pointer: str, *, closed: bool) -> st.SearchStrategy[Any]:
    """Answers of the schema at ``pointer`` as read off the wire, each one the document's
    own schema allows (times in the years a ``datetime`` holds)."""
    check = validator(pointer)
    values = answers(fold(inline(deref(pointer)), closed=closed), closed=closed)
    return values.map(as_written).filter(in_range).filter(check.is_valid)


def strategies(closed: bool) -> dict[str, st.SearchStrategy[Any]]:
    return {d.op_id: generated(success_schema(d.op_id), closed=closed) for d in DECODED}


CLOSED = strategies(closed=True)
OPEN = strategies(closed=False)


@pytest.mark.heavy
@pytest.mark.parametrize("decoded", DECODED, ids=IDS)
def test_generated_answer_decodes_strictly(decoded: Decoded) -> None:
    @GENERATED
    @given(CLOSED[decoded.op_id])
    def run(body: Any) -> None:
        decode(decoded.of(body), decoded.cls, conv=strict_converter, path=decoded.path)

    run()


@pytest.mark.parametrize("decoded", DECODED, ids=IDS)
def test_generated_open_answer_decodes_as_the_client_does(decoded: Decoded) -> None:
    @GENERATED
    @given(OPEN[decoded.op_id])
    def run(body: Any) -> None:
        value = decode(decoded.of(body), decoded.cls, conv=converter, path=decoded.path)
        if decoded.paged:
            item = decoded.cls.__args__[0]
            page = page_of(Envelope(body), decoded.part[-1], item, limit=50, offset=0)
            assert page.items == value

    run()


def test_the_generator_reaches_the_ends_of_an_integer() -> None:
    # The document's integers are int64: the generated answers go near both ends (and the
    # decoder takes them), where the interoperable range of RFC 8259 stops at 2**53.
    stats = deref("#/components/schemas/AnalyzedAccount")["properties"]["stats"]
    followers = fold(inline(stats), closed=True)["properties"]["followers"]
    seen: set[bool] = set()

    @settings(GENERATED, max_examples=100)
    @given(answers(followers, closed=True))
    def run(integer: int) -> None:
        seen.add(abs(integer) >= 2**62)
        decode({"followers": integer}, social.AccountStats, conv=strict_converter)

    run()
    assert seen == {True, False}
