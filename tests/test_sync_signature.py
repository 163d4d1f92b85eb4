"""``Client`` takes what ``AsyncClient`` takes: the same parameters, typed and documented.

The two constructors are written out by hand (so that ``help()``, an editor and mypy see
every option); this test keeps them the same, so that an option added to one and not to
the other fails here. The one difference is ``session``: an aiohttp session belongs to
the event loop it was made in, and a ``Client`` runs its own loop in its own thread.
"""

from __future__ import annotations

import inspect
import pydoc
import re
from typing import Any

import pytest

import asyncclient
from asyncclient import AsyncClient, Client

ASYNC_ONLY = {"session"}
NAMESPACES = {
    # name: (the async client's class, the sync client's)
    "videos": ("Videos", "SyncVideos"),
    "jobs": ("Jobs", "SyncJobs"),
    "projects": ("Projects", "SyncProjects"),
    "templates": ("Templates", "SyncTemplates"),
    "integrations": ("Integrations", "SyncIntegrations"),
    "schedule": ("Schedule", "SyncSchedule"),
    "social": ("Social", "SyncSocial"),
    "webhooks": ("ClientWebhooks", "SyncWebhooks"),
}


def parameters(cls: type[Any]) -> list[tuple[str, str, object, object]]:
    """``(name, kind, default, annotation)`` of each parameter of ``cls.__init__``.

    Both modules use ``from __future__ import annotations``: an annotation is the text
    written in the source, and that text is what is compared.
    """
    signature = inspect.signature(cls.__init__)
    return [
        (p.name, p.kind.name, p.default, p.annotation)
        for p in signature.parameters.values()
        if p.name != "self"
    ]


def differences(
    first: list[tuple[str, str, object, object]], second: list[tuple[str, str, object, object]]
) -> list[str]:
    """What differs between two parameter lists, parameter by parameter, in words."""
    found = []
    one, two = {p[0]: p for p in first}, {p[0]: p for p in second}
    for name in one.keys() - two.keys():
        found.append(f"{name}: only in the first")
    for name in two.keys() - one.keys():
        found.append(f"{name}: only in the second")
    for name in one.keys() & two.keys():
        for what, a, b in zip(
            ("kind", "default", "annotation"), one[name][1:], two[name][1:], strict=True
        ):
            if a != b:
                found.append(f"{name}: {what} {a!r} != {b!r}")
    if not found and [p[0] for p in first] != [p[0] for p in second]:
        found.append("the same parameters in another order")
    return sorted(found)


def test_the_sync_client_takes_the_async_clients_parameters_but_session() -> None:
    async_parameters = [p for p in parameters(AsyncClient) if p[0] not in ASYNC_ONLY]
    sync_parameters = parameters(Client)
    assert len(sync_parameters) > 15  # the options are written out, not **options
    assert differences(async_parameters, sync_parameters) == []
    assert {p[0] for p in parameters(AsyncClient)} >= ASYNC_ONLY


def test_the_comparison_finds_a_missing_parameter_another_default_kind_or_type() -> None:
    base = [
        ("api_key", "POSITIONAL_OR_KEYWORD", None, "str | None"),
        ("plan", "KEYWORD_ONLY", None, "Plan | None"),
        ("retry", "KEYWORD_ONLY", None, "RetryPolicy | None"),
    ]
    changed = [
        ("api_key", "KEYWORD_ONLY", None, "str | None"),
        ("plan", "KEYWORD_ONLY", "free", "Plan | None"),
        ("proxy", "KEYWORD_ONLY", None, "str | None"),
    ]
    assert differences(base, changed) == [
        "api_key: kind 'POSITIONAL_OR_KEYWORD' != 'KEYWORD_ONLY'",
        "plan: default None != 'free'",
        "proxy: only in the second",
        "retry: only in the first",
    ]
    assert differences(base, [*base[:2], ("retry", "KEYWORD_ONLY", None, "Retry")]) == [
        "retry: annotation 'RetryPolicy | None' != 'Retry'"
    ]
    assert differences(base, base[::-1]) == ["the same parameters in another order"]


@pytest.mark.parametrize("cls", [AsyncClient, Client], ids=["AsyncClient", "Client"])
def test_each_parameter_is_documented_in_the_class_docstring(cls: type[Any]) -> None:
    # (cleandoc: Python 3.13 dedents docstrings itself, older Pythons keep the indent)
    doc = inspect.cleandoc(cls.__doc__ or "")
    args = doc.split("Args:", 1)[1].split("Raises:", 1)[0]
    documented = set(re.findall(r"^    (\w+):", args, re.MULTILINE))
    assert documented == {p[0] for p in parameters(cls)}
    if cls is Client:  # and where it differs from AsyncClient, said
        assert "``session``" in (cls.__doc__ or "")


@pytest.mark.parametrize("cls", [AsyncClient, Client], ids=["AsyncClient", "Client"])
def test_help_shows_each_namespace_with_its_class(cls: type[Any]) -> None:
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert "cached_property object" not in text
    which = 0 if cls is AsyncClient else 1
    for name, classes in NAMESPACES.items():
        # pydoc lists a property by its name, its docstring indented below it
        entry = re.search(rf"^ \|  {name}\n \|      (.*)$", text, re.MULTILINE)
        assert entry is not None, name
        assert re.search(rf"\b{classes[which]}\b", entry[1]), (name, entry[1])


def test_the_signature_help_shows_is_the_typed_one() -> None:
    shown = str(inspect.signature(asyncclient.Client))
    assert "**options" not in shown
    assert "plan: 'Plan | RateLimit | str | None' = None" in shown
    assert "session" not in shown


def test_a_namespace_is_made_once_and_a_derived_client_makes_its_own() -> None:
    client = AsyncClient("k", base_url="http://127.0.0.1:1")
    assert client.templates is client.templates
    assert client.videos is client.videos
    derived = client.with_options(max_retries=0)
    assert derived.templates is not client.templates  # sends through its own caller
    assert derived.jobs is client.jobs  # the poller is shared
    with Client("k", base_url="http://127.0.0.1:1") as sync:
        assert sync.social is sync.social
        assert sync.videos._async is sync.async_client.videos
