"""Run one loader call and hold it to the time and memory bound every fuzz example must meet."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Generous: on a loaded shared runner (load 14 on 2 cores) a 200 KB scalar took 10 s; a bomb or
# a hang takes minutes, so the bound still catches them.
MAX_SECONDS = 30.0
MAX_GROWTH_MB = 200.0  # peak RSS above the test process's at start; a bomb takes gigabytes
_BASELINE_MB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bounded(call: Callable[[], T]) -> T:
    """``call()``'s result (or exception), failing the example past either bound.

    Peak RSS is the process's high-water mark (cheap, unlike tracemalloc): a call
    that grows past the bound raises it, whatever ran before.
    """
    start = time.monotonic()
    try:
        return call()
    finally:
        seconds = time.monotonic() - start
        growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - _BASELINE_MB
        assert seconds < MAX_SECONDS, f"took {seconds:.1f}s"
        assert growth < MAX_GROWTH_MB, f"peak RSS grew {growth:.0f} MB"
