"""The documented API's docstrings are written for users, as ``help()`` and the reference show them.

The documented API: every name of ``asyncclient.__all__``, and every object the API
reference renders (each ``::: path`` line of ``docs/reference/*.md``, with the members
its ``members:`` option names, else the module's ``__all__``, else what it defines):
modules, classes, their public methods, properties and attributes (attribute docstrings
too, read from the source as the reference's renderer reads them), functions.

Two rules, each with a test of its checker on a made-up docstring:

- no docstring cites the service's specification by section ("spec 4.14", "(spec 8.1)",
  "§ 6"): users do not have it. Say the rule itself, or link to the guide.
- no docstring carries notes meant for the package's contributors (what a module may
  import, which modules own what): those live in ``#`` comments at the top of the module.

Internal comments, private modules and private names may cite the spec.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import itertools
import re
import textwrap
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import asyncclient

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"

SPEC_CITATION = re.compile(
    r"\bspec(?:ification)?\b[\s,(]*(?:sections?|parts?|§)?\s*\d+(?:\.\d+)*|§", re.IGNORECASE
)
CONTRIBUTOR_NOTE = re.compile(
    r"\bmay import\b|\bnever imports?\b|\bimports? nothing\b|\bthe transport's\b"
    r"|\bOwns:|\barchitecture guide\b|\bthe core never\b|\bwings?\b",
    re.IGNORECASE,
)


def reference_targets() -> list[tuple[str, list[str] | None]]:
    """``(path, members)`` for each ``::: path`` of the reference pages; ``members`` is
    its ``options: members:`` list, or None."""
    found = []
    for page in sorted(REFERENCE.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not (match := re.match(r"^::: ([\w.]+)\s*$", line)):
                continue
            members = None
            options = []
            for following in lines[i + 1 :]:
                if following and not following.startswith(" "):
                    break
                options.append(following)
            block = "\n".join(options)
            if listed := re.search(r"^\s+members:\n((?:\s+- \w+\n?)+)", block, re.MULTILINE):
                members = re.findall(r"- (\w+)", listed[1])
            found.append((match[1], members))
    return found


def resolve(path: str) -> Any:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for name in parts[end:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(path)


@cache
def attribute_docstrings(source_file: str) -> dict[str, str]:
    """``qualified name -> docstring`` of the attributes a file documents with a string
    after them: at module and class level, and ``self.x = ...`` in a method."""
    tree = ast.parse(Path(source_file).read_text(encoding="utf-8"))
    found: dict[str, str] = {}

    def scan(body: list[ast.stmt], prefix: str, owner: str | None) -> None:
        for before, node in itertools.pairwise(body):
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                continue
            if not isinstance(node.value.value, str):
                continue
            targets = before.targets if isinstance(before, ast.Assign) else []
            if isinstance(before, ast.AnnAssign):
                targets = [before.target]
            for target in targets:
                if isinstance(target, ast.Name) and owner is None:
                    found[prefix + target.id] = node.value.value
                elif (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                    and owner is not None
                ):
                    found[owner + target.attr] = node.value.value
        for node in body:
            if isinstance(node, ast.ClassDef):
                scan(node.body, f"{prefix}{node.name}.", None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and owner is None:
                scan(node.body, prefix, prefix)

    scan(tree.body, "", None)
    return found


def module_attribute_docstrings(module: types.ModuleType) -> dict[str, str]:
    """The attribute docstrings of a module's names, those it imports from another
    module of the package included (the reference renders a re-exported constant with
    the docstring written where it is defined)."""
    if not module.__file__:
        return {}
    found = dict(attribute_docstrings(module.__file__))
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncclient"):
            source = importlib.import_module(node.module or "").__file__
            if source is None:
                continue
            there = attribute_docstrings(source)
            for alias in node.names:
                if alias.name in there:
                    found.setdefault(alias.asname or alias.name, there[alias.name])
    return found


def _ours(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("asyncclient")


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _documented_here(module: types.ModuleType, members: list[str] | None) -> list[str]:
    if members is not None:
        return members
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    ]


def _class_members(cls: type[Any], where: str) -> Iterator[tuple[str, str | None]]:
    for owner in cls.__mro__:
        if not _ours(owner):
            continue
        for name, value in vars(owner).items():
            special = name.startswith("__") and name.endswith("__")
            if name.startswith("_") and not (special and _own_doc(value)):
                continue  # private, or a special method without a docstring of its own
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if isinstance(value, (enum.Enum, type)):
                continue  # an enum member's doc is its class's; a nested class is walked
            if callable(value) or hasattr(value, "__func__") or hasattr(value, "func"):
                yield f"{where}.{name}", _own_doc(value)
        source = inspect.getsourcefile(owner)
        if source:
            documented = attribute_docstrings(source)
            prefix = owner.__qualname__ + "."
            for qualified, doc in documented.items():
                name = qualified.removeprefix(prefix)
                if qualified.startswith(prefix) and "." not in name and _public(name):
                    yield f"{where}.{name}", doc


def _own_doc(value: Any) -> str | None:
    doc = getattr(value, "__doc__", None)
    return doc if isinstance(doc, str) else None


def documented_api() -> dict[str, str]:
    """``name -> docstring`` of every object of the documented API (see the module's
    docstring)."""
    docs: dict[str, str] = {}
    seen: set[int] = set()

    def add(where: str, obj: Any, members: list[str] | None = None) -> None:
        if id(obj) in seen and not isinstance(obj, (str, int, float)):
            return
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            if obj.__doc__:
                docs[where] = obj.__doc__
            module_docs = module_attribute_docstrings(obj)
            for name in _documented_here(obj, members):
                if name in module_docs:
                    docs[f"{where}.{name}"] = module_docs[name]
                add(f"{where}.{name}", getattr(obj, name))
        elif isinstance(obj, type) and _ours(obj):
            if obj.__doc__:
                docs[where] = obj.__doc__
            for name, doc in _class_members(obj, where):
                if doc:
                    docs.setdefault(name, doc)
        elif callable(obj) and _ours(obj) and obj.__doc__:
            docs[where] = obj.__doc__

    for name in asyncclient.__all__:
        add(f"asyncclient.{name}", getattr(asyncclient, name))
    for path, members in reference_targets():
        add(path, resolve(path), members)
    return {name: textwrap.dedent(doc) for name, doc in docs.items()}


def offenders(docs: dict[str, str], rule: re.Pattern[str]) -> list[str]:
    """``name: the words`` for each docstring the rule finds something in."""
    return sorted(
        f"{name}: {', '.join(sorted({m[0] for m in rule.finditer(doc)}))}"
        for name, doc in docs.items()
        if rule.search(doc)
    )


def test_the_walk_reaches_the_api_and_the_reference() -> None:
    docs = documented_api()
    for expected in (
        "asyncclient.AsyncClient",
        "asyncclient.AsyncClient.projects",
        "asyncclient.Client.with_options",
        "asyncclient.ratelimit",
        "asyncclient.batch",
        "asyncclient.APIStatusError",
        "asyncclient.emulator",
        "asyncclient.VideoDetail",
        "asyncclient.VideoDetail.duration_in_seconds",  # an attribute docstring
        "asyncclient.emulator.PLANS",  # one of a constant another module defines
    ):
        assert expected in docs, expected
    assert len(docs) > 500


def test_no_documented_docstring_cites_the_spec_by_section() -> None:
    assert offenders(documented_api(), SPEC_CITATION) == []


def test_no_documented_docstring_carries_a_note_for_contributors() -> None:
    assert offenders(documented_api(), CONTRIBUTOR_NOTE) == []


def test_a_spec_citation_is_found_in_each_of_its_forms() -> None:
    docs = {
        "a": "Social research (spec 4.15 to 4.18).",
        "b": "Limits (Spec 8.1).",
        "c": "See spec section 6.",
        "d": "See the specification, part 2.",
        "e": "As § 6.2 says.",
        "f": "A spec'd field; the spec says nothing of it; inspect.signature(f).",
        "g": "Keys being rotated out (spec 5.6): still accepted.",
    }
    assert [hit.split(":")[0] for hit in offenders(docs, SPEC_CITATION)] == [
        "a",
        "b",
        "c",
        "d",
        "e",
        "g",
    ]


def test_a_contributors_note_is_found() -> None:
    docs = {
        "a": "May import: ``http``, ``models``.",
        "b": "Knows nothing of resources; never imports the transport.",
        "c": "The I/O deadlines of the transport's attempts.",
        "d": "Owns: the loop thread.",
        "e": "Create videos in the nine formats.",
    }
    assert [hit.split(":")[0] for hit in offenders(docs, CONTRIBUTOR_NOTE)] == ["a", "b", "c", "d"]
