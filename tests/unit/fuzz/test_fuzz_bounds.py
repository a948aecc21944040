"""The fuzz examples' bounds: each call's own peak memory and its own CPU time."""

from __future__ import annotations

import time

import fuzz_bounds
import pytest
from fuzz_bounds import MAX_GROWTH_MB, bounded

_MB = 1024 * 1024


def test_a_call_that_allocates_past_the_bound_fails() -> None:
    with pytest.raises(AssertionError, match="peak RSS grew"):
        bounded(lambda: len(bytearray(int(MAX_GROWTH_MB + 100) * _MB)))


def test_what_an_earlier_call_allocated_does_not_count() -> None:
    held = bytearray(int(MAX_GROWTH_MB + 100) * _MB)  # raises the process's peak first
    del held
    assert bounded(lambda: 1 + 1) == 2


def _burn_cpu(seconds: float) -> None:
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_a_call_that_works_past_the_time_bound_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz_bounds, "MAX_CPU_SECONDS", 0.05)
    with pytest.raises(AssertionError, match="CPU seconds"):
        bounded(lambda: _burn_cpu(0.2))


def test_time_spent_waiting_for_the_cpu_does_not_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine stretches wall time, not the call's own CPU time (a sleep here)."""
    monkeypatch.setattr(fuzz_bounds, "MAX_CPU_SECONDS", 0.05)
    assert bounded(lambda: time.sleep(0.3)) is None
