"""The API explorer (``GET /docs``) in a real headless browser: its JavaScript runs and
renders the description the emulator serves, and its "Try it" forms send every kind of
operation (creations included) with a key typed once.

Chromium (``chromium``, ``chromium-browser`` or ``google-chrome``) loads the page from an
emulator in a thread and prints the DOM once the page has settled; for "Try it" the test
drives the page as a user would (types the key, edits a body, clicks Send) over the
DevTools protocol, on a loopback websocket. Without a browser the
test skips on a developer's machine and fails in CI (CI=true), where .ci/run installs
one. The browser gets a profile and a home of its own, no proxy, no background
networking, and resolves no host name: it reaches loopback only.

The description is the packaged one when the package has it, else a stand-in (the
loader monkeypatched); the expectations are read from what the emulator serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from asyncclient.emulator import Emulator, serve_in_thread
from asyncclient.emulator import _routes_docs as docs
from asyncclient.emulator._seed import build_catalog
from tests.document import check_creation_body

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
LOOPBACK_ONLY = [
    "--no-proxy-server",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
]
"""Chromium's own traffic stays off the network: every host name fails to resolve."""

PAGE_ERRORS = re.compile(r"Uncaught|violates|Refused|Failed to load|ERR_")
"""A console message of an uncaught error or of something the page's policy refused."""

STAND_IN: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "Stand-in video service",
        "version": "0.0.1",
        "description": "Served while the package has no description.\n\nKeys: `x-api-key`.",
    },
    "servers": [{"url": "/"}],
    "tags": [{"name": "videos", "description": "Videos."}, {"name": "resources"}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "x-api-key"}},
        "schemas": {
            "Video": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string"},
                    "status": {"type": "string", "enum": ["STARTED", "COMPLETED", "FAILED"]},
                    "scenes": {"type": "array", "items": {"$ref": "#/components/schemas/Video"}},
                },
            }
        },
    },
    "security": [{"key": []}],
    "paths": {
        "/v1/video/{videoId}": {
            "parameters": [
                {"name": "videoId", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {
                "tags": ["videos"],
                "summary": "Read a video",
                "responses": {
                    "200": {
                        "description": "The video",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Video"}}
                        },
                    }
                },
            },
        },
        "/v1/project/create": {
            "post": {
                "tags": ["videos"],
                "summary": "Create a video from a template",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                "responses": {"200": {"description": "Created"}},
            }
        },
        "/v1/voice/list": {
            "get": {
                "tags": ["resources"],
                "summary": "List voices",
                "responses": {"200": {"description": "Voices"}},
            }
        },
    },
    "webhooks": {
        "videoCompleted": {
            "post": {
                "summary": "A video completed",
                "requestBody": {
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Video"}}
                    }
                },
                "responses": {"200": {"description": "Received"}},
            }
        }
    },
}


def packaged() -> bool:
    """Whether the package holds its description."""
    return (resources.files("asyncclient.emulator") / "data" / "openapi.json").is_file()


def browser() -> str:
    """The path of a Chromium; skips without one, fails in CI (CI=true)."""
    for name in BROWSERS:
        if found := shutil.which(name):
            return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI needs a headless browser: none of {', '.join(BROWSERS)} is installed")
    pytest.skip(f"no headless browser ({', '.join(BROWSERS)})")


class _Text(HTMLParser):
    """The text nodes of a page, stripped, outside its scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[str] = []
        self._in_code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_code = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._in_code = False

    def handle_data(self, data: str) -> None:
        if not self._in_code and data.strip():
            self.nodes.append(data.strip())


def text_nodes(page: str) -> set[str]:
    parser = _Text()
    parser.feed(page)
    parser.close()
    return set(parser.nodes)


def shown(document: dict[str, Any]) -> set[str]:
    """What the page must show: the title, each operation's path and summary, and each
    webhook's name and summary."""
    wanted = {document["info"]["title"]}
    operations = {**document.get("paths", {}), **document.get("webhooks", {})}
    for where, item in operations.items():
        for method in METHODS:
            if method in item:
                wanted.add(where)
                wanted.update(filter(None, [item[method].get("summary")]))
    return wanted


