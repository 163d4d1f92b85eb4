"""What a creation's reply must name, and the error a creation of unknown fate raises."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from asyncclient.errors import AmbiguousCreationError, APIError, APIResponseValidationError
from asyncclient.http.protocol import Envelope, Request

if TYPE_CHECKING:  # annotations only: the creation models load when a creation is made
    from asyncclient.models.requests import CreationRequest

__all__ = ["ambiguous", "require_created_ids"]


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def require_created_ids(envelope: Envelope) -> None:
    """Check that a creation's success names what it made (spec part 4).

    A creation answers ``data.projectId`` and/or ``data.videoId`` (multi-scene and hook
    plus demo: a top-level ``projectId``). A success naming neither as a non-empty string,
    or naming one of another type, tells nothing of what was made (a proxy's canned
    answer, or a service fault) and may have followed a charged creation: an
    :class:`~asyncclient.errors.APIResponseValidationError`, which the caller makes
    ambiguous (never resent, never a rejection). Resources never see such a reply.

    Raises:
        APIResponseValidationError: No usable id, or an id of the wrong type.
    """
    data = envelope.get("data")
    data = data if isinstance(data, dict) else {}
    named = {
        "data.projectId": data.get("projectId"),
        "data.videoId": data.get("videoId"),
        "projectId": envelope.get("projectId"),
    }
    wrong = [
        f"{name}: expected a non-empty string, got {type(value).__name__}"
        for name, value in named.items()
        if value is not None and not _is_id(value)
    ]
    if wrong or not any(_is_id(value) for value in named.values()):
        raise APIResponseValidationError(
            f"creation reply names no usable project or video id ({'; '.join(wrong) or 'none'})",
            body=envelope.raw,
            status_code=envelope.status,
            errors=wrong or [f"{name}: required field missing" for name in named],
            method=envelope.method,
            path=envelope.path,
        )


def ambiguous(
    request: Request,
    creation: CreationRequest,
    exc: APIError,
    sent_at: Any,
    service_at: datetime | None = None,
) -> AmbiguousCreationError:
    error = AmbiguousCreationError(
        f"the service may or may not have created this {creation.FORMAT} "
        f"project ({exc}); not resent, to avoid paying twice: use "
        "client.projects.reconcile(error) to look for it",
        request=creation,
        sent_at=sent_at,
        service_sent_after=service_at,
        cause=exc,
        method=request.method,
        path=request.path,
    )
    error.request_id = exc.request_id
    return error
