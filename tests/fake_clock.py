"""A clock for tests: time passes only in `sleep`, so a loaded machine changes no outcome."""

from __future__ import annotations


class Clock:
    """Stands in for time.monotonic/time.sleep: waiting costs fake seconds, not real ones."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
