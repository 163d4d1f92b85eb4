"""Proxies and private CAs: through a real forward-proxy process to the emulator over TLS.

The proxy (``tests/connect_proxy.py``) runs as its own process on a loopback port and
logs every ``CONNECT`` target, any plain request it is sent, and every byte a client
sends it: the API key must never be among them in clear.
"""

from __future__ import annotations

import gc
import json
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from asyncclient import AsyncClient, Plan, RetryPolicy, ValidationError
from asyncclient.emulator import Emulator
from asyncclient.errors import APIConnectionError, APIStatusError
from asyncclient.http.network import Proxies, check_proxy_url
from tests.conftest import connect

PROXY_SCRIPT = Path(__file__).with_name("connect_proxy.py")
VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")


class ProxyProcess:
    """A running ``connect_proxy.py`` and what it logged."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, str(PROXY_SCRIPT), str(log), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline().split()
        assert first[:1] == ["listening"], first
        self.port = int(first[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text("utf-8").splitlines()]

    def connects(self) -> list[str]:
        return [r["connect"] for r in self.records() if "connect" in r]

    def raw(self) -> bytes:
        raw = Path(f"{self.log}.raw")
        return raw.read_bytes() if raw.exists() else b""

    def relayed_down(self) -> int:
        down = Path(f"{self.log}.down")
        return down.stat().st_size if down.exists() else 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or certificate variable of the machine running the tests leaks in."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ProxyProcess]:
    running = ProxyProcess(tmp_path / "proxy.log")
    yield running
    running.stop()


@pytest.fixture
def server_ssl(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    return context


@pytest.fixture
def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


@pytest_asyncio.fixture
async def tls_emu(server_ssl: ssl.SSLContext) -> AsyncIterator[Emulator]:
    async with Emulator(time_scale=60.0, ssl=server_ssl) as emulator:
        yield emulator


def hostport(emu: Emulator) -> str:
    return emu.url.removeprefix("https://")


async def one_call(emu: Emulator, **options: Any) -> str:
    """Make a client of a new team, read the integrations once; return its key."""
    key = emu.add_team(plan=Plan.PREMIUM.value, credits=1000)
    options.setdefault("retry", RetryPolicy(attempts=1))
    async with connect(emu, key, **options) as client:
        assert {i.type for i in await client.integrations.list()}
    return key


# -- through the proxy -------------------------------------------------------------------------


async def test_https_proxy_from_the_environment_tunnels_and_never_sees_the_key(
    tls_emu: Emulator,
    proxy: ProxyProcess,
    trusting: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    key = await one_call(tls_emu, ssl_context=trusting)
    assert proxy.connects() == [hostport(tls_emu)]
    assert [r for r in proxy.records() if "plain" in r] == []
    connect_headers = proxy.records()[0]["headers"]
    assert key not in json.dumps(connect_headers)
    assert "x-api-key" not in {h.lower() for h in connect_headers}
    raw = proxy.raw()
    assert len(raw) > 500  # the CONNECT and the TLS records that followed it
    assert key.encode() not in raw
    assert b"/v1/" not in raw  # the path, like the key, crossed it encrypted


async def test_no_proxy_naming_the_host_goes_direct(
    tls_emu: Emulator,
    proxy: ProxyProcess,
    trusting: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "example.com, 127.0.0.1")
    await one_call(tls_emu, ssl_context=trusting)
    assert proxy.records() == []
    assert proxy.raw() == b""


async def test_the_proxy_option_needs_no_environment(
    tls_emu: Emulator, proxy: ProxyProcess, trusting: ssl.SSLContext
) -> None:
    key = await one_call(tls_emu, ssl_context=trusting, proxy=proxy.url)
    assert proxy.connects() == [hostport(tls_emu)]
    assert key.encode() not in proxy.raw()


async def test_the_proxy_option_wins_over_the_environment(
    tls_emu: Emulator,
    proxy: ProxyProcess,
    trusting: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # the discard port: nobody
    await one_call(tls_emu, ssl_context=trusting, proxy=proxy.url)
    assert proxy.connects() == [hostport(tls_emu)]


async def test_proxy_credentials_go_to_the_proxy_only(
    tls_emu: Emulator, tmp_path: Path, trusting: ssl.SSLContext
) -> None:
    guarded = ProxyProcess(tmp_path / "guarded.log", "--require-auth", "ann:s3cr:et")
    try:
        url = f"http://ann:s3cr%3Aet@127.0.0.1:{guarded.port}"
        key = await one_call(tls_emu, ssl_context=trusting, proxy=url)
        assert guarded.connects() == [hostport(tls_emu)]
        assert "Proxy-Authorization" in guarded.records()[0]["headers"]
        with pytest.raises(APIConnectionError):  # 407: a wrong password is refused
            await one_call(tls_emu, ssl_context=trusting, proxy=url.replace("s3cr", "nope"))
    finally:
        guarded.stop()
    assert key.encode() not in guarded.raw()


def test_the_sync_client_takes_the_same_options(
    server_ssl: ssl.SSLContext,
    proxy: ProxyProcess,
    ca_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from asyncclient import Client
    from asyncclient.emulator import serve_in_thread

    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with serve_in_thread(time_scale=60.0, ssl=server_ssl) as emu:
        key = emu.add_team("premium", 1000)
        with Client(key, base_url=emu.url, ca_bundle=ca_file) as client:
            assert client.integrations.list()
        with Client(key, base_url=emu.url, ca_bundle=ca_file, trust_env=False) as client:
            assert client.integrations.list()
        assert proxy.connects() == [emu.url.removeprefix("https://")]
    assert key.encode() not in proxy.raw()


async def test_a_download_goes_through_the_proxy_too(
    tls_emu: Emulator,
    proxy: ProxyProcess,
    trusting: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    key = tls_emu.add_team(plan=Plan.PREMIUM.value, credits=1000)
    async with connect(tls_emu, key, ssl_context=trusting) as client:
        cat = tls_emu.catalog
        made = await client.projects.create_talking_avatar(
            script="Hello", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
        )
        assert made.video_id is not None
        tls_emu.advance(1000)
        video = await client.videos.get(made.video_id)
        assert video.url is not None and video.url.startswith("https://")
        before = proxy.relayed_down()
        target = await client.videos.download(video, tmp_path / "clip.mp4")
        assert video.size is not None
        assert proxy.relayed_down() - before >= video.size  # the file came through it
    assert target.stat().st_size == video.size
    assert set(proxy.connects()) == {hostport(tls_emu)}
    assert key.encode() not in proxy.raw()


async def test_trust_env_false_ignores_the_environment(
    tls_emu: Emulator,
    proxy: ProxyProcess,
    trusting: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    await one_call(tls_emu, ssl_context=trusting, trust_env=False)
    assert proxy.records() == []


async def test_a_plain_http_loopback_service_is_never_proxied(
    emu: Emulator, proxy: ProxyProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over plain http the proxy would read the key; the emulator is reached directly.
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    await one_call(emu)
    await one_call(emu, proxy=proxy.url)
    assert proxy.records() == []


# -- private CAs -------------------------------------------------------------------------------


async def test_ssl_cert_file_is_honoured(
    tls_emu: Emulator, ca_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(APIConnectionError, match=r"(?i)certificate"):
        await one_call(tls_emu)  # the system's CAs do not know the test CA
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    await one_call(tls_emu)


async def test_ca_bundle_option(tls_emu: Emulator, ca_file: Path) -> None:
    await one_call(tls_emu, ca_bundle=ca_file)
    await one_call(tls_emu, ca_bundle=str(ca_file))


async def test_ca_bundle_through_the_proxy(
    tls_emu: Emulator, ca_file: Path, proxy: ProxyProcess
) -> None:
    await one_call(tls_emu, ca_bundle=ca_file, proxy=proxy.url)
    assert proxy.connects() == [hostport(tls_emu)]


def test_a_bad_ca_bundle_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing.pem"
    with pytest.raises(ValidationError, match=r"^ca_bundle: no such file"):
        make(ca_bundle=missing)
    text = tmp_path / "notes.txt"
    text.write_text("not a certificate")
    with pytest.raises(ValidationError, match=r"^ca_bundle: .* is not a PEM file"):
        make(ca_bundle=text)
    with pytest.raises(ValidationError, match=r"^ca_bundle: give ssl_context or ca_bundle"):
        make(ca_bundle=text, ssl_context=ssl.create_default_context())
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    with pytest.raises(ValidationError, match=r"^SSL_CERT_FILE: no such file"):
        make()


# -- the key stays with the service ----------------------------------------------------------


# aiohttp leaves the TLS transport it ran inside the proxy's tunnel to the garbage
# collector once the session closes: collected here, not in whichever test runs next.
@pytest.mark.filterwarnings("ignore:unclosed:ResourceWarning")
async def test_a_redirect_to_another_host_does_not_carry_the_key(
    server_ssl: ssl.SSLContext,
    trusting: ssl.SSLContext,
    proxy: ProxyProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, str]] = []

    async def elsewhere(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"success": True, "data": {}})

    other = await start_tls(web.get("/{tail:.*}", elsewhere), server_ssl)

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(f"https://localhost:{other.port}{request.path}")

    service = await start_tls(web.get("/{tail:.*}", redirect), server_ssl)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    try:
        client = AsyncClient(
            "sk-redirected-key",
            base_url=f"https://127.0.0.1:{service.port}",
            ssl_context=trusting,
            retry=RetryPolicy(attempts=1),
        )
        async with client:
            with pytest.raises(APIStatusError) as info:
                await client.request("GET", "/v1/anything")
    finally:
        await service.runner.cleanup()
        await other.runner.cleanup()
    assert info.value.status_code == 307
    assert seen == []
    assert proxy.connects() == [f"127.0.0.1:{service.port}"]
    assert b"sk-redirected-key" not in proxy.raw()
    gc.collect()


# -- bad input -----------------------------------------------------------------------------------


def make(**options: Any) -> AsyncClient:
    return AsyncClient("sk-test", base_url="https://api.example.com", **options)


@pytest.mark.parametrize(
    "url",
    [
        "socks5://127.0.0.1:1080",
        "127.0.0.1:3128",  # the option wants a scheme
        "http://",
        "http://proxy.corp:port",
        "http://proxy.corp:3128/path",
        "http://proxy.corp:3128?x=1",
    ],
)
def test_a_bad_proxy_url_is_named(url: str) -> None:
    with pytest.raises(ValidationError, match=r"^proxy: must be an http:// or https:// URL"):
        make(proxy=url)


def test_a_bad_proxy_variable_is_named_and_its_password_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://ann:hunter2@proxy.corp:1080")
    with pytest.raises(ValidationError, match=r"^HTTPS_PROXY: ") as info:
        make()
    assert "hunter2" not in str(info.value)
    make(trust_env=False)  # not read at all


async def test_proxy_and_ca_bundle_cannot_go_with_a_callers_session(ca_file: Path) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        with pytest.raises(ValidationError, match=r"^proxy: applies to the session the client"):
            make(session=session, proxy="http://127.0.0.1:3128")
        with pytest.raises(ValidationError, match=r"^ca_bundle: applies to the session"):
            make(session=session, ca_bundle=ca_file)


# -- which URL goes where (no network) ---------------------------------------------------------


def route(url: str, proxy: str | None = None, **environ: str) -> str | None:
    chosen = Proxies(proxy, environ=environ).route(url)
    return None if chosen is None else chosen.url


def test_the_environment_picks_the_proxy_by_scheme() -> None:
    env = {"HTTPS_PROXY": "http://secure:3128", "HTTP_PROXY": "http://plain:3128"}
    assert route("https://api.example.com/v1", **env) == "http://secure:3128"
    assert route("http://files.example.com/a.mp4", **env) == "http://plain:3128"
    assert route("https://api.example.com", https_proxy="proxy:8080") == "http://proxy:8080"
    lower_wins = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1"}
    assert route("https://api.example.com", **lower_wins) == "http://lower:1"
    assert route("https://api.example.com") is None
    # In a CGI request HTTP_PROXY may come from a client's "Proxy:" header (httpoxy).
    assert route("http://files.example.com", HTTP_PROXY="http://x:1", REQUEST_METHOD="GET") is None


@pytest.mark.parametrize(
    ("no_proxy", "url", "bypassed"),
    [
        ("*", "https://api.example.com", True),
        ("example.com", "https://api.example.com", True),
        (".example.com", "https://api.example.com", True),
        ("example.com", "https://example.com", True),
        ("EXAMPLE.com", "https://API.example.com", True),
        ("ample.com", "https://api.example.com", False),
        ("api.example.com:443", "https://api.example.com", True),
        ("api.example.com:8443", "https://api.example.com", False),
        ("10.0.0.0/8", "https://10.1.2.3", True),
        ("10.0.0.0/8", "https://11.1.2.3", False),
        ("other.org, api.example.com", "https://api.example.com", True),
        ("", "https://api.example.com", False),
    ],
)
def test_no_proxy(no_proxy: str, url: str, bypassed: bool) -> None:
    chosen = route(url, HTTPS_PROXY="http://proxy:3128", NO_PROXY=no_proxy)
    assert (chosen is None) is bypassed


def test_plain_http_to_loopback_is_never_proxied_but_https_is() -> None:
    assert route("http://127.0.0.1:8000", "http://proxy:3128") is None
    assert route("http://localhost:8000", HTTP_PROXY="http://proxy:3128") is None
    assert route("https://127.0.0.1:8443", "http://proxy:3128") == "http://proxy:3128"


def test_proxy_credentials_become_a_proxy_header() -> None:
    chosen = check_proxy_url("http://ann:s%40cret@proxy.corp:3128")
    assert chosen.url == "http://proxy.corp:3128"
    assert chosen.headers == {"Proxy-Authorization": "Basic YW5uOnNAY3JldA=="}
    assert check_proxy_url("https://[::1]:3128").url == "https://[::1]:3128"


# -- helpers -------------------------------------------------------------------------------------


class Site:
    def __init__(self, runner: web.AppRunner, port: int) -> None:
        self.runner, self.port = runner, port


async def start_tls(route_def: web.RouteDef, context: ssl.SSLContext) -> Site:
    app = web.Application()
    app.add_routes([route_def])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    server = site._server
    assert server is not None
    return Site(runner, server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
