"""The emulator at scale: videos stored as table rows read back as records did, and the
video list pages from its newest end through indexes, whatever the count (spec 2.3, 4.10).

No timing is asserted: what is checked is what is answered, and what a video weighs.
"""

from __future__ import annotations

import gc
import math
import random
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from asyncclient.emulator import Emulator
from asyncclient.emulator._clock import iso
from asyncclient.emulator._requestlog import RequestRecord
from asyncclient.emulator._state import Team
from asyncclient.emulator._views import SAMPLE_SIZE, download_url

JSON = dict[str, Any]
TYPES = ["class", "ugc_ads", "scenes", "hook_demo", "ugc_video"]
LIST_OMITS = {"type", "durationInSeconds", "avatarId", "voiceId", "musicId", "videoSettings",
              "script", "usedCredits", "webhook"}  # fmt: skip


def template_body(i: int, **extra: Any) -> JSON:
    body: JSON = {
        "type": "class",
        "templateId": "tpl_welcome",
        "title": f"Welcome viewer {i:07d}",
        "caption": True,
        "language": "en",
        "scenes": [
            {
                "script": "Hi {{first_name}}, welcome to {{product}}!",
                "variables": [
                    {"key": "first_name", "type": "text", "value": f"Viewer {i}"},
                    {"key": "product", "type": "text", "value": "Acme"},
                ],
            }
        ],
    }
    body.update(extra)
    return body


def make(emu: Emulator, team: Team, count: int, ptype: str = "class", start: int = 0) -> None:
    """``count`` videos made as creations make them, each from a body of its own."""
    for i in range(start, start + count):
        body = template_body(i)
        emu.store.create_project(team, ptype, body, name=body["title"], cost=5, form="B")


def team_of(emu: Emulator, key: str) -> Team:
    return emu.store.keys[key].team


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


async def get(session: aiohttp.ClientSession, emu: Emulator, key: str, path: str) -> JSON:
    async with session.get(emu.url + path, headers={"x-api-key": key}) as resp:
        assert resp.status == 200, await resp.text()
        data: JSON = (await resp.json())["data"]
        return data


def legacy_view(video: Any, body: JSON, now: float, emu: Emulator, *, detail: bool) -> JSON:
    """The view as the emulator made it from a video's whole request body (spec 2.3)."""
    status = "STARTED" if now < video.done_at else ("FAILED" if video.error else "COMPLETED")
    done = status == "COMPLETED"
    caption = body.get("caption") if isinstance(body.get("caption"), dict) else {}
    script = str(body.get("script") or body.get("text") or "")
    frames = max(5, min(180, math.ceil(len(script) / 15))) * 25 if done else 0
    span = video.done_at - video.created_at
    elapsed = min(now, video.done_at) - video.created_at
    progress = 100 if done else 0 if span <= 0 else max(0, min(99, int(100 * elapsed / span)))
    base = emu.url
    out: JSON = {
        "id": video.id, "name": video.name, "type": video.type, "status": status,
        "thumbnail": f"{base}/_files/{video.id}.jpg" if done else None, "progress": progress,
        "message": {"STARTED": "Video is being generated", "COMPLETED": "Video completed",
                    "FAILED": video.error}[status],
        "durationInFrames": frames, "durationInSeconds": frames / 25,
        "size": SAMPLE_SIZE if done else 0, "projectId": video.project_id, "teamId": video.team_id,
        "avatarId": body.get("avatarId"), "voiceId": body.get("voiceId"),
        "musicId": body.get("musicId"),
        "videoSettings": {"aspectRatio": body.get("aspectRatio") or "ratio_9_16",
                          "caption": {"disabled": bool(caption.get("disabled", False)),
                                      "preset": caption.get("preset") or "classic"}},
        "script": script, "usedCredits": video.used_credits,
        "webhook": body.get("webhook") if isinstance(body.get("webhook"), str) else None,
        "createdAt": iso(video.created_at), "updatedAt": iso(min(now, video.done_at)),
    }  # fmt: skip
    for key in ("avatarId", "voiceId", "musicId"):  # strings, never null (spec 2.3)
        if not (isinstance(out[key], str) and out[key]):
            del out[key]
    if done:
        out["url"] = download_url(base, emu._ctx.secret, video.id, now)
    return out if detail else {k: v for k, v in out.items() if k not in LIST_OMITS}


