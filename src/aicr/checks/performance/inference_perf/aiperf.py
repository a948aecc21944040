"""The load generator, NVIDIA AIPerf: how the check runs it, and what its summary says.

The generator runs as a pod. Its container prints AIPerf's own summary file,
``profile_export_aiperf.json``, between two sentinel lines after AIPerf exits
(AIPerf's console output goes to stderr before that), so the check reads the
figures from the file AIPerf writes, not from its console table. Output token
counts are the server's own (``--use-server-token-count``), so the tokenizer
only shapes the synthetic prompts; it must be in the image's Hugging Face
cache, since the pod runs with ``HF_HUB_OFFLINE=1`` and never downloads one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

SENTINEL = "===AICR-AIPERF-SUMMARY==="
ARTIFACTS = "/tmp/aiperf"
SUMMARY = f"{ARTIFACTS}/profile_export_aiperf.json"
HEALTH_FAILED = 3  # the health probe's exit code when the endpoint never served a completion

# Runs AIPerf with the arguments after the script, then prints its summary framed by
# the sentinel; exits with AIPerf's code. A summary left from an earlier run (a
# restarted container keeps its volumes) is removed first, so it is never read as new.
SCRIPT = (
    f'rm -f {SUMMARY}; aiperf profile "$@" >&2; rc=$?; echo {SENTINEL}; '
    f"cat {SUMMARY} 2>/dev/null; echo; echo {SENTINEL}; exit $rc"
)

# Polls one chat completion (max 1 token) until the endpoint answers 200, or the budget
# is spent: exit 0, or HEALTH_FAILED with the last answer. Standard library only.
HEALTH_PROBE = f"""
import json, sys, time, urllib.request
url, model, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
body = json.dumps({{"model": model, "max_tokens": 1,
                   "messages": [{{"role": "user", "content": "ping"}}]}}).encode()
end, last = time.monotonic() + budget, "no answer"
while True:
    try:
        req = urllib.request.Request(url + "/v1/chat/completions", body,
                                     {{"Content-Type": "application/json"}})
        with urllib.request.urlopen(req, timeout=10) as r:
            print(f"{{url}} served a completion ({{r.status}})"); sys.exit(0)
    except Exception as exc:
        last = f"{{type(exc).__name__}}: {{exc}}"
    if time.monotonic() >= end:
        print(f"{{url}} did not serve a completion within {{budget:.0f}}s; last answer: {{last}}")
        sys.exit({HEALTH_FAILED})
    time.sleep(2)
"""


@dataclass(frozen=True)
class Load:
    """What the benchmark sends."""

    model: str
    tokenizer: str
    concurrency: int
    requests: int
    warmup: int
    input_tokens: int
    output_tokens: int
    seed: int = 100


def arguments(load: Load, urls: list[str]) -> list[str]:
    """``aiperf profile`` arguments: streaming chat, fixed lengths, server token counts."""
    args = [
        "--model",
        load.model,
        "--tokenizer",
        load.tokenizer,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--use-server-token-count",
        "--concurrency",
        str(load.concurrency),
        "--request-count",
        str(load.requests),
        "--warmup-request-count",
        str(load.warmup),
        "--synthetic-input-tokens-mean",
        str(load.input_tokens),
        "--synthetic-input-tokens-stddev",
        "0",
        "--output-tokens-mean",
        str(load.output_tokens),
        "--output-tokens-stddev",
        "0",
        "--extra-inputs",
        "temperature:0",
        "--random-seed",
        str(load.seed),
        "--ui-type",
        "none",
        "--no-gpu-telemetry",
        "--no-server-metrics",
        "--output-artifact-dir",
        ARTIFACTS,
    ]
    for url in urls:
        args += ["--url", url]
    if len(urls) > 1:
        args += ["--url-strategy", "round_robin"]
    return args


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
    """The figures the check gates on and records, from AIPerf's summary."""

    version: str
    output_throughput: float  # tok/s
    ttft: Percentiles
    itl: Percentiles
    request_latency: Percentiles
    requests: int
    errors: int
    error_summary: str
    duration_s: float

    def evidence(self) -> str:
        """Every recorded figure, one per line."""
        return "\n".join(
            [
                f"AIPerf {self.version}: {self.requests} requests in {self.duration_s:.2f} s, "
                f"{self.errors} errors",
                f"output token throughput: {self.output_throughput:.2f} tok/s",
                f"time to first token: {self.ttft}",
                f"inter-token latency: {self.itl}",
                f"request latency: {self.request_latency}",
            ]
        )


