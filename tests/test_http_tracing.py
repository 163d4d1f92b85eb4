"""OpenTelemetry spans for requests and job waits, recorded by the SDK's in-memory exporter.

The application's provider is given by patching ``get_tracer_provider`` for the test
alone: the process-wide provider can be set only once, and the rest of the suite must
run untraced.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from asyncclient import AsyncClient, NotFoundError
from asyncclient.emulator import Emulator
from asyncclient.http.tracing import tracer

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    yield exporter
    provider.shutdown()


def test_without_a_provider_nothing_is_traced() -> None:
    assert tracer() is None  # the API's default proxy records nothing: no spans made


def test_importing_the_package_loads_no_opentelemetry() -> None:
    code = "import sys, asyncclient; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_each_request_is_a_client_span(
    spans: InMemorySpanExporter, emu: Emulator, client: AsyncClient
) -> None:
    page = await client.videos.list_page(limit=1)
    with pytest.raises(NotFoundError):
        await client.videos.get("vid_000000000000")
    listed, missing = spans.get_finished_spans()
    assert listed.name == "GET" and listed.kind is trace.SpanKind.CLIENT
    assert listed.attributes is not None and missing.attributes is not None
    assert listed.attributes["url.path"] == "/v1/video/list"
    assert listed.attributes["http.response.status_code"] == 200
    assert listed.attributes["asyncclient.attempts"] == 1
    assert [e.name for e in listed.events] == ["attempt"]
    assert missing.attributes["http.response.status_code"] == 404
    assert missing.attributes["error.type"] == "NotFoundError"
    assert missing.status.status_code is trace.StatusCode.ERROR
    assert page.items is not None


async def test_a_job_wait_is_a_span_around_its_reads(
    spans: InMemorySpanExporter, emu: Emulator, client: AsyncClient
) -> None:
    cat = emu.catalog
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id=cat.avatars[0], voice_id=cat.voices[0]
    )
    emu.advance(1000)
    detail = await job
    finished = spans.get_finished_spans()
    (wait,) = [s for s in finished if s.name == "asyncclient job wait"]
    assert wait.attributes is not None
    assert wait.attributes["asyncclient.outcome"] == "completed"
    assert wait.attributes["asyncclient.video_id"] == detail.id
    paths = [str((s.attributes or {}).get("url.path", "")) for s in finished]
    assert sum(p.startswith("/v1/project/create") for p in paths) == 1