BODIES: list[JSON] = [
    template_body(1),
    template_body(2, webhook="https://hooks.example.com/h", metadata={"row": 2, "tag": "é"}),
    {"script": "x" * 400, "avatarId": "avatar_002", "voiceId": "voice_003", "text": "t",
     "caption": {"disabled": True, "preset": "neon"}, "aspectRatio": "ratio_1_1",
     "musicId": "music_001"},
    {"text": "Stop scrolling", "caption": {"preset": None}, "webhook": 12},
    {"avatarId": ["not", "hashable"], "caption": {"preset": {"odd": 1}}, "metadata": {"a": [1]}},
]  # fmt: skip


def freeze(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stop the service clock where it is: only ``emu.advance`` moves it."""
    still = emu.clock._mono()
    monkeypatch.setattr(emu.clock, "_mono", lambda: still)


async def test_a_stored_video_reads_back_as_its_whole_body_made_it(
    emu: Emulator, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    freeze(emu, monkeypatch)
    key = emu.add_team("premium", 10**6)
    team = team_of(emu, key)
    made = []
    for i, body in enumerate(BODIES * 2):
        ptype = TYPES[i % len(TYPES)]
        project = emu.store.create_project(
            team, ptype, body, name=f"n{i}", cost=i, form="AB"[i % 2]
        )
        made.append((project.videos[0], body))
    emu.fail_video(made[-1][0].id, "renderer crashed")
    for step in (0.0, 70.0, 400.0):
        emu.advance(step)
        now = emu.now()
        page = await get(session, emu, key, "/v1/video/list?limit=100")
        assert page["total"] == len(made)
        expected = [legacy_view(v, body, now, emu, detail=False) for v, body in reversed(made)]
        assert page["videos"] == expected
        for video, body in made:
            detail = await get(session, emu, key, f"/v1/video/{video.id}")
            assert detail == legacy_view(video, body, now, emu, detail=True)
            assert list(detail) == list(legacy_view(video, body, now, emu, detail=True))
            assert video.metadata == dict(body.get("metadata") or {})


def test_views_on_a_frozen_clock_are_exactly_the_legacy_ones(emu: Emulator) -> None:
    from asyncclient.emulator._views import video_view

    key = emu.add_team("premium", 10**6)
    team = team_of(emu, key)
    videos = []
    for i, body in enumerate(BODIES):
        project = emu.store.create_project(team, TYPES[i], body, name=f"n{i}", cost=3, form="B")
        videos.append((project.videos[0], body))
    for video, body in videos:
        for now in (video.created_at, (video.created_at + video.done_at) / 2, video.done_at + 1):
            for detail in (True, False):
                got = video_view(video, now, emu.url, emu._ctx.secret, detail=detail)
                assert got == legacy_view(video, body, now, emu, detail=detail)
                assert list(got) == list(legacy_view(video, body, now, emu, detail=detail))


@pytest.mark.heavy
async def test_paging_from_the_newest_end_returns_every_video_once_in_order(
    emu: Emulator, session: aiohttp.ClientSession
) -> None:
    key = emu.add_team("premium", 10**7)
    other = emu.add_team("premium", 10**7)
    make(emu, team_of(emu, key), 30_000)
    make(emu, team_of(emu, other), 5)  # another team's videos are not listed
    make(emu, team_of(emu, key), 25_000, ptype="ugc_ads", start=30_000)
    emu.advance(400)
    names = emu.store.table.names
    team_rows = [r for r in range(len(names)) if emu.store.table.team_id(r) == team_of(emu, key).id]
    for query, rows in [
        ("", team_rows),
        ("&type=class", team_rows[:30_000]),
        ("&status=completed&type=ugc_ads", team_rows[30_000:]),
    ]:
        seen: list[str] = []
        offset = 0
        while True:
            page = await get(session, emu, key, f"/v1/video/list?limit=100&offset={offset}{query}")
            assert page["total"] == len(rows)
            if not page["videos"]:
                break
            seen.extend(v["name"] for v in page["videos"])
            offset += 100
        assert seen == [names[r] for r in reversed(rows)]


@pytest.mark.heavy
async def test_two_hundred_thousand_videos_answer_a_page_and_a_detail(
    emu: Emulator, session: aiohttp.ClientSession
) -> None:
    key = emu.add_team("premium", 10**7)
    team = team_of(emu, key)
    make(emu, team, 200_000)
    emu.advance(400)
    first = next(iter(emu.store.videos.values()))
    newest = await get(session, emu, key, "/v1/video/list?limit=100")
    oldest = await get(session, emu, key, "/v1/video/list?limit=100&offset=199950")
    completed = await get(session, emu, key, "/v1/video/list?status=completed&offset=100000")
    assert newest["total"] == oldest["total"] == completed["total"] == 200_000
    assert newest["videos"][0]["name"] == "Welcome viewer 0199999"
    assert [v["name"] for v in oldest["videos"]][-2:] == ["Welcome viewer 0000001", first.name]
    assert completed["videos"][0]["name"] == "Welcome viewer 0099999"
    assert {v["status"] for v in completed["videos"]} == {"COMPLETED"}
    detail = await get(session, emu, key, f"/v1/video/{first.id}")
    assert (detail["id"], detail["name"], detail["status"]) == (first.id, first.name, "COMPLETED")
    assert detail["projectId"] == first.project_id and detail["url"].startswith(emu.url)
    assert emu.store.projects[first.project_id].videos == [first]


@pytest.mark.heavy
def test_a_stored_video_weighs_under_300_bytes() -> None:
    # A row: ids, times, team and profile in arrays (~41 bytes), the row of its id's counter
    # (8), the list's four indexes (16), its name (~70 for a 22-character title) and arrays
    # grown ahead by up to an eighth: ~150 bytes. A record with its request body weighed
    # ~6 KB. 300 leaves room for allocator slack, not for a body or a per-video object.
    emu = Emulator(seed=1, processing_seconds=0.0)
    team = team_of(emu, emu.add_team("premium", 10**7))
    make(emu, team, 1_000)  # the shared profile and first growth, paid once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        make(emu, team, 20_000, start=1_000)
        gc.collect()
        per_video = (tracemalloc.get_traced_memory()[0] - before) / 20_000
    finally:
        tracemalloc.stop()
    assert per_video < 300, per_video


@pytest.mark.heavy
def test_a_logged_request_weighs_under_100_bytes() -> None:
    # Each field in an array (~40 bytes), the name shared with the video, a detail read's
    # path as its video's row: a record object with its strings weighed ~400.
    emu = Emulator(seed=1)
    team = team_of(emu, emu.add_team("premium", 10**7))
    make(emu, team, 20_000)
    log, rows = emu._ctx.requests, list(emu.store.projects.values())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for project in rows:
            video = project.videos[0]
            route, path = "POST /v1/project/create", "/v1/project/create"
            log.append(RequestRecord(1.5, team.id, "key_0001", "POST", path, route, 200,
                                     None, video.name, project.id))  # fmt: skip
            detail = f"/v1/video/{video.id}"
            log.append(RequestRecord(2.5, team.id, "key_0001", "GET", detail,
                                     "GET /v1/video/{videoId}", 200))  # fmt: skip
        gc.collect()
        per_request = (tracemalloc.get_traced_memory()[0] - before) / (2 * len(rows))
    finally:
        tracemalloc.stop()
    assert per_request < 100, per_request
    assert log[-1].path == f"/v1/video/{rows[-1].videos[0].id}"
    assert log[-3:] == list(log)[-3:] and log == list(log) and log != list(log)[:-1]
    assert Emulator().requests == [] == Emulator().webhook_attempts  # compared as the lists were
    assert log[-2] == RequestRecord(1.5, team.id, "key_0001", "POST", "/v1/project/create",
                                    "POST /v1/project/create", 200, None,
                                    rows[-1].videos[0].name, rows[-1].id)  # fmt: skip


def listed(emu: Emulator, now: float) -> list[tuple[str, str, str, str]]:
    """Every video as a scan finds it, newest first: id, team, type and list status."""
    state = {"STARTED": "processing", "COMPLETED": "completed", "FAILED": "failed"}
    return [
        (v.id, v.team_id, v.type, state[v.status(now)])
        for v in reversed(list(emu.store.videos.values()))
    ]


def test_the_list_indexes_agree_with_a_scan_as_videos_finish_and_fail() -> None:
    emu = Emulator(seed=4, processing_seconds=100.0, jitter=0.9, failure_rate={"scenes": 0.3})
    teams = [team_of(emu, emu.add_team("premium", 10**7)) for _ in range(2)]
    rng = random.Random(7)
    for step in range(30):
        for _ in range(rng.choice([1, 5, 80])):  # 80 at once: moved in one merge
            error = "missing value" if rng.random() < 0.1 else None
            emu.store.create_project(
                rng.choice(teams), rng.choice(TYPES), template_body(step),
                name="n", cost=1, form="B", error=error,
            )  # fmt: skip
        started = [v for v in emu.store.videos.values() if v.status(emu.now()) == "STARTED"]
        for video in rng.sample(started, min(3, len(started))):
            emu.fail_video(video.id, "renderer crashed")
        emu.advance(rng.choice([0.0, 5.0, 30.0, 250.0]))
        now = emu.now()
        videos = listed(emu, now)
        for team in teams:
            for ptype in ["all", *TYPES]:
                for status in [None, "processing", "completed", "failed", "draft"]:
                    expected = [
                        vid
                        for vid, owner, kind, state in videos
                        if owner == team.id and ptype in ("all", kind) and status in (None, state)
                    ]
                    offset, limit = rng.choice([(0, 100), (3, 7), (len(expected) - 2, 50)])
                    offset = max(0, offset)
                    total, rows = emu.store.listing.page(team.id, ptype, status, offset, limit, now)
                    assert total == len(expected)
                    ids = [emu.store.table.video_id(r) for r in rows]
                    assert ids == expected[offset : offset + limit]


def test_ids_are_found_by_their_exact_text_only(emu: Emulator) -> None:
    team = team_of(emu, emu.add_team("premium", 10**6))
    make(emu, team, 3)
    video = next(iter(emu.store.videos.values()))
    project_id = video.project_id
    assert emu.store.videos[video.id] == video
    assert emu.store.projects[project_id].id == project_id
    digits, tail = video.id[4:-8], video.id[-8:]
    lookalikes = [
        project_id, "vid_" + digits.lstrip("0") + tail, "vid_0" + digits + tail,
        "vid_" + digits + tail.upper(), "vid_" + digits + "0x" + tail[2:],
        "vid_" + "\uff10" * len(digits) + tail, video.id + "0", video.id[:-1], "vid_", "",
        "vid_99999999999999999999" + tail, "vid_-001" + tail,
    ]  # fmt: skip
    for text in lookalikes:
        assert text not in emu.store.videos and emu.store.videos.get(text) is None, text
    assert video.id not in emu.store.projects and 12 not in emu.store.videos
    assert len(emu.store.videos) == len(emu.store.projects) == 3
    assert list(emu.store.videos) == [v.id for v in emu.store.videos.values()]
    assert emu.store.projects != {} and Emulator().store.projects == {}


def test_an_attempt_keeps_no_payload_yet_reads_back_the_one_sent() -> None:
    # Time, payload time, row, attempt, status, error in arrays (~30 bytes); a payload: ~1.5 KB.
    emu = Emulator(seed=2, processing_seconds=0.0)
    team = team_of(emu, emu.add_team("premium", 10**7))
    hooked = template_body(0, webhook="https://hooks.example.com/h", metadata={"row": 0})
    videos = [
        emu.store.create_project(
            team, "class", hooked, name=f"n{i}", cost=1, form="AB"[i % 2]
        ).videos[0]
        for i in range(20_000)
    ]
    log = emu._ctx.dispatcher.attempts
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i, video in enumerate(videos):
            log.add(video.done_at + 1, video, 1, None if i % 3 else 500, "refused", video.done_at)
        gc.collect()
        per_attempt = (tracemalloc.get_traced_memory()[0] - before) / len(videos)
    finally:
        tracemalloc.stop()
    assert per_attempt < 60, per_attempt
    for i in (0, 1, 19_999):
        video, attempt = videos[i], log[i]
        assert attempt.payload == emu._ctx._payload(video, video.done_at)
        sent = attempt.payload if video.form == "B" else attempt.payload["data"]  # spec 6.2, 6.1
        assert sent["metadata"] == {"projectId": video.project_id, "row": 0}
        assert (attempt.video_id, attempt.url, attempt.attempt) == (video.id, video.webhook, 1)
        assert (attempt.status, attempt.error) == (None if i % 3 else 500, "refused")
    assert [a.video_id for a in log[-2:]] == [v.id for v in videos[-2:]] and len(log) == 20_000
