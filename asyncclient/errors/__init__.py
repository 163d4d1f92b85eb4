"""The exception tree of asyncclient.

::

    Exception
     +-- APIError                          anything the service or the wire did wrong
     |    +-- APIConnectionError           no response: refused, reset, DNS, TLS
     |    |    +-- APITimeoutError         no response in time
     |    +-- APIResponseValidationError   a response we cannot decode (or over the size cap)
     |    +-- AmbiguousCreationError       a creation that may or may not have been processed:
     |                                     reset or timed out after sending, any 5xx (501
     |                                     and 503 too), or a 2xx unreadable or without ids
     |    +-- ReconciliationError          a look for what such a creation made proves
     |                                     nothing (several match, the service's clock
     |                                     unknown, the list not read back to the request)
     |    +-- VideoFailedError             a video the service reports FAILED
     |    +-- FleetError                   the fleet's shared Redis failed or answered oddly
     |    +-- APIStatusError               an error status (or ``success: false``)
     |         +-- BadRequestError             400
     |         +-- AuthenticationError         401
     |         +-- PermissionDeniedError       403
     |         +-- NotFoundError               404
     |         +-- RateLimitError              429
     |         +-- InternalServerError         >= 500
     |         +-- InsufficientCreditsError    "not enough credits", whatever its status
     +-- JournalError                      a batch journal that cannot be used safely
     |    +-- JournalLockedError           another run holds it (one runner per journal)
     |    +-- JournalKeyError              it belongs to another API key
     |    +-- JournalWriteError            a record could not be written whole: the run stops
     +-- TimeoutError
     |    +-- JobTimeoutError              a job did not finish within its wait
     +-- ValueError
          +-- ValidationError              client-side: bad input, raised before any request
               +-- RowChangedError         a row is not the one the batch's journal sent

Every error keeps its details in attributes, not only in its text; no text or repr
ever carries the API key. Every :class:`APIError` raised for a request carries its
``request_id``: the id the service's reply named, else the one the SDK sent in
``X-Request-Id`` (None only where no request was made).

A creation costs credits and has no idempotency key: it is resent only after a 429 (the
service's own limiter refused it) or a failure before any byte left. Anything else that
leaves its fate open is an :class:`AmbiguousCreationError`, reconciled with the service
and never resent blindly; "a 503 means nothing happened" is a guess, since a proxy in
front of the service answers 503 for a request it may have forwarded.
"""

# May import: nothing of the package (the journal's errors live in ``errors.journal``).

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asyncclient.errors.journal import (
    JournalError,
    JournalKeyError,
    JournalLockedError,
    JournalWriteError,
)

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AmbiguousCreationError",
    "AuthenticationError",
    "BadRequestError",
    "FleetError",
    "InsufficientCreditsError",
    "InternalServerError",
    "JobTimeoutError",
    "JournalError",
    "JournalKeyError",
    "JournalLockedError",
    "JournalWriteError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ReconciliationError",
    "RowChangedError",
    "ValidationError",
    "VideoFailedError",
    "status_error_class",
]


