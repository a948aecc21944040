"""One line per benchmark figure: min, median and max of the samples next to the goal.

A figure whose median misses its goal says OVER. The benches print and never fail on a
figure (these machines are shared and noisy); ``make bench`` shows the lines in CI.
"""

from __future__ import annotations

import statistics
import subprocess
import time


def line(name: str, samples: list[float], goal: float, unit: str = "s", note: str = "") -> str:
    """``name  min .. median .. max  goal <= g  ok|OVER`` (the median is judged)."""
    median = statistics.median(samples)
    verdict = "ok" if median <= goal else "OVER"
    text = (f"{name:34s} min {min(samples):.3f}  median {median:.3f}  max {max(samples):.3f} {unit}"
            f"  ({len(samples)} runs)  goal <= {goal:g} {unit}  {verdict}")
    return f"{text}  {note}" if note else text


def wall_times(cmd: list[str], runs: int, warm: int = 2) -> list[float]:
    """Wall seconds of ``runs`` runs of ``cmd`` after ``warm`` untimed ones (page cache, .pyc)."""
    for _ in range(warm):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return samples
