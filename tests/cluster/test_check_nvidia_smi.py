"""check-nvidia-smi on the simulated GPU nodes: idle, busy, and the failures it exists to catch.

The GPU node model (hack/sim/simcluster/gpu) plays nvidia-smi for the check's
probe pods; node annotations break a node's driver or GPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_check
from harness import SimCluster
from manifests import GPU_TOLERATION, pod
from simcluster.gpu.model import mark_node

RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: true}}\n"
)
H100 = "8 GPUs (NVIDIA H100 80GB HBM3), driver 570.86.16, CUDA 12.8"
NODE0, NODE1 = "gpu-h100-0", "gpu-h100-1"


@pytest.fixture
def gpus(cluster: SimCluster) -> Iterator[SimCluster]:
    """Device-plugin mode, healthy GPU nodes before and after the test, and no GPU held
    when it starts (a pod of an earlier module may still be terminating)."""
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    api = cluster.api()
    for node in cluster.gpu_nodes:
        mark_node(api, node)
    cluster.wait_gpus_idle()
    yield cluster
    for node in cluster.gpu_nodes:
        mark_node(api, node)


@pytest.fixture
def hold_gpus(gpus: SimCluster, namespace: str) -> Iterator[Callable[[str, int], None]]:
    """Start running pods (played by KWOK) holding GPUs; they are gone again after the test.

    Pods being deleted still hold their GPUs, so the next test waits until they are gone.
    """
    made: list[str] = []

    def hold(node: str, count: int) -> None:
        body: dict[str, Any] = pod(
            f"holder-{node}", nodeName=node, tolerations=[GPU_TOLERATION],
            resources={"limits": {"nvidia.com/gpu": str(count)}},
        )  # fmt: skip
        gpus.apply(body, namespace)
        made.append(f"holder-{node}")
        gpus.wait_for_phase(namespace, f"holder-{node}", "Running")

    yield hold
    core = gpus.core()
    for name in made:
        core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    gpus.wait_for(lambda: not core.list_namespaced_pod(namespace).items, 60,
                  message="GPU holder pods gone")  # fmt: skip


def test_idle_nodes_are_probed_with_all_their_gpus(gpus: SimCluster, tmp_path: Path) -> None:
    test = run_check(gpus, tmp_path, "check-nvidia-smi", RECIPE)
    assert (test["status"], test["message"]) == (
        "passed", f"nvidia-smi on 2 GPU nodes: {NODE0} ({H100}), {NODE1} ({H100})")
    sections = test["extra"]["evidence"]
    assert [(s["title"], s["status"]) for s in sections] == [
        ("GPU nodes", "informational"), (f"node {NODE0}", "passed"), (f"node {NODE1}", "passed"),
        ("workloads", "passed")]  # fmt: skip
    # the probe pods were deleted and seen gone by the check itself, before run cleanup
    assert sections[-1]["asked"].count("created Pod ") == 2
    assert sections[-1]["answer"].startswith("all 2 deleted and gone after")


def test_a_busy_node_is_skipped_by_name_and_a_partly_busy_one_gets_its_free_gpus(
    gpus: SimCluster, hold_gpus: Callable[[str, int], None], tmp_path: Path
) -> None:
    hold_gpus(NODE0, 3)
    hold_gpus(NODE1, 8)
    test = run_check(gpus, tmp_path, "check-nvidia-smi", RECIPE)
    assert (test["status"], test["message"]) == (
        "passed",
        f"nvidia-smi on 1 GPU nodes: {NODE0} ({H100.replace('8 GPUs', '5 GPUs')}); "
        f"skipped (busy or unschedulable): {NODE1}",
    )


def test_every_node_busy_fails(
    gpus: SimCluster, hold_gpus: Callable[[str, int], None], tmp_path: Path
) -> None:
    hold_gpus(NODE0, 8)
    hold_gpus(NODE1, 8)
    test = run_check(gpus, tmp_path, "check-nvidia-smi", RECIPE)
    assert (test["status"], test["message"]) == (
        "failed", f"no GPU node could be examined: skipped {NODE0}, {NODE1}")


@pytest.mark.parametrize(
    ("mark", "problem"),
    [
        ({"fault": "driver-not-loaded"},
         "nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't communicate with the "
         "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."),
        ({"fault": "gpu-lost"}, "nvidia-smi sees 7 GPUs, 8 were allocated"),
        ({"driver": "570.124.06"}, "driver 570.124.06 loaded, the node's labels say 570.86.16"),
    ],
    ids=["driver-not-loaded", "gpu-lost", "driver-mismatch"],
)  # fmt: skip
def test_a_broken_node_fails_the_check_by_name(
    gpus: SimCluster, tmp_path: Path, mark: dict[str, str], problem: str
) -> None:
    mark_node(gpus.api(), NODE1, **mark)
    test = run_check(gpus, tmp_path, "check-nvidia-smi", RECIPE)
    assert (test["status"], test["message"]) == (
        "failed", f"nvidia-smi failed on 1/2 GPU nodes: {NODE1}: {problem}")


DRA_RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: false}}\n"
    "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver\n"
    "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n"
)


def test_dra_mode_probes_through_resource_claims(gpus: SimCluster, tmp_path: Path) -> None:
    gpus.set_mode("dra")
    mark_node(gpus.api(), NODE0, fault="gpu-lost")
    test = run_check(gpus, tmp_path, "check-nvidia-smi", DRA_RECIPE)
    assert (test["status"], test["message"]) == (
        "failed", f"nvidia-smi failed on 1/2 GPU nodes: {NODE0}: nvidia-smi sees 7 GPUs, "
        f"8 were allocated")  # fmt: skip
    assert "8 GPUs (ResourceClaim;" in test["extra"]["evidence"][2]["asked"]
    assert test["extra"]["evidence"][2]["answer"] == H100
    mark_node(gpus.api(), NODE0)
    test = run_check(gpus, tmp_path, "check-nvidia-smi", DRA_RECIPE)
    assert (test["status"], test["message"]) == (
        "passed", f"nvidia-smi on 2 GPU nodes: {NODE0} ({H100}), {NODE1} ({H100})")


def test_probes_pull_the_pinned_image_from_the_mirror(
    gpus: SimCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check pod does not see the orchestrator's environment; the run hands it the mirror."""
    monkeypatch.setenv("AICR_VALIDATOR_IMAGE_REGISTRY", "mirror.example.com/aicr")
    test = run_check(gpus, tmp_path, "check-nvidia-smi", RECIPE)
    assert test["status"] == "passed", test["message"]
    asked = test["extra"]["evidence"][1]["asked"]
    assert asked.endswith("; mirror.example.com/aicr/cuda:12.8.1-base-ubuntu24.04)"), asked