def render(url: str, home: Path) -> tuple[str, list[str]]:
    """The DOM of ``url`` once its scripts settled (up to 10 s of virtual time), and the
    page's console messages that report an error."""
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={home / 'profile'}",
        *LOOPBACK_ONLY,
        "--virtual-time-budget=10000",
        "--dump-dom",
        url,
    ]
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, [line for line in console if PAGE_ERRORS.search(line)]


@pytest.mark.heavy  # a real Chromium: what it tests does not change with Python's version
def test_the_explorer_renders_the_served_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser()  # skip (or fail in CI) before starting anything
    if not packaged():
        read = docs.read_data
        stand_in = json.dumps(STAND_IN).encode()
        monkeypatch.setattr(
            docs, "read_data", lambda name: stand_in if name == "openapi.json" else read(name)
        )
    with serve_in_thread(time_scale=60.0, seed=0) as emu:
        with urllib.request.urlopen(emu.url + "/openapi.json", timeout=10) as resp:
            document = json.load(resp)
        assert document.get("paths")
        page, console = render(emu.url + "/docs", tmp_path)
    assert console == []  # no uncaught error, nothing the page's policy refused
    nodes = text_nodes(page)
    assert sorted(shown(document) - nodes) == []
    assert '<main id="content" aria-busy="false">' in page  # rendered, not failed
    assert "Could not" not in " ".join(nodes)


# -- "Try it", driven over the DevTools protocol ---------------------------------------

DEADLINE = 60.0
"""Seconds a browser gets to start, to render, or to show a reply (a hung page fails)."""

SEND = """async ({op, params, body}) => {
  const details = document.getElementById("op-" + op);
  details.open = true;
  const form = details.querySelector("form.try");
  form.closest("details").open = true;
  for (const [name, value] of Object.entries(params)) form.elements[name].value = value;
  const area = form.querySelector("textarea.body-input");
  const prefilled = area ? area.value : null;
  if (area && body !== null) area.value = body;
  const result = form.querySelector(".result");
  delete result.dataset.status;
  form.querySelector("button[type=submit]").click();
  while (!result.dataset.status || result.dataset.status === "sending") {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const reply = result.querySelector("pre.reply");
  return {status: result.dataset.status, prefilled, shown: result.innerText,
    reply: reply ? reply.textContent : null,
    problem: (form.querySelector(".body-error") || {}).textContent || ""};
}"""
"""Fill an operation's form (parameters by name; a body, or null to keep the prefilled
one), click its Send button, wait for the outcome and return what the page shows."""


