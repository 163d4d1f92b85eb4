"""Per-call options and raw responses: ``client.with_options(...)``, ``client.with_raw_response``.

:class:`ClientOptions` is a mixin of the client:

- ``client.with_options(timeout=5, max_retries=0)`` is a client sharing the original's
  session, limiter, poller, gate, statistics and fleet, whose requests take other
  timeouts and another retry policy. Closing it closes nothing it shares.
- ``client.with_raw_response.videos.get(video_id)`` is a :class:`RawResponse`: the reply's
  status, headers, rate-limit state and request id beside the parsed value.
"""

# ClientOptions reads the client's _caller, _transport and namespaces, and never imports
# the client.

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypedDict, TypeVar

import attrs
from attrs import frozen

from asyncclient.errors import ValidationError
from asyncclient.http.caller import Caller
from asyncclient.http.headers import RateLimitInfo, parse_rate_limit
from asyncclient.http.request_ids import RESPONSES, Sink
from asyncclient.http.transport import Timeouts
from asyncclient.retry import RetryPolicy

__all__ = ["CallOptions", "ClientOptions", "RawResponse", "RawResponses", "check_options"]

T = TypeVar("T")
C = TypeVar("C", bound="ClientOptions")


class CallOptions(TypedDict, total=False):
    """The keywords of ``with_options`` (see :meth:`ClientOptions.with_options`)."""

    timeout: float | None
    timeouts: Timeouts | None
    retry: RetryPolicy | None
    max_retries: int | None


@frozen(kw_only=True)
class RawResponse(Generic[T]):
    """What a call through ``client.with_raw_response`` got: the reply and its value.

    For a call that sent several requests (a creation reads the service's clock first),
    the reply is the last one, the one the value comes from.

    Attributes:
        status: The HTTP status.
        headers: The response headers (a case-insensitive mapping).
        request_id: The request's id: the service's, else the ``X-Request-Id`` sent.
        rate_limit: The rate-limit headers, parsed (limit, remaining, reset, ...).
        value: The parsed value, what the method returns when called plainly.
    """

    status: int
    headers: Mapping[str, str] = attrs.field(repr=False)
    request_id: str
    rate_limit: RateLimitInfo
    value: T = attrs.field(repr=False)

    def parse(self) -> T:
        """The parsed value (already parsed: the same object as :attr:`value`)."""
        return self.value


class RawNamespace:
    """A namespace of ``client.with_raw_response``: its request methods return a
    :class:`RawResponse` instead of the plain value."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Callable[..., Awaitable[RawResponse[Any]]]:
        method = getattr(self._target, name)
        if name.startswith("_") or not inspect.iscoroutinefunction(method):
            raise AttributeError(
                f"{type(self._target).__name__}.{name} is not a request method: only methods "
                "that send requests have a raw response (list_page, not list)"
            )
        return functools.partial(raw_call, method)

    def __repr__(self) -> str:
        return f"<raw {type(self._target).__name__}>"


class RawResponses:
    """``client.with_raw_response``: each namespace (``videos``, ``projects``, ...) with
    methods that return a :class:`RawResponse`."""

    __slots__ = ("_client",)

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> RawNamespace:
        target = getattr(self._client, name)
        if name.startswith("_") or not hasattr(target, "_caller"):
            raise AttributeError(f"{name!r} is not a namespace that sends requests")
        return RawNamespace(target)

    def __repr__(self) -> str:
        return f"<raw responses of {self._client!r}>"


async def raw_call(
    method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
) -> RawResponse[T]:
    """Await ``method(*args, **kwargs)`` and return its value with the reply it came from."""
    sink = Sink()
    token = RESPONSES.set(sink)
    try:
        value = await method(*args, **kwargs)
    finally:
        RESPONSES.reset(token)
        sink.open = False  # a task the call started (a poller) keeps the context: not ours
    if not sink.answers:
        raise RuntimeError(f"{method.__qualname__} sent no request to read a raw response of")
    response, request_id = sink.answers[-1]
    headers = response.headers
    return RawResponse(
        status=response.status,
        headers=headers,
        request_id=request_id,
        rate_limit=parse_rate_limit(headers),
        value=value,
    )


def check_options(
    timeout: float | None, timeouts: Timeouts | None, max_retries: int | None
) -> list[str]:
    """The problems of ``with_options``' arguments, each naming its option."""
    problems = []
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        problems.append(f"timeout: must be a number of seconds above 0, got {timeout!r}")
    if timeout is not None and timeouts is not None:
        problems.append("timeout: give timeout or timeouts, not both")
    if timeouts is not None and not isinstance(timeouts, Timeouts):
        problems.append(f"timeouts: must be a Timeouts, got {type(timeouts).__name__}")
    if max_retries is not None and (
        isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0
    ):
        problems.append(f"max_retries: must be an integer of 0 or more, got {max_retries!r}")
    return problems


