"""Notifications: both forms parsed, and the receiver end to end with the emulator over TLS."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timezone
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.emulator import Emulator
from asyncclient.errors import APIConnectionError, NotFoundError
from asyncclient.models.videos import VideoDetail
from asyncclient.webhooks import WebhookEvent, WebhookPayloadError, WebhookReceiver, parse_event
from tests.conftest import Serve

FORM_A = {
    "status": "COMPLETED",
    "data": {
        "videoId": "vid_1",
        "status": "COMPLETED",
        "url": "https://cdn.example/v1.mp4?sig=x",
        "shareUrl": "https://share.example/v1",
        "metadata": {"projectId": "proj_1", "order": 7},
    },
    "message": "Video completed",
}
FORM_B = {
    "event": "project.completed",
    "projectId": "proj_2",
    "status": "completed",
    "video": {
        "id": "vid_2",
        "url": "https://cdn.example/v2.mp4",
        "duration": 12.5,
        "thumbnail": "https://cdn.example/v2.jpg",
        "aspectRatio": "ratio_9_16",
        "resolution": "1080x1920",
    },
    "createdAt": "2026-11-22T10:00:00Z",
    "completedAt": "2026-11-22T10:02:00.5Z",
}


def test_form_a_completed() -> None:
    event = parse_event(FORM_A)
    assert (event.form, event.status, event.succeeded) == ("A", "COMPLETED", True)
    assert (event.video_id, event.project_id) == ("vid_1", "proj_1")
    assert event.share_url == "https://share.example/v1"
    assert event.metadata == {"projectId": "proj_1", "order": 7}


def test_form_b_completed_and_failed() -> None:
    event = parse_event(json_bytes(FORM_B))
    assert (event.form, event.event, event.status) == ("B", "project.completed", "COMPLETED")
    assert (event.video_id, event.project_id, event.duration) == ("vid_2", "proj_2", 12.5)
    assert event.completed_at is not None and event.completed_at.tzinfo == timezone.utc
    failed = parse_event(
        {"event": "project.failed", "projectId": "p3", "status": "failed", "message": "no voice"}
    )
    assert (failed.succeeded, failed.message, failed.video_id) == (False, "no voice", None)


def test_a_failure_in_form_a_carries_its_reason() -> None:
    event = parse_event(
        {"status": "FAILED", "data": {"videoId": "v", "status": "FAILED", "error": "bad media"}}
    )
    assert (event.status, event.message) == ("FAILED", "bad media")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "body: not JSON"),
        (b"[1]", "body: expected a JSON object"),
        (b"{}", "neither form A"),
        (b'{"data": 3}', "data: expected an object"),
        (b'{"event": "x", "status": "weird"}', "status: expected COMPLETED or FAILED"),
        (b'{"event": "x", "status": "completed", "createdAt": "soon"}', "createdAt"),
    ],
)
def test_malformed_bodies_name_the_field(body: bytes, message: str) -> None:
    with pytest.raises(WebhookPayloadError, match=message):
        parse_event(body)


def test_duplicates_share_a_key() -> None:
    assert parse_event(FORM_A).key == parse_event(dict(FORM_A)).key
    assert parse_event(FORM_A).key != parse_event(FORM_B).key


def form_a(**data: object) -> dict[str, Any]:
    """FORM_A with some of its ``data`` changed."""
    inner = FORM_A["data"]
    assert isinstance(inner, dict)
    return {**FORM_A, "data": {**inner, **data}}


def json_bytes(data: object) -> bytes:
    import json

    return json.dumps(data).encode()


# --- end to end -----------------------------------------------------------------------


@pytest_asyncio.fixture
async def receiver_url(ca: trustme.CA) -> AsyncIterator[tuple[str, list[WebhookEvent]]]:
    """Our WebhookReceiver served over HTTPS on loopback; the first call to it fails."""
    received: list[WebhookEvent] = []
    calls = [0]

    async def handle(event: WebhookEvent) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError("database unavailable")  # the service must retry
        received.append(event)

    receiver = WebhookReceiver(handle)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    runner = web.AppRunner(receiver.app("/hooks"), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
    await site.start()
    port = runner.addresses[0][1]
    yield f"https://127.0.0.1:{port}/hooks", received
    await runner.cleanup()


async def test_receiver_gets_each_notification_once(
    ca: trustme.CA, receiver_url: tuple[str, list[WebhookEvent]]
) -> None:
    url, received = receiver_url
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    async with Emulator(time_scale=60.0, webhook_ssl=trust) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        rate = Plan.PREMIUM.rate_limit.scaled(60.0)
        fast = PollPolicy(min_interval=0.01)
        async with AsyncClient(key, base_url=emu.url, plan=rate, polling=fast) as client:
            cat = emu.catalog
            job = await client.projects.create_talking_avatar(
                script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0],
                webhook=url, metadata={"order": 42},
            )  # fmt: skip
            emu.advance(1000)
            await emu.settle()  # first delivery: our handler fails, we answer 500
            assert received == []
            emu.advance(60)  # the service's first retry, a minute later
            await emu.settle()
            assert len(received) == 1
            event = received[0]
            assert (event.form, event.status, event.video_id) == ("A", "COMPLETED", job.video_id)
            assert event.metadata["order"] == 42 and event.project_id == job.project_id
            # The truth, read with the API (notifications are not signed):
            video = await asyncio.wait_for(event.job(client), 5)
            assert video.url and video.id == job.video_id
            # A duplicate of the same notification is answered 200 and dropped.
            async with aiohttp.ClientSession() as session:
                resp = await session.post(url, json=event.raw, ssl=trust)
                assert resp.status == 200
                resp.release()
                bad = await session.post(url, data=b"{}", ssl=trust)
                assert bad.status == 400
                bad.release()
    assert len(received) == 1
    statuses = [a.status for a in emu.webhook_attempts]
    assert statuses[:2] == [500, 200]


# --- hostile input: every body the receiver cannot read is a 400 -------------------------

DEEP = b'{"event": "x", "status": "completed", "video": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HOSTILE = {
    "invalid UTF-8": b'{"data": {"videoId": "\xff\xfe"}, "status": "COMPLETED"}',
    "nested 100 000 deep": DEEP,
    "timestamp 1e20": b'{"event": "x", "status": "completed", "createdAt": 1e20}',
    "timestamp of 30 digits": b'{"event": "x", "status": "completed", "createdAt": '
    + b"9" * 30
    + b"}",
    "integer of 5000 digits": b'{"event": "x", "status": "completed", "n": ' + b"7" * 5000 + b"}",
    "NaN": b'{"event": "x", "status": "completed", "video": {"duration": NaN}}',
    "status a list": b'{"data": {"videoId": "v", "status": ["COMPLETED"]}}',
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_bodies_raise_only_the_payload_error(body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        parse_event(body)


@pytest.mark.parametrize(
    "body",
    [None, 42, ["a"], {"event": "x", "status": 10**5000}, {"data": {"status": 10**5000}}],
    ids=["None", "int", "list", "form B huge status", "form A huge status"],
)
def test_anything_but_a_body_raises_only_the_payload_error(body: object) -> None:
    with pytest.raises(WebhookPayloadError):
        parse_event(body)  # type: ignore[arg-type]


def test_size_and_depth_are_bounded_and_configurable() -> None:
    padded = json_bytes({**FORM_B, "pad": "x" * 2000})
    assert parse_event(padded).video_id == "vid_2"
    with pytest.raises(WebhookPayloadError, match="larger than 1000 bytes"):
        parse_event(padded, max_size=1000)
    with pytest.raises(WebhookPayloadError, match="larger than 1000 bytes"):
        parse_event(padded.decode(), max_size=1000)
    nested = json_bytes({**FORM_B, "extra": [[[["deep"]]]]})  # 5 levels with the body
    assert parse_event(nested, max_depth=5).project_id == "proj_2"
    with pytest.raises(WebhookPayloadError, match="deeper than 4"):
        parse_event(nested, max_depth=4)
    brackets_in_text = json_bytes({**FORM_B, "message": "[[[[[[{{{{{{" * 100})
    assert parse_event(brackets_in_text, max_depth=2).status == "COMPLETED"


def test_a_duration_out_of_range_is_none() -> None:
    body = json_bytes(FORM_B).replace(b"12.5", b"1e400")
    assert parse_event(body).duration is None
    assert parse_event({**FORM_B, "video": {"duration": 10**400}}).duration is None
    assert parse_event({**FORM_B, "video": {"duration": True}}).duration is None


Post = Callable[..., Awaitable[tuple[int, dict[str, Any]]]]


@pytest_asyncio.fixture
async def post() -> AsyncIterator[Post]:
    """POST a body (bytes, or JSON) to a URL; returns the status and the decoded answer."""
    # One connection a request: no TLS transport outlives the session (Python 3.10).
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:

        async def send(url: str, body: object, **options: Any) -> tuple[int, dict[str, Any]]:
            data = body if isinstance(body, bytes) else json_bytes(body)
            async with session.post(url, data=data, **options) as resp:
                return resp.status, await resp.json(content_type=None)

        yield send


async def test_the_receiver_answers_400_to_any_body_it_cannot_read(
    serve: Serve, post: Post
) -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, max_body=4096)
    url = await serve(receiver.app("/hooks")) + "/hooks"
    for body in [*HOSTILE.values(), b"", b"\x00" * 10, json_bytes({**FORM_B, "pad": "x" * 5000})]:
        status, answer = await post(url, body)
        assert (status, answer["success"]) == (400, False), (body[:40], answer)
    # A body that claims to be gzip but is not: aiohttp fails while we read it.
    status, _ = await post(url, b"garbage", headers={"Content-Encoding": "gzip"})
    assert status == 400
    assert received == []
    assert (await post(url, FORM_A))[0] == 200 and len(received) == 1


# --- the token in the notification URL --------------------------------------------------


def test_url_for_adds_the_token_to_the_query() -> None:
    receiver = WebhookReceiver(lambda event: None, token="s3cr&t")
    assert receiver.url_for("https://example.com/hook") == "https://example.com/hook?token=s3cr%26t"
    assert (
        receiver.url_for("https://example.com/hook?tenant=7&token=old")
        == "https://example.com/hook?tenant=7&token=s3cr%26t"
    )
    assert WebhookReceiver(lambda event: None).url_for("https://x.test/h") == "https://x.test/h"
    with pytest.raises(ValueError, match="token"):
        WebhookReceiver(lambda event: None, token="")


async def test_a_missing_token_is_401_a_wrong_one_403_and_neither_is_remembered(
    serve: Serve, post: Post
) -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, token="right-token")
    base = await serve(receiver.app("/hooks")) + "/hooks"
    assert (await post(base, FORM_A))[0] == 401
    wrongs = ["=wrong", "=", "=right-toke", "=%C3%A9", "=%FF", "=right-token&token=x"]
    for wrong in wrongs:
        assert (await post(base + "?token" + wrong, FORM_A))[0] == 403, wrong
    assert (await post(base + "?token=right-token", b"not json"))[0] == 400
    assert received == [] and receiver.refused == 7
    status, answer = await post(receiver.url_for(base), FORM_A)
    assert (status, answer) == (200, {"success": True})  # not a duplicate of a refused one
    assert [e.video_id for e in received] == ["vid_1"] and receiver.duplicates == 0
    assert (await post(receiver.url_for(base), FORM_A))[0] == 200
    assert len(received) == 1 and receiver.duplicates == 1


# --- deduplication only of events taken ---------------------------------------------------


async def test_a_copy_in_flight_does_not_shadow_the_genuine_notification(
    serve: Serve, post: Post
) -> None:
    """A forged notification whose handler is still at work, then fails: the genuine one,
    arriving meanwhile, must be handled, not answered as a duplicate."""
    entered = asyncio.Event()
    release = asyncio.Event()
    handled: list[str | None] = []

    async def handle(event: WebhookEvent) -> None:
        if event.url == "https://evil.example/v.mp4":
            entered.set()
            await release.wait()
            raise RuntimeError("the handler's own check: not our video")
        handled.append(event.url)

    receiver = WebhookReceiver(handle)
    url = await serve(receiver.app("/hooks")) + "/hooks"
    forged = form_a(url="https://evil.example/v.mp4")
    forgery = asyncio.create_task(post(url, forged))
    await entered.wait()
    genuine = asyncio.create_task(post(url, FORM_A))
    await asyncio.sleep(0.05)
    release.set()
    assert (await forgery)[0] == 500
    assert (await genuine)[0] == 200
    assert handled == ["https://cdn.example/v1.mp4?sig=x"] and receiver.duplicates == 0


# --- confirmation through the API (a fake client) ---------------------------------------


class FakeJob:
    def __init__(self, client: FakeClient, video_id: str | None, project_id: str | None):
        self.client, self.video_id, self.project_id = client, video_id, project_id

    async def refresh(self) -> None:
        self.client.reads.append(f"list {self.project_id}")
        found = [v for v in self.client.records.values() if v.project_id == self.project_id]
        if found:
            self.video_id = found[0].id

    async def read(self) -> VideoDetail:
        self.client.reads.append(f"get {self.video_id}")
        self.client.reading.set()
        await self.client.gate.wait()
        if self.client.error is not None:
            raise self.client.error
        record = self.client.records.get(self.video_id or "")
        if record is None:
            raise NotFoundError("Video not found", status_code=404)
        return record


class FakeClient:
    """What ``confirm_with`` uses of an AsyncClient: ``jobs.from_video_id/from_project_id``."""

    def __init__(self, *records: VideoDetail) -> None:
        self.records = {r.id: r for r in records}
        self.reads: list[str] = []
        self.error: Exception | None = None
        self.gate = asyncio.Event()
        self.gate.set()
        self.reading = asyncio.Event()
        self.jobs = self

    def from_video_id(self, video_id: str, *, project_id: str | None = None) -> FakeJob:
        return FakeJob(self, video_id, project_id)

    def from_project_id(self, project_id: str) -> FakeJob:
        return FakeJob(self, None, project_id)

    def set(self, video_id: str, project_id: str, status: str) -> None:
        url = "https://cdn.example/real.mp4" if status == "COMPLETED" else None
        self.records[video_id] = VideoDetail(
            id=video_id, project_id=project_id, status=status, url=url
        )


@pytest_asyncio.fixture
async def confirming(
    serve: Serve,
) -> tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]]:
    api = FakeClient()
    api.set("vid_1", "proj_1", "STARTED")
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append, confirm_with=api)  # type: ignore[arg-type]
    return await serve(receiver.app("/hooks")) + "/hooks", receiver, api, received


async def test_a_notification_the_service_contradicts_is_409_and_not_remembered(
    confirming: tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]],
    post: Post,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, receiver, api, received = confirming
    with caplog.at_level(logging.WARNING, "asyncclient"):
        status, answer = await post(url, FORM_A)  # claims COMPLETED; the service says STARTED
    assert (status, answer) == (409, {"success": False, "message": "not confirmed by the service"})
    assert "claims COMPLETED; the service says STARTED" in caplog.text
    assert received == [] and receiver.refused == 1
    api.set("vid_1", "proj_1", "COMPLETED")  # the video finishes: the genuine notification
    assert (await post(url, FORM_A))[0] == 200
    (event,) = received
    assert event.confirmed is not None and event.confirmed.url == "https://cdn.example/real.mp4"
    assert (await post(url, FORM_A))[0] == 200  # now a duplicate: no read, not handed over
    assert len(received) == 1 and receiver.duplicates == 1
    assert api.reads == ["get vid_1", "get vid_1"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (form_a(videoId="vid_404"), "knows no video vid_404"),
        (form_a(metadata={"projectId": "proj_x"}), "names project proj_x"),
        (
            {"event": "project.failed", "projectId": "proj_9", "status": "failed"},
            "knows no video of proj_9",
        ),
        ({"status": "FAILED", "data": {"status": "FAILED"}}, "neither a video nor a project"),
    ],
    ids=["unknown video", "other project", "unknown project", "no ids"],
)
async def test_an_unconfirmable_notification_is_409(
    confirming: tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]],
    post: Post,
    body: dict[str, Any],
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, _, api, received = confirming
    api.set("vid_1", "proj_1", "COMPLETED")
    status, answer = await post(url, body)
    assert status == 409 and answer["message"] == "not confirmed by the service"
    assert reason in caplog.text
    assert received == []


async def test_a_failed_read_is_503_so_the_service_retries(
    confirming: tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]], post: Post
) -> None:
    url, _, api, received = confirming
    api.set("vid_1", "proj_1", "COMPLETED")
    api.error = APIConnectionError("connection reset")
    assert (await post(url, FORM_A))[0] == 503
    api.error = None
    assert (await post(url, FORM_A))[0] == 200 and len(received) == 1


async def test_a_project_only_failure_is_confirmed_through_the_list(
    confirming: tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]], post: Post
) -> None:
    url, _, api, received = confirming
    failed = {"event": "project.failed", "projectId": "proj_1", "status": "failed"}
    assert (await post(url, failed))[0] == 409  # the service says STARTED
    api.set("vid_1", "proj_1", "FAILED")
    assert (await post(url, failed))[0] == 200
    assert received[0].confirmed is not None and received[0].confirmed.id == "vid_1"
    assert api.reads == ["list proj_1", "get vid_1", "list proj_1", "get vid_1"]


async def test_a_forgery_being_confirmed_does_not_shadow_the_genuine_copy(
    confirming: tuple[str, WebhookReceiver, FakeClient, list[WebhookEvent]], post: Post
) -> None:
    url, _, api, received = confirming
    api.gate.clear()  # the API read of the forgery hangs for a while
    forgery = asyncio.create_task(post(url, FORM_A))
    await api.reading.wait()
    genuine = asyncio.create_task(post(url, FORM_A))
    await asyncio.sleep(0.05)
    api.set("vid_1", "proj_1", "COMPLETED")  # by the time either is read, it is true
    api.gate.set()
    assert sorted([(await forgery)[0], (await genuine)[0]]) == [200, 200]
    assert len(received) == 1  # read once, handled once; the copy waited and was a duplicate


# --- end to end: a forgery against the emulator does not suppress the genuine notification


@asynccontextmanager
async def served(receiver: WebhookReceiver, ca: trustme.CA) -> AsyncIterator[str]:
    """``receiver`` served over HTTPS on loopback (the service calls HTTPS URLs only)."""
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    runner = web.AppRunner(receiver.app("/hooks"), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx).start()
        yield f"https://127.0.0.1:{runner.addresses[0][1]}/hooks"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def service(ca: trustme.CA, **options: Any) -> AsyncIterator[tuple[Emulator, AsyncClient]]:
    """The emulator, trusting our CA for its deliveries, and a client of a new team."""
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    async with Emulator(time_scale=60.0, webhook_ssl=trust, **options) as emu:
        key = emu.add_team(plan="premium", credits=1000)
        rate = Plan.PREMIUM.rate_limit.scaled(60.0)
        fast = PollPolicy(min_interval=0.01)
        async with AsyncClient(key, base_url=emu.url, plan=rate, polling=fast) as client:
            yield emu, client


async def test_a_forged_completion_does_not_suppress_the_genuine_one(
    ca: trustme.CA, post: Post, caplog: pytest.LogCaptureFixture
) -> None:
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    received: list[WebhookEvent] = []
    async with service(ca) as (emu, client):
        receiver = WebhookReceiver(received.append, token="t0ken", confirm_with=client)
        async with served(receiver, ca) as url:
            cat = emu.catalog
            job = await client.projects.create_talking_avatar(
                script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0],
                webhook=receiver.url_for(url),
            )  # fmt: skip
            forged = {
                "status": "COMPLETED",
                "message": "Video completed",
                "data": {
                    "videoId": job.video_id,
                    "status": "COMPLETED",
                    "url": "https://evil.example/v.mp4",
                    "metadata": {"projectId": job.project_id},
                },
            }
            assert (await post(url, forged, ssl=trust))[0] == 401  # no token
            status, _ = await post(receiver.url_for(url), forged, ssl=trust)
            assert status == 409 and "the service says STARTED" in caplog.text
            assert received == []
            emu.advance(1000)  # the video completes: the genuine notification is sent
            await emu.settle()
            assert [a.status for a in emu.webhook_attempts] == [200]
            (event,) = received
            assert event.video_id == job.video_id and event.confirmed is not None
            assert event.confirmed.status == "COMPLETED" and event.confirmed.url
            assert event.confirmed.url != "https://evil.example/v.mp4"
            # The forgery once more, now that the video did complete: a duplicate, dropped.
            assert (await post(receiver.url_for(url), forged, ssl=trust))[0] == 200
            assert len(received) == 1 and receiver.duplicates == 1


async def test_a_form_b_failure_is_confirmed_end_to_end(ca: trustme.CA) -> None:
    """Form B's failure names only the project: the receiver finds its video by the list."""
    received: list[WebhookEvent] = []
    async with service(ca, webhook_form="B") as (emu, client):
        receiver = WebhookReceiver(received.append, confirm_with=client)
        async with served(receiver, ca) as url:
            cat = emu.catalog
            job = await client.projects.create_talking_avatar(
                script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0], webhook=url
            )
            assert job.video_id is not None
            emu.fail_video(job.video_id, "no voice")
            await emu.settle()
            assert [a.status for a in emu.webhook_attempts] == [200]
    (event,) = received
    assert (event.form, event.status, event.video_id) == ("B", "FAILED", None)
    assert event.confirmed is not None and event.confirmed.id == job.video_id
