"""Every request the SDK builds is an operation of the OpenAPI document: its method and
path, each query parameter's name, place and value (schema, enumeration, bounds), its body.

``tests/conftest.py`` checks each request a test builds (:func:`tests.document.check_request`);
the first test shows the check is in place and can fail. The others call each SDK method
that sends a query with the full range of its options (every value of each enumeration,
each bound of each count, the defaults) against the emulator: every request built must
pass the check, and the emulator must take it (what the document declares, it accepts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from asyncclient import AsyncClient
from asyncclient.emulator import Emulator
from asyncclient.errors import BadRequestError
from asyncclient.http import caller
from asyncclient.http.protocol import Request
from asyncclient.models.enums import (
    Platform,
    ProjectType,
    ScheduleStatus,
    SocialPlatform,
    VideoListStatus,
)
from tests.document import DOCUMENT, check_request

INT64_MAX = 2**63 - 1


def test_the_suite_checks_each_request_it_builds_against_the_document() -> None:
    # tests/conftest.py wraps the caller's request builder: a request the document
    # refuses fails the test that built it.
    refused = {
        ("GET", "/v1/nowhere", ()): r"has no such operation",
        ("DELETE", "/v1/video/v1", ()): r"has no such operation",
        ("GET", "/v1/video/list", (("kind", "ugc_ads"),)): r"kind='ugc_ads': not a parameter",
        ("GET", "/v1/video/list", (("limit", 101),)): r"limit='101': 101 is greater than",
        ("GET", "/v1/video/list", (("limit", 5.0),)): r"limit='5.0': '5.0' is not of type",
        ("GET", "/v1/video/list", (("type", "cats"),)): r"type='cats': 'cats' is not one of",
        ("GET", "/v1/template/list", (("offset", -1),)): r"offset='-1': -1 is less than",
        ("GET", "/v1/social/search/s1", (("limit", 51),)): r"limit='51': 51 is greater than",
        ("GET", "/v1/video/list", (("offset", INT64_MAX + 1),)): r"offset='9223372036854775808'",
    }
    for (method, path, params), match in refused.items():
        with pytest.raises(AssertionError, match=match):
            caller.build_request(method, path, params=dict(params))
    with pytest.raises(AssertionError, match=r"body searchTerm: 5 is not of type 'string'"):
        caller.build_request(
            "POST", "/v1/social/search/create", json_body={"searchTerm": 5, "platform": "clipsite"}
        )
    with pytest.raises(AssertionError, match=r"body: GET /v1/video/list takes none"):
        caller.build_request("GET", "/v1/video/list", json_body={"limit": 5})
    caller.build_request("GET", "/v1/template/list", params={"type": "ugc_ads", "offset": 3})
    caller.build_request("GET", "/v1/social/search/s1", params={"limit": 50, "offset": 0})


def test_query_values_are_read_as_the_url_carries_them() -> None:
    # A query value is text: "5" is the integer 5 where the schema wants an integer, and a
    # declared parameter sent twice is refused (the SDK sends each once).
    check_request(Request("GET", "/v1/video/list", (("limit", "5"), ("offset", "0"))))
    with pytest.raises(AssertionError, match=r"limit: sent 2 times"):
        check_request(Request("GET", "/v1/video/list", (("limit", "5"), ("limit", "6"))))
    with pytest.raises(AssertionError, match=r"limit='05'"):
        check_request(Request("GET", "/v1/video/list", (("limit", "05"),)))


# -- each SDK method that sends a query, its full range of options ---------------------


def ranges(**options: list[Any]) -> Iterator[dict[str, Any]]:
    """The options' defaults, then each value of each option with the others left out,
    then every option at its last value together."""
    yield {}
    for name, values in options.items():
        for value in values:
            yield {name: value}
    yield {name: values[-1] for name, values in options.items()}


def enum_values(cls: Any) -> list[Any]:
    """Each member, then each one's plain value (the SDK takes both)."""
    return [*cls, *(member.value for member in cls)]


LIST_PAGING = {"limit": [1, 100], "offset": [0, 1, INT64_MAX]}
RESEARCH_PAGING = {"limit": [1, 50], "offset": [0, 1, INT64_MAX]}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[Request]:
    """The requests the caller builds (after the suite's own check of each)."""
    built: list[Request] = []
    inner = caller.build_request

    def record(method: str, path: str, **kwargs: Any) -> Request:
        request: Request = inner(method, path, **kwargs)
        built.append(request)
        return request

    monkeypatch.setattr(caller, "build_request", record)
    return built