class Tab:
    """One tab of a headless Chromium, driven over its DevTools websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse[Any]) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._session: str | None = None
        self.errors: list[str] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self._waiting:
                self._waiting.pop(data["id"]).set_result(data)
            elif data.get("method") == "Runtime.exceptionThrown":
                self.errors.append(json.dumps(data["params"]["exceptionDetails"])[:500])
            elif data.get("method") == "Log.entryAdded":
                entry = data["params"]["entry"]
                if entry["level"] == "error" and "/v1/" not in entry.get("url", ""):
                    self.errors.append(entry["text"])  # an HTTP error reply is no page error

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        command: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params}
        if self._session is not None:
            command["sessionId"] = self._session
        done = self._waiting[command["id"]] = asyncio.get_running_loop().create_future()
        await self._ws.send_json(command)
        reply = await asyncio.wait_for(done, DEADLINE)
        assert "error" not in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def open(self, url: str) -> None:
        """Open ``url`` in a new tab and wait until the explorer rendered it."""
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        self._session = attached["sessionId"]
        await self.send("Runtime.enable")
        await self.send("Log.enable")
        await self.navigate(url)

    async def navigate(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        await self.js("""new Promise((resolve) => { const check = () =>
          document.readyState === "complete" && document.getElementById("content")
            && document.getElementById("content").getAttribute("aria-busy") === "false"
            ? resolve(true) : setTimeout(check, 20); check(); })""")

    async def js(self, expression: str) -> Any:
        """The value of ``expression`` (awaited when a promise) in the page."""
        done = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        assert "exceptionDetails" not in done, done["exceptionDetails"]
        return done["result"].get("value")

    async def call(self, function: str, **argument: Any) -> Any:
        return await self.js(f"({function})({json.dumps(argument)})")

    async def try_it(self, op: str, body: str | None = None, **params: str) -> dict[str, Any]:
        """Send operation ``op`` from its form, as :data:`SEND` does."""
        shown: dict[str, Any] = await self.call(SEND, op=op, params=params, body=body)
        return shown

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


async def devtools_url(stderr: asyncio.StreamReader) -> str:
    """The browser's DevTools websocket, as Chromium prints it when it listens."""
    listening = re.compile(rb"DevTools listening on (ws://\S+)")
    while not (found := listening.search(line := await stderr.readline())):
        assert line, "Chromium exited before it listened"
    return found.group(1).decode()


@contextlib.asynccontextmanager
async def chromium(home: Path) -> AsyncIterator[Tab]:
    """A headless Chromium reaching loopback only, and a tab of it."""
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={home / 'profile'}",
        *LOOPBACK_ONLY,
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "about:blank",
    ]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "HOME": str(home)},
    )
    assert process.stderr is not None
    stderr = process.stderr
    drain: asyncio.Task[bytes] | None = None
    try:
        found = await asyncio.wait_for(devtools_url(stderr), DEADLINE)
        drain = asyncio.create_task(stderr.read())  # the pipe never fills up
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(found, max_msg_size=0) as ws,
        ):
            tab = Tab(ws)
            try:
                yield tab
            finally:
                await tab.close()
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        if drain is not None:
            await drain


def post_operations(document: dict[str, Any]) -> dict[str, str]:
    """operationId -> path of each POST operation of ``document``."""
    return {
        item["post"]["operationId"]: path
        for path, item in document["paths"].items()
        if "post" in item
    }


def packaged_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(docs.read_data("openapi.json"))
    return document


@pytest.mark.heavy
@pytest.mark.emulator(time_scale=60.0)
async def test_a_creation_is_sent_from_the_explorer_with_the_key_typed_once(
    emu: Emulator, tmp_path: Path
) -> None:
    browser()
    key = emu.add_team(plan="premium", credits=10_000)
    async with chromium(tmp_path) as tab:
        await tab.open(emu.url + "/docs")
        await tab.call(
            """({key}) => { const input = document.getElementById("api-key");
              input.value = key; input.dispatchEvent(new Event("input")); }""",
            key=key,
        )
        created = await tab.try_it("createTalkingAvatar")
        assert created["status"] == "200", created["shown"]
        prefilled = json.loads(created["prefilled"])
        reply = json.loads(created["reply"])
        video_id = reply["data"]["videoId"]
        # the emulator made it, for the key's team, from the body the page showed
        record = emu.requests[-1]
        assert (record.method, record.path, record.status) == (
            "POST",
            "/v1/project/create/talking-avatar",
            200,
        )
        assert record.team == emu.team_id(key)  # the key the page sent
        video = emu.store.videos[video_id]
        assert video.team_id == emu.team_id(key)
        assert video.profile.script == prefilled["script"]
        assert "x-request-id" in created["shown"] and "x-ratelimit-remaining" in created["shown"]

        # another operation, a GET, without typing the key again
        read = await tab.try_it("getVideo", videoId=video_id)
        assert read["status"] == "200", read["shown"]
        assert json.loads(read["reply"])["data"]["id"] == video_id

        # a body that is not JSON: a message beside it, nothing sent
        before = len(emu.requests)
        broken = await tab.try_it("createTalkingAvatar", body='{"script": "Hi",')
        assert broken["status"] == "invalid"
        assert "Not valid JSON" in broken["problem"] and "nothing was sent" in broken["problem"]
        assert len(emu.requests) == before and len(emu.store.videos) == 1

        # the key outlives a reload of the page (kept for the tab), and is sent again
        await tab.navigate(emu.url + "/docs")
        assert await tab.js('document.getElementById("api-key").value') == key
        again = await tab.try_it("listVideos")
        assert again["status"] == "200", again["shown"]
        assert emu.requests[-1].team == emu.team_id(key)
    assert tab.errors == []


