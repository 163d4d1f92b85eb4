"""Help texts are written for users (issue "Rough edges"): ``help()`` on a creation
method says what it makes, its main arguments, what it returns and what it raises, and
points at no spec the user does not have."""

from __future__ import annotations

import inspect
import re

import pytest

from asyncclient.resources.projects import Projects

CREATE = [name for name in dir(Projects) if name.startswith("create_")]


def test_there_are_nine_creation_methods() -> None:
    assert len(CREATE) == 9


@pytest.mark.parametrize("name", CREATE)
def test_a_creation_method_s_help_says_what_it_makes_returns_and_raises(name: str) -> None:
    doc = inspect.getdoc(getattr(Projects, name)) or ""
    first = doc.splitlines()[0]
    assert first.startswith(("Make", "Add")), first  # what it does, in words
    assert not re.search(r"\bspec\b", doc), doc
    assert "Returns:" in doc or "await" in first + doc.split("\n\n")[0], doc
    assert "Raises:" in doc and "ValidationError" in doc and "InsufficientCreditsError" in doc
    required = [
        p.name
        for p in inspect.signature(getattr(Projects, name)).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is p.KEYWORD_ONLY
    ]
    for parameter in required:  # every required argument is explained
        assert f"``{parameter}``" in doc or f"{parameter}:" in doc, (name, parameter)
