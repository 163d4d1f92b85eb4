"""The emulator against its OpenAPI document, over real HTTP on loopback (Schemathesis).

Every operation of the document is fuzzed with requests generated from it, and each
response is checked for server errors and for the conformance of its status code,
content type, body and headers (:data:`CHECKS`). A stateful test follows the document's
links: a creation, the video its answer names, then the list of that video's type.
Then each operation is sent once, valid, and once each way a request is refused before
it is processed (no key, an unknown key, a key without permission, an empty bucket), and
each answer is checked the same way.

The document is the package's data file, the one the emulator serves at
``/openapi.json`` (``pytest.from_fixture`` would load it from there, but it does not run
under this pytest): its operations must be known when the tests are collected.

Generated identifiers are random strings, so nearly every request would only meet a 404
or a 400 (``avatar ... not found``). :meth:`Service.point` points three in four of them
at records that exist (the catalogue, and videos, a search and posts made first); the
others are sent as drawn, so error answers are checked too. Nothing else is changed.

The team's rate is far above what the run sends (no 429 hides an answer), the clock runs
fast and some videos fail, so that read-backs show every status. Generation is seeded:
per operation, the coverage phase's fixed boundary values, then :data:`EXAMPLES` drawn.
"""

from __future__ import annotations

import json
import urllib.request
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import resources
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import Case
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from asyncclient.emulator import EmulatorThread, serve_in_thread

ApiCase = Case[Any]
SEED = 20260101
EXAMPLES = 25
"""Generated requests per operation."""

CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
"""Every check of one response against the document. Left out, as they judge something
else: the checks that send requests of their own or decide what a server should accept
(``negative_data_rejection``, ``positive_data_acceptance``, ``missing_required_header``,
``ignored_auth``, ``unsupported_method``, ``use_after_free``, ...). The emulator refuses
some requests the document allows, by the choices the README lists where the spec is
silent (a template's ``language`` of 1 or 2 characters, a past ``scheduledDateTime``):
those answers are 400s the document declares."""

pytestmark = pytest.mark.filterwarnings(
    # The emulator serves from a thread of this process: anything there that touches the
    # global random module while Schemathesis draws a case looks to Hypothesis like a
    # strategy using it (a warning, an error here, seen once in CI). The draws are
    # seeded and use no global random of their own.
    "ignore:Do not use the `random` module inside strategies"
    ":hypothesis.errors.HypothesisDeprecationWarning"
)

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
STATEFUL = settings(
    FUZZ, max_examples=12, stateful_step_count=6, phases=[Phase.explicit, Phase.generate]
)
"""No shrinking: a scenario replayed against a server whose state moved on is slow."""

CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {"mode": "positive", "max-examples": EXAMPLES},
        "phases": {
            "coverage": {"enabled": True},  # a fixed set of boundary values first
            "stateful": {"inference": {"algorithms": []}},  # the document's links only
        },
    }
)
DOCUMENT: dict[str, Any] = json.loads(
    (resources.files("asyncclient.emulator") / "data" / "openapi.json").read_text("utf-8")
)
api = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)
OPERATION_IDS = [
    op["operationId"]
    for item in DOCUMENT["paths"].values()
    for method, op in item.items()
    if method in ("get", "put", "post", "delete", "patch")
]

# The fields of a generated body, and the path parameters, that name a record.
BODY_REFS = {
    "avatarId": "avatars",
    "voiceId": "voices",
    "voice": "voices",
    "musicId": "music",
    "mediaId": "media",
    "startFrameMediaId": "images",
    "endFrameMediaId": "images",
    "templateId": "templates",
    "integrationId": "integrations",
    "videoId": "completed",
    "username": "accounts",
}
PATH_REFS = {
    "videoId": "videos",
    "searchId": "searches",
    "nicheId": "niches",
    "templateId": "templates",
}
KEEP_ONE_IN = 4
"""One generated identifier in this many is sent as it was drawn."""


