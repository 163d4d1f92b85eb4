"""The backend's configuration: the command line, with the SDK's environment as defaults."""

from __future__ import annotations

import argparse
import math
import os
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from asyncclient import Plan, PollPolicy, RateLimit

__all__ = ["HOOK_PATH", "Settings", "parse_settings"]

HOOK_PATH = "/hooks/video"
"""Where the service's notifications arrive, under the public URL."""


@dataclass(frozen=True)
class Settings:
    """Everything a worker needs (plain values: it crosses to spawned processes).

    Its ``repr`` shows neither the API key nor the Redis URL (which may hold a password).
    """

    api_key: str = field(repr=False)
    base_url: str
    redis_url: str = field(repr=False)
    public_url: str
    """The HTTPS address at which the service reaches this backend (no trailing slash)."""
    host: str = "127.0.0.1"
    port: int = 8443
    workers: int = 4
    certfile: str | None = None
    keyfile: str | None = None
    plan: str = "free"
    time_scale: float = 1.0
    """Service seconds per real second (the emulator's ``--time-scale``); 1 for the service."""

    @property
    def webhook_url(self) -> str:
        """The client's ``webhook_url``: the public URL of the notification route."""
        return self.public_url + HOOK_PATH

    @property
    def scheme(self) -> str:
        """``https`` when serving TLS here, else ``http`` (TLS ends at a proxy in front)."""
        return "https" if self.certfile else "http"

    def server_context(self) -> ssl.SSLContext | None:
        """The TLS context of ``certfile``/``keyfile``, or None to serve plain HTTP.

        Raises:
            OSError: A file cannot be read.
            ssl.SSLError: They hold no usable certificate and key.
        """
        if self.certfile is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.certfile, self.keyfile)
        return context

    def rate_limit(self) -> RateLimit:
        """The plan's limit, in real time: scaled when the service's clock runs faster."""
        limit = Plan(self.plan).rate_limit
        return limit if self.time_scale == 1.0 else limit.scaled(self.time_scale)

    def polling(self) -> PollPolicy | None:
        """The safety-net polling behind notifications, scaled like the service's clock;
        None (the SDK's own default for a client with ``webhook_url``) at scale 1."""
        if self.time_scale == 1.0:
            return None
        net = PollPolicy.safety_net()
        return PollPolicy(
            min_interval=net.min_interval / self.time_scale,
            max_interval=net.max_interval / self.time_scale,
            backoff=net.backoff,
            jitter=net.jitter,
            share=net.share,
            first_delay=net.first_delay / self.time_scale,
        )


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="python -m examples.web_backend",
        description="A web backend for the video service: N worker processes on one port, "
        "sharing the rate limit and notifications through Redis.",
    )
    parser.add_argument(
        "--base-url",
        default=env("ASYNCCLIENT_BASE_URL"),
        help="the service's address (default: $ASYNCCLIENT_BASE_URL)",
    )
    parser.add_argument(
        "--api-key",
        default=env("ASYNCCLIENT_API_KEY"),
        help="the API key (default: $ASYNCCLIENT_API_KEY; prefer it: arguments show in ps)",
    )
    parser.add_argument(
        "--redis-url",
        default=env("ASYNCCLIENT_REDIS_URL"),
        help="Redis shared by the workers (default: $ASYNCCLIENT_REDIS_URL)",
    )
    parser.add_argument(
        "--public-url",
        required=True,
        help="the https:// address at which the service reaches this backend; "
        f"notifications go to <public-url>{HOOK_PATH}",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8443, help="port every worker binds (default 8443; 0 = any)"
    )
    parser.add_argument("--workers", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--certfile", help="PEM certificate (chain) to serve HTTPS")
    parser.add_argument("--keyfile", help="PEM private key of --certfile (if not in it)")
    parser.add_argument(
        "--plan",
        choices=[p.value for p in Plan],
        default="free",
        help="the team's plan, which sizes the shared rate limit (default free)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="service seconds per real second: the emulator's --time-scale (default 1)",
    )
    return parser


def parse_settings(argv: Sequence[str] | None = None) -> Settings:
    """Read the command line (and environment); exit with a usage error when incomplete."""
    parser = _parser()
    args = parser.parse_args(argv)
    missing = [
        flag
        for flag, value in (
            ("--base-url", args.base_url),
            ("--api-key", args.api_key),
            ("--redis-url", args.redis_url),
        )
        if not value
    ]
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
