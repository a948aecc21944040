"""Go-style duration strings (``90s``, ``5m``, ``1h30m``), as AICR files use them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse(text: str) -> timedelta:
    """Parse ``1h30m``-style text; raises ValueError with the expected form.

    Zero is refused too: every duration aicr reads bounds a wait, and a zero
    bound would end the wait before it starts.
    """
    text = text.strip()
    total = sum_parts(text, _PART, _UNITS)
    if total is None:
        raise ValueError(f"invalid duration '{text}' (expected e.g. 90s, 5m, 1h30m)")
    if total <= 0:
        raise ValueError(f"duration '{text}' must be above zero")
    return timedelta(seconds=total)


def sum_parts(text: str, part: re.Pattern[str], units: Mapping[str, float]) -> float | None:
    """Seconds in ``text`` written wholly as ``part`` matches (number, unit), else None."""
    pos, total = 0, 0.0
    for match in part.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * units[match.group(2)]
        pos = match.end()
    return total if text and pos == len(text) else None


def field(value: object) -> object:
    """A pydantic ``mode="before"`` validator of a duration field: text as :func:`parse`.

    A number is seconds (pydantic's reading); zero or below is refused like ``0s``.
    """
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
        raise ValueError(f"duration {value} must be above zero")
    return value


def format(value: timedelta) -> str:
    """Render a duration compactly (``5m``, ``1h30m``, ``45s``)."""
    seconds = int(value.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return out + (f"{secs}s" if secs or not out else "")
