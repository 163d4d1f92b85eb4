"""The SDK against the OpenAPI document: what it decodes, and what it sends.

Answers: for each response schema whose ``data`` the SDK decodes, examples are generated
from the schema (by Schemathesis' generator: each schema is the body of an operation of
a small document of its own), checked against the document, and decoded as the
resources decode them: with the strict converter (unknown keys and enumeration values
refused; the document's objects are closed to their documented fields for it) and with
the client's own (the objects open). An example the document allows must decode; one
broken anywhere may only raise the SDK's :class:`DecodeError`. Creation answers go
through ``created_from_envelope`` and error envelopes through ``decode_envelope``.

Examples are as a service puts them on the wire: integers anywhere in the document's bounds
(``format: int64``), a double as JavaScript writes it (``1e20`` as an integer), times a
``datetime`` holds. The SDK's typed refusals beyond that, and the cases settled on its side
(``20.0`` read as an integer; ``""`` and null never sent), are the tests at the end.

Requests: each creation the SDK builds and accepts (``problems()`` finds nothing), of the
nine formats, drawn by the validation properties' strategies and serialised as the client
sends it (``prepare_creation``), must validate against its operation's request body
(JSON Schema 2020-12). Cross-field rules the document cannot state are not tested here.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from asyncclient._convert import DecodeError, converter, decode, strict_converter
from asyncclient.errors import APIStatusError
from asyncclient.http.prepared import prepare_creation
from asyncclient.http.protocol import Envelope, Request, decode_envelope, response_of
from asyncclient.models import requests, scenes, schedule, social, templates, videos
from asyncclient.resources._base import page_of
from asyncclient.resources._creation import created_from_envelope
from asyncclient.validation import problems
from tests.test_validation_properties import FORMATS, VALID

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

DOC: dict[str, Any] = json.loads(
    (resources.files("asyncclient.emulator") / "data" / "openapi.json").read_text("utf-8")
)
BASE = "urn:openapi-document"
REGISTRY: Registry[Any] = Registry().with_resource(BASE, DRAFT202012.create_resource(DOC))
PLAIN_NOTATION = 1e21
"""JavaScript writes an integral double below this without a fraction or an exponent."""
TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d)(?::\d\d(?:\.\d+)?)?(?:[Zz]|([+-])(\d\d):(\d\d))"
)
DERIVED = settings(
    max_examples=40,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the examples are large
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def validator(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": BASE + pointer}, registry=REGISTRY)


def deref(pointer: str) -> Any:
    node: Any = DOC
    for raw in pointer.removeprefix("#/").split("/"):
        node = node[raw.replace("~1", "/").replace("~0", "~")]
    return node


def operation(op_id: str) -> tuple[str, dict[str, Any]]:
    """The pointer of operation ``op_id`` in the document, and the operation."""
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") == op_id:
                escaped = path.replace("~", "~0").replace("/", "~1")
                return f"#/paths/{escaped}/{method}", op
    raise KeyError(op_id)


def success_schema(op_id: str) -> str:
    """The pointer of the schema of ``op_id``'s success answer."""
    pointer, op = operation(op_id)
    (code,) = [code for code in op["responses"] if code.startswith("2")]
    return f"{pointer}/responses/{code}/content/application~1json/schema"


# -- examples of answers -----------------------------------------------------------------