@pytest.mark.heavy
@pytest.mark.emulator(time_scale=60.0)
async def test_every_post_operation_s_prefilled_body_is_valid_and_accepted(
    emu: Emulator, tmp_path: Path
) -> None:
    browser()
    document = packaged_document()
    posts = post_operations(document)
    key = emu.add_team(plan="premium", credits=100_000)
    sent: dict[str, Any] = {}
    replies: dict[str, Any] = {}
    async with chromium(tmp_path) as tab:
        await tab.open(emu.url + "/docs")
        anchors = await tab.js('[...document.querySelectorAll("[id^=op-]")].map((e) => e.id)')
        assert len(anchors) == len(set(anchors))  # one anchor per operation, under two tags too
        await tab.call(
            """({key}) => { const input = document.getElementById("api-key");
              input.value = key; input.dispatchEvent(new Event("input")); }""",
            key=key,
        )
        for op, path in posts.items():
            if op == "createSchedule":
                continue  # needs a completed video of the team: below
            shown = await tab.try_it(op)
            sent[op] = json.loads(shown["prefilled"])
            replies[op] = json.loads(shown["reply"])
            check_creation_body(path, sent[op])  # the document's own schema takes it
            assert shown["status"].startswith("2"), (op, shown["shown"])
            assert (emu.requests[-1].method, emu.requests[-1].path) == ("POST", path)
        # a schedule needs a completed video: the prefilled body with its videoId replaced
        video_id = replies["createTalkingAvatar"]["data"]["videoId"]
        emu.advance(3600)
        body = json.loads(
            await tab.js('document.querySelector("#op-createSchedule textarea.body-input").value')
        )
        check_creation_body(posts["createSchedule"], body)
        scheduled = await tab.try_it(
            "createSchedule", body=json.dumps({**body, "videoId": video_id})
        )
        assert scheduled["status"] == "201", scheduled["shown"]
        assert [post.video.id for post in emu.store.posts.values()] == [video_id]
    assert tab.errors == []
    videos = [v for v in emu.store.videos.values() if v.team_id == emu.team_id(key)]
    assert len(videos) == sum(path.startswith("/v1/project/create") for path in posts.values())


def test_the_explorer_s_example_values_are_the_emulator_s_own() -> None:
    """The values the explorer prefills where a schema cannot know them name records
    the emulator has (a template's scenes supply its every variable)."""
    catalog = build_catalog()
    values = docs.explorer_examples(catalog)
    assert values["avatarId"] in catalog.avatars and values["voiceId"] in catalog.voices
    assert values["musicId"] in catalog.music and values["media"] in catalog.media_videos
    assert values["integrationId"] in catalog.integrations
    assert values["nicheId"] in catalog.niches
    assert values["username"] in catalog.accounts["clipsite"]
    assert values["websiteUrl"].startswith("https://")  # the service wants a public page
    template = next(t for t in catalog.records["templates"] if t["id"] == values["templateId"])
    assert values["CreateFromTemplateRequest.type"] == template["type"]
    keys = {
        v["key"] for scene in values["CreateFromTemplateRequest.scenes"] for v in scene["variables"]
    }
    assert keys == set(template["variables"])
