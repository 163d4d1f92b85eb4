"""Where the client's connections go: the proxy and the certificate authorities trusted.

Read once, when the client is built, from its options and the environment:

- ``proxy=`` (an ``http://`` or ``https://`` URL) sends every request through that
  proxy; without it, and unless ``trust_env=False``, ``HTTPS_PROXY`` / ``HTTP_PROXY``
  (and their lowercase forms) pick the proxy by the URL's scheme, and ``NO_PROXY``
  lists the hosts reached directly, as curl, requests and aiohttp read them.
- A request to an ``https://`` URL goes through the proxy in a ``CONNECT`` tunnel: the
  proxy sees the host and port, never the API key or anything else of the request.
- A plain ``http://`` URL to a loopback host (the emulator: the only plain-http service
  address the client accepts) is never proxied: the proxy would read its API key in
  clear, and a proxy on another machine cannot reach this one's loopback anyway.
- ``ca_bundle=`` (a PEM file) replaces the system's certificate authorities;
  ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are honoured when the client makes its own TLS
  context (no ``ssl_context=``), as OpenSSL reads them.

Bad values fail at once with a :class:`~asyncclient.errors.ValidationError` naming the
option or the variable.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import ssl
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from attrs import frozen

from asyncclient.errors import ValidationError
from asyncclient.http.urls import is_loopback

__all__ = ["Network", "Proxies", "Route", "check_proxy_url", "tls_context"]

_PROXY_VARIABLES = {"http": "HTTP_PROXY", "https": "HTTPS_PROXY"}


@frozen
class Route:
    """The proxy a request goes through: its URL (no credentials) and the headers sent
    to the proxy alone (``Proxy-Authorization`` from the URL's user and password)."""

    url: str
    headers: Mapping[str, str]


def check_proxy_url(url: str, field: str = "proxy") -> Route:
    """The route through the proxy at ``url``, or a ``ValidationError`` naming ``field``.

    Accepted: ``http://host:port`` or ``https://host:port``, with ``user:password@``
    if the proxy asks for them (sent to the proxy only, as ``Proxy-Authorization``);
    the port defaults to the scheme's. No path, query or fragment.
    """
    shown = _hide_password(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ValidationError(
            [
                f"{field}: must be an http:// or https:// URL of a proxy (scheme://host:port), "
                f"got {shown!r}"
            ]
        )
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    port = f":{parts.port}" if parts.port is not None else ""
    headers: dict[str, str] = {}
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return Route(f"{parts.scheme}://{host}{port}", headers)


def _hide_password(url: str) -> str:
    """``url`` as an error may show it: a password in it replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, hostport = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{hostport}"


class Proxies:
    """Which proxy, if any, a URL goes through (see the module's docstring).

    Args:
        proxy: The ``proxy=`` option; used for every URL but a plain-http loopback one.
        trust_env: Whether ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``NO_PROXY`` are read
            (when ``proxy`` is None); they are read here, once.
        environ: The environment to read (``os.environ``).
    """

    def __init__(
        self,
        proxy: str | None = None,
        *,
        trust_env: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._explicit = check_proxy_url(proxy) if proxy is not None else None
        self._env: dict[str, str] = {}
        self._by_scheme: dict[str, Route] = {}
        if self._explicit is None and trust_env:
            self._read_env(os.environ if environ is None else environ)

    def _read_env(self, environ: Mapping[str, str]) -> None:
        self._env = _proxy_variables(environ)
        for scheme, name in _PROXY_VARIABLES.items():
            value = self._env.get(scheme)
            if value:  # "host:port" without a scheme is http://, as curl and requests read it
                url = value if "://" in value else f"http://{value}"
                self._by_scheme[scheme] = check_proxy_url(url, name)

    def route(self, url: str) -> Route | None:
        """The proxy ``url`` goes through, or None to connect directly."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme == "http" and is_loopback(host):
            return None  # its API key would cross the proxy in clear
        if self._explicit is not None:
            return self._explicit
        chosen = self._by_scheme.get(parts.scheme)
        if chosen is None:
            return None
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if _bypassed(host, port, self._env.get("no", "")):
            return None
        return chosen

    def for_url(self, url: str) -> tuple[str | None, Mapping[str, str] | None]:
        """aiohttp's ``proxy`` and ``proxy_headers`` for a request to ``url``."""
        route = self.route(url)
        return (None, None) if route is None else (route.url, route.headers)


def _bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` names ``host``: ``*``; the host or a domain of it (``.corp``
    and ``corp`` both match ``api.corp``), with ``:port`` matching that port only; an
    IP network (``10.0.0.0/8``). Case does not matter."""
    host = host.lower().rstrip(".")
    for entry in no_proxy.replace(" ", "").lower().split(","):
        if entry == "*":
            return True
        name, _, wanted = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
        if wanted and str(port) != wanted:
            continue
        name = name.strip("[]").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name) or _in_network(host, name)):
            return True
    return False


def _has_port(entry: str) -> bool:
    """``host:port`` or ``[v6]:port``, not a bare IPv6 address."""
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (head.endswith("]") or ":" not in head)


def _in_network(host: str, entry: str) -> bool:
    if "/" not in entry:
        return False
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False


@frozen
class Network:
    """The proxies and the TLS context of the session the transport makes."""

    proxies: Proxies
    tls: ssl.SSLContext | None

    @classmethod
    def of(
        cls,
        ssl_context: ssl.SSLContext | None,
        ca_bundle: str | os.PathLike[str] | None,
        proxy: str | None,
        trust_env: bool,
        *,
        caller_session: bool,
    ) -> Network:
        """Read and check the options (and the environment, once).

        A caller's session keeps its own proxy settings (its ``trust_env``) and TLS
        context: ``proxy`` and ``ca_bundle`` cannot go with it.
        """
        if caller_session and (proxy is not None or ca_bundle is not None):
            field = "proxy" if proxy is not None else "ca_bundle"
            raise ValidationError(
                [
                    f"{field}: applies to the session the client makes; configure the "
                    "session you pass (session=...) instead"
                ]
            )
        if caller_session:
            return cls(Proxies(trust_env=False), ssl_context)
        return cls(Proxies(proxy, trust_env=trust_env), tls_context(ssl_context, ca_bundle))


def _proxy_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """``{"http": ..., "https": ..., "no": ...}`` as urllib reads them: a lowercase name
    wins over its uppercase one; ``HTTP_PROXY`` is ignored in a CGI request (a client's
    ``Proxy:`` header would set it)."""
    found: dict[str, str] = {}
    for lowercase in (False, True):
        for scheme in ("http", "https", "no"):
            name = f"{scheme}_proxy" if lowercase else f"{scheme.upper()}_PROXY"
            if name == "HTTP_PROXY" and "REQUEST_METHOD" in environ:
                continue
            if environ.get(name):
                found[scheme] = environ[name]
    return found


def tls_context(
    ssl_context: ssl.SSLContext | None,
    ca_bundle: str | os.PathLike[str] | None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ssl.SSLContext | None:
    """The TLS context of the session the client makes; None for aiohttp's default.

    ``ssl_context`` as given; else one trusting only ``ca_bundle``; else, when
    ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` is set, a default context made now (OpenSSL
    reads them when it is made; aiohttp's own was made when aiohttp was imported).

    Raises:
        ValidationError: Both ``ssl_context`` and ``ca_bundle``; a bundle (or
            ``SSL_CERT_FILE``) that is missing or holds no PEM certificate.
    """
    if ssl_context is not None and ca_bundle is not None:
        raise ValidationError(
            [
                "ca_bundle: give ssl_context or ca_bundle, not both "
                "(load the bundle into your context with load_verify_locations)"
            ]
        )
    if ssl_context is not None:
        return ssl_context
    if ca_bundle is not None:
        return _trusting(ca_bundle, "ca_bundle")
    env = os.environ if environ is None else environ
    cert_file, cert_dir = env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR")
    if cert_file:
        _trusting(cert_file, "SSL_CERT_FILE")  # a clear error now, not a failed handshake
    if cert_file or cert_dir:
        return ssl.create_default_context()
    return None


def _trusting(path: str | os.PathLike[str], field: str) -> ssl.SSLContext:
    """A default context trusting only the PEM certificates of ``path``."""
    where = Path(path)
    if not where.is_file():
        raise ValidationError([f"{field}: no such file: {str(where)!r}"])
    try:
        return ssl.create_default_context(cafile=str(where))
    except (ssl.SSLError, OSError) as exc:
        raise ValidationError(
            [f"{field}: {str(where)!r} is not a PEM file of CA certificates ({exc})"]
        ) from None
