"""OpenTelemetry spans for requests and job waits, when the application traces.

Install the extra (``pip install "vidgen-asyncclient[otel]"``, ``opentelemetry-api`` only) and
configure a tracer provider as usual (``opentelemetry.trace.set_tracer_provider``). Then:

- every request of a client is a span of kind CLIENT named by its method, with
  ``http.request.method``, ``url.path``, ``http.response.status_code`` (of the last
  attempt), ``asyncclient.attempts`` and ``asyncclient.limiter_wait_ms`` (the time spent
  waiting for tokens); a failure sets the span's status and ``error.type``;
- every wait on a job (``await job``) is a span ``asyncclient job wait`` with
  ``asyncclient.video_id``, ``asyncclient.project_id`` and ``asyncclient.outcome``.

Nothing here imports OpenTelemetry: spans are made only when ``opentelemetry.trace`` is
already loaded and a provider was set (until then the API's own default is a proxy
that records nothing). A process that does not trace pays one dictionary look-up a
request and loads nothing; ``import asyncclient`` stays as fast as before.
"""

from __future__ import annotations

import sys
from typing import Any

from asyncclient._version import __version__

__all__ = ["tracer"]

_cached: tuple[Any, Any] | None = None  # (provider, its tracer)


def tracer() -> Any | None:
    """The ``asyncclient`` tracer of the application's provider, or None (no tracing)."""
    global _cached
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    cached = _cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    if isinstance(provider, trace.ProxyTracerProvider):
        return None  # nothing configured yet: nothing would be recorded
    made = provider.get_tracer("asyncclient", __version__)
    _cached = (provider, made)
    return made


def client_kind() -> Any:
    """``SpanKind.CLIENT`` (only called once a tracer exists, so the API is loaded)."""
    return sys.modules["opentelemetry.trace"].SpanKind.CLIENT


def mark_error(span: Any, error: BaseException) -> None:
    """Record ``error`` on ``span`` as its status and ``error.type``."""
    trace = sys.modules["opentelemetry.trace"]
    span.set_attribute("error.type", type(error).__name__)
    span.set_status(trace.Status(trace.StatusCode.ERROR, str(error)[:200]))
