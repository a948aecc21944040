"""virtualized-accelerator on the simulated cluster: plain GPUs (Not Implemented), a vGPU node
delivered (Implemented), vGPU labels over a GPU that is not one (the issue's fault), and a
vGPU the guest holds no licence for."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path

from deployhelp import run_check
from harness import SimCluster
from kubernetes import client
from simcluster.gpu.smi import gpu_uuid
from simcluster.scenarios import named

CHECK = "virtualized-accelerator"
NODE = "gpu-h100-0"
TYPE = "NVIDIA-H100-80C"
RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: true}}\n"
)


def _left(cluster: SimCluster) -> list[str]:
    """Pods of the check left in any namespace (its workloads must all be gone)."""
    pods = client.CoreV1Api(cluster.api()).list_pod_for_all_namespaces(
        label_selector=f"aicr.dev/check={CHECK}"
    )
    return [p.metadata.name for p in pods.items]


def _gpu_named(message: str, prefix: str) -> str:
    """The GPU UUID after ``prefix``: the device plugin hands out any of the node's 8 GPUs."""
    assert message.startswith(prefix), message
    uuid = message[len(prefix) :].split(" ", 1)[0]
    assert uuid in {gpu_uuid(NODE, i) for i in range(8)}, message
    return uuid


@contextlib.contextmanager
def vgpu(cluster: SimCluster) -> Iterator[None]:
    """NODE holds vGPUs while inside (hack/sim/scenarios/gpu-vgpu); whole GPUs again after."""
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    try:
        cluster.apply_gpu_sharing(copy.deepcopy(list(named.load("gpu-vgpu").manifests)))
        yield
    finally:
        cluster.reset()


def test_plain_gpus_advertise_no_virtualized_accelerator(
    cluster: SimCluster, tmp_path: Path
) -> None:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == ("skipped", "no virtualized accelerator advertised")
    assert test["requirements"]["virtualized_accelerator"] == "Not Implemented"


def test_a_vgpu_node_is_delivered(cluster: SimCluster, tmp_path: Path) -> None:
    with vgpu(cluster):
        labels = cluster.core().read_node(NODE).metadata.labels
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert labels["nvidia.com/vgpu.present"] == "true" and labels["nvidia.com/gpu.product"] == TYPE
    assert (test["status"], test["message"]) == (
        "passed",
        f"1 vGPU type delivered: {TYPE} on {NODE}",
    )
    assert test["requirements"]["virtualized_accelerator"] == "Implemented"
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    assert steps["virtualized accelerators"]["answer"] == (
        f"{NODE}: {TYPE}: nvidia.com/gpu 8, host driver 580.126.08 (r582_12); "
        "KubeVirt mediated devices: none")  # fmt: skip
    seen = steps[f"{TYPE} on {NODE}"]["answer"]
    assert seen.endswith(" NVIDIA H100-80C (virtualization mode VGPU; NVIDIA Virtual Compute "
                         "Server: Licensed (Expiry: 2027-1-1 0:0:0 GMT))"), seen  # fmt: skip
    assert steps["workloads"]["status"] == "passed" and _left(cluster) == []


def test_vgpu_labels_over_a_passed_through_gpu_fail_naming_type_and_node(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with vgpu(cluster):
        cluster.fault("vgpu-not-attached", NODE)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert test["status"] == "failed"
    _gpu_named(test["message"], f"1/1 virtualized accelerators failed: {TYPE} on {NODE}: its GPU ")
    assert test["message"].endswith(
        " (NVIDIA H100 80GB HBM3) reports virtualization mode Pass-Through, not VGPU"
    )
    assert test["requirements"]["virtualized_accelerator"] == "Not Implemented"
    assert _left(cluster) == []


def test_an_unlicensed_vgpu_fails_naming_its_license_status(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with vgpu(cluster):
        cluster.fault("vgpu-unlicensed", NODE)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert test["status"] == "failed"
    prefix = f"1/1 virtualized accelerators failed: {TYPE} on {NODE}: its vGPU "
    uuid = _gpu_named(test["message"], prefix)
    assert test["message"].endswith(
        " (NVIDIA H100-80C) is not licensed: License Status Unlicensed (Unrestricted) (NVIDIA "
        "Virtual Compute Server); an unlicensed vGPU is degraded after a 20-minute grace period"
    ), test["message"]
    assert test["requirements"]["virtualized_accelerator"] == "Not Implemented"
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    assert steps[f"{TYPE} on {NODE}"]["answer"] == (
        f"{uuid} NVIDIA H100-80C (virtualization mode VGPU; NVIDIA Virtual Compute Server: "
        "Unlicensed (Unrestricted))"
    )
    assert steps["workloads"]["status"] == "passed" and _left(cluster) == []


def test_a_vgpu_whose_driver_is_not_loaded_fails(cluster: SimCluster, tmp_path: Path) -> None:
    with vgpu(cluster):
        cluster.fault("driver-not-loaded", NODE)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "failed", f"1/1 virtualized accelerators failed: {TYPE} on {NODE}: nvidia-smi -q exited 9: "
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running.")  # fmt: skip
    assert _left(cluster) == []
