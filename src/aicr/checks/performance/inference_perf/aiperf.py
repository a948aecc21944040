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

from dataclasses import dataclass
from typing import Any

from aicr.parsers import ParseError
from aicr.parsers.aiperf import Summary

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
        # vLLM stops at the model's EOS unless told not to: a throughput measured on
        # however many tokens the model chose to write is not the configured load
        "--extra-inputs",
        "temperature:0",
        "ignore_eos:true",
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


def evidence(summary: Summary) -> str:
    """Every recorded figure of an AIPerf summary, one per line."""
    return "\n".join(
        [
            f"AIPerf {summary.version}: {summary.request_count} requests in "
            f"{summary.duration_s:.2f} s, {summary.errors} errors",
            f"output token throughput: {summary.output_token_throughput:.2f} tok/s",
            f"time to first token: {summary.ttft}",
            f"inter-token latency: {summary.itl}",
            f"request latency: {summary.request_latency}",
        ]
    )


def summary_text(log: str) -> str:
    """The JSON between the two sentinel lines of the pod log; ParseError when absent."""
    parts = log.split(SENTINEL)
    if len(parts) < 3:
        raise ParseError("the load generator's log has no AIPerf summary (it did not finish)")
    text = parts[-2].strip()
    if not text:
        raise ParseError("AIPerf wrote no summary file (see the log's last lines)")
    return text


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
