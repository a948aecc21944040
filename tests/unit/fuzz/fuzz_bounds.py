"""Run one loader call and hold it to the time and memory bound every fuzz example must meet."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# CPU seconds of this process, not wall time: a loaded machine (load 20 on 2 cores) stretched
# one recipe example to 47-58 s of wall time while its own work stayed small, and failed it.
# A bomb or a runaway parse burns CPU for minutes, so this bound still catches them; a call
# that blocks without working is pytest-timeout's to catch.
MAX_CPU_SECONDS = 30.0
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
    start = time.process_time()
    try:
        return call()
    finally:
        seconds = time.process_time() - start
        growth = _status_mb("VmHWM") - before
        assert seconds < MAX_CPU_SECONDS, f"took {seconds:.1f} CPU seconds"
        assert growth < MAX_GROWTH_MB, f"peak RSS grew {growth:.0f} MB"
