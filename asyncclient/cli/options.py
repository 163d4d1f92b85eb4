"""The command line's option types and help format: one rule per kind of value.

A bad value is refused by argparse itself (exit 2, the usage line, and the option's name
with the rule it broke), before anything is sent; every ``--help`` shows each option's
default.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "Help",
    "Parser",
    "RawHelp",
    "at_least",
    "count",
    "credits",
    "positive_seconds",
    "seconds",
]


class Help(argparse.HelpFormatter):
    """Descriptions as written, and ``(default: ...)`` after every option that has one
    (not after a flag, nor after an option whose absence is the default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            default in (None, False, argparse.SUPPRESS)
            or "%(default)" in text
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class RawHelp(argparse.RawDescriptionHelpFormatter, Help):
    """:class:`Help`, with the description and epilog as written (a table)."""


class Parser(argparse.ArgumentParser):
    """A parser whose help shows the defaults (:class:`Help`); its subcommands' parsers
    are of this class too."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", Help)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def _number(text: str, kind: Callable[[str], float]) -> float:
    try:
        value = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def at_least(low: float, *, whole: bool = False) -> Callable[[str], float]:
    """A type: a number (a whole one with ``whole``) of at least ``low``."""

    def parse(text: str) -> float:
        value = _number(text, int if whole else float)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {text}")
        return value

    parse.__name__ = "whole number" if whole else "number"
    return parse


def count(text: str) -> int:
    """A whole number of at least 1 (rows, requests in flight, videos)."""
    return int(at_least(1, whole=True)(text))


def credits(text: str) -> int:
    """A whole number of at least 0 (credits)."""
    return int(at_least(0, whole=True)(text))


def seconds(text: str) -> float:
    """A number of seconds, at least 0."""
    return at_least(0)(text)


def positive_seconds(text: str) -> float:
    """A number of seconds, more than 0."""
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value
