"""inference-perf through `aicr validate --phase performance`: the stand-in server, real AIPerf.

The check deploys its vLLM Deployment on a GPU node, where the runtime plays the
vLLM image with the sim's OpenAI-compatible stand-in (200 tok/s per request,
20 ms first token), and drives it with AIPerf from the sim cache. GPU faults
slow it; `never-ready` keeps its pod from ever becoming Ready. Short knobs and a
small load keep each case near half a minute.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_check
from harness import SimCluster

CHECK = "inference-perf"
NODES = ("gpu-h100-0", "gpu-h100-1")
OFF_GPU = {"orchestrator_node_selector": {"aicr.dev/node-group": "system"}}
# 8 in flight, 16 measured requests of 32 tokens: a second of load against the stand-in.
# modelSource offline: the stand-in serves its model with nothing to download (as a model in
# the serving image), and the sim's network namespace reaches no hub.
PARAMS = ("{concurrency: 8, requests: 16, warmupRequests: 8, inputTokens: 32, outputTokens: 32, "
          "model: aicr-sim/model, tokenizer: aicr-sim/tokenizer, workloadReadyTimeout: 40s, "
          "healthTimeout: 30s, modelSource: offline}")  # fmt: skip
NUMBER = r"[0-9]+\.[0-9]{2}"
# no serving stack in the recipe: the check deploys its own vLLM (device-plugin GPUs)
COMPONENTS = ("- name: gpu-operator\n  namespace: gpu-operator\n"
              "  overrides: {devicePlugin: {enabled: true}}\n")


def gates(throughput: str, ttft: str) -> str:
    return (f"    - {{name: inference-throughput, value: '{throughput}'}}\n"
            f"    - {{name: inference-ttft-p99, value: '{ttft}'}}\n")  # fmt: skip


@pytest.fixture
def gpus(cluster: SimCluster, tmp_path: Path) -> SimCluster:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    return cluster


def validate(cluster: SimCluster, tmp_path: Path, constraints: str) -> dict[str, Any]:
    """Run the performance phase with only inference-perf; its CTRF test (workloads removed)."""
    config = tmp_path / "config.yaml"
    config.write_text("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n"
                      f"  validate:\n    checks:\n      {CHECK}:\n        params: {PARAMS}\n")
    test = run_check(cluster, tmp_path, CHECK, COMPONENTS, constraints, phase="performance",
                     config=str(config), **OFF_GPU)  # fmt: skip
    workloads = [s for s in test["extra"]["evidence"] if s["title"] == "workloads"]
    assert [s["status"] for s in workloads] == ["passed"], workloads
    return test


def test_the_stand_in_meets_both_gates(gpus: SimCluster, tmp_path: Path) -> None:
    test = validate(gpus, tmp_path, gates(">= 600", "<= 1000"))
    assert test["status"] == "passed", test["message"]
    assert re.fullmatch(
        f"output token throughput {NUMBER} tok/s meets inference-throughput >= 600; TTFT p99 "
        f"{NUMBER} ms meets inference-ttft-p99 <= 1000 \\(vLLM Deployment \\S+/aicr-inference, "
        "Service aicr-inference \\(deployed by the check\\)\\)", str(test["message"]))  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "constraints", "failed"),
    [("inference-slow", gates(">= 600", "<= 1000"),
      f"inference-throughput: output token throughput {NUMBER} tok/s misses inference-throughput "
      ">= 600"),
     ("inference-slow-first-token", gates(">= 50", "<= 1000"),
      f"inference-ttft-p99: TTFT p99 {NUMBER} ms misses inference-ttft-p99 <= 1000")],
    ids=["throughput", "ttft"],
)  # fmt: skip
def test_each_gate_fails_alone_with_both_numbers(
    gpus: SimCluster, tmp_path: Path, fault: str, constraints: str, failed: str
) -> None:
    gpus.fault(fault)
    test = validate(gpus, tmp_path, constraints)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(f"1/2 gates failed: {failed}", str(test["message"])), test["message"]


def test_a_stack_that_never_becomes_ready_is_other_with_its_status(
    gpus: SimCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AICR's knob, read where validate runs: it wins over the config's 40s
    monkeypatch.setenv("AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT", "15s")
    for node in NODES:
        gpus.fault("never-ready", node)
    test = validate(gpus, tmp_path, gates(">= 600", "<= 1000"))
    assert test["status"] == "other", test["message"]
    assert re.match(
        "1/1 steps could not be judged: serving stack: the serving stack did not become ready "
        r"within 15s: Deployment \S+/aicr-inference: 0/1 replicas available .*; pod "
        r"aicr-inference-\S+: Running on gpu-h100-[01]", str(test["message"])), test["message"]


def test_an_endpoint_that_never_serves_is_other_with_its_last_answer(
    gpus: SimCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_INFERENCE_PERF_HEALTH_TIMEOUT", "6s")
    gpus.fault("model-loading")  # Ready on /health, completions 503 for ten minutes
    test = validate(gpus, tmp_path, gates(">= 600", "<= 1000"))
    assert test["status"] == "other", test["message"]
    assert re.fullmatch(
        "1/1 steps could not be judged: benchmark: the endpoint never served a completion: "
        r"http://10\.244\.\d+\.\d+:8000 did not serve a completion within 6s; last answer: "
        "HTTPError: HTTP Error 503: Service Unavailable", str(test["message"])), test["message"]
