"""Structuring a response into models against ``json.loads`` of its bytes (issue "Speed").

Two bodies shaped as the emulator sends them (``asyncclient/emulator/_views.py``; the
fields of ``tests/data/*.json``, timestamps with milliseconds):

- detail: ``GET /v1/video/{id}`` of a completed video, the envelope around it;
- page: ``GET /v1/video/list`` with 100 videos (70 completed, 25 being made, 5 failed).

In interleaved repetitions, each contender runs many times over on the same input,
timed with ``time.perf_counter_ns`` (the garbage collector off while timed, as in
``timeit``):

- ``json.loads``: the standard library parsing the body's bytes (the baseline);
- structuring: what ``client.videos.get`` and ``list_page`` do with the parsed body:
  ``decode(data, VideoDetail)`` and ``page_of(envelope, "videos", Video, ...)`` (the
  fast path, with the careful cattrs path behind it);
- careful path only: the model (the page's list of videos) through cattrs alone, which
  is what structuring cost before the fast path, for comparison;
- bytes to model: ``decode_envelope`` of the response (size and depth checks, UTF-8,
  ``json.loads``, envelope checks) and then the structuring: the whole decode path.

Goals: structuring costs less than ``json.loads`` of the same bytes. Run from the
repository root:

    python benchmarks/decoding.py [--quick] [--repeat 7]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asyncclient._convert import _decode_careful, converter, decode  # noqa: E402
from asyncclient.http.protocol import Envelope, Request, Response, decode_envelope  # noqa: E402
from asyncclient.models import Page, Video, VideoDetail  # noqa: E402
from asyncclient.resources._base import page_of  # noqa: E402
from benchmarks._report import Figure, machine, table  # noqa: E402

DATA = ROOT / "tests" / "data"
HEADERS = {"Content-Type": "application/json; charset=utf-8"}
CONTENDERS = ("json.loads", "structuring", "careful path only", "bytes to model")


def _iso(seconds: int, millis: int) -> str:
    """An emulator timestamp (``_clock.iso``): UTC, milliseconds, ``Z``."""
    day, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    return f"2024-05-{1 + day:02d}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{millis:03d}Z"


def _video(i: int, status: str, *, detail: bool) -> dict[str, Any]:
    """The emulator's view of video ``i`` (spec 2.3), from the recorded payload's fields."""
    name = "VideoDetail-completed.json" if detail else "Video-list-item.json"
    out: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    vid = f"vid_{0x7F3A91C2 + i:08x}"
    done = status == "COMPLETED"
    out.update(
        id=vid,
        name=f"Spring launch ad #{i}",
        status=status,
        thumbnail=f"http://127.0.0.1:8080/_files/{vid}.jpg" if done else None,
        progress=100 if status != "STARTED" else 7 * i % 100,
        message={"STARTED": "Video is being generated", "COMPLETED": "Video completed"}.get(
            status, "voiceId: voice voice_gone not found"
        ),
        durationInFrames=750 if done else 0,
        size=10_485_760 if done else 0,
        projectId=f"proj_{0x5B21E0AA + i // 2:08x}",
        createdAt=_iso(60 * i, 17 * i % 1000),
        updatedAt=_iso(60 * i + 200, 31 * i % 1000),
    )
    out.pop("url", None)
    if done:
        expires = 1_714_651_200 + i
        out["url"] = f"http://127.0.0.1:8080/_files/{vid}.mp4?expires={expires}&sig={i:032x}"
    if detail:
        out["durationInSeconds"] = out["durationInFrames"] / 25
    return out


def bodies() -> tuple[bytes, bytes]:
    """The detail body and the 100-video page body, as the service sends them."""
    detail = {"success": True, "data": _video(0, "COMPLETED", detail=True)}
    statuses = ["COMPLETED"] * 70 + ["STARTED"] * 25 + ["FAILED"] * 5
    videos = [_video(i, statuses[i * 37 % 100], detail=False) for i in range(100)]
    page = {"success": True, "data": {"videos": videos, "total": 50, "limit": 100, "offset": 0}}
    return json.dumps(detail).encode(), json.dumps(page).encode()


@dataclass
class Case:
    """One body and what each contender does with it."""

    name: str
    body: bytes
    runs: dict[str, Callable[[], Any]]
    iterations: int


def _page(envelope: Envelope) -> Page[Video]:
    return page_of(envelope, "videos", Video, limit=100, offset=0)


def cases(quick: bool) -> list[Case]:
    detail_body, page_body = bodies()
    get, listing = Request("GET", "/v1/video/vid_7f3a91c2"), Request("GET", "/v1/video/list")
    detail_response, page_response = (
        Response(200, HEADERS, detail_body),
        Response(200, HEADERS, page_body),
    )
    detail = json.loads(detail_body)
    page = Envelope(json.loads(page_body))
    careful_items = page["data"]["videos"]
    scale = 10 if quick else 1
    return [
        Case(
            "video detail",
            detail_body,
            {
                "json.loads": lambda: json.loads(detail_body),
                "structuring": lambda: decode(detail["data"], VideoDetail),
                "careful path only": lambda: _decode_careful(
                    detail["data"], VideoDetail, converter, "data"
                ),
                "bytes to model": lambda: decode(
                    decode_envelope(get, detail_response)["data"], VideoDetail
                ),
            },
            20_000 // scale,
        ),
        Case(
            "100-video list page",
            page_body,
            {
                "json.loads": lambda: json.loads(page_body),
                "structuring": lambda: _page(page),
                "careful path only": lambda: _decode_careful(
                    careful_items, list[Video], converter, "data.videos"
                ),
                "bytes to model": lambda: _page(decode_envelope(listing, page_response)),
            },
            300 // scale,
        ),
    ]


def per_call_ns(run: Callable[[], Any], iterations: int) -> float:
    """Nanoseconds per call of ``run``, over ``iterations`` calls, the collector off."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in range(iterations):
            run()
        return (time.perf_counter_ns() - started) / iterations
    finally:
        if enabled:
            gc.enable()


