"""Client-side request rules: every problem of a request at once, before it is sent.

Problems read ``<field path>: <reason>``, with the service's (camelCase) field paths
such as ``scenes[1].script``, in field order. :func:`validate` raises
:class:`~asyncclient.errors.ValidationError` listing them before any request is sent;
:func:`problems` returns them.
"""

# Each request class maps to a tuple of rules (``_rules()``); a rule is a small function
# ``(obj, prefix, ctx) -> list[str]`` made by a factory (``_text``, ``_enum``, ``_obj``
# ...). The messages follow spec 7. The emulator keeps its own rules on purpose
# (architecture guide).
#
# Layout: ``_checks`` (generic checks and rule factories), ``_creation`` (spec 4.1-4.8),
# ``_template`` (4.9), ``_schedule_social`` (4.12, 4.15, 4.16); this module holds the
# dispatch table, :func:`problems` and :func:`validate`. Importing it loads only
# ``_checks`` (the path and query checks every resource uses); the request rules are
# imported when the first request is checked.
#
# May import: ``models``, ``errors``, ``_clock``.

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING

from asyncclient._clock import SYSTEM_CLOCK
from asyncclient.models.enums import Platform
from asyncclient.validation._checks import METADATA_MAX_BYTES as METADATA_MAX_BYTES
from asyncclient.validation._checks import Rule as Rule
from asyncclient.validation._checks import (
    _apply,
    _Ctx,
    check_enum,
    check_id,
    check_offset,
    check_page_size,
    check_range,
    raise_if,
)

if TYPE_CHECKING:
    from asyncclient.models.requests import (
        AnalyzeAccountRequest,
        CreationRequest,
        ScheduleRequest,
        SearchRequest,
        TemplateGenerationRequest,
    )

    Request = CreationRequest | ScheduleRequest | AnalyzeAccountRequest | SearchRequest

__all__ = [
    "check_enum",
    "check_id",
    "check_offset",
    "check_page_size",
    "check_range",
    "problems",
    "raise_if",
    "unfilled_placeholders",
    "validate",
]


# -- the table: request class -> rules, in the spec's field order ------------------------


@functools.cache
def _rules() -> dict[type, tuple[Rule, ...]]:
    """The table, built when the first request is checked (it imports every request rule)."""
    from asyncclient.validation._creation import creation_rules
    from asyncclient.validation._schedule_social import schedule_social_rules
    from asyncclient.validation._template import template_rules

    return {**creation_rules(), **template_rules(), **schedule_social_rules()}


def _rules_for(request: object) -> tuple[Rule, ...]:
    table = _rules()
    for cls in type(request).__mro__:
        if cls in table:
            return table[cls]
    raise TypeError(f"no validation rules for {type(request).__name__}")


def _as_platform(platform: Platform | str | None) -> Platform | None:
    if platform is None or isinstance(platform, Platform):
        return platform
    try:
        return Platform(platform)
    except ValueError:  # a platform added later: platform-independent checks only
        return None


def problems(
    request: Request,
    *,
    now: datetime | None = None,
    platform: Platform | str | None = None,
    failures: bool = True,
) -> list[str]:
    """Return every problem of ``request``, in field order, as ``<field path>: <reason>``.

    Args:
        request: A creation, schedule, account-analysis or search request.
        now: The current time (timezone-aware) for the schedule rule; the client passes
            its clock's; defaults to the real clock's.
        platform: The integration's platform, for its rules of ``platform_data``.
            ``None`` (or an unknown value) applies only platform-independent checks.
        failures: Also report what the service accepts but whose generation then
            fails (:func:`unfilled_placeholders`), so that a batch
            does not pay for such a row. :func:`validate` leaves them out.

    Returns:
        The problems; empty when the request is valid.

    Raises:
        TypeError: ``request`` is not a request class.
        ValueError: ``now`` is naive.
    """
    if now is None:
        now = SYSTEM_CLOCK.now()
    elif now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    ctx = _Ctx(now=now, platform=_as_platform(platform))
    found = _apply(_rules_for(request), request, "", ctx)
    if failures:
        from asyncclient.models.requests import TemplateGenerationRequest

        if isinstance(request, TemplateGenerationRequest):
            found += unfilled_placeholders(request)
    return found


def validate(
    request: Request,
    *,
    now: datetime | None = None,
    platform: Platform | str | None = None,
) -> None:
    """Check ``request`` before it is sent: what the service would refuse.

    A request the service accepts is never refused, even one whose generation is
    bound to fail (a placeholder without a value: see :func:`unfilled_placeholders`).

    Raises:
        ValidationError: Listing every problem found (see :func:`problems`).
    """
    raise_if(problems(request, now=now, platform=platform, failures=False))


def unfilled_placeholders(request: TemplateGenerationRequest) -> list[str]:
    """The ``{{placeholders}}`` of each scene script that no variable fills.

    The service accepts such a request and the generation then fails, so
    :func:`validate` does not refuse it; a batch rejects such a row
    before paying for it. Placeholders are case-sensitive.

    Returns:
        One ``scenes[<i>].script: missing value for variable '<name>'`` per name.
    """
    from asyncclient.validation._template import unfilled_placeholders as unfilled

    return unfilled(request)
