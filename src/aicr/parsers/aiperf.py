"""AIPerf's summary export, ``profile_export_aiperf.json``: the figures a benchmark ends with.

One JSON object: ``aiperf_version``; per metric a block with ``unit`` and ``avg``,
``p50``, ``p90``, ``p99`` ... (``output_token_throughput`` in tokens/sec,
``time_to_first_token``, ``inter_token_latency``, ``request_latency`` in ms,
``request_count`` and ``error_request_count`` in requests, ``benchmark_duration``
in s); ``error_summary`` lists failed requests by error; ``was_cancelled`` /
``is_complete`` say whether the run ended as planned. Pure.

Releases of late 2025 (before 0.13; ``examples/artifacts/run1`` of ai-dynamo/aiperf)
write another layout: the metrics under ``records``, keyed by short tags (``ttft``), with
no ``aiperf_version``. It is refused by name, not read: its figures are not checked
against the pinned 0.13 here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from aicr.parsers import ParseError


@dataclass(frozen=True)
class Percentiles:
    """One latency metric in ms."""

    avg: float
    p50: float
    p90: float
    p99: float

    def __str__(self) -> str:
        return f"avg {self.avg:.2f}, p50 {self.p50:.2f}, p90 {self.p90:.2f}, p99 {self.p99:.2f} ms"


@dataclass(frozen=True)
class Summary:
    """The figures of one export."""

    version: str
    output_token_throughput: float  # tok/s
    ttft: Percentiles
    itl: Percentiles
    request_latency: Percentiles
    request_count: int
    errors: int
    error_summary: str
    duration_s: float

    @property
    def ttft_p99_ms(self) -> float:
        """Time to first token, p99 (ms)."""
        return self.ttft.p99

    @property
    def itl_p99_ms(self) -> float:
        """Inter-token latency, p99 (ms)."""
        return self.itl.p99

    @property
    def request_latency_p99_ms(self) -> float:
        """Request latency, p99 (ms)."""
        return self.request_latency.p99


def _number(data: dict[str, Any], metric: str, stat: str) -> float:
    block = data.get(metric)
    value = block.get(stat) if isinstance(block, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ParseError(f"the summary has no number at {metric}.{stat}")
    return float(value)


def _optional(data: dict[str, Any], metric: str, stat: str = "avg") -> float:
    try:
        return _number(data, metric, stat)
    except ParseError:
        return 0.0


def _percentiles(data: dict[str, Any], metric: str) -> Percentiles:
    return Percentiles(*(_number(data, metric, s) for s in ("avg", "p50", "p90", "p99")))


def _errors(data: dict[str, Any]) -> str:
    return "; ".join(
        f"{e.get('count', '?')}x {((e.get('error_details') or {}).get('message')) or e}"
        if isinstance(e, dict)
        else str(e)
        for e in data.get("error_summary") or []
    )


def parse(text: str) -> Summary:
    """The figures of a ``profile_export_aiperf.json``; ParseError naming what is missing."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"the AIPerf summary is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ParseError("the AIPerf summary is not a JSON object")
    if isinstance(data.get("records"), dict) and "output_token_throughput" not in data:
        raise ParseError(
            "an AIPerf export in the layout of releases before 0.13 (metrics under `records`, "
            "no `aiperf_version`); the check reads AIPerf 0.13's export"
        )
    if data.get("was_cancelled") or data.get("is_complete") is False:
        raise ParseError("AIPerf reports the benchmark cancelled or incomplete")
    return Summary(
        version=str(data.get("aiperf_version") or "unknown"),
        output_token_throughput=_number(data, "output_token_throughput", "avg"),
        ttft=_percentiles(data, "time_to_first_token"),
        itl=_percentiles(data, "inter_token_latency"),
        request_latency=_percentiles(data, "request_latency"),
        request_count=int(_number(data, "request_count", "avg")),
        errors=int(_optional(data, "error_request_count")),
        error_summary=_errors(data),
        duration_s=_optional(data, "benchmark_duration"),
    )