Times = dict[str, tuple[int, dict[str, list[float]]]]
"""Per case: the body's size, and per contender the ns per call of each repetition."""


def measure(quick: bool, repeat: int) -> Times:
    """Time every contender of every case, interleaved, ``repeat`` times."""
    chosen = cases(quick)
    times: Times = {c.name: (len(c.body), {name: [] for name in CONTENDERS}) for c in chosen}
    for case in chosen:  # a first run each: the fast paths get built, caches warm up
        for run in case.runs.values():
            per_call_ns(run, max(1, case.iterations // 20))
    for _ in range(repeat):
        for case in chosen:
            for name in CONTENDERS:
                times[case.name][1][name].append(per_call_ns(case.runs[name], case.iterations))
    return times


FIGURES = (
    ("structuring", "structuring", "< 1.0", ""),
    ("careful path only", "careful path only (cattrs)", "-", ""),
    ("bytes to model", "bytes to model", "-", "; the numerator includes a json.loads"),
)


def figures_of(times: Times) -> list[Figure]:
    """Each contender over json.loads, per repetition."""
    out = []
    for case, (size, runs) in times.items():
        loads = runs["json.loads"]
        for name, title, goal, note in FIGURES:
            them = statistics.median(runs[name]) / 1e3
            out.append(
                Figure(
                    name=f"{case}: {title} / json.loads",
                    values=[t / base for t, base in zip(runs[name], loads, strict=True)],
                    goal=goal,
                    baseline=f"json.loads of the same {size:,} bytes (standard library){note}",
                    extra={"median us": f"{them:.1f} vs {statistics.median(loads) / 1e3:.1f}"},
                )
            )
    return out


def figures(quick: bool = False) -> list[Figure]:
    """The report's figures: 7 repetitions (``quick``: 3, a tenth of the iterations)."""
    return figures_of(measure(quick, 3 if quick else 7))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions, fewer iterations")
    parser.add_argument("--repeat", type=int, help="interleaved repetitions (default 7, quick 3)")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    found = figures_of(measure(args.quick, repeat))
    print(f"Decoding: {repeat} interleaved repetitions; {machine()}")
    print()
    print(table(found))
    print()
    print("| figure | median us (contender vs json.loads) |")
    print("|---|--:|")
    for figure in found:
        print(f"| {figure.name} | {figure.extra['median us']} |")


if __name__ == "__main__":
    main()
