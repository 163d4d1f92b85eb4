"""The OpenAPI description of the service (``emulator/data/openapi.json``), checked on its own.

The literals below are taken from the service's interface specification: its endpoint
headings (4.1-4.20), its enumerations (2.1), its field limits (8.2) and its error and
notification parts (6, 7). The document must say the same; nothing here needs a network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import asyncclient.emulator

DOCUMENT = Path(asyncclient.emulator.__file__).parent / "data" / "openapi.json"
TEXT = DOCUMENT.read_text(encoding="utf-8")
DOC: dict[str, Any] = json.loads(TEXT)
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

ENDPOINTS = [  # spec part 4, headings 4.1 to 4.20
    ("post", "/v1/project/create/ugc-ads"),
    ("post", "/v1/project/create/script-to-video"),
    ("post", "/v1/project/create/product-ads"),
    ("post", "/v1/project/create/scenes"),
    ("post", "/v1/project/create/hook-demo"),
    ("post", "/v1/project/create/talking-avatar"),
    ("post", "/v1/project/create/ugc-video"),
    ("post", "/v1/project/create/add-captions"),
    ("post", "/v1/project/create"),
    ("get", "/v1/video/list"),
    ("get", "/v1/video/{videoId}"),
    ("post", "/v1/schedule/create"),
    ("get", "/v1/schedule/list"),
    ("get", "/v1/integration/list"),
    ("post", "/v1/social/account/analyze"),
    ("post", "/v1/social/search/create"),
    ("get", "/v1/social/search/{searchId}"),
    ("get", "/v1/niche/{nicheId}/videos"),
    ("get", "/v1/template/list"),
    ("get", "/v1/template/{templateId}"),
]

ENUMERATIONS = {  # spec part 2.1, in the spec's order
    "aspectRatio": ["ratio_9_16", "ratio_16_9", "ratio_1_1"],
    "lipsyncModel": ["base", "pro"],
    "alignment": ["top", "middle", "bottom"],
    "mediaType": ["ai-images", "ai-videos", "media", "gameplay"],
    "bRollType": ["down", "up", "left", "right", "rounded-cover", "full-width"],
    "scrollMode": ["restart", "loop", "once", "fixed"],
    "frameModel": ["modela_2_5", "modelb_3_1"],
    "language (UGC video)": ["en", "es"],
    "platform (integration, schedule)": ["videosite", "clipsite", "photosite"],
    "platform (analysis, search, niche)": ["clipsite", "videosite"],
    "scheduled post status": ["pending", "published", "failed", "draft"],
    "video status (responses)": ["STARTED", "COMPLETED", "FAILED"],
    "video status (list filter)": ["draft", "processing", "completed", "failed"],
    "caption.preset": [
        "default", "beast", "umi", "clipsite", "wrap1", "wrap2", "ariel", "brandname",
        "classic", "active", "bubble", "glass", "comic", "glow", "pastel", "neon", "retroTV",
        "red", "marker", "modern", "blue", "vivid",
    ],
    "textSettings.preset": [
        "modern", "clipsite", "social", "impact", "slicedText", "minimalMonochrome",
        "highlight", "gradient", "neonFuture", "avantGarde", "glassmorphic", "stageEffect",
        "neonEffect", "glowEffect", "wrapEffect",
    ],
    "presetSettings.preset": [
        "realistic", "anime", "cinematic", "fantasy", "cyberpunk-anime", "studio3d",
        "comic-book", "real-anime", "painterly-studio", "sketch-black-and-white", "art-style",
        "retro-anime", "80s-fantasy-movie", "cartoon", "creative", "crime-game-v",
        "sketch-color", "japanese-ink", "armored-marines-40k", "haunted-linework", "ink-style",
        "neon-futuristic", "blockgame", "pixel-art", "collage", "brick-toy",
        "technical-blueprints",
    ],
}  # fmt: skip

BOUNDS = [  # spec part 8.2 (and 4.9 for template generation): (operationId, field, bounds)
    ("createUgcAds", "script", {"minLength": 1, "maxLength": 10000}),
    ("createTalkingAvatar", "script", {"minLength": 1, "maxLength": 10000}),
    ("createHookDemo", "text", {"minLength": 1, "maxLength": 5000}),
    ("createUgcVideo", "name", {"maxLength": 100}),
    ("createUgcAds", "avatarId", {"maxLength": 30}),
    ("createScriptToVideo", "voiceId", {"maxLength": 30}),
    ("createScenes", "musicId", {"maxLength": 30}),
    ("createProductAds", "webhook", {"maxLength": 500}),
    ("createUgcAds", "media", {"minItems": 1, "maxItems": 50}),
    ("createScriptToVideo", "media", {"maxItems": 50}),
    ("createScenes", "scenes", {"minItems": 1, "maxItems": 50}),
    ("createScenes", "language", {"minLength": 2, "maxLength": 2}),
    ("createProductAds", "productAdSettings.avatarIntroSeconds", {"minimum": 1, "maximum": 30}),
    ("createSearch", "searchTerm", {"minLength": 1, "maxLength": 200}),
    ("createSearch", "limit", {"minimum": 1, "maximum": 50, "default": 20}),
    ("createFromTemplate", "scenes", {"minItems": 1, "maxItems": 20}),
    ("createFromTemplate", "templateId", {"minLength": 1, "maxLength": 20}),
]
QUERY_BOUNDS = [
    ("listNicheVideos", "limit", {"minimum": 1, "maximum": 50, "default": 20}),
    ("listVideos", "limit", {"maximum": 100, "default": 50}),
    ("listScheduledPosts", "limit", {"maximum": 100, "default": 50}),
    ("listVideos", "offset", {"default": 0}),
]
CREATES_VIDEO = [  # creation endpoints whose response carries data.videoId
    "createUgcAds", "createScriptToVideo", "createProductAds", "createHookDemo",
    "createTalkingAvatar", "createUgcVideo", "createAddCaptions",
]  # fmt: skip


def deref(pointer: str) -> Any:
    assert pointer.startswith("#/"), f"not a local reference: {pointer}"
    node: Any = DOC
    for raw in pointer[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and key in node, f"unresolved reference: {pointer}"
        node = node[key]
    return node


def resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = deref(node["$ref"])
    return node


def flatten(schema: dict[str, Any]) -> dict[str, Any]:
    """One schema of its $ref, allOf parts and own keywords, properties merged by name."""
    parts = [flatten(deref(schema["$ref"]))] if "$ref" in schema else []
    parts += [flatten(part) for part in schema.get("allOf", [])]
    parts.append({k: v for k, v in schema.items() if k not in ("$ref", "allOf")})
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key == "properties":
                props = out.setdefault("properties", {})
                for name, sub in value.items():
                    props[name] = {**props.get(name, {}), **sub}
            elif key == "required":
                out["required"] = [*out.get("required", []), *value]
            else:
                out[key] = value
    return out


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in DOC["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


OPERATIONS = {op["operationId"]: (method, path, op) for method, path, op in operations()}


def body_field(op_id: str, dotted: str) -> dict[str, Any]:
    schema = OPERATIONS[op_id][2]["requestBody"]["content"]["application/json"]["schema"]
    for name in dotted.split("."):
        schema = flatten(schema)["properties"][name]
    return flatten(schema)


def success(op: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    codes = [code for code in op["responses"] if code.startswith("2")]
    assert len(codes) == 1, codes
    return codes[0], resolve(op["responses"][codes[0]])


def validator(pointer: str) -> Draft202012Validator:
    base = "urn:openapi-document"
    resource = Resource(contents=DOC, specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(base, resource)
    return Draft202012Validator({"$ref": base + pointer}, registry=registry)


def test_validates_as_openapi_3_1() -> None:
    assert DOC["openapi"] == "3.1.0"
    validate(DOC, cls=OpenAPIV31SpecValidator)


def test_every_reference_resolves() -> None:
    refs = [node["$ref"] for node in walk(DOC) if isinstance(node.get("$ref"), str)]
    assert len(refs) > 100
    for pointer in refs:
        deref(pointer)
    for node in walk(DOC):
        mapping = node.get("discriminator", {}).get("mapping", {})
        for pointer in mapping.values():
            deref(pointer)


def test_file_is_json_indented_two() -> None:
    assert json.dumps(DOC, indent=2, ensure_ascii=False) + "\n" == TEXT


def test_info_and_servers() -> None:
    assert DOC["info"]["title"] and DOC["info"]["version"]
    assert "emulator" in DOC["info"]["description"]
    for server in DOC["servers"]:
        url = server["url"]
        assert url.startswith("/") or re.match(r"^https?://(127\.0\.0\.1|localhost)[:/]", url)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_endpoint_is_described(method: str, path: str) -> None:
    op = DOC["paths"][path][method]
    assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", op["operationId"])
    assert op["tags"] and op["summary"]
    for name in re.findall(r"\{(\w+)\}", path):
        declared = [resolve(p) for p in op.get("parameters", [])]
        assert any(p["in"] == "path" and p["name"] == name and p["required"] for p in declared)


def test_operation_ids_are_unique() -> None:
    found = [op["operationId"] for _, _, op in operations()]
    found += [item["post"]["operationId"] for item in DOC["webhooks"].values()]
    assert len(found) == len(set(found))
    assert len(OPERATIONS) >= len(ENDPOINTS)


def test_api_key_security_applies_to_every_operation() -> None:
    schemes = DOC["components"]["securitySchemes"]
    wanted = ("apiKey", "header", "x-api-key")
    names = {n for n, s in schemes.items() if (s["type"], s["in"], s["name"]) == wanted}
    assert names
    assert any(names & set(requirement) for requirement in DOC["security"])
    for _, _, op in operations():
        requirements = op.get("security", DOC["security"])
        assert any(names & set(requirement) for requirement in requirements), op["operationId"]


@pytest.mark.parametrize("op_id", sorted(OPERATIONS))
def test_any_call_can_get_401_429_500(op_id: str) -> None:
    responses = OPERATIONS[op_id][2]["responses"]
    for code in ("401", "429", "500"):
        schema = resolve(resolve(responses[code])["content"]["application/json"]["schema"])
        assert schema["properties"]["success"]["const"] is False
        assert set(schema["required"]) == {"success", "message"}
    too_many = resolve(responses["429"])
    assert "Retry-After" in too_many["headers"]
    assert resolve(too_many["headers"]["Retry-After"])["schema"]["type"] == "integer"


@pytest.mark.parametrize("op_id", sorted(OPERATIONS))
def test_success_carries_rate_limit_headers(op_id: str) -> None:
    _, response = success(OPERATIONS[op_id][2])
    for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert resolve(response["headers"][name])["schema"]["type"] == "integer"


def test_video_read_declares_403_and_404() -> None:
    assert {"403", "404"} <= set(OPERATIONS["getVideo"][2]["responses"])
    assert "404" in OPERATIONS["listNicheVideos"][2]["responses"]


def test_both_notification_forms_are_webhooks() -> None:
    payloads = [
        flatten(item["post"]["requestBody"]["content"]["application/json"]["schema"])
        for item in DOC["webhooks"].values()
    ]

    def data_fields(payload: dict[str, Any]) -> dict[str, Any]:
        data = payload.get("properties", {}).get("data", {})
        fields: dict[str, Any] = flatten(data).get("properties", {})
        return fields

    form_a = [p for p in payloads if "shareUrl" in data_fields(p)]
    form_b = [p for p in payloads if "oneOf" in p]
    assert len(form_a) == 1 and len(form_b) == 1
    assert form_a[0]["properties"]["message"]["const"] == "Video completed"
    events = {flatten(m)["properties"]["event"]["const"] for m in form_b[0]["oneOf"]}
    assert events == {"project.completed", "project.failed"}
    for item in DOC["webhooks"].values():
        assert "200" in item["post"]["responses"]


@pytest.mark.parametrize(("label", "values"), ENUMERATIONS.items(), ids=list(ENUMERATIONS))
def test_enumeration_is_a_named_schema(label: str, values: list[str]) -> None:
    schemas = DOC["components"]["schemas"]
    named = [name for name, schema in schemas.items() if schema.get("enum") == values]
    assert len(named) == 1, f"{label}: {named}"
    pointer = "#/components/schemas/" + named[0]
    assert any(node.get("$ref") == pointer for node in walk(DOC)), f"{label} is never used"


@pytest.mark.parametrize(("op_id", "field", "bounds"), BOUNDS)
def test_body_field_bounds(op_id: str, field: str, bounds: dict[str, Any]) -> None:
    schema = body_field(op_id, field)
    assert {key: schema.get(key) for key in bounds} == bounds


@pytest.mark.parametrize(("op_id", "name", "bounds"), QUERY_BOUNDS)
def test_query_parameter_bounds(op_id: str, name: str, bounds: dict[str, Any]) -> None:
    params = [resolve(p) for p in OPERATIONS[op_id][2]["parameters"]]
    (param,) = [p for p in params if p["in"] == "query" and p["name"] == name]
    schema = param["schema"]
    assert {key: schema.get(key) for key in bounds} == bounds


def test_optional_enumerations_carry_the_spec_defaults() -> None:
    assert body_field("createUgcAds", "aspectRatio")["default"] == "ratio_9_16"
    assert body_field("createUgcAds", "lipsyncModel")["default"] == "base"
    assert body_field("createUgcAds", "adSettings.bRollType")["default"] == "down"
    assert body_field("createHookDemo", "textSettings.preset")["default"] == "modern"
    assert body_field("createScenes", "language")["default"] == "en"
    assert "default" not in body_field("createUgcVideo", "aspectRatio")  # required there


def body_validator(op_id: str) -> Draft202012Validator:
    method, path, _ = OPERATIONS[op_id]
    escaped = path.replace("~", "~0").replace("/", "~1")
    return validator(f"#/paths/{escaped}/{method}/requestBody/content/application~1json/schema")


UGC_ADS = {"script": "Hi", "avatarId": "a1", "voiceId": "v1", "media": ["m1"]}
S2V = {"script": "Hi", "voiceId": "v1"}
CLEAR_TEXT = {"backgroundColor": "transparent", "textColor": "#FFFFFF"}
RED_TEXT = {"textColor": "red"}
CLEAR_TEXT = {"backgroundColor": "transparent", "textColor": "#FFFFFF"}


@pytest.mark.parametrize(
    ("op_id", "body", "valid"),
    [
        ("createUgcAds", UGC_ADS, True),
        ("createUgcAds", {**UGC_ADS, "unknownField": 1}, True),
        ("createUgcAds", {**UGC_ADS, "script": "x" * 10001}, False),
        ("createUgcAds", {**UGC_ADS, "media": []}, False),
        ("createUgcAds", {**UGC_ADS, "webhook": "http://example.com/hook"}, False),
        ("createUgcAds", {**UGC_ADS, "webhook": "https://example.com/hook"}, True),
        ("createUgcAds", {**UGC_ADS, "aspectRatio": "ratio_4_3"}, False),
        ("createScriptToVideo", {**S2V, "mediaType": "media"}, False),
        ("createScriptToVideo", {**S2V, "mediaType": "media", "media": ["m1"]}, True),
        ("createScriptToVideo", {**S2V, "mediaType": "ai-images"}, False),
        ("createScriptToVideo", {**S2V, "mediaType": "ai-videos", "presetSettings": {}}, False),
        (
            "createScriptToVideo",
            {**S2V, "mediaType": "ai-videos", "presetSettings": {"preset": "anime"}},
            True,
        ),
        ("createScriptToVideo", {**S2V, "mediaType": "gameplay"}, False),
        ("createScenes", {"scenes": [{"type": "video", "mediaId": "m1"}]}, True),
        ("createScenes", {"scenes": [{"type": "avatar", "script": "Hi"}]}, False),
        ("createScenes", {"scenes": []}, False),
        ("createHookDemo", {"avatarId": "a1", "text": ""}, False),
        ("createHookDemo", {"avatarId": "a1", "text": "Hi", "textSettings": CLEAR_TEXT}, True),
        ("createHookDemo", {"avatarId": "a1", "text": "Hi", "textSettings": RED_TEXT}, False),
        ("createUgcVideo", {"script": "Hi", "avatarId": "a", "voiceId": "v"}, False),
        ("createSearch", {"searchTerm": "cats", "platform": "photosite"}, False),
        ("createSearch", {"searchTerm": "cats", "platform": "clipsite", "limit": 51}, False),
    ],
)
def test_request_bodies(op_id: str, body: dict[str, Any], valid: bool) -> None:
    assert body_validator(op_id).is_valid(body) is valid


def test_notification_payloads() -> None:
    form_a = validator("#/components/schemas/CompletionNotification")
    payload = {
        "status": "COMPLETED",
        "data": {
            "videoId": "v1",
            "status": "COMPLETED",
            "url": "https://x.example/v.mp4",
            "shareUrl": "https://x.example/s",
            "metadata": {"projectId": "p1", "k": 1},
        },
        "message": "Video completed",
    }
    assert form_a.is_valid(payload)
    form_b = validator("#/components/schemas/ProjectEvent")
    failed = {
        "event": "project.failed",
        "projectId": "p1",
        "status": "failed",
        "message": "boom",
        "createdAt": "2026-01-01T00:00:00Z",
    }
    assert form_b.is_valid(failed)
    assert not form_b.is_valid({**failed, "video": {"id": "v1"}})
    assert not form_b.is_valid({**failed, "status": "completed"})
    done = {
        "event": "project.completed",
        "projectId": "p1",
        "status": "completed",
        "video": {"id": "v1", "url": "https://x.example/v.mp4", "duration": 5.0},
        "createdAt": "2026-01-01T00:00:00Z",
        "completedAt": "2026-01-01T00:01:00Z",
    }
    assert form_b.is_valid(done)
    assert not form_b.is_valid({k: v for k, v in done.items() if k != "video"})


def test_video_record_nullability_and_times() -> None:
    record = flatten(deref("#/components/schemas/VideoDetail"))
    props = record["properties"]
    for name in ("thumbnail", "message", "projectId", "webhook"):
        assert "null" in props[name]["type"], name
    assert "url" not in record["required"]
    for name in ("createdAt", "updatedAt"):
        assert props[name] == {"type": "string", "format": "date-time"}


@pytest.mark.parametrize("op_id", CREATES_VIDEO)
def test_creation_links_to_the_video_read(op_id: str) -> None:
    _, response = success(OPERATIONS[op_id][2])
    links = [resolve(link) for link in response["links"].values()]
    assert {"operationId": "getVideo", "videoId": "$response.body#/data/videoId"} in [
        {"operationId": link["operationId"], **link["parameters"]} for link in links
    ]
    schema = flatten(response["content"]["application/json"]["schema"])
    assert "videoId" in flatten(schema["properties"]["data"])["properties"]


def test_search_creation_links_to_the_search_read() -> None:
    _, response = success(OPERATIONS["createSearch"][2])
    (link,) = [resolve(link) for link in response["links"].values()]
    assert link["operationId"] == "getSearch"
    assert link["parameters"] == {"searchId": "$response.body#/data/search/id"}
    schema = flatten(response["content"]["application/json"]["schema"])
    search = flatten(flatten(schema["properties"]["data"])["properties"]["search"])
    assert "id" in search["properties"]


def test_links_target_declared_parameters() -> None:
    for _, _, op in operations():
        for response in op["responses"].values():
            for link in resolve(response).get("links", {}).values():
                target = OPERATIONS[resolve(link)["operationId"]][2]
                names = {resolve(p)["name"] for p in target.get("parameters", [])}
                assert set(resolve(link)["parameters"]) <= names
