"""One line of a batch's progress made to fit a terminal's width: its figures ranked by
how much they matter, the bar narrowed, the least useful figures dropped first."""

from __future__ import annotations

from attrs import frozen

from asyncclient.cli.terminal import bar

__all__ = ["MIN_BAR", "RANKS", "Part", "fitted", "joined"]

MIN_BAR = 8
"""Characters inside the narrowest bar, before it goes altogether."""
RANKS = {
    "finished": 0,
    "completed": 1,
    "waiting": 1,
    "failed": 2,
    "outcome": 2,
    "bar": 3,
    "eta": 4,
    "processing": 5,
    "pending": 6,
    "failed 0": 7,
    "elapsed": 8,
    "rate": 9,
    "submitted": 10,
    "before": 11,
}
"""How much each figure matters on a narrow terminal (0 most): a line too long for it
drops the figure of the highest rank first (``failed 0`` is a failed count of 0)."""


@frozen
class Part:
    """One figure of a progress line: its kind (a key of :data:`RANKS`) and text."""

    kind: str
    text: str
    done: float = 0.0
    """The bar's fraction (the bar only: its text is drawn at the width left to it)."""


def joined(parts: list[Part], bar_width: int) -> str:
    """The figures side by side, the bar ``bar_width`` characters inside."""
    return "  ".join(
        bar(part.done, bar_width) if part.kind == "bar" else part.text for part in parts
    )


def fitted(parts: list[Part], bar_width: int, limit: int) -> str:
    """The line in at most ``limit`` characters: figures dropped by rank until it fits
    with the bar at its narrowest (:data:`MIN_BAR`), then the bar widened into what is
    left, up to ``bar_width``; what still overflows is cut."""
    narrowest = min(MIN_BAR, bar_width)
    kept = list(parts)
    text = joined(kept, narrowest)
    while len(text) > limit and any(RANKS[part.kind] for part in kept):
        kept.remove(max(kept, key=lambda part: RANKS[part.kind]))
        text = joined(kept, narrowest)
    if len(text) > limit:
        return text[: limit - 3] + "..." if limit > 3 else text[:limit]
    if any(part.kind == "bar" for part in kept):
        text = joined(kept, narrowest + min(bar_width - narrowest, limit - len(text)))
    return text
