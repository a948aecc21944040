"""The outputs captured from the real tools on real hardware (``tests/data/real/<tool>/``)."""

from __future__ import annotations

from pathlib import Path

REAL = Path(__file__).parent / "data" / "real"


def capture(tool: str, name: str) -> str:
    """The text of one capture, as its README line says where it comes from."""
    return (REAL / tool / name).read_text()
