"""Go-style duration strings (``90s``, ``5m``, ``1h30m``), as AICR files use them."""

from __future__ import annotations

import re
from datetime import timedelta

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse(text: str) -> timedelta:
    """Parse ``1h30m``-style text; raises ValueError with the expected form."""
    text = text.strip()
    pos, total = 0, 0.0
    for match in _PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(f"invalid duration '{text}' (expected e.g. 90s, 5m, 1h30m)")
    return timedelta(seconds=total)


def format(value: timedelta) -> str:
    """Render a duration compactly (``5m``, ``1h30m``, ``45s``)."""
    seconds = int(value.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return out + (f"{secs}s" if secs or not out else "")