async def exercise(
    call: Callable[..., Awaitable[Any]], options: Iterator[dict[str, Any]], sent: list[Request]
) -> set[str]:
    """Call ``call`` with each of ``options``; each request is checked against the document
    here (not only the suite's first distinct ones) and the emulator answers it."""
    names: set[str] = set()
    for given in options:
        before = len(sent)
        await call(**given)  # an answer other than a 2xx raises
        assert len(sent) == before + 1, given
        check_request(sent[-1])
        names |= {name for name, _ in sent[-1].params}
    return names


def declared(path: str) -> set[str]:
    params = DOCUMENT["paths"][path]["get"].get("parameters", [])
    resolved = [p if "$ref" not in p else _deref(p["$ref"]) for p in params]
    return {p["name"] for p in resolved if p["in"] == "query"}


def _deref(pointer: str) -> Any:
    node: Any = DOCUMENT
    for key in pointer.removeprefix("#/").split("/"):
        node = node[key]
    return node


async def test_video_list_queries(client: AsyncClient, sent: list[Request]) -> None:
    options = ranges(
        type=enum_values(ProjectType), status=enum_values(VideoListStatus), **LIST_PAGING
    )
    names = await exercise(client.videos.list_page, options, sent)
    assert names == declared("/v1/video/list") == {"type", "status", "limit", "offset"}
    async for _ in client.videos.list(type="ugc_ads", status="completed", page_size=100):
        break
    check_request(sent[-1])


async def test_template_list_queries(client: AsyncClient, sent: list[Request]) -> None:
    options = ranges(type=enum_values(ProjectType), **LIST_PAGING)
    names = await exercise(client.templates.list_page, options, sent)
    assert names == declared("/v1/template/list") == {"type", "limit", "offset"}
    async for _ in client.templates.list(type=ProjectType.UGC_ADS, page_size=1):
        break
    check_request(sent[-1])


async def test_scheduled_post_list_queries(client: AsyncClient, sent: list[Request]) -> None:
    options = ranges(
        status=enum_values(ScheduleStatus), platform=enum_values(Platform), **LIST_PAGING
    )
    names = await exercise(client.schedule.list_page, options, sent)
    assert names == declared("/v1/schedule/list") == {"status", "platform", "limit", "offset"}


async def test_search_read_queries(client: AsyncClient, sent: list[Request]) -> None:
    created = await client.social.create_search("cooking hacks", SocialPlatform.CLIPSITE)
    search_id = created.search.id

    async def read(**options: Any) -> Any:
        return await client.social.get_search(search_id, **options)

    names = await exercise(read, ranges(**RESEARCH_PAGING), sent)
    assert names == declared("/v1/social/search/{searchId}") == {"limit", "offset"}
    async for _ in client.social.search_videos(search_id, page_size=50):
        break
    check_request(sent[-1])


async def test_niche_video_queries(client: AsyncClient, emu: Emulator, sent: list[Request]) -> None:
    niche = emu.catalog.niches[0]

    async def page(**options: Any) -> Any:
        return await client.social.niche_videos_page(niche, **options)

    options = ranges(platform=enum_values(SocialPlatform), **RESEARCH_PAGING)
    names = await exercise(page, options, sent)
    assert names == declared("/v1/niche/{nicheId}/videos") == {"platform", "limit", "offset"}
    async for _ in client.social.niche_videos(niche, platform="videosite", page_size=50):
        break
    check_request(sent[-1])


async def test_the_largest_offset_is_echoed_and_decoded(client: AsyncClient) -> None:
    # The document's offsets are int64: the emulator takes the largest and answers it in
    # the page, which the SDK decodes (an int64 too); one more it refuses, as the document
    # does (sent by hand: the SDK's own check of an offset has no upper bound).
    page = await client.templates.list_page(offset=INT64_MAX)
    assert (page.items, page.offset) == ([], INT64_MAX)
    with pytest.raises(BadRequestError, match=rf"offset: must be at most {INT64_MAX}"):
        await client.request("GET", "/v1/template/list", params={"offset": INT64_MAX + 1})
