"""Turn rows (a title and variable values, as a CSV row reads) into template batch items."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

from asyncclient.batch.digests import DigestSet, local_digest
from asyncclient.batch.rows import Item
from asyncclient.batch.source import _Once, size_of
from asyncclient.models.enums import TemplateVariableType
from asyncclient.models.requests import TemplateGenerationRequest
from asyncclient.models.scenes import AvatarBox, TemplateScene, TemplateVariable
from asyncclient.models.templates import TemplateDetail, TemplateSceneInfo

__all__ = ["TemplateSource", "row_to_request", "rows_to_items"]


def _scene(
    scene: TemplateSceneInfo, values: Mapping[str, str], index: int
) -> tuple[TemplateScene, list[str]]:
    """One scene with the row's values; problems for declared variables left without one."""
    declared = {v.key: v for v in scene.variables or []}
    names = list(dict.fromkeys([*declared, *scene.placeholders()]))
    variables = []
    missing = []
    for name in names:
        if name not in values:
            if name in declared and name not in scene.placeholders():
                missing.append(f"scenes[{index}].variables: missing value for variable '{name}'")
            continue  # a placeholder without a value: Item.of names it (failures=True)
        kind = declared[name].type if name in declared else None
        variables.append(
            TemplateVariable(key=name, value=values[name], type=kind or TemplateVariableType.TEXT)
        )
    avatar = None
    if scene.avatar is not None:
        avatar = AvatarBox(
            id=scene.avatar.id,
            top_left=scene.avatar.top_left,
            bottom_right=scene.avatar.bottom_right,
        )
    built = TemplateScene(script=scene.script or "", variables=variables, avatar=avatar)
    return built, missing


def row_to_request(
    template: TemplateDetail,
    row: Mapping[str, Any],
    *,
    title_key: str = "title",
    caption: bool = True,
    language: str = "en",
    webhook: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[TemplateGenerationRequest, list[str]]:
    """Build one row's request; returns it and the problems of the row itself.

    ``row[title_key]`` is the video's title, every other key a variable's name
    (every variable of every scene needs a value; ``""`` is one). The service's
    rules on the request are checked once, by :meth:`Item.of`.
    """
    found: list[str] = []
    values = {str(k): "" if v is None else str(v) for k, v in row.items() if k != title_key}
    known = set(template.variable_names())
    for key in values:
        if key not in known:
            names = ", ".join(sorted(known)) or "none"
            found.append(
                f"{key}: not a variable of template {template.id} (its variables: {names})"
            )
    title = row.get(title_key)
    if title is None:
        found.append(f"{title_key}: a title is required")
    scenes = []
    for i, scene in enumerate(template.scenes or []):
        built, missing = _scene(scene, values, i)
        scenes.append(built)
        found.extend(missing)
    request = TemplateGenerationRequest(
        template_id=template.id,
        title="" if title is None else str(title),
        scenes=scenes,
        caption=caption,
        language=language,
        type=template.type or "class",
        webhook=webhook,
        metadata=metadata,
    )
    return request, found


def rows_to_items(
    template: TemplateDetail, rows: Iterable[Mapping[str, Any]], **options: Any
) -> list[Item]:
    """Every row checked and serialised once; a title used twice is a problem (it is how
    an interrupted batch finds a row's video again)."""
    titles = DigestSet(digest=local_digest)
    return [_checked(template, index, row, titles, options) for index, row in enumerate(rows)]


def _checked(
    template: TemplateDetail,
    index: int,
    row: Mapping[str, Any],
    titles: DigestSet,
    options: Mapping[str, Any],
) -> Item:
    item = Item.of(index, *row_to_request(template, row, **options))
    if item.prepared is None:
        return item
    title = item.request.title if isinstance(item.request, TemplateGenerationRequest) else ""
    first = titles.add(title, index)
    if first is None:
        return item
    problem = (
        f"title: '{title}' is also the title of row {first}; "
        "titles must be unique in a batch (they identify a row's video on resume)"
    )
    return Item(index, None, (*item.problems, problem))


class TemplateSource:
    """``templates.generate_many``'s rows: the template read once (:meth:`open`), then
    each row built when it is about to be sent. Titles are remembered as digests (16
    bytes a row) to refuse a title used twice.

    Args:
        fetch: Reads the template.
        rows: Mappings of column to value; a list or a file's rows are read twice by a
            pre-pass, a generator once.
        title_key: The column holding the title.
        **options: ``row_to_request``'s fields (caption, language, webhook, metadata).
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[TemplateDetail]],
        rows: Iterable[Mapping[str, Any]],
        *,
        title_key: str = "title",
        **options: Any,
    ) -> None:
        self._fetch = fetch
        self._rows = _Once(rows)
        self._total = size_of(rows)
        self._title_key = title_key
        self._options = {"title_key": title_key, **options}
        self._template: TemplateDetail | None = None
        self._titles = DigestSet(digest=local_digest)

    @property
    def total(self) -> int | None:
        return self._total

    @property
    def reusable(self) -> bool:
        return self._rows.reusable

    async def open(self) -> None:
        if self._template is None:
            self._template = await self._fetch()

    def rows(self) -> Iterator[tuple[int, Any]]:
        self._titles = DigestSet(digest=local_digest)
        return enumerate(self._rows)

    def build(self, index: int, raw: Any) -> Item:
        assert self._template is not None, "open() the source first"
        return _checked(self._template, index, raw, self._titles, self._options)

    def skip(self, index: int, raw: Any) -> None:
        title = self.title(raw)
        if title is not None:
            self._titles.note(title, index)

    def rebuild(self, index: int, raw: Any) -> Item:
        assert self._template is not None, "open() the source first"
        return Item.of(index, *row_to_request(self._template, raw, **self._options))

    def title(self, raw: Any) -> str | None:
        value = raw.get(self._title_key) if isinstance(raw, Mapping) else None
        return None if value is None else str(value)
