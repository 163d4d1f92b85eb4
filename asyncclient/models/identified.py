"""The request id a response model came with, kept beside the model, not in it.

Response models are frozen, slotted attrs classes whose slots are exactly their fields
(the converter's fast path builds them slot by slot). A request id is no part of a
model's value either: two reads of the same video are equal whatever their ids. So the
id is kept in a table keyed by the object's identity and dropped with it (a weak
reference's callback), and :class:`Identified` gives the models that carry one a
``request_id`` property reading it. Equality, hashing, ``repr``, pickling and
``attrs.evolve`` ignore it: a copy or an evolved model has no request id.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

__all__ = ["Identified", "request_id_of", "stamp", "stamp_all"]


class _Stamp(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a stamped model, holding its request id."""

    __slots__ = ("key", "request_id")
    key: int
    request_id: str


def _forget(stamp: Any) -> None:
    key: int = stamp.key
    if _STAMPS.get(key) is stamp:  # not a newer object's, made at the same address
        del _STAMPS[key]


_STAMPS: dict[int, _Stamp] = {}
"""``id(model)`` -> its stamp; an entry leaves when its model is collected."""


def stamp(obj: object, request_id: str | None) -> None:
    """Record that ``obj`` came with ``request_id`` (nothing for None or a plain object)."""
    if request_id is None or not isinstance(obj, Identified):
        return
    key = id(obj)
    entry = _Stamp(obj, _forget)
    entry.key, entry.request_id = key, request_id
    _STAMPS[key] = entry


def stamp_all(objs: Iterable[object], request_id: str | None) -> None:
    """:func:`stamp` each of ``objs``."""
    if request_id is not None:
        for obj in objs:
            stamp(obj, request_id)


def request_id_of(obj: object) -> str | None:
    """The id of the request that fetched ``obj``, or None when it was not fetched."""
    entry = _STAMPS.get(id(obj))
    if entry is None or entry() is not obj:
        return None
    return entry.request_id


class Identified:
    """A response model: ``request_id`` names the request that fetched it."""

    __slots__ = ()

    @property
    def request_id(self) -> str | None:
        """The id of the request that fetched this object (the service's request-id
        header, else the ``X-Request-Id`` the SDK sent); None for an object made by
        hand, copied or evolved."""
        return request_id_of(self)