def inline(node: Any) -> Any:
    """``node`` with every ``$ref`` replaced by what it points at (the document has no cycle)."""
    if isinstance(node, list):
        return [inline(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = inline(deref(node["$ref"]))
        return {"allOf": [target, inline(rest)]} if rest else target
    return {key: inline(value) for key, value in node.items()}


def fold(schema: Any, *, closed: bool) -> Any:
    """``schema`` (inlined) with its ``allOf`` parts merged into it and its objects
    ``closed`` to their documented fields: a schema to generate from (the examples are then
    checked against the document's own)."""
    if not isinstance(schema, dict):
        return schema
    own = dict(schema)
    out: dict[str, Any] = {}
    for part in [fold(p, closed=closed) for p in own.pop("allOf", [])] + [own]:
        for key, value in part.items():
            if key == "properties":
                props = out.setdefault("properties", {})
                for name, sub in value.items():
                    props[name] = {"allOf": [props[name], sub]} if name in props else sub
            elif key == "required":
                out["required"] = sorted({*out.get("required", []), *value})
            else:
                out[key] = value
    if "properties" in out:
        out["properties"] = {k: fold(v, closed=closed) for k, v in out["properties"].items()}
        if closed:
            out.setdefault("additionalProperties", False)
    for key in ("items", "then", "else"):  # a condition ("if", "not") describes nothing
        if key in out:
            out[key] = fold(out[key], closed=closed)
    for key in ("oneOf", "anyOf"):
        if key in out:
            out[key] = [fold(sub, closed=closed) for sub in out[key]]
    return out


def as_written(value: Any) -> Any:
    """``value`` as a JavaScript service writes it and Python reads it back: an integral
    number below 1e21 has no fraction or exponent (``20``, ``100000000000000000000``), so it
    is read as an int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < PLAIN_NOTATION:
        return int(value)
    if isinstance(value, list):
        return [as_written(item) for item in value]
    if isinstance(value, dict):
        return {key: as_written(item) for key, item in value.items()}
    return value


def in_range(value: Any) -> bool:
    """Whether each timestamp of ``value`` falls in years 1 to 9999 in UTC (what a
    ``datetime`` holds). Years are moved by 2000, which keeps the calendar, to compute."""
    if isinstance(value, (dict, list)):
        return all(in_range(v) for v in (value.values() if isinstance(value, dict) else value))
    match = TIMESTAMP.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return True
    year, month, day, hour, minute, sign, oh, om = match.groups()
    shift = 2000 if int(year) < 5000 else -2000
    offset = timedelta(hours=int(oh or 0), minutes=int(om or 0)) * (-1 if sign == "-" else 1)
    try:
        local = datetime(int(year) + shift, int(month), int(day), int(hour), int(minute))
    except ValueError:  # not a date: the document's format checks no further, nor do we
        return True
    return 1 <= (local - offset).year - shift <= 9999


NONE = {"description": "unused"}


def generator(pointers: list[str], *, closed: bool) -> Any:
    """A document of one operation per schema, whose body is that schema, for Schemathesis
    to generate examples from."""
    paths: dict[str, Any] = {}
    for n, pointer in enumerate(pointers):
        content = {"application/json": {"schema": fold(inline(deref(pointer)), closed=closed)}}
        body = {"required": True, "content": content}
        post = {"operationId": f"schema{n}", "requestBody": body, "responses": {"200": NONE}}
        paths[f"/{n}"] = {"post": post}
    raw = {"openapi": "3.1.0", "info": {"title": "examples", "version": "1"}, "paths": paths}
    config = schemathesis.Config.from_dict({"generation": {"mode": "positive"}})
    return schemathesis.openapi.from_dict(raw, config=config)


@dataclass(frozen=True)
class Decoded:
    """A part of an operation's answer and the type the SDK decodes it into."""

    op_id: str
    part: tuple[str, ...]
    cls: Any
    paged: bool = False
    """Read by ``page_of`` (a list with ``total``, ``limit``, ``offset``)."""

    @property
    def path(self) -> str:
        return ".".join(self.part)

    def of(self, body: Any) -> Any:
        for key in self.part:
            body = body[key]
        return body


DECODED = [
    Decoded("listVideos", ("data", "videos"), list[videos.Video], paged=True),
    Decoded("getVideo", ("data",), videos.VideoDetail),
    Decoded("listTemplates", ("data", "templates"), list[templates.Template], paged=True),
    Decoded("getTemplate", ("data",), templates.TemplateDetail),
    Decoded("listScheduledPosts", ("data", "scheduledPosts"), list[schedule.ScheduledPost], True),
    Decoded("createSchedule", ("data",), schedule.ScheduledPostCreated),
    Decoded("listIntegrations", ("data", "integrations"), list[schedule.Integration]),
    Decoded("getSearch", ("data",), social.Search),
    Decoded("createSearch", ("data",), social.SearchCreated),
    Decoded("analyzeAccount", ("data", "account"), social.AnalyzedAccount),
    Decoded("listNicheVideos", ("data", "videos"), list[social.SocialVideo], paged=True),
    Decoded("listNicheVideos", ("data", "niche"), social.Niche),
]
IDS = [f"{d.op_id}:{d.path}" for d in DECODED]
CREATIONS = {  # the formats of the validation properties, and their operations
    "ugc-ads": "createUgcAds", "script-to-video": "createScriptToVideo",
    "product-ads": "createProductAds", "scenes": "createScenes", "hook-demo": "createHookDemo",
    "talking-avatar": "createTalkingAvatar", "ugc-video": "createUgcVideo",
    "add-captions": "createAddCaptions", "template": "createFromTemplate",
}  # fmt: skip
ERRORS = dict(BadRequest=400, Unauthorized=401, Forbidden=403, NotFound=404)
ERRORS |= dict(TooManyRequests=429, ServerError=500)
ERROR = "#/components/schemas/Error"

POINTERS = [success_schema(d.op_id) for d in DECODED]
POINTERS += [success_schema(op_id) for op_id in CREATIONS.values()] + [ERROR]
CLOSED = generator(POINTERS, closed=True)
OPEN = generator(POINTERS, closed=False)


def examples(schemas: Any, pointer: str) -> st.SearchStrategy[Any]:
    """Answers made from the schema at ``pointer``, as read off the wire; each is one the
    document's own schema allows."""
    op = schemas.find_operation_by_id(f"schema{POINTERS.index(pointer)}")
    check = validator(pointer)

    def valid(body: Any) -> Any:
        errors = [e.message for e in check.iter_errors(body)]
        assert not errors, f"the generator made an example the document refuses: {errors}"
        return body

    cases: st.SearchStrategy[Any] = op.as_strategy()
    return cases.map(lambda case: valid(as_written(case.body))).filter(in_range)


@pytest.mark.heavy
@pytest.mark.parametrize("decoded", DECODED, ids=IDS)
def test_documented_answer_decodes_strictly(decoded: Decoded) -> None:
    @DERIVED
    @given(examples(CLOSED, success_schema(decoded.op_id)))
    def run(body: Any) -> None:
        decode(decoded.of(body), decoded.cls, conv=strict_converter, path=decoded.path)

    run()


@pytest.mark.heavy
@pytest.mark.parametrize("decoded", DECODED, ids=IDS)
def test_open_answer_decodes_as_the_client_does(decoded: Decoded) -> None:
    @DERIVED
    @given(examples(OPEN, success_schema(decoded.op_id)))
    def run(body: Any) -> None:
        value = decode(decoded.of(body), decoded.cls, conv=converter, path=decoded.path)
        if decoded.paged:
            item = decoded.cls.__args__[0]
            page = page_of(Envelope(body), decoded.part[-1], item, limit=50, offset=0)
            assert page.items == value

    run()


def broken(body: Any, where: int, into: Any) -> Any:
    """``body`` with its ``where``-th value (in document order) replaced by ``into``."""
    seen = -1

    def walk(node: Any) -> Any:
        nonlocal seen
        seen += 1
        if seen == where:
            return into
        if isinstance(node, dict):
            return {key: walk(value) for key, value in node.items()}
        return [walk(item) for item in node] if isinstance(node, list) else node

    return walk(body)


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.heavy
@pytest.mark.parametrize("decoded", DECODED, ids=IDS)
def test_broken_answer_raises_only_decode_error(decoded: Decoded) -> None:
    @DERIVED
    @given(examples(CLOSED, success_schema(decoded.op_id)), st.integers(0, 200), ANY_JSON)
    def run(body: Any, where: int, into: Any) -> None:
        data = broken(decoded.of(body), where, into)
        for conv in (strict_converter, converter):
            with contextlib.suppress(DecodeError):
                decode(data, decoded.cls, conv=conv, path=decoded.path)

    run()


@pytest.mark.parametrize("fmt", CREATIONS)
def test_creation_answer_is_read(fmt: str) -> None:
    @DERIVED
    @given(examples(OPEN, success_schema(CREATIONS[fmt])))
    def run(body: Any) -> None:
        created = created_from_envelope(body, VALID[fmt])
        data = body.get("data") or {}
        assert created.project_id == (data.get("projectId") or body.get("projectId"))
        assert (created.video_id, created.status) == (data.get("videoId"), data.get("status"))

    run()


@pytest.mark.parametrize("response", ERRORS)
def test_error_envelope_is_raised_as_its_status(response: str) -> None:
    status = ERRORS[response]
    assert deref(f"#/components/responses/{response}")["content"]["application/json"] == {
        "schema": {"$ref": ERROR}
    }

    @DERIVED
    @given(examples(OPEN, ERROR))
    def run(body: Any) -> None:
        raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        reply = response_of(status, {"Content-Type": "application/json"}, raw)
        with pytest.raises(APIStatusError) as raised:
            decode_envelope(Request("GET", "/v1/video/list"), reply)
        assert (raised.value.status_code, raised.value.message) == (status, body["message"])

    run()


# -- what the SDK sends ------------------------------------------------------------------


def body_validator(op_id: str) -> Draft202012Validator:
    pointer, _ = operation(op_id)
    return validator(f"{pointer}/requestBody/content/application~1json/schema")


def wire_body(request: requests.CreationRequest) -> Any:
    """The JSON body the client sends for ``request``."""
    return json.loads(prepare_creation(request).wire.body or b"null")


@pytest.mark.heavy
@pytest.mark.parametrize("fmt", CREATIONS)
def test_sent_creation_validates(fmt: str) -> None:
    check = body_validator(CREATIONS[fmt])

    @settings(DERIVED, max_examples=60)
    @given(FORMATS[fmt])
    def run(drawn: tuple[requests.CreationRequest, dict[str, str]]) -> None:
        request, expect = drawn
        assume(not expect and not problems(request))
        sent = wire_body(request)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in check.iter_errors(sent)]
        assert not errors, (sent, errors)

    run()


def test_every_creation_format_is_checked() -> None:
    assert set(CREATIONS) == set(FORMATS) == set(VALID)
    for fmt, op_id in CREATIONS.items():
        assert operation(op_id)[0].split("/")[2].replace("~1", "/") == VALID[fmt].PATH


# -- where the document and the SDK met: settled on the SDK's side --------------------


def test_integral_number_written_with_a_fraction_decodes() -> None:
    # JSON has one number type, and JSON Schema's integer takes 20.0 (Pagination.total).
    data = {"total": 20.0, "limit": 10, "offset": 0}
    assert decode(data, social.Pagination, conv=strict_converter).total == 20
    with pytest.raises(DecodeError, match=r"total: expected int, got float"):
        decode({**data, "total": 20.5}, social.Pagination, conv=strict_converter)


def integers(node: Any) -> list[dict[str, Any]]:
    """Every integer schema under ``node``."""
    if isinstance(node, list):
        return [found for item in node for found in integers(item)]
    if not isinstance(node, dict):
        return []
    kind = node.get("type")
    own = [node] if kind == "integer" or (isinstance(kind, list) and "integer" in kind) else []
    return own + [found for value in node.values() for found in integers(value)]


def test_every_integer_of_the_document_is_the_int64_the_decoder_takes() -> None:
    # The document states the range of every integer (format int64, its bounds); the
    # decoder takes exactly that range, and beyond it raises a DecodeError naming the field,
    # never a silent wrap or an exception of Python's.
    found = integers(DOC)
    assert len(found) > 40
    for schema in found:
        assert schema["format"] == "int64", schema
        assert -(2**63) <= schema["minimum"] <= schema["maximum"] <= 2**63 - 1, schema
    for value in (2**63 - 1, -(2**63)):
        assert decode({"followers": value}, social.AccountStats, conv=strict_converter).followers
    for value in (2**63, -(2**63) - 1):
        for conv in (strict_converter, converter):
            with pytest.raises(DecodeError, match=r"followers: int out of range"):
                decode({"followers": value}, social.AccountStats, conv=conv)


def test_integral_number_beyond_64_bits_decodes_as_a_number() -> None:
    # A number is any finite double: JavaScript writes 1e20 as 100000000000000000000, which
    # Python reads as an int; a number field takes it. Beyond a double, a DecodeError.
    for conv in (strict_converter, converter):
        stats = decode({"avgViews": 10**20}, social.AccountAnalytics, conv=conv)
        assert stats.avg_views == 1e20 and type(stats.avg_views) is float
        with pytest.raises(DecodeError, match=r"avgViews: number out of range"):
            decode({"avgViews": 10**400}, social.AccountAnalytics, conv=conv)


def test_timestamp_beyond_datetime_range_is_a_typed_error_naming_the_field() -> None:
    # A valid RFC 3339 date-time whose instant falls in year 0 in UTC: a datetime cannot
    # hold it; the SDK's choice is a DecodeError naming the field.
    data = {"id": "t1", "createdAt": "0001-01-01T00:30:00+01:00"}
    with pytest.raises(DecodeError, match=r"createdAt"):
        decode(data, templates.Template, conv=strict_converter)


def test_empty_optional_string_is_not_sent() -> None:
    # README: "" counts as omitted, and validation accepts it; it is not put on the wire,
    # where the spec's webhook is an HTTPS URL (spec 4, 8.2), which "" is not.
    request = requests.TalkingAvatarRequest(script="Hi", avatar_id="a", voice_id="v", webhook="")
    sent = wire_body(request)
    assert "webhook" not in sent
    assert body_validator("createTalkingAvatar").is_valid(sent), sent


def test_variable_without_type_is_sent_without_type() -> None:
    # README: a variable's type is optional, text by default; validation accepts None, and
    # a request never sends null (neither text nor media, spec 2.9, 4.9).
    variable = scenes.TemplateVariable(key="d", value="5%", type=None)  # type: ignore[arg-type]
    scene = scenes.TemplateScene(script="Save {{d}}", variables=[variable])
    request = requests.TemplateGenerationRequest(template_id="t1", title="T", scenes=[scene])
    sent = wire_body(request)
    assert "type" not in sent["scenes"][0]["variables"][0]
    assert body_validator("createFromTemplate").is_valid(sent), sent
