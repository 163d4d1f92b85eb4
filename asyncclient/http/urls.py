"""The API key, the service's address and a notification URL, read and checked before
any key goes out.

The client's options, or the environment when an option is not given; pure checks: the
API key travels only over HTTPS, except to a loopback host (the emulator), and the
service notifies HTTPS URLs only (spec 6).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_WEBHOOK_TOKEN",
    "ENV_WEBHOOK_URL",
    "check_base_url",
    "check_webhook_url",
    "is_loopback",
    "read_service",
    "read_webhook",
]

ENV_API_KEY = "ASYNCCLIENT_API_KEY"
ENV_BASE_URL = "ASYNCCLIENT_BASE_URL"
ENV_WEBHOOK_URL = "ASYNCCLIENT_WEBHOOK_URL"
ENV_WEBHOOK_TOKEN = "ASYNCCLIENT_WEBHOOK_TOKEN"

_NO_BASE_URL = (
    "no base URL: pass base_url=... or set the ASYNCCLIENT_BASE_URL environment variable "
    "(the service's address is in your dashboard). To try the SDK without an account, start "
    "the emulator with `asyncclient emulator` and use the URL and key it prints."
)
_NO_API_KEY = (
    "no API key: pass api_key=... or set the ASYNCCLIENT_API_KEY environment variable "
    "(keys are made in the service's dashboard under settings, API keys). To try the SDK "
    "without an account, run `asyncclient emulator`: it prints a URL and a demo key to use "
    "(ASYNCCLIENT_BASE_URL and ASYNCCLIENT_API_KEY); or run `asyncclient demo`, which "
    "starts its own emulator."
)


def read_service(
    api_key: str | None, base_url: str | None, environ: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The API key and the checked base URL, from the options or the environment.

    Raises:
        ValueError: No key (or an empty or blank one), no base URL, or an unsafe one.
    """
    env = os.environ if environ is None else environ
    key = api_key if api_key is not None else env.get(ENV_API_KEY)
    if not key:
        raise ValueError(_NO_API_KEY)
    if key.isspace():  # sent, it is an empty x-api-key header
        source = "api_key" if api_key is not None else ENV_API_KEY
        raise ValueError(_NO_API_KEY.replace(": ", f": {source} is blank; ", 1))
    url = base_url if base_url is not None else env.get(ENV_BASE_URL)
    if not url:
        raise ValueError(_NO_BASE_URL)
    return key, check_base_url(url)


def read_webhook(
    webhook_url: str | None, webhook_token: str | None, environ: Mapping[str, str] | None = None
) -> tuple[str | None, str | None]:
    """The checked notification URL and the token given, from the options or the
    environment; a blank token is as if unset (it is derived from the key then)."""
    env = os.environ if environ is None else environ
    hook = webhook_url if webhook_url is not None else env.get(ENV_WEBHOOK_URL)
    token = webhook_token if webhook_token is not None else env.get(ENV_WEBHOOK_TOKEN)
    token = token if token and not token.isspace() else None
    return (check_webhook_url(hook) if hook else None), token


def is_loopback(host: str) -> bool:
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
    if parts.scheme == "http" and not is_loopback(parts.hostname):
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
