"""The API explorer (``GET /docs``) in a real headless browser: its JavaScript runs and
renders the description the emulator serves.

Chromium (``chromium``, ``chromium-browser`` or ``google-chrome``) loads the page from an
emulator in a thread and prints the DOM once the page has settled. Without a browser the
test skips on a developer's machine and fails in CI (CI=true), where .ci/run installs
one. The browser gets a profile and a home of its own, no proxy, no background
networking, and resolves no host name: it reaches loopback only.

The description is the packaged one when the package has it, else a stand-in (the
loader monkeypatched); the expectations are read from what the emulator serves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from asyncclient.emulator import _routes_docs as docs
from asyncclient.emulator import serve_in_thread

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
