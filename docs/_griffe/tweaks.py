"""A Griffe extension for the docs build (not part of the package).

Loaded by mkdocs.yml (``plugins.mkdocstrings.handlers.python.options.extensions``). Once
the package is loaded, for every object:

- The docstrings' reStructuredText idioms become Markdown. A Sphinx role
  (``:class:`VideoJob```, ``:meth:`~Batch.prepare```) becomes an *optional*
  cross-reference: a link when the name resolves to a documented object, plain code
  otherwise, never a warning. A lone ``::`` line goes (the indented block after it is
  a Markdown code block already).
- A special method or attribute (``__repr__``, ``__aenter__``, ``__slots__``, ...) is
  left out of the reference unless it has a docstring of its own (``Batch.__aiter__``,
  ``RetryPolicy.__call__``); ``__init__`` is shown as the class's signature.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|data|exc|obj|const):`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^>]+)>$")
_LITERAL_MARKER = re.compile(r"^[ \t]*::[ \t]*$", re.MULTILINE)
_ALWAYS_HIDDEN = frozenset({"__slots__", "__attrs_post_init__"})


def _identifier(obj: griffe.Object, target: str) -> str | None:
    """The full path ``target`` names in the scope of ``obj``, or None."""
    target = target.lstrip(".")
    if target.split(".", 1)[0] == obj.package.name:
        return target
    head, _, rest = target.partition(".")
    try:
        path = obj.resolve(head)
    except griffe.NameResolutionError:
        return None
    return f"{path}.{rest}" if rest else path


def _rewrite(obj: griffe.Object, text: str) -> str:
    def role(match: re.Match[str]) -> str:
        body = match["body"].strip()
        explicit = _EXPLICIT.match(body)
        if explicit:
            title, target = explicit["title"], explicit["target"].lstrip("~")
        else:
            target = body.lstrip("~")
            title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
        code = f"<code>{html.escape(title)}</code>"
        identifier = _identifier(obj, target)
        if identifier is None:
            return code
        return f'<autoref identifier="{html.escape(identifier)}" optional>{code}</autoref>'

    return _LITERAL_MARKER.sub("", _ROLE.sub(role, text))


def _hidden(parent: griffe.Object, name: str, member: Any) -> bool:
    """A special member of a class without a docstring of its own (``__init__`` aside)."""
    special = name.startswith("__") and name.endswith("__") and name != "__init__"
    if not (parent.is_class and special):
        return False
    return name in _ALWAYS_HIDDEN or not member.docstring


def _walk(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = _rewrite(obj, obj.docstring.value)
    for name, member in list(obj.members.items()):
        if member.is_alias:
            continue
        if _hidden(obj, name, member):
            # Removed, not marked private: the aliases that re-export the class
            # (asyncclient.AsyncClient) read their members from it.
            del obj.members[name]
            continue
        _walk(member)  # type: ignore[arg-type]


class ReferenceTweaks(griffe.Extension):
    """Rewrite every docstring of a package once it is loaded; hide bare special methods."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg)
