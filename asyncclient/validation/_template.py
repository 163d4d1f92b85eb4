"""Template generation rules (spec 4.9, 8.3): scenes, placeholders and variables."""

from __future__ import annotations

from typing import Any

from asyncclient.models.enums import TemplateVariableType
from asyncclient.models.requests import TemplateGenerationRequest
from asyncclient.models.scenes import AvatarBox, TemplateScene, TemplateVariable
from asyncclient.models.templates import PLACEHOLDER
from asyncclient.validation._checks import (
    Rule,
    _apply,
    _Ctx,
    _enum,
    _is_url,
    _obj,
    _plain,
    _scene_list,
    _show,
    _text,
)


def _variables(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 4.9 rules 1-3, 8.3: up to 20 variables, keys 1..100, values 0..2000
    variables, path = obj.variables, prefix + "variables"
    if variables is None:
        return [f"{path}: variables are required"]
    if not isinstance(variables, list):
        return [f"{path}: must be a list of TemplateVariable"]
    found = [f"{path}: cannot have more than 20 variables"] if len(variables) > 20 else []
    # a key given twice is not refused: the spec does not say (README, choices)
    for j, var in enumerate(variables):
        where = f"{path}[{j}]"
        if not isinstance(var, TemplateVariable):
            found.append(f"{where}: must be a TemplateVariable")
            continue
        found += _apply(_VARIABLE_RULES, var, where + ".", ctx)
    return found


def _media_value(obj: Any, prefix: str, ctx: _Ctx) -> list[str]:
    # spec 2.9: a media variable's value is a URL ("" stays valid: spec 4.9 rule 3)
    value = obj.value
    if _plain(obj.type) != TemplateVariableType.MEDIA.value or not isinstance(value, str):
        return []
    if value == "" or _is_url(value, ("http", "https")):
        return []
    return [f"{prefix}value: must be a URL for a media variable"]


_VARIABLE_RULES: tuple[Rule, ...] = (
    _text("key", 100, missing="key is required"),
    _text("value", 2000, missing="value is required", empty_ok=True),
    _enum("type", TemplateVariableType),  # optional: text by default (README, choices)
    _media_value,
)


def _scene_placeholders(scene: Any, prefix: str) -> list[str]:
    script, variables = scene.script, scene.variables
    if not isinstance(script, str) or not isinstance(variables, list):
        return []
    keys = {v.key for v in variables if isinstance(v, TemplateVariable) and isinstance(v.key, str)}
    names = dict.fromkeys(PLACEHOLDER.findall(script))
    return [
        f"{prefix}script: missing value for variable {_show(name)}"
        for name in names
        if name not in keys
    ]


def unfilled_placeholders(request: TemplateGenerationRequest) -> list[str]:
    """The ``{{placeholders}}`` of each scene script that no variable fills.

    The service accepts such a request and the generation then fails (spec 4.9
    rule 2), so :func:`~asyncclient.validation.validate` does not refuse it; a
    batch rejects such a row before paying for it. Placeholders are
    case-sensitive (spec 4.9 rule 1).

    Returns:
        One ``scenes[<i>].script: missing value for variable '<name>'`` per name.
    """
    scenes = request.scenes if isinstance(request.scenes, list) else []
    return [
        line
        for i, scene in enumerate(scenes)
        if isinstance(scene, TemplateScene)
        for line in _scene_placeholders(scene, f"scenes[{i}].")
    ]


_TEMPLATE_SCENE_RULES: tuple[Rule, ...] = (
    _text(
        "script",
        5000,
        missing="script is required",
        long="script cannot exceed 5000 characters",
        empty_ok=True,
    ),
    _variables,
    _obj("avatar", AvatarBox, (_text("id", 30),)),
    _text("voice", 30),
)
_TEMPLATE_SCENES = _scene_list(
    lambda scene: _TEMPLATE_SCENE_RULES if isinstance(scene, TemplateScene) else None,
    20,
    "a TemplateScene",
)


def template_rules() -> dict[type, tuple[Rule, ...]]:
    """The rules of a template generation (spec 4.9), in field order."""
    from asyncclient.models.requests import TemplateGenerationRequest
    from asyncclient.validation._checks import _flag, _metadata, _text
    from asyncclient.validation._creation import _WEBHOOK

    return {
        TemplateGenerationRequest: (
            _text("type", None, missing="type is required"),
            _text("template_id", 20, missing="template ID is required"),
            _text("title", 200, missing="title is required"),  # spec 8.3 (4.9 says 100)
            _flag("caption", missing="caption is required"),
            _text("language", 2, missing="language is required"),
            _TEMPLATE_SCENES, _WEBHOOK, _metadata,
        ),
    }  # fmt: skip
