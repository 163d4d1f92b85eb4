"""The service's description and its explorer: ``GET /openapi.json`` and ``GET /docs``.

Both are served without a key, rate limit or log entry. The description is the packaged
one when the package has it, else a stand-in (the loader monkeypatched): either way what
is served is compared with what was read. The emulator's command prints both addresses,
as text and with ``--json``.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from importlib import resources
from typing import Any

import aiohttp
import pytest

from asyncclient.emulator import Emulator
from asyncclient.emulator import _routes_docs as docs

STAND_IN: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Stand-in service", "version": "0.0.1"},
    "servers": [{"url": "/", "description": "the service"}],
    "paths": {
        "/v1/video/list": {
            "get": {"summary": "List videos", "responses": {"200": {"description": "A page"}}}
        }
    },
}
"""The description served while the package has none (it is written separately)."""


def packaged() -> bool:
    """Whether the package holds its description."""
    return (resources.files("asyncclient.emulator") / "data" / "openapi.json").is_file()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """The package data files read, counted by name (the stand-in for a missing
    description)."""
    read = docs.read_data
    counts: collections.Counter[str] = collections.Counter()

    def counting(name: str) -> bytes:
        counts[name] += 1
        if name == "openapi.json" and not packaged():
            return json.dumps(STAND_IN).encode()
        return read(name)

    monkeypatch.setattr(docs, "read_data", counting)
    return counts


@pytest.fixture
def document(reads: collections.Counter[str]) -> dict[str, Any]:
    """The description as the emulator reads it (not counted as a read)."""
    read: dict[str, Any] = json.loads(docs.read_data("openapi.json"))
    reads.clear()
    return read


async def test_the_description_is_served_without_a_key_as_read_but_its_servers(
    emu: Emulator,
    session: aiohttp.ClientSession,
    document: dict[str, Any],
    reads: collections.Counter[str],
) -> None:
    served = []
    for _ in range(2):
        async with session.get(emu.url + "/openapi.json") as resp:
            assert resp.status == 200
            assert resp.content_type == "application/json"
            assert not any(h.startswith("X-RateLimit") for h in resp.headers)
            served.append(await resp.json())
    assert served[0] == served[1]
    assert reads["openapi.json"] == 1  # read once, when first asked for
    body = served[0]
    servers = body.pop("servers")
    assert body == {k: v for k, v in document.items() if k != "servers"}
    assert servers == docs.served_document(document, emu.url)["servers"]
    assert len(emu.requests) == 0 and not emu.counters.requests  # not in the request log


async def test_the_explorer_is_served_without_a_key_as_html(
    emu: Emulator, session: aiohttp.ClientSession, reads: collections.Counter[str]
) -> None:
    for _ in range(2):
        async with session.get(emu.url + "/docs") as resp:
            assert resp.status == 200
            assert resp.content_type == "text/html"
            page = await resp.text()
            policy = resp.headers["Content-Security-Policy"]
    assert reads["explorer.html"] == 1
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert 'fetch("openapi.json"' in page
    assert loaded_urls(page) == []
    assert len(emu.requests) == 0


def test_relative_servers_are_resolved_against_the_emulator_on_a_copy() -> None:
    base = "http://127.0.0.1:8080"
    original = {
        "openapi": "3.1.0",
        "servers": [{"url": "/", "description": "here"}, {"url": "/v1"}, {"url": "https://x.test"}],
    }
    before = json.loads(json.dumps(original))
    served = docs.served_document(original, base)
    assert served["servers"] == [
        {"url": base, "description": "here"},
        {"url": base + "/v1"},
        {"url": "https://x.test"},  # absolute: another server, kept
    ]
    assert original == before
    assert docs.served_document({"openapi": "3.1.0"}, base)["servers"] == [{"url": base}]


_PROTOCOL = re.compile(r"https?://", re.IGNORECASE)
_RELATIVE_TO_PROTOCOL = re.compile(r"""url\(\s*['"]?//|['"`]//""")
"""In a script or style: a string or ``url()`` naming another host without a scheme."""


class _Loads(HTMLParser):
    """The URLs of other hosts a page could load: in attributes, scripts and styles
    (text and comments are shown or ignored, never loaded)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for _, value in attrs:
            if value and (_PROTOCOL.search(value) or value.lstrip().startswith("//")):
                self.found.append(value)
        self._in_code = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._in_code = False

    def handle_data(self, data: str) -> None:
        if self._in_code:
            self.found.extend(
                data[hit.start() : hit.start() + 40]
                for pattern in (_PROTOCOL, _RELATIVE_TO_PROTOCOL)
                for hit in pattern.finditer(data)
            )


def loaded_urls(page: str) -> list[str]:
    """What of ``page`` names another host in a way that would load it."""
    parser = _Loads()
    parser.feed(page)
    parser.close()
    return parser.found


def test_a_url_that_would_load_is_found_and_one_in_text_is_not() -> None:
    page = (
        "<p>see https://example.test</p><!-- http://example.test -->"
        '<link href="https://cdn.test/a.css"><script src="//cdn.test/a.js"></script>'
        '<script>// a comment\nfetch("http://x.test"); fetch("openapi.json")</script>'
        "<style>@font-face { src: url(//fonts.test/f.woff) }</style>"
    )
    assert len(loaded_urls(page)) == 4


# -- the command prints both addresses ---------------------------------------------------


Start = Callable[..., subprocess.Popen[str]]


@pytest.fixture
def command() -> Iterator[Start]:
    """Start ``asyncclient emulator`` with options; each process is killed at the end,
    or after 60 s by a watchdog (a silent one cannot hang a test reading its output)."""
    started: list[tuple[subprocess.Popen[str], threading.Timer]] = []

    def start(*options: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "asyncclient", "emulator", "--port", "0", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        watchdog = threading.Timer(60, proc.kill)
        watchdog.start()
        started.append((proc, watchdog))
        return proc

    yield start
    for proc, watchdog in started:
        watchdog.cancel()
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, resp.headers.get_content_type()


def test_the_command_prints_both_addresses(command: Start) -> None:
    proc = command()
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    while lines[-1] and not lines[-1].startswith("press Ctrl-C"):
        lines.append(proc.stdout.readline())
    url = lines[0].rsplit(" ", 1)[1].strip()
    assert f"API description (OpenAPI): {url}/openapi.json\n" in lines
    assert f"API explorer: {url}/docs\n" in lines
    assert get(url + "/docs") == (200, "text/html")


def test_the_command_s_json_names_both_addresses_besides_the_url_and_key(
    command: Start,
) -> None:
    proc = command("--json")
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    assert {"url", "apiKey", "teamId"} <= set(info)  # what benchmarks read
    assert info["openapi"] == info["url"] + "/openapi.json"
    assert info["docs"] == info["url"] + "/docs"
    assert get(info["docs"]) == (200, "text/html")
    if packaged():
        assert get(info["openapi"]) == (200, "application/json")