class SummaryError(ValueError):
    """The log holds no usable AIPerf summary."""


def _number(data: dict[str, Any], metric: str, stat: str) -> float:
    block = data.get(metric)
    value = block.get(stat) if isinstance(block, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SummaryError(f"the summary has no number at {metric}.{stat}")
    return float(value)


def _optional(data: dict[str, Any], metric: str, stat: str = "avg") -> float:
    try:
        return _number(data, metric, stat)
    except SummaryError:
        return 0.0


def _percentiles(data: dict[str, Any], metric: str) -> Percentiles:
    return Percentiles(*(_number(data, metric, s) for s in ("avg", "p50", "p90", "p99")))


def summary_text(log: str) -> str:
    """The JSON between the two sentinel lines of the pod log; SummaryError when absent."""
    parts = log.split(SENTINEL)
    if len(parts) < 3:
        raise SummaryError("the load generator's log has no AIPerf summary (it did not finish)")
    text = parts[-2].strip()
    if not text:
        raise SummaryError("AIPerf wrote no summary file (see the log's last lines)")
    return text


def parse(text: str) -> Summary:
    """The figures of a ``profile_export_aiperf.json``; SummaryError naming what is missing."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SummaryError(f"the AIPerf summary is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SummaryError("the AIPerf summary is not a JSON object")
    if data.get("was_cancelled") or data.get("is_complete") is False:
        raise SummaryError("AIPerf reports the benchmark cancelled or incomplete")
    errors = data.get("error_summary") or []
    described = "; ".join(
        f"{e.get('count', '?')}x {((e.get('error_details') or {}).get('message')) or e}"
        if isinstance(e, dict)
        else str(e)
        for e in errors
    )
    return Summary(
        version=str(data.get("aiperf_version") or "unknown"),
        output_throughput=_number(data, "output_token_throughput", "avg"),
        ttft=_percentiles(data, "time_to_first_token"),
        itl=_percentiles(data, "inter_token_latency"),
        request_latency=_percentiles(data, "request_latency"),
        requests=int(_number(data, "request_count", "avg")),
        errors=int(_optional(data, "error_request_count")),
        error_summary=described,
        duration_s=_optional(data, "benchmark_duration"),
    )


def tail(log: str, lines: int = 8) -> str:
    """The last lines of AIPerf's console output (before the summary), for a failure message."""
    console = log.split(SENTINEL)[0].strip().splitlines()
    return " | ".join(line.strip() for line in console[-lines:] if line.strip())


POD = "aicr-aiperf"
ROLE_LABEL = "app.kubernetes.io/name"  # the generator's pod, apart from the stack's
HEALTH_CONTAINER = "wait-for-completion"
CONTAINER = "aiperf"


def pod(image: str, load: Load, urls: list[str], health_seconds: float) -> dict[str, Any]:
    """The load generator pod: wait for a first completion, then run AIPerf against ``urls``."""
    from aicr.checks.probe_pods import restricted_pod_spec

    env = [{"name": "HF_HUB_OFFLINE", "value": "1"}, {"name": "HOME", "value": "/tmp"}]
    tmp = [{"name": "tmp", "mountPath": "/tmp"}]
    spec = restricted_pod_spec(
        [
            {
                "name": CONTAINER,
                "image": image,
                "env": env,
                "volumeMounts": tmp,
                "command": ["sh", "-c", SCRIPT, "aiperf", *arguments(load, urls)],
            }
        ]
    )
    init = {
        "name": HEALTH_CONTAINER,
        "image": image,
        "env": env,
        "volumeMounts": tmp,
        "command": ["python3", "-c", HEALTH_PROBE, urls[0], load.model, f"{health_seconds:.0f}"],
        "securityContext": dict(spec["containers"][0]["securityContext"]),
    }
    spec["initContainers"] = [init]
    spec["volumes"] = [{"name": "tmp", "emptyDir": {}}]
    meta = {"name": POD, "labels": {ROLE_LABEL: POD}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
