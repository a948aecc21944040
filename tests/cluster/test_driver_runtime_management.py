"""driver-runtime-management on the simulated GPU nodes: healthy, and the two driver faults."""

from __future__ import annotations

from pathlib import Path

import pytest
from deployhelp import run_check
from harness import SimCluster

CHECK = "driver-runtime-management"
RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: true}}\n"
)
NODE0, NODE1 = "gpu-h100-0", "gpu-h100-1"
DRIVER = "570.86.16"


@pytest.fixture
def gpus(cluster: SimCluster) -> SimCluster:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    return cluster


def test_healthy_nodes_report_the_advertised_driver(gpus: SimCluster, tmp_path: Path) -> None:
    test = run_check(gpus, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", f"driver injected and as advertised on 2 GPU nodes: {NODE0} ({DRIVER}), "
        f"{NODE1} ({DRIVER})")  # fmt: skip
    steps = [(s["title"], s["status"]) for s in test["extra"]["evidence"]]
    assert steps == [("GPU nodes", "informational"), (f"node {NODE0}", "passed"),
                     (f"node {NODE1}", "passed"), ("workloads", "passed")]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "problem"),
    [("driver-mismatch", "driver 570.124.06 loaded, the platform advertises 570.86.16 (label "
      "nvidia.com/cuda.driver-version.full (or its parts))"),
     ("driver-not-loaded", "nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't "
      "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed "
      "and running.")],
    ids=["driver-mismatch", "driver-not-loaded"],
)  # fmt: skip
def test_a_driver_fault_fails_naming_the_node(
    gpus: SimCluster, tmp_path: Path, fault: str, problem: str
) -> None:
    gpus.fault(fault, NODE1)
    test = run_check(gpus, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "failed",
        f"1/2 GPU nodes failed: node {NODE1}: {problem}",
    )