class ClientOptions:
    """The client's ``with_options`` and ``with_raw_response`` (a mixin of the client)."""

    _caller: Caller
    _transport: Any
    videos: Any

    def with_options(
        self: C,
        *,
        timeout: float | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
    ) -> C:
        """A client that sends with other options and shares everything else.

        The new client shares this one's session (its connections), rate limiter,
        poller, statistics and fleet; only its requests' timeouts and retry policy
        differ. Closing it (``aclose``, ``async with``) closes nothing: the session and
        the poller are this client's. ``client.with_options(timeout=2).videos.get(id)``
        for one call.

        Args:
            timeout: Seconds for each whole attempt (connect and read included).
            timeouts: Per-attempt :class:`Timeouts` (instead of ``timeout``).
            retry: The retry policy.
            max_retries: Retries after the first attempt (0: never retry), on top of
                ``retry`` or this client's policy.

        Raises:
            ValidationError: A bad option, named.
        """
        problems = check_options(timeout, timeouts, max_retries)
        if problems:
            raise ValidationError(problems)
        policy = retry if retry is not None else self._caller.retry
        if max_retries is not None:
            policy = attrs.evolve(policy, attempts=max_retries + 1)
        if timeout is not None:
            base = self._caller.timeouts or self._transport.timeouts
            timeouts = attrs.evolve(base, total=float(timeout), read=None)
        caller = self._caller.derive(retry=policy, timeouts=timeouts)
        derived: C = object.__new__(_derived_class(type(self)))
        for name, value in vars(self).items():  # a namespace sending through the caller is remade
            if getattr(value, "_caller", None) is not self._caller:
                derived.__dict__[name] = value
        derived.__dict__["_caller"] = caller
        derived.__dict__["_parent"] = getattr(self, "_parent", self)
        videos = self.videos
        derived.__dict__["videos"] = type(videos)(caller, files=videos._files)
        return derived

    @property
    def with_raw_response(self) -> RawResponses:
        """Every namespace's request methods, returning a :class:`RawResponse` (status,
        headers, rate-limit state, request id and the parsed ``value``):
        ``raw = await client.with_raw_response.videos.get(video_id)``."""
        return RawResponses(self)


_DERIVED: dict[type[Any], type[Any]] = {}


def _derived_class(cls: type[C]) -> type[C]:
    """``cls`` for clients made by ``with_options``: closing one closes nothing shared,
    and its notification receiver is its original's."""
    made = _DERIVED.get(cls)
    if made is not None:
        return made

    class Derived(cls):  # type: ignore[valid-type,misc]
        async def aclose(self) -> None:
            """Closes nothing: the session, the poller and the fleet are the original
            client's (close that one)."""

        @property
        def webhooks(self) -> Any:
            return self._parent.webhooks

        def __repr__(self) -> str:
            return f"<{cls.__name__} {self.base_url} (with options)>"

    Derived.__name__ = Derived.__qualname__ = cls.__name__
    Derived.__module__ = cls.__module__
    _DERIVED[cls] = Derived
    return Derived
