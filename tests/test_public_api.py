"""The public surface: a sorted, complete ``__all__`` and the fixed names of the issues."""

from __future__ import annotations

import inspect

import asyncclient
import asyncclient.models

FIXED = {
    "AsyncClient",
    "APIError",
    "APIConnectionError",
    "APITimeoutError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "RateLimitError",
    "InternalServerError",
    "InsufficientCreditsError",
    "APIResponseValidationError",
    "ValidationError",
}


def test_all_is_sorted_and_unique() -> None:
    assert asyncclient.__all__ == sorted(set(asyncclient.__all__))
    assert asyncclient.models.__all__ == sorted(set(asyncclient.models.__all__))


def test_all_names_exist_and_every_public_class_is_listed() -> None:
    for name in asyncclient.__all__:
        assert hasattr(asyncclient, name), name
    public = {
        name
        for name, obj in vars(asyncclient).items()
        if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
    }
    assert public <= set(asyncclient.__all__)
    assert set(asyncclient.models.__all__) <= set(asyncclient.__all__)


def test_fixed_names_are_exported() -> None:
    assert set(asyncclient.__all__) >= FIXED


def test_error_hierarchy() -> None:
    e = asyncclient
    assert issubclass(e.APITimeoutError, e.APIConnectionError)
    assert issubclass(e.APIConnectionError, e.APIError)
    for cls in (e.BadRequestError, e.RateLimitError, e.InsufficientCreditsError):
        assert issubclass(cls, e.APIStatusError)
    assert issubclass(e.ValidationError, ValueError)
    assert not issubclass(e.ValidationError, e.APIError)


def test_fixed_client_namespaces_and_methods() -> None:
    client = asyncclient.AsyncClient(api_key="k", base_url="http://127.0.0.1:1")
    expected = {
        "projects": [
            "create_ugc_ads",
            "create_script_to_video",
            "create_product_ads",
            "create_scenes",
            "create_hook_demo",
            "create_talking_avatar",
            "create_ugc_video",
            "create_add_captions",
            "create_from_template",
        ],
        "videos": ["get", "list"],
        "templates": ["list", "get"],
        "schedule": ["create", "list"],
        "integrations": ["list"],
        "social": ["analyze_account", "create_search", "get_search", "niche_videos"],
    }
    for namespace, methods in expected.items():
        ns = getattr(client, namespace)
        for method in methods:
            assert callable(getattr(ns, method)), f"{namespace}.{method}"