def pick(value: Any, choices: Sequence[str]) -> Any:
    """One of ``choices`` chosen by ``value`` (the same one each run), or ``value`` itself
    for one value in :data:`KEEP_ONE_IN`."""
    digest = zlib.crc32(repr(value).encode())
    if not choices or digest % KEEP_ONE_IN == 0:
        return value
    return choices[(digest // KEEP_ONE_IN) % len(choices)]


def point_at_records(node: Any, ids: dict[str, list[str]]) -> Any:
    """``node`` (a body or a part of it) with the identifiers it names pointed at records."""
    if isinstance(node, list):
        return [point_at_records(item, ids) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in BODY_REFS and isinstance(value, str):
            out[key] = pick(value, ids[BODY_REFS[key]])
        elif key == "media" and isinstance(value, str):  # add-captions: one video
            out[key] = pick(value, ids["clips"])
        elif key == "media" and isinstance(value, list):
            out[key] = [pick(v, ids["media"]) if isinstance(v, str) else v for v in value]
        elif key == "avatar" and isinstance(value, dict) and isinstance(value.get("id"), str):
            out[key] = {**value, "id": pick(value["id"], ids["avatars"])}
        else:
            out[key] = point_at_records(value, ids)
    if "templateId" in out and "type" in out:
        out["type"] = "class"  # the type of the emulator's templates
    return out


@dataclass
class Service:
    """An emulator, the key of one of its teams, and the ids a request may name."""

    emu: EmulatorThread
    key: str
    ids: dict[str, list[str]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.emu.url

    @property
    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.key}

    def point(self, case: ApiCase, *, path: bool = True) -> None:
        """Point the identifiers of ``case`` at records (those of its path when ``path``)."""
        if isinstance(case.body, (dict, list)):
            case.body = point_at_records(case.body, self.ids)
        if path:
            case.path_parameters = {
                name: pick(value, self.ids[PATH_REFS[name]]) if name in PATH_REFS else value
                for name, value in (case.path_parameters or {}).items()
            }

    def create(self, op_id: str, body: dict[str, Any], status: int = 200) -> Any:
        """Send ``body`` to ``op_id``; return the answer's ``data``."""
        operation = api.find_operation_by_id(op_id)
        response = operation.Case(body=body).call(base_url=self.url, headers=self.headers)
        assert response.status_code == status, response.text
        return response.json()["data"]


def team(emu: EmulatorThread, **options: Any) -> Service:
    """A new team of ``emu`` (the premium plan unless ``options`` say otherwise)."""
    key = emu.add_team(**{"plan": "premium", "credits": 10**9, **options})
    catalog = emu.emulator.catalog
    ids = {
        "avatars": catalog.avatars,
        "voices": catalog.voices,
        "music": catalog.music,
        "media": catalog.media_videos + catalog.media_images,
        "clips": catalog.media_videos,
        "images": catalog.media_images,
        "templates": catalog.templates,
        "integrations": catalog.integrations,
        "niches": catalog.niches,
        "accounts": sorted({name for names in catalog.accounts.values() for name in names}),
    }
    return Service(emu, key, {**ids, "videos": [], "completed": [], "searches": []})


def seed_records(service: Service) -> None:
    """Make the videos (one completed), the search and the posts that ids may name."""
    ids = service.ids
    body = {"script": "Hello", "avatarId": ids["avatars"][0], "voiceId": ids["voices"][0]}
    for _ in range(3):
        ids["videos"].append(service.create("createTalkingAvatar", body)["videoId"])
    hook = service.create("createHookDemo", {"avatarId": ids["avatars"][0], "text": "Look"})
    ids["completed"].append(hook["videoId"])  # completed in its creation response
    body = {"searchTerm": "home workout", "platform": "clipsite"}
    ids["searches"].append(service.create("createSearch", body, 201)["search"]["id"])
    now = service.emu.call(service.emu.emulator.now)
    for n, integration in enumerate(ids["integrations"]):  # published, failed, pending
        when = datetime.fromtimestamp(now + (60, 60, 86400 * 3650)[n], timezone.utc)
        body = {"videoId": hook["videoId"], "integrationId": integration}
        body["scheduledDateTime"] = when.isoformat()
        post = service.create("createSchedule", body, 201)
        if n == 1:
            service.emu.call(service.emu.emulator.fail_post, post["scheduleId"])


@pytest.fixture(scope="module")
def served() -> Iterator[EmulatorThread]:
    """The emulator of the module's tests, in a thread, on a loopback port.

    Ten service minutes a real second: videos complete during the run; some fail.
    """
    with serve_in_thread(time_scale=600.0, seed=0, failure_rate=0.2) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def service(served: EmulatorThread) -> Service:
    """A team whose rate never bites, with records made."""
    service = team(served, per_minute=10**7, burst=10**7)
    seed_records(service)
    return service


def test_the_served_document_is_the_one_fuzzed(service: Service) -> None:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    with direct.open(service.url + "/openapi.json", timeout=10) as response:
        served = json.loads(response.read())
    assert {**served, "servers": None} == {**DOCUMENT, "servers": None}
    assert len(OPERATION_IDS) == api.statistic.operations.total


@pytest.mark.heavy
@api.parametrize()
@FUZZ
def test_operation_conforms(case: ApiCase, service: Service) -> None:
    service.point(case)
    case.call_and_validate(base_url=service.url, headers=service.headers, checks=CHECKS)


CREATES_VIDEO = [
    "createUgcAds", "createScriptToVideo", "createProductAds", "createHookDemo",
    "createTalkingAvatar", "createUgcVideo", "createAddCaptions",
]  # fmt: skip
"""The creations whose answer links to the video made (``data.videoId``)."""

Step = tuple[str, int, str]
"""A step of a scenario: operationId, status, the video id it names."""


def walks_the_links(steps: list[Step]) -> bool:
    """Whether ``steps`` hold a creation, then the read of the video it made, then a list."""
    made = {video for op, status, video in steps if op.startswith("create") and status < 300}
    reads = [i for i, (op, status, video) in enumerate(steps) if op == "getVideo" and video in made]
    return any(op == "listVideos" for i in reads[:1] for op, _, _ in steps[i + 1 :])


@pytest.mark.heavy
@pytest.mark.parametrize("creation", CREATES_VIDEO)
def test_stateful_create_read_list(service: Service, creation: str) -> None:
    """Follow the links: a creation, the video its answer names, the list of its type."""
    walked: list[list[Step]] = []
    linked = api.include(operation_id=[creation, "getVideo", "listVideos"])

    class Workflow(linked.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            walked.append([])

        def before_call(self, case: ApiCase) -> None:
            service.point(case, path=False)  # a linked step's path comes from its link

        def get_call_kwargs(self, case: ApiCase) -> dict[str, Any]:
            return {"base_url": service.url, "headers": service.headers}

        def validate_response(self, response: Any, case: ApiCase, *_: Any, **kw: Any) -> None:
            case.validate_response(response, checks=CHECKS, transport_kwargs=kw)
            data = response.json().get("data") if response.status_code < 300 else None
            named = (case.path_parameters or {}).get("videoId")
            video = named or (data.get("videoId") if isinstance(data, dict) else None)
            op_id = case.operation.definition.raw["operationId"]
            walked[-1].append((op_id, response.status_code, str(video)))

    Workflow.run(settings=STATEFUL)
    assert any(walks_the_links(steps) for steps in walked), walked


# -- each operation once, valid, and refused before it is processed ------------------------

Request = dict[str, Any]


def valid_requests(ids: dict[str, list[str]]) -> dict[str, Request]:
    """A valid request of each operation (``path_parameters``, ``query``, ``body``)."""
    a, v, clip = ids["avatars"][0], ids["voices"][0], ids["clips"][0]
    soon = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    person = {"script": "Hi there", "avatarId": a, "voiceId": v}
    template_scene = {"script": "Save {{d}}", "variables": [{"key": "d", "value": "5%"}]}
    return {
        "createUgcAds": {"body": {**person, "media": [clip]}},
        "createScriptToVideo": {
            "body": {"script": "Hi", "voiceId": v, "mediaType": "media", "media": [clip]}
        },
        "createProductAds": {
            "body": {**person, "productAdSettings": {"websiteUrl": "https://example.com"}}
        },
        "createScenes": {"body": {"scenes": [{"type": "video", "mediaId": clip}]}},
        "createHookDemo": {"body": {"avatarId": a, "text": "Look"}},
        "createTalkingAvatar": {"body": person},
        "createUgcVideo": {
            "body": {**person, "caption": {}, "aspectRatio": "ratio_1_1", "language": "es"}
        },
        "createAddCaptions": {"body": {"media": clip}},
        "createFromTemplate": {
            "body": {
                "type": "class",
                "templateId": ids["templates"][0],
                "title": "Promo",
                "caption": True,
                "language": "en",
                "scenes": [template_scene],
            }
        },
        "listVideos": {"query": {"type": "ugc_video", "limit": 100}},
        "getVideo": {"path_parameters": {"videoId": ids["videos"][0]}},
        "createSchedule": {
            "body": {
                "videoId": ids["completed"][0],
                "integrationId": ids["integrations"][1],
                "scheduledDateTime": soon,
                "platformData": {"description": "New", "tags": ["a"]},
            }
        },
        "listScheduledPosts": {"query": {"limit": 100}},
        "listIntegrations": {},
        "analyzeAccount": {"body": {"username": "@" + ids["accounts"][0], "platform": "clipsite"}},
        "createSearch": {"body": {"searchTerm": " cats ", "platform": "videosite", "limit": 5}},
        "getSearch": {"path_parameters": {"searchId": ids["searches"][0]}, "query": {"limit": 3}},
        "listNicheVideos": {"path_parameters": {"nicheId": ids["niches"][0]}},
        "listTemplates": {},
        "getTemplate": {"path_parameters": {"templateId": ids["templates"][0]}},
        "listAvatars": {"query": {"type": "library"}},
        "listVoices": {},
        "listMusic": {},
    }


@pytest.fixture(scope="module")
def fresh(served: EmulatorThread) -> Service:
    """A team of its own (no account analyzed yet), with records made."""
    service = team(served)
    seed_records(service)
    return service


def send(service: Service, op_id: str, headers: dict[str, str]) -> tuple[int, Callable[[], None]]:
    """Send ``op_id``'s valid request with ``headers``; its status and its check."""
    request = valid_requests(service.ids)[op_id]
    case = api.find_operation_by_id(op_id).Case(**request)
    response = case.call(base_url=service.url, headers=headers)
    return response.status_code, lambda: case.validate_response(response, checks=CHECKS)


@pytest.mark.parametrize("op_id", OPERATION_IDS)
def test_success_conforms(fresh: Service, op_id: str) -> None:
    status, check = send(fresh, op_id, fresh.headers)
    assert 200 <= status < 300
    check()


REFUSALS: dict[str, tuple[int, Callable[[EmulatorThread], dict[str, str]]]] = {
    "no key": (401, lambda emu: {}),
    "unknown key": (401, lambda emu: {"x-api-key": "emu_not_a_key"}),
    "no permission": (403, lambda emu: {"x-api-key": emu.add_team(permitted=False)}),
}


@pytest.mark.parametrize("refusal", REFUSALS)
@pytest.mark.parametrize("op_id", OPERATION_IDS)
def test_refusal_conforms(fresh: Service, op_id: str, refusal: str) -> None:
    expected, headers = REFUSALS[refusal]
    status, check = send(fresh, op_id, headers(fresh.emu))
    assert status == expected
    check()


@pytest.fixture(scope="module")
def slow() -> Iterator[Service]:
    """A team of one token on a clock at real speed: its bucket stays empty."""
    with serve_in_thread(time_scale=1.0) as emulator:
        service = team(emulator, per_minute=1, burst=1)
        service.ids.update(videos=["v"], completed=["v"], searches=["s"])
        assert send(service, "listIntegrations", service.headers)[0] == 200  # the token
        yield service


@pytest.mark.parametrize("op_id", OPERATION_IDS)
def test_rate_limited_conforms(slow: Service, op_id: str) -> None:
    status, check = send(slow, op_id, slow.headers)
    assert status == 429
    check()
