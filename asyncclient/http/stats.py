"""What a client has sent so far: requests, attempts, retries, 429s."""

from __future__ import annotations

__all__ = ["ClientStats"]


class ClientStats:
    """What a client has sent so far (the demo's summary and benchmarks read it)."""

    __slots__ = ("attempts", "rate_limited", "requests", "retries")

    def __init__(self) -> None:
        self.requests = 0
        """Logical requests (each retried request counts once)."""
        self.attempts = 0
        """HTTP attempts, retries included."""
        self.retries = 0
        """Failed attempts that were tried again."""
        self.rate_limited = 0
        """429 answers received."""

    def __repr__(self) -> str:
        return (
            f"<ClientStats requests={self.requests} attempts={self.attempts} "
            f"retries={self.retries} 429s={self.rate_limited}>"
        )
