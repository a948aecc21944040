"""The fuzz examples' memory bound is each call's own peak, whatever ran before it."""

from __future__ import annotations

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
