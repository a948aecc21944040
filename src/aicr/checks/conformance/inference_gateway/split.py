"""The weighted split's bound and the chance that a fair random split would miss it.

Pure arithmetic. The upstream test's figures: 500 requests, weights 70/30, the
first backend's share within 5 percentage points. A data plane that picks each
backend at random with the configured probability still misses the bound now
and then; ``false_failure`` is that probability (exact binomial tail), printed
in evidence so a reviewer can weigh a failure. Deterministic balancers
(weighted round robin) hit the weights almost exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """The counts of the first backend that pass: ``low..high`` of ``requests``."""

    requests: int
    share: float  # the configured share of the first backend, 0..1
    tolerance: float  # in share units (0.05 = 5 percentage points)
    low: int
    high: int

    def holds(self, count: int) -> bool:
        """True when ``count`` of ``requests`` is inside the bound."""
        return self.low <= count <= self.high

    def __str__(self) -> str:
        return (
            f"{self.share:.0%} ± {self.tolerance * 100:g} points: {self.low}..{self.high} "
            f"of {self.requests}"
        )


def bound(requests: int, weights: tuple[int, int], tolerance_points: float) -> Bound:
    """The passing counts of the first backend for ``weights`` (e.g. 70/30) over ``requests``."""
    if requests <= 0 or min(weights) < 0 or sum(weights) <= 0:
        raise ValueError(f"no split of {requests} requests by weights {weights}")
    share = weights[0] / sum(weights)
    tolerance = tolerance_points / 100
    eps = 1e-9  # 500 * 0.65 is 324.99999999999994 in floating point
    low = max(0, math.ceil(requests * (share - tolerance) - eps))
    high = min(requests, math.floor(requests * (share + tolerance) + eps))
    return Bound(requests, share, tolerance, low, high)


def _log_pmf(n: int, k: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )


def false_failure(b: Bound) -> float:
    """P(count outside the bound) when each request picks the first backend with ``b.share``."""
    outside = [*range(b.low), *range(b.high + 1, b.requests + 1)]  # the two tails, summed
    return min(1.0, math.fsum(math.exp(_log_pmf(b.requests, k, b.share)) for k in outside))
