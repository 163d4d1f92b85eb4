"""One reading of the spec: every case of ``data/spec/boundaries.json`` through both sides.

Each case runs (a) through the SDK's validation (request models and ``validate``, or the
``check_*`` functions the resources apply to query parameters), without network, and
(b) through the emulator over raw HTTP on loopback, bypassing the SDK. Both must agree
with the table: accepted, or refused with every expected message fragment.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import attrs
import pytest
import pytest_asyncio

from asyncclient.emulator import Emulator
from asyncclient.emulator._clock import iso
from asyncclient.errors import ValidationError
from asyncclient.models import common, requests, scenes
from asyncclient.models.enums import (
    Platform,
    ProjectType,
    ScheduleStatus,
    SocialPlatform,
    VideoListStatus,
)
from asyncclient.validation import (
    check_enum,
    check_offset,
    check_page_size,
    unfilled_placeholders,
    validate,
)

TABLE = json.loads((Path(__file__).parent / "data" / "spec" / "boundaries.json").read_text("utf-8"))
NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


# -- the table: cases and recipes ----------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    endpoint: str
    platform: str | None
    sets: tuple[tuple[str, Any], ...]
    expect: str
    message: tuple[str, ...]
    then: str | None
    service_only: bool


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _variants(raw: dict[str, Any]) -> Iterator[tuple[str, tuple[tuple[str, Any], ...]]]:
    """(suffix, sets) of each case a table row stands for: ``each``, ``each_set``, fields."""
    base = tuple(raw.get("set", {}).items())
    fields = _listed(raw.get("field"))
    if "each_set" in raw:
        for extra in raw["each_set"]:
            yield f" = {_short(extra)}", base + tuple(extra.items())
        return
    for field in fields:
        label = f" [{field}]" if len(fields) > 1 else ""
        if field is None:
            yield label, base
        elif "each" in raw:
            for value in raw["each"]:
                yield f"{label} = {_short(value)}", (*base, (field, value))
        else:
            yield label, (*base, (field, raw["value"]))


def _cases() -> list[Case]:
    out = []
    for raw in TABLE["cases"]:
        for endpoint in _listed(raw["endpoint"]):
            for platform in _listed(raw.get("platform")):
                for suffix, sets in _variants(raw):
                    where = endpoint + (f"/{platform}" if platform else "")
                    out.append(
                        Case(
                            id=f"{where}: {raw['id']}{suffix}",
                            endpoint=endpoint,
                            platform=platform,
                            sets=sets,
                            expect=raw["expect"],
                            message=tuple(_listed(raw.get("message", []))),
                            then=raw.get("then"),
                            service_only="service_only" in raw,
                        )
                    )
    return out


CASES = _cases()
ABSENT = object()


def _make(value: Any, now: datetime) -> Any:
    """Resolve the recipes of a table value (see the table's ``about``)."""
    if isinstance(value, list):
        return [_make(v, now) for v in value]
    if not isinstance(value, dict):
        return value
    if "$absent" in value:
        return ABSENT
    if "$repeat" in value:
        prefix, suffix = value.get("prefix", ""), value.get("suffix", "")
        times = value.get("times", value.get("length", 0) - len(prefix) - len(suffix))
        return prefix + value["$repeat"] * times + suffix
    if "$list" in value:
        return [_make(copy.deepcopy(value["$list"]), now) for _ in range(value["times"])]
    if "$json_bytes" in value:
        fill = value["char"] * ((value["$json_bytes"] - 8) // len(value["char"].encode()))
        fill += "a" * (value["$json_bytes"] - 8 - len(fill.encode()))
        made = {"k": fill}
        assert (
            len(json.dumps(made, separators=(",", ":"), ensure_ascii=False).encode())
            == (value["$json_bytes"])
        )
        return made
    if "$minutes" in value:
        return iso((now + timedelta(minutes=value["$minutes"])).timestamp())
    return {k: _make(v, now) for k, v in value.items()}


_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    keys: list[str | int] = [int(i) if i else k for k, i in _TOKEN.findall(path)]
    node: Any = body
    for key in keys[:-1]:
        if isinstance(key, str) and key not in node:
            node[key] = {}
        node = node[key]
    last = keys[-1]
    if value is ABSENT:
        node.pop(last, None) if isinstance(node, dict) else node.pop(last)
    elif isinstance(node, list) and last == len(node):
        node.append(value)
    else:
        node[last] = value


def body_of(case: Case, now: datetime) -> dict[str, Any]:
    body = _make(copy.deepcopy(TABLE["bases"][case.endpoint]), now)
    for path, value in case.sets:
        _put(body, path, _make(copy.deepcopy(value), now))
    assert isinstance(body, dict)
    return body


def test_the_table_has_unique_ids_and_covers_both_outcomes() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    assert {c.expect for c in CASES} == {"accept", "reject"}
    assert all(c.message for c in CASES if c.expect == "reject")


# -- (a) the SDK's validation, no network ---------------------------------------------------

REQUESTS: dict[str, type] = {
    "ugc-ads": requests.UGCAdsRequest,
    "script-to-video": requests.ScriptToVideoRequest,
    "product-ads": requests.ProductAdsRequest,
    "scenes": requests.ScenesRequest,
    "hook-demo": requests.HookDemoRequest,
    "talking-avatar": requests.TalkingAvatarRequest,
    "ugc-video": requests.UGCVideoRequest,
    "add-captions": requests.AddCaptionsRequest,
    "template": requests.TemplateGenerationRequest,
    "schedule": requests.ScheduleRequest,
    "analyze": requests.AnalyzeAccountRequest,
    "search": requests.SearchRequest,
}
NESTED: dict[str, type] = {
    "caption": common.Caption,
    "audio": common.Audio,
    "adSettings": common.AdSettings,
    "productAdSettings": common.ProductAdSettings,
    "presetSettings": common.PresetSettings,
    "gameplaySettings": common.GameplaySettings,
    "textSettings": common.TextSettings,
    "platformData": requests.PlatformData,
    "avatar": scenes.AvatarBox,
    "topLeft": scenes.Point,
    "bottomRight": scenes.Point,
}
SCENE_TYPES: dict[str, type] = {
    "avatar": scenes.AvatarScene,
    "video": scenes.VideoScene,
    "picture_in_picture": scenes.PictureInPictureScene,
    "start_end_frame": scenes.StartEndFrameScene,
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _item(cls: type, wire: str, value: Any) -> Any:
    if wire == "scenes" and isinstance(value, dict):
        kind = SCENE_TYPES[value["type"]] if cls is requests.ScenesRequest else scenes.TemplateScene
        return model(kind, value)
    if wire == "variables" and isinstance(value, dict):
        return model(scenes.TemplateVariable, value)
    return value


def model(cls: type, data: dict[str, Any]) -> Any:
    """Build an SDK model from a wire body: an absent field is passed as ``None``."""
    kwargs: dict[str, Any] = {}
    for field in attrs.fields(cls):
        wire = _camel(field.name)
        value = data.get(wire)
        if (
            wire in NESTED
            and isinstance(value, dict)
            and cls is not requests.TemplateGenerationRequest
        ):
            value = model(NESTED[wire], value)
        elif isinstance(value, list):
            value = [_item(cls, wire, v) for v in value]
        elif wire == "scheduledDateTime" and isinstance(value, str):
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        kwargs[field.name] = value
    return cls(**kwargs)


def _page(high: int) -> Callable[[str, Any], list[str]]:
    return lambda name, v: check_page_size(name, v, high=high)


def _enum(cls: Any) -> Callable[[str, Any], list[str]]:
    return lambda name, v: check_enum(name, v, cls)


# What the resources check of each list's query (resources/videos, schedule, templates, social).
QUERY_CHECKS: dict[str, dict[str, Callable[[str, Any], list[str]]]] = {
    "video-list": {"type": _enum(ProjectType), "status": _enum(VideoListStatus)},
    "schedule-list": {"status": _enum(ScheduleStatus), "platform": _enum(Platform)},
    "template-list": {"type": _enum(ProjectType)},
    "search-get": {"limit": _page(50)},
    "niche-videos": {"platform": _enum(SocialPlatform), "limit": _page(50)},
}


def sdk_problems(case: Case) -> list[str]:
    body = body_of(case, NOW)
    if case.endpoint in QUERY_CHECKS:
        checks = {"limit": _page(100), "offset": check_offset, **QUERY_CHECKS[case.endpoint]}
        return [line for name, value in body.items() for line in checks[name](name, value)]
    if body.get("videoId") == "$video":
        body["videoId"] = "vid_1"
    if body.get("integrationId") == "$integration":
        body["integrationId"] = f"int_{case.platform}_1"
    try:
        validate(model(REQUESTS[case.endpoint], body), now=NOW, platform=case.platform)
    except ValidationError as exc:
        return list(exc.errors)
    return []


@pytest.mark.parametrize("case", [c for c in CASES if not c.service_only], ids=lambda c: c.id)
def test_sdk(case: Case) -> None:
    found = sdk_problems(case)
    if case.expect == "accept":
        assert found == []
    else:
        joined = "; ".join(found)
        assert found and all(part in joined for part in case.message), found
    if case.then is not None:
        request = model(requests.TemplateGenerationRequest, body_of(case, NOW))
        assert any(case.then in line for line in unfilled_placeholders(request))


# -- (b) the emulator over raw HTTP --------------------------------------------------------


@dataclass
class Service:
    emu: Emulator
    session: aiohttp.ClientSession
    key: str

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"x-api-key": self.key}
        url = self.emu.url + path
        async with self.session.request(method, url, json=body, headers=headers) as resp:
            return resp.status, await resp.json(content_type=None)


def _add_catalog(emu: Emulator) -> None:
    extra = TABLE["catalog"]
    emu.catalog.avatars.extend(extra["avatars"])
    emu.catalog.voices.extend(extra["voices"])
    emu.catalog.music.extend(extra["music"])
    records = emu.catalog.records["templates"]
    for tpl in extra["templates"]:
        like = next(r for r in records if r["id"] == tpl["like"])
        records.append({**copy.deepcopy(like), "id": tpl["id"]})
        emu.catalog.templates.append(tpl["id"])


@pytest_asyncio.fixture
async def service() -> AsyncIterator[Service]:
    async with Emulator(time_scale=60.0, seed=0) as emu, aiohttp.ClientSession() as session:
        _add_catalog(emu)
        yield Service(emu, session, emu.add_team(plan="premium", credits=1_000_000))


async def _completed_video(service: Service) -> str:
    status, created = await service.call(
        "POST", "/v1/project/create/ugc-ads", TABLE["bases"]["ugc-ads"]
    )
    assert status == 200, created
    service.emu.advance(400)
    return str(created["data"]["videoId"])


async def emulator_answer(service: Service, case: Case) -> tuple[int, Any]:
    ep = case.endpoint
    video = await _completed_video(service) if ep == "schedule" else None
    body = body_of(case, datetime.fromtimestamp(service.emu.now(), timezone.utc))
    if ep in QUERY_CHECKS:
        query = "?" + urlencode({k: str(v) for k, v in body.items()})
        if ep == "search-get":
            _, made = await service.call(
                "POST", "/v1/social/search/create", TABLE["bases"]["search"]
            )
            return await service.call(
                "GET", f"/v1/social/search/{made['data']['search']['id']}{query}"
            )
        if ep == "niche-videos":
            return await service.call(
                "GET", f"/v1/niche/{service.emu.catalog.niches[0]}/videos{query}"
            )
        path = {"video-list": "/v1/video/list", "schedule-list": "/v1/schedule/list"}.get(ep)
        return await service.call("GET", (path or "/v1/template/list") + query)
    if ep == "schedule":
        if body.get("videoId") == "$video":
            body["videoId"] = video
        if body.get("integrationId") == "$integration":
            body["integrationId"] = f"int_{case.platform}_1"
    path = {
        "template": "/v1/project/create",
        "schedule": "/v1/schedule/create",
        "analyze": "/v1/social/account/analyze",
        "search": "/v1/social/search/create",
    }.get(ep, f"/v1/project/create/{ep}")
    return await service.call("POST", path, body)


async def _failure_of_the_video(service: Service) -> tuple[str, str]:
    service.emu.advance(4000)
    status, page = await service.call("GET", "/v1/video/list?type=class")
    assert status == 200
    video = page["data"]["videos"][0]
    return video["status"], str(video["message"])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_emulator(service: Service, case: Case) -> None:
    status, answer = await emulator_answer(service, case)
    if case.expect == "accept":
        assert status in (200, 201), answer
        assert answer["success"] is True
    else:
        assert (status, answer["success"]) == (400, False), answer
        assert all(part in answer["message"] for part in case.message), answer["message"]
    if case.then is not None:
        state, message = await _failure_of_the_video(service)
        assert state == "FAILED" and case.then in message