class APIError(Exception):
    """Base of every error that comes from talking to the service.

    Attributes:
        message: A human-readable description (the server's message when there is one).
        method: The HTTP method of the request, when known.
        path: The request path (no query string, never the key), when known.
        request_id: The request's id: the service's request-id header when its reply
            had one, else the ``X-Request-Id`` the SDK sent (the same on every retry);
            None only when no request was made.
    """

    request_id: str | None = None

    def __init__(self, message: str, *, method: str | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path

    def __str__(self) -> str:
        where = f" ({self.method} {self.path})" if self.method and self.path else ""
        return f"{self.message}{where}"


class APIConnectionError(APIError):
    """The request got no response: the connection failed, was reset or dropped.

    Attributes:
        request_sent: True when some bytes of the request had left the client
            before the failure, so the service may have processed it.
    """

    def __init__(
        self,
        message: str = "connection error",
        *,
        method: str | None = None,
        path: str | None = None,
        request_sent: bool = True,
    ):
        super().__init__(message, method=method, path=path)
        self.request_sent = request_sent


class APITimeoutError(APIConnectionError):
    """The request got no response within its timeout."""


class APIResponseValidationError(APIError):
    """The response could not be decoded into the expected shape.

    Attributes:
        body: The raw response body.
        status_code: The HTTP status of the response.
        errors: One ``<field path>: <reason>`` line per problem found.
    """

    def __init__(
        self,
        message: str,
        *,
        body: bytes | str | None = None,
        status_code: int | None = None,
        errors: Sequence[str] = (),
        method: str | None = None,
        path: str | None = None,
    ):
        super().__init__(message, method=method, path=path)
        self.body = body
        self.status_code = status_code
        self.errors = list(errors)


class APIStatusError(APIError):
    """The service answered with an error status or ``success: false``.

    Attributes:
        status_code: The HTTP status.
        body: The decoded JSON body when it was JSON, else the raw text.
        headers: The response headers (a case-insensitive mapping).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        method: str | None = None,
        path: str | None = None,
    ):
        super().__init__(message, method=method, path=path)
        self.status_code = status_code
        self.body = body
        self.headers: Mapping[str, str] = headers if headers is not None else {}

    def __str__(self) -> str:
        return f"{self.status_code}: {super().__str__()}"


class BadRequestError(APIStatusError):
    """400: invalid parameters or missing required fields."""


class AuthenticationError(APIStatusError):
    """401: missing or invalid API key."""


class PermissionDeniedError(APIStatusError):
    """403: no permission or subscription, or another team's resource."""


class NotFoundError(APIStatusError):
    """404: the resource does not exist or is not accessible."""


class RateLimitError(APIStatusError):
    """429: the plan's rate limit was exceeded.

    Attributes:
        retry_after: Seconds to wait, from ``Retry-After`` (seconds or HTTP date).
        limit: ``X-RateLimit-Limit``, requests per minute.
        remaining: ``X-RateLimit-Remaining``.
        reset: ``X-RateLimit-Reset``, a Unix timestamp.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 429,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        method: str | None = None,
        path: str | None = None,
        retry_after: float | None = None,
        limit: int | None = None,
        remaining: int | None = None,
        reset: float | None = None,
    ):
        super().__init__(
            message, status_code=status_code, body=body, headers=headers, method=method, path=path
        )
        self.retry_after = retry_after
        self.limit = limit
        self.remaining = remaining
        self.reset = reset


class InternalServerError(APIStatusError):
    """500 or above: the service failed."""


class InsufficientCreditsError(APIStatusError):
    """The balance does not cover the creation ("not enough credits", any status)."""


class AmbiguousCreationError(APIError):
    """A creation request failed in a way that leaves open whether it was processed.

    The service has no idempotency key and every creation costs credits, so the
    SDK never resends it blindly: the connection was reset or timed out after the
    request was sent, the service answered any 5xx (501 and 503 included: a gateway's
    502, 503 or 504 may follow a forwarded request), or a success came back unreadable,
    over the body size cap, or naming neither a project nor a video id.
    ``await client.projects.reconcile(error)`` looks for the project.

    Attributes:
        request: The creation request that was sent.
        format: Which creation endpoint (``ugc_ads``, ``template``, ...).
        name: The project's name (a template's title), if it had one.
        metadata: The request's metadata, if any.
        sent_at: When the request was sent (timezone-aware, UTC), by this client's clock.
        service_sent_after: A time the service's own clock had reached before the request
            left (from the ``Date`` of its earlier responses), or None when unknown: a
            project made by this request has a ``createdAt`` no earlier than it.
        cause: The error that made it ambiguous (also ``__cause__``).
    """

    def __init__(
        self,
        message: str,
        *,
        request: Any,
        sent_at: Any,
        cause: APIError,
        method: str | None = None,
        path: str | None = None,
        service_sent_after: Any = None,
    ):
        super().__init__(message, method=method, path=path)
        self.request = request
        self.service_sent_after = service_sent_after
        self.format: str | None = getattr(request, "FORMAT", None)
        self.name: str | None = getattr(request, "name", None)
        self.metadata: Any = getattr(request, "metadata", None)
        self.sent_at = sent_at
        self.cause = cause


class ReconciliationError(APIError):
    """A look for an ambiguous creation's project that cannot prove what it made.

    Raised by ``client.projects.reconcile(error)``: "don't know", never "nothing was
    made" (do not resend on it). ``reason``: ``"several"`` (projects of its name made
    since it left), ``"no_service_clock"`` (the service's clock never read before it
    left, and no ``skew``), ``"page_cap"`` (``max_pages`` read before the list passed
    its send time). ``pages``: pages read; ``project_ids``: the matching projects.
    """

    def __init__(
        self, message: str, *, reason: str, pages: int = 0, project_ids: Sequence[str] = ()
    ):
        super().__init__(message, method="GET", path="/v1/video/list")
        self.reason = reason
        self.pages = pages
        self.project_ids = list(project_ids)


class VideoFailedError(APIError):
    """The service reports the video FAILED.

    Attributes:
        video_id: The failed video.
        project_id: Its project, when known.
        video: The video record as last read.
        request_id: The id of the request that read it FAILED, when it was read.
    """

    def __init__(
        self, message: str, *, video_id: str, project_id: str | None = None, video: Any = None
    ):
        super().__init__(message, method="GET", path=f"/v1/video/{video_id}")
        self.video_id = video_id
        self.project_id = project_id
        self.video = video
        read_by = getattr(video, "request_id", None)  # the read that saw it FAILED
        if isinstance(read_by, str):
            self.request_id = read_by

    def __str__(self) -> str:
        return f"video {self.video_id} failed: {self.message}"


class FleetError(APIError):
    """The fleet's shared Redis (``redis=``) failed: unreachable, timed out, out of
    memory, read-only, or an answer of an unexpected shape.

    Raised where the fleet cannot fall back to what a lone process does; the Redis
    client's own error is ``__cause__``.
    """


class JobTimeoutError(TimeoutError):
    """A job was still unfinished when its wait ran out; the service's job goes on.

    Attributes:
        video_id: The job's video, when known.
        project_id: The job's project, when known.
        status: The last status seen (``STARTED``, or ``None`` if never read).
        progress: The last progress seen.
        timeout: The wait, in seconds.
    """

    def __init__(
        self,
        *,
        video_id: str | None,
        project_id: str | None,
        status: str | None,
        progress: int | None,
        timeout: float,
    ):
        what = video_id or f"project {project_id}"
        shown = "?" if progress is None else progress
        super().__init__(
            f"video {what} not finished after {timeout:g} s "
            f"(last status {status or 'unknown'}, progress {shown})"
        )
        self.video_id = video_id
        self.project_id = project_id
        self.status = status
        self.progress = progress
        self.timeout = timeout


class ValidationError(ValueError):
    """Bad input, found on the client before any request was sent.

    Attributes:
        errors: Every problem found, each ``<field path>: <reason>``.
    """

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        if len(self.errors) == 1:
            text = self.errors[0]
        else:
            text = f"{len(self.errors)} problems:\n" + "\n".join(f"  {e}" for e in self.errors)
        super().__init__(text)


class RowChangedError(ValidationError):
    """A batch's row is not the row its journal recorded as sent: the rows changed since
    the journal's run, or the journal is of a batch of other rows with the same template
    (or the same ``batch_id``). Nothing is sent: resume with the rows the journal was
    made with, or start a new batch with another journal.

    Attributes:
        index: The row (0 for the first).
    """

    def __init__(self, index: int):
        self.index = index
        super().__init__(
            [
                f"rows[{index}]: not the row the journal recorded as sent (the rows changed "
                "since, or the journal is of another batch): resume with the rows the journal "
                "was made with, or start a new batch with another journal"
            ]
        )


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


def status_error_class(status: int, message: str) -> type[APIStatusError]:
    """Return the exception class for an error response.

    Args:
        status: The HTTP status code.
        message: The server's message; "not enough credits" wins over the status.

    Returns:
        The most specific subclass of :class:`APIStatusError`.
    """
    if "not enough credits" in message.lower():
        return InsufficientCreditsError
    if status >= 500:
        return InternalServerError
    return _BY_STATUS.get(status, APIStatusError)
