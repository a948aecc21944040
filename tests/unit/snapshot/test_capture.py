from __future__ import annotations

from typing import Any

from aicr.snapshot.capture import build

VERSION = {"gitVersion": "v1.35.4", "major": "1", "minor": "35+", "platform": "linux/amd64"}


def node(name: str, gpus: int = 0, kernel: str = "6.8.0-1028-aws", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {
            "capacity": {"nvidia.com/gpu": str(gpus)} if gpus else {},
            "allocatable": {"nvidia.com/gpu": str(gpus)} if gpus else {},
            "nodeInfo": {
                "kubeletVersion": "v1.35.4",
                "containerRuntimeVersion": "containerd://2.0.5",
                "osImage": "Ubuntu 24.04.1 LTS",
                "kernelVersion": kernel,
                "architecture": "amd64",
            },
        },
    }


GPU_LABELS = {
    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    "nvidia.com/cuda.driver-version.full": "570.86.16",
}


def test_server_version_and_gpu_totals() -> None:
    snap = build(VERSION, [node("g0", 8, **GPU_LABELS), node("g1", 8, **GPU_LABELS), node("c0")])
    assert snap.reading("K8s.server.version") == "v1.35.4"
    assert snap.reading("K8s.server.minor") == "35"
    assert snap.reading("K8s.node.count") == 3
    assert snap.reading("K8s.node.gpuNodes") == 2
    assert snap.reading("GPU.cluster.count") == 16
    assert snap.reading("GPU.cluster.product") == "NVIDIA-H100-80GB-HBM3"
    assert snap.reading("GPU.cluster.driver") == "570.86.16"
    assert snap.reading("K8s.node.g0.gpuAllocatable") == 8
    assert snap.reading("K8s.node.kernelVersion") == "6.8.0-1028-aws"


def test_mixed_values_are_left_out_so_constraints_fail_closed() -> None:
    snap = build(VERSION, [node("a", kernel="6.8.0"), node("b", kernel="5.15.0")])
    assert snap.reading("K8s.node.kernelVersion") is None
    assert snap.reading("K8s.node.a.kernelVersion") == "6.8.0"


def test_no_gpu_measurement_without_gpus_and_no_agent_readings() -> None:
    snap = build(VERSION, [node("c0")])
    assert snap.reading("GPU.cluster.count") is None
    assert snap.reading("OS.release.VERSION_ID") is None
    assert snap.reading("GPU.smi.driver") is None
