"""The stand-in's `/metrics`: the names, types, help and labels vLLM v0.11.0 serves.

vLLM's V1 engine registers its Prometheus metrics in `vllm/v1/metrics/loggers.py`
(`PrometheusStatLogger`); the version the project pins is v0.11.0
(`docker.io/vllm/vllm-openai:v0.11.0` in aicr/checks/images.yaml), whose file says
of the renamed cache gauge "Deprecated in 0.9.2 - Renamed as vllm:kv_cache_usage_perc
/ With 0.11.x you can enable with --show-hidden-metrics-for-version=0.10": so
`vllm:gpu_cache_usage_perc` and `vllm:gpu_prefix_cache_*` are hidden by default,
while `vllm:time_per_output_token_seconds` ("Deprecated in 0.11 - Renamed as
vllm:inter_token_latency_seconds") is still served beside its successor. Every
series carries `model_name` (the served model name) and `engine` ("0"); counters are
named without `_total` there and served with it, as prometheus_client does.
Histogram buckets are vLLM's own. Modelled from the stand-in's requests: running
requests (nothing waits: no batch limit), KV-cache usage as the running requests'
tokens over `--kv-cache-tokens`, prompt and generation token counters, successes by
finish reason, and the per-request histograms (TTFT, inter-token latency, end to
end, prompt and generation tokens). Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

ENGINE = "0"
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
               7.5, 10.0, 20.0, 40.0, 80.0)  # fmt: skip
LATENCY_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
                   60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)  # fmt: skip
FINISH_REASONS = ("stop", "length", "abort")  # vllm.v1.engine.FinishReason, as str()


def one_two_five(limit: int) -> tuple[float, ...]:
    """vLLM's `build_1_2_5_buckets`: 1, 2, 5, 10, 20, 50, ... up to `limit`."""
    out: list[float] = []
    exponent = 0
    while True:
        for m in (1, 2, 5):
            value = m * 10**exponent
            if value > limit:
                return tuple(out)
            out.append(float(value))
        exponent += 1


@dataclass
class Histogram:
    """One histogram series: cumulative bucket counts, sum and count."""

    buckets: Sequence[float]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        """Record one value."""
        if not self.counts:
            self.counts = [0] * len(self.buckets)
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1
        self.total += value
        self.n += 1


@dataclass(frozen=True)
class Family:
    """A metric as vLLM registers it: name (counters without `_total`), type, help."""

    name: str
    kind: str
    help: str
    buckets: Sequence[float] = ()


def families(max_model_len: int) -> tuple[Family, ...]:
    """Every family the stand-in serves, in vLLM v0.11.0's registration order."""
    tokens = one_two_five(max_model_len)
    return (
        Family("vllm:num_requests_running", "gauge",
               "Number of requests in model execution batches."),
        Family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
        Family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."),
        Family("vllm:prompt_tokens", "counter", "Number of prefill tokens processed."),
        Family("vllm:generation_tokens", "counter", "Number of generation tokens processed."),
        Family("vllm:request_success", "counter", "Count of successfully processed requests."),
        Family("vllm:request_prompt_tokens", "histogram", "Number of prefill tokens processed.",
               tokens),
        Family("vllm:request_generation_tokens", "histogram",
               "Number of generation tokens processed.", tokens),
        Family("vllm:time_to_first_token_seconds", "histogram",
               "Histogram of time to first token in seconds.", TTFT_BUCKETS),
        Family("vllm:time_per_output_token_seconds", "histogram",
               "Histogram of time per output token in seconds."
               "DEPRECATED: Use vllm:inter_token_latency_seconds instead.", ITL_BUCKETS),
        Family("vllm:inter_token_latency_seconds", "histogram",
               "Histogram of inter-token latency in seconds.", ITL_BUCKETS),
        Family("vllm:e2e_request_latency_seconds", "histogram",
               "Histogram of e2e request latency in seconds.", LATENCY_BUCKETS),
    )  # fmt: skip


