"""The service's address and a notification URL, checked before any key goes out.

Pure checks of the client's configuration: the API key travels only over HTTPS, except to
a loopback host (the emulator), and the service notifies HTTPS URLs only (spec 6).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["check_base_url", "check_webhook_url"]


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(url: str) -> str:
    """Return ``url`` without a trailing slash, or raise ``ValueError``.

    ``https://`` is required, except ``http://`` to a loopback host (the emulator).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL with a host, got {url!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise ValueError(
            f"base_url {url!r} is plain http to a non-loopback host: the API key would "
            "travel unencrypted; use https:// (http:// is allowed only for loopback hosts)"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"base_url must not have a query or fragment, got {url!r}")
    return url.rstrip("/")


def check_webhook_url(url: str) -> str:
    """``url`` if the service can notify it: HTTPS with a host (spec 6), no fragment."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.fragment:
        raise ValueError(
            f"webhook_url must be an https:// URL with a host and no fragment, got {url!r} "
            "(the service sends notifications over HTTPS only, spec 6)"
        )
    return url
