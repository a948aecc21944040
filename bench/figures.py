"""One line per benchmark figure: min, median and max of the samples next to the goal.

A figure whose median misses its goal says OVER. The benches print and never fail on a
figure (these machines are shared and noisy); ``make bench`` shows the lines in CI.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time


def line(name: str, samples: list[float], goal: float | None, unit: str = "s",
         note: str = "") -> str:
    """``name  min .. median .. max  goal <= g  ok|OVER`` (the median is judged)."""
    median = statistics.median(samples)
    text = (f"{name:34s} min {min(samples):.3f}  median {median:.3f}  max {max(samples):.3f} {unit}"
            f"  ({len(samples)} runs)")
    if goal is not None:
        text += f"  goal <= {goal:g} {unit}  {'ok' if median <= goal else 'OVER'}"
    return f"{text}  {note}" if note else text


def user_env() -> dict[str, str]:
    """This environment as a user's shell has it: Python may write and read its .pyc caches.

    Without them every run compiles our modules from source, which is not what a user
    waits for (pip compiles an installed package's caches; an editable one writes them on
    first use).
    """
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], runs: int, warm: int = 2) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``runs`` runs after ``warm`` untimed ones."""
    env = user_env()
    for _ in range(warm):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       check=False)
    wall, cpu = [], []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=env)
        _, _, usage = os.wait4(child.pid, 0)
        wall.append(time.perf_counter() - start)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return wall, cpu
