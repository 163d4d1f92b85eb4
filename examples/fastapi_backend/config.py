"""The backend's configuration: the command line, with the SDK's environment as defaults.

The options are :mod:`examples.web_backend`'s; the settings are its
:class:`~examples.web_backend.config.Settings`. uvicorn starts each worker as a new
interpreter that imports the application, so the parent hands the settings over in the
environment (:data:`SETTINGS_ENV`, JSON), as the API key itself came.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from urllib.parse import urlsplit

from asyncclient import Plan
from examples.web_backend.config import HOOK_PATH, Settings

__all__ = ["HOOK_PATH", "SETTINGS_ENV", "Settings", "from_environment", "parse_settings"]

SETTINGS_ENV = "FASTAPI_BACKEND_SETTINGS"
"""The environment variable that carries the settings to uvicorn's worker processes."""


def to_environment(settings: Settings) -> str:
    """The settings as :data:`SETTINGS_ENV` carries them."""
    return json.dumps(asdict(settings))


def from_environment(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings the parent left in :data:`SETTINGS_ENV`.

    Raises:
        RuntimeError: Not set (run ``python -m examples.fastapi_backend``).
    """
    raw = (os.environ if environ is None else environ).get(SETTINGS_ENV)
    if not raw:
        raise RuntimeError(f"{SETTINGS_ENV} is not set: run python -m examples.fastapi_backend")
    return Settings(**json.loads(raw))


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="python -m examples.fastapi_backend",
        description="A FastAPI backend for the video service: N uvicorn worker processes on "
        "one port, sharing the rate limit and notifications through Redis.",
    )
    add = parser.add_argument
    add(
        "--base-url",
        default=env("ASYNCCLIENT_BASE_URL"),
        help="the service's address (default: $ASYNCCLIENT_BASE_URL)",
    )
    add(
        "--api-key",
        default=env("ASYNCCLIENT_API_KEY"),
        help="the API key (default: $ASYNCCLIENT_API_KEY; prefer it: arguments show in ps)",
    )
    add(
        "--redis-url",
        default=env("ASYNCCLIENT_REDIS_URL"),
        help="Redis shared by the workers (default: $ASYNCCLIENT_REDIS_URL)",
    )
    add(
        "--public-url",
        required=True,
        help="the https:// address at which the service reaches this backend; "
        f"notifications go to <public-url>{HOOK_PATH}",
    )
    add("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    add("--port", type=int, default=8443, help="port to serve (default 8443; 0 = any free one)")
    add("--workers", type=int, default=4, help="worker processes (default 4)")
    add("--certfile", help="PEM certificate (chain) to serve HTTPS")
    add("--keyfile", help="PEM private key of --certfile (if not in it)")
    add(
        "--plan",
        choices=[p.value for p in Plan],
        default="free",
        help="the team's plan, which sizes the shared rate limit (default free)",
    )
    add(
        "--time-scale",
        type=float,
        default=1.0,
        help="service seconds per real second: the emulator's --time-scale (default 1)",
    )
    return parser  # fmt: skip


def parse_settings(argv: Sequence[str] | None = None) -> Settings:
    """Read the command line (and environment); exit with a usage error when incomplete."""
    parser = _parser()
    args = parser.parse_args(argv)
    needed = [("--base-url", args.base_url), ("--api-key", args.api_key)]
    missing = [flag for flag, value in [*needed, ("--redis-url", args.redis_url)] if not value]
    if missing:
        parser.error(f"missing {', '.join(missing)} (or its environment variable)")
    public = urlsplit(args.public_url)
    if public.scheme != "https" or not public.hostname or public.query or public.fragment:
        parser.error("--public-url must be an https:// URL (the service notifies HTTPS only)")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    if args.keyfile and not args.certfile:
        parser.error("--keyfile needs --certfile")
    if not (math.isfinite(args.time_scale) and args.time_scale > 0):
        parser.error("--time-scale must be more than 0")
    return Settings(
        api_key=args.api_key,
        base_url=args.base_url,
        redis_url=args.redis_url,
        public_url=args.public_url.rstrip("/"),
        host=args.host,
        port=args.port,
        workers=args.workers,
        certfile=args.certfile,
        keyfile=args.keyfile,
        plan=args.plan,
        time_scale=args.time_scale,
    )
