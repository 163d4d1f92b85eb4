"""A creation request checked and serialised once: what is fingerprinted, journalled and sent.

:func:`check_creation` runs the spec's rules on a request and, when it passes,
builds the HTTP request (the body's bytes) a single time. The batch fingerprints
those bytes for its journal and sends the very same request; ``projects.create``
goes through the same two steps.
"""

from __future__ import annotations

import hashlib

from attrs import field, frozen

from asyncclient._convert import unstructure
from asyncclient.errors import ValidationError
from asyncclient.http.protocol import Request, build_request
from asyncclient.models.requests import CreationRequest
from asyncclient.validation import problems

__all__ = ["PreparedCreation", "check_creation", "prepare_creation"]


@frozen
class PreparedCreation:
    """A valid creation request and the HTTP request that carries it."""

    request: CreationRequest
    wire: Request = field(repr=False)
    fingerprint: str = field(init=False)
    """A digest of the body sent: a journal tells by it whether a row changed."""

    @fingerprint.default
    def _digest(self) -> str:
        return hashlib.sha256(self.wire.body or b"").hexdigest()[:16]


def check_creation(
    request: CreationRequest, *, failures: bool = False
) -> tuple[PreparedCreation | None, list[str]]:
    """The prepared request, or None and every problem the spec's rules find.

    Args:
        request: The creation request.
        failures: Also refuse what the service accepts but whose generation then
            fails (a template placeholder without a value): a batch does, so as not
            to pay for such a row; a single creation sends it, as the service takes it.
    """
    found = problems(request, failures=failures)
    if found:
        return None, found
    try:
        wire = build_request("POST", request.PATH, json_body=unstructure(request))
    except ValidationError as unsendable:  # text that is not Unicode, a NaN, ...
        return None, unsendable.errors
    return PreparedCreation(request, wire), []


def prepare_creation(request: CreationRequest) -> PreparedCreation:
    """Check and serialise ``request``.

    Raises:
        ValidationError: Listing every problem found.
    """
    prepared, found = check_creation(request)
    if prepared is None:
        raise ValidationError(found)
    return prepared
