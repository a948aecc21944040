"""Run one loader call and hold it to the time and memory bound every fuzz example must meet."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# Generous: on a loaded shared runner (load 14 on 2 cores) a 200 KB scalar took 10 s; a bomb or
# a hang takes minutes, so the bound still catches them.
MAX_SECONDS = 30.0
MAX_GROWTH_MB = 200.0  # the call's own peak above the RSS it started at; a bomb takes gigabytes

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_mb(field: str) -> float:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise AssertionError(f"{_STATUS} has no {field}")


def bounded(call: Callable[[], T]) -> T:
    """``call()``'s result (or exception), failing the example past either bound.

    The memory bound is this call's own: the kernel's high-water mark (VmHWM) is
    reset to the current RSS before the call (writing 5 to clear_refs), so what
    earlier tests or examples in the same process allocated never counts.
    """
    _CLEAR_REFS.write_text("5")
    before = _status_mb("VmRSS")
    start = time.monotonic()
    try:
        return call()
    finally:
        seconds = time.monotonic() - start
        growth = _status_mb("VmHWM") - before
        assert seconds < MAX_SECONDS, f"took {seconds:.1f}s"
        assert growth < MAX_GROWTH_MB, f"peak RSS grew {growth:.0f} MB"
