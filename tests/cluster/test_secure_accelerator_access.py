"""secure-accelerator-access on the simulated GPU nodes: healthy in both modes, and four leaks.

Every probe pod really runs (ubuntu, run label) with a private /dev holding only
the GPUs allocated to each container; the faults break that isolation the way
a misconfigured toolkit, runtime or device plugin does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_check
from harness import SimCluster
from manifests import GPU_RUNTIME_CLASS

CHECK = "secure-accelerator-access"
NODES = ("gpu-h100-0", "gpu-h100-1")
EVERY = ("8 GPU device nodes (nvidia0 nvidia1 nvidia2 nvidia3 nvidia4 nvidia5 nvidia6 nvidia7 "
         "nvidia-uvm nvidiactl) and nvidia-smi lists 8 GPUs")  # fmt: skip


def recipe(dra: bool) -> str:
    on = "true" if dra else "false"
    return (
        "- name: gpu-operator\n  namespace: gpu-operator\n"
        f"  overrides: {{devicePlugin: {{enabled: {'false' if dra else 'true'}}}}}\n"
        "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
        f"  overrides: {{resources: {{gpus: {{enabled: {on}}}}}, "
        f"gpuResourcesEnabledOverride: {on}}}\n"
    )


@pytest.fixture
def gpus(cluster: SimCluster) -> Iterator[SimCluster]:
    """The cluster with the GPU RuntimeClass the recipe's GPU Operator names (chart default),
    and no GPU held by an earlier module's pod still terminating (the probe count depends on it)."""
    cluster.apply(GPU_RUNTIME_CLASS)
    cluster.wait_gpus_idle()
    yield cluster


def validate(cluster: SimCluster, tmp_path: Path, dra: bool) -> dict[str, Any]:
    if cluster.mode != ("dra" if dra else "device-plugin"):
        cluster.set_mode("dra" if dra else "device-plugin")
    return run_check(cluster, tmp_path, CHECK, recipe(dra), phase="conformance")


def leaked_to(kind: str, pod: str) -> str:
    """The whole message, as a pattern, when the probe ``kind`` sees every GPU on both nodes."""
    both = " | ".join(f"{kind} ({n}): {pod}-{n}/probe has no GPU allocated but sees {EVERY}"
                      for n in NODES)  # fmt: skip
    return re.escape(f"2/9 probes failed: {both}") + "$"


@pytest.mark.parametrize("dra", [False, True], ids=["device-plugin", "dra"])
def test_healthy_nodes_show_each_container_only_its_own_gpu(
    gpus: SimCluster, tmp_path: Path, dra: bool
) -> None:
    test = validate(gpus, tmp_path, dra)
    assert (test["status"], test["message"]) == (
        "passed", f"9 probes on 2 GPU nodes ({'DRA' if dra else 'device plugin'}): each container "
        "saw only what was allocated to it; no bypass showed a GPU")  # fmt: skip
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    assert steps["workloads"]["status"] == "passed", steps["workloads"]
    assert "multi-container/unclaimed: /dev: no nvidia*; nvidia-smi -L: not on PATH" in (
        steps["multi-container"]["answer"])  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "dra", "message"),
    [("permissive-toolkit", False, leaked_to("bypass NVIDIA_VISIBLE_DEVICES=all", "bypass-env")),
     ("runtimeclass-leak", True, leaked_to("bypass RuntimeClass nvidia", "bypass-runtimeclass")),
     ("shared-device", False,
      r"1/9 probes failed: cross-pod: cross-pod-a and cross-pod-b on gpu-h100-\d were given the "
      r"same GPU GPU-[0-9a-f-]+ \(nvidia0\)$"),
     # every probe fails; the first two as an example
     ("device-leak", True, re.escape(
        f"9/9 probes failed: positive: positive/claimed was allocated one GPU but sees {EVERY} | "
        "negative (gpu-h100-0): negative-gpu-h100-0/probe has no GPU allocated but sees ")
      + re.escape(EVERY))],
    ids=["permissive-toolkit", "runtimeclass-leak", "shared-device", "device-leak"],
)  # fmt: skip
def test_a_leak_fails_the_probe_that_shows_it(
    gpus: SimCluster, tmp_path: Path, fault: str, dra: bool, message: str
) -> None:
    gpus.fault(fault)
    test = validate(gpus, tmp_path, dra)
    assert test["status"] == "failed", test["message"]
    assert re.match(message, test["message"]), test["message"]
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    assert steps["workloads"]["status"] == "passed", steps["workloads"]
