"""The public surface: a sorted, complete ``__all__`` and the fixed names of the issues."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import asyncclient
import asyncclient.models
import asyncclient.resources

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


def _names_imported_by_the_package() -> dict[str, str]:
    """Name -> module of every ``from X import name`` in ``asyncclient/__init__.py``,
    those under ``TYPE_CHECKING`` (the lazily loaded names) included."""
    tree = ast.parse(Path(asyncclient.__file__).read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: str(node.module)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncclient")
        for alias in node.names
    }


def test_every_name_resolves_to_what_type_checkers_are_told() -> None:
    imported = _names_imported_by_the_package()
    assert set(imported) == set(asyncclient.__all__)
    for name, module in imported.items():
        assert getattr(asyncclient, name) is getattr(importlib.import_module(module), name), name


def test_lazy_names_are_listed_by_dir_and_unknown_names_raise() -> None:
    assert set(dir(asyncclient)) >= set(asyncclient.__all__)
    with pytest.raises(AttributeError, match="NoSuchName"):
        asyncclient.NoSuchName  # noqa: B018
    with pytest.raises(ImportError):
        from asyncclient import NoSuchName  # noqa: F401
    assert set(dir(asyncclient.resources)) >= set(asyncclient.resources.__all__)
    for name in asyncclient.resources.__all__:
        assert getattr(asyncclient.resources, name).__name__ == name


def test_every_name_resolves_in_a_fresh_interpreter() -> None:
    code = (
        "import asyncclient\n"
        "missing = [n for n in asyncclient.__all__ if not hasattr(asyncclient, n)]\n"
        "assert not missing, missing\n"
        "from asyncclient import *\n"
        "assert all(n in dir(asyncclient) for n in asyncclient.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[1], check=True)
