"""The notification token (spec 6 shows no signature, so the URL carries a secret).

Pure and light: the client builds notification URLs with it without loading aiohttp's
server side. :func:`derive_token` gives every process that holds an API key the same
token, so a fleet agrees on it with no configuration.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["derive_token", "notification_tokens", "with_token"]

_CONTEXT = b"asyncclient notification token v1"


def derive_token(api_key: str) -> str:
    """The notification token of ``api_key``: the same in every process that holds the key.

    An HMAC-SHA256 of a fixed context under the key, in URL-safe base64 (43 characters):
    it tells nothing of the key, and another key derives another token.

    Raises:
        ValueError: ``api_key`` is empty.
    """
    if not api_key:
        raise ValueError("api_key: must not be empty")
    mac = hmac.new(api_key.encode("utf-8", "surrogatepass"), _CONTEXT, hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode("ascii")


def with_token(url: str, token: str) -> str:
    """``url`` with ``?token=`` set to ``token`` (any other ``token`` replaced)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "token"]
    query.append(("token", token))
    return urlunsplit(parts._replace(query=urlencode(query)))


def notification_tokens(
    api_key: str, token: str | None = None, previous_api_keys: Sequence[str] = ()
) -> list[str]:
    """The tokens a client's receiver accepts; the one its URLs carry comes first.

    Args:
        api_key: The client's key; its derived token, unless ``token`` is given.
        token: An explicit token (a secret the fleet shares), instead of the derived one.
        previous_api_keys: Keys being rotated out (spec 5.6): their derived tokens stay
            accepted, so notifications already on their way are not refused.
    """
    first = token if token is not None else derive_token(api_key)
    if not first or first.isspace():  # a blank token is no secret
        raise ValueError("webhook_token: must not be empty or blank")
    accepted = [first, *(derive_token(key) for key in previous_api_keys if key)]
    return list(dict.fromkeys(accepted))