def _number(value: float) -> str:
    return repr(float(value))


class Metrics:
    """The server's counters, gauges and histograms, updated as requests run."""

    def __init__(self, model: str, max_model_len: int = 4096, kv_tokens: int = 65536) -> None:
        self.model = model
        self.kv_tokens = kv_tokens
        self.families = families(max_model_len)
        self.lock = threading.Lock()
        self.running: dict[int, int] = {}  # request -> tokens it holds in the KV cache
        self.counters: dict[tuple[str, str], float] = {}
        self.histograms = {f.name: Histogram(f.buckets) for f in self.families if f.buckets}

    def started(self, request: int, prompt_tokens: int) -> None:
        """A request entered execution."""
        with self.lock:
            self.running[request] = prompt_tokens

    def token(self, request: int, gap: float, first: bool) -> None:
        """A request produced a token `gap` seconds after the previous (or its arrival)."""
        with self.lock:
            self.running[request] = self.running.get(request, 0) + 1
            if first:
                self.histograms["vllm:time_to_first_token_seconds"].observe(gap)
            else:
                self.histograms["vllm:inter_token_latency_seconds"].observe(gap)
                self.histograms["vllm:time_per_output_token_seconds"].observe(gap)

    def finished(
        self, request: int, prompt_tokens: int, tokens: int, reason: str, seconds: float
    ) -> None:
        """A request ended (reason: stop, length or abort)."""
        with self.lock:
            self.running.pop(request, None)
            for name, value in (("vllm:prompt_tokens", prompt_tokens),
                                ("vllm:generation_tokens", tokens)):  # fmt: skip
                self.counters[(name, "")] = self.counters.get((name, ""), 0) + value
            key = ("vllm:request_success", reason)
            self.counters[key] = self.counters.get(key, 0) + 1
            self.histograms["vllm:request_prompt_tokens"].observe(prompt_tokens)
            self.histograms["vllm:request_generation_tokens"].observe(tokens)
            self.histograms["vllm:e2e_request_latency_seconds"].observe(seconds)

    def render(self) -> str:
        """The Prometheus text page."""
        base = f'model_name="{self.model}",engine="{ENGINE}"'
        with self.lock:
            usage = min(1.0, sum(self.running.values()) / self.kv_tokens)
            gauges = {
                "vllm:num_requests_running": float(len(self.running)),
                "vllm:num_requests_waiting": 0.0,
                "vllm:kv_cache_usage_perc": usage,
            }
            lines: list[str] = []
            for f in self.families:
                exposed = f"{f.name}_total" if f.kind == "counter" else f.name
                lines += [f"# HELP {exposed} {f.help}", f"# TYPE {exposed} {f.kind}"]
                if f.kind == "gauge":
                    lines.append(f"{f.name}{{{base}}} {_number(gauges[f.name])}")
                elif f.name == "vllm:request_success":
                    for reason in FINISH_REASONS:
                        value = self.counters.get((f.name, reason), 0)
                        lines.append(
                            f'{exposed}{{{base},finished_reason="{reason}"}} {_number(value)}'
                        )
                elif f.kind == "counter":
                    value = self.counters.get((f.name, ""), 0)
                    lines.append(f"{exposed}{{{base}}} {_number(value)}")
                else:
                    h = self.histograms[f.name]
                    counts = h.counts or [0] * len(h.buckets)
                    for bound, count in zip(h.buckets, counts, strict=True):
                        le = _number(bound)
                        lines.append(f'{f.name}_bucket{{{base},le="{le}"}} {_number(count)}')
                    lines.append(f'{f.name}_bucket{{{base},le="+Inf"}} {_number(h.n)}')
                    lines.append(f"{f.name}_count{{{base}}} {_number(h.n)}")
                    lines.append(f"{f.name}_sum{{{base}}} {_number(h.total)}")
        return "\n".join(lines) + "\n"
