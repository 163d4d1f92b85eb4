"""Whether the service can be reached: how long every attempt has gone unanswered.

A batch must end when the service goes away (``BatchSettings.unreachable_after``), not
poll and retry until someone presses Ctrl-C. The client's :class:`Reach` is told of
every attempt's end by the request path: a reply of the service is *heard*; a
connection that could not be made, a reset, a timeout, or a gateway's 502, 503 or 504
(a proxy answering for a service behind it that it cannot reach) is *missed*.
:meth:`Reach.silent_for` is how long attempts have been missed since the last one heard
(0 when the last attempt was heard, or none was made).
"""

from __future__ import annotations

from asyncclient._clock import SYSTEM_CLOCK, Clock
from asyncclient.errors import APIConnectionError, APIError, APIStatusError

__all__ = ["GATEWAY_STATUSES", "Reach", "unreachable"]

GATEWAY_STATUSES = frozenset({502, 503, 504})
"""Statuses a gateway answers for a service it cannot reach."""


def unreachable(error: BaseException) -> bool:
    """Whether ``error`` says the service was not reached (rather than answering)."""
    if isinstance(error, APIConnectionError):
        return True
    return isinstance(error, APIStatusError) and error.status_code in GATEWAY_STATUSES


class Reach:
    """Attempts heard and missed, on the client's clock.

    Args:
        clock: Times the silence.
    """

    __slots__ = ("_clock", "_missed_since", "heard_count", "missed_count")

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._missed_since: float | None = None
        self.heard_count = 0
        self.missed_count = 0

    def heard(self) -> None:
        """The service answered an attempt."""
        self.heard_count += 1
        self._missed_since = None

    def missed(self) -> None:
        """An attempt got no answer of the service."""
        self.missed_count += 1
        if self._missed_since is None:
            self._missed_since = self._clock.monotonic()

    def failed(self, error: APIError) -> None:
        """An attempt ended in ``error``: missed when it says the service was not
        reached, heard otherwise (a refusal is an answer)."""
        if unreachable(error):
            self.missed()
        else:
            self.heard()

    def silent_for(self) -> float:
        """Seconds since the first attempt missed after the last one heard (0 when the
        last attempt was heard)."""
        if self._missed_since is None:
            return 0.0
        return max(0.0, self._clock.monotonic() - self._missed_since)
