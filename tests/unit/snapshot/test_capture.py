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


def dra_slice(node_name: str, count: int, product: str = "NVIDIA H100", driver: str = "575.1.2",
              cuda: str = "12.9.0") -> dict[str, Any]:  # fmt: skip
    devices = [
        {"name": f"gpu-{i}", "attributes": {
            "type": {"string": "gpu"}, "productName": {"string": product},
            "driverVersion": {"version": driver}, "cudaDriverVersion": {"version": cuda}}}
        for i in range(count)
    ] + [{"name": "mig-0", "attributes": {"type": {"string": "mig"}}}]  # fmt: skip
    return {"spec": {"driver": "gpu.nvidia.com", "nodeName": node_name, "devices": devices}}


def test_gfd_labels_give_product_count_memory_driver_and_cuda() -> None:
    labels = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
              "nvidia.com/gpu.memory": "81559", "nvidia.com/cuda.driver.major": "570",
              "nvidia.com/cuda.driver.minor": "86", "nvidia.com/cuda.driver.rev": "16",
              "nvidia.com/cuda.runtime.major": "12",
              "nvidia.com/cuda.runtime.minor": "8"}  # fmt: skip
    snap = build(VERSION, [node("g0", 8, **labels)])
    assert snap.reading("K8s.node.g0.gpuCount") == 8
    assert snap.reading("K8s.node.g0.gpuSource") == "gfd-labels"
    assert snap.reading("GPU.cluster.driver") == "570.86.16"
    assert snap.reading("GPU.cluster.cuda") == "12.8"
    assert snap.reading("GPU.cluster.memory") == "81559"
    assert snap.reading("GPU.cluster.count") == 8


def test_resource_slices_speak_for_a_node_on_dra_without_labels() -> None:
    snap = build(VERSION, [node("d0"), node("c0")], slices=[dra_slice("d0", 4)])
    assert snap.reading("K8s.node.d0.gpuCount") == 4  # the MIG device is not a whole GPU
    assert snap.reading("K8s.node.d0.gpuSource") == "resourceslices"
    assert snap.reading("K8s.node.gpuNodes") == 1
    assert snap.reading("GPU.cluster.count") == 4
    assert snap.reading("GPU.cluster.product") == "NVIDIA H100"
    assert snap.reading("GPU.cluster.driver") == "575.1.2"
    assert snap.reading("GPU.cluster.cuda") == "12.9.0"


def test_labels_win_over_resource_slices() -> None:
    snap = build(VERSION, [node("g0", 8, **GPU_LABELS)], slices=[dra_slice("g0", 8)])
    assert snap.reading("GPU.cluster.driver") == "570.86.16"
    assert snap.reading("GPU.cluster.product") == "NVIDIA-H100-80GB-HBM3"
    assert snap.reading("GPU.cluster.cuda") == "12.9.0"  # only the slices tell CUDA
    assert snap.reading("K8s.node.g0.gpuSource") == "gfd-labels+resourceslices"


def test_node_groups_are_recorded_and_differing_gpu_readings_kept_per_group() -> None:
    old = {**GPU_LABELS, "nvidia.com/cuda.driver-version.full": "550.54.15"}
    snap = build(VERSION, [node("g0", 8, **GPU_LABELS), node("g1", 8, **GPU_LABELS),
                           node("h0", 8, **old), node("c0")])  # fmt: skip
    assert snap.gpu_groups == ["gpu-1", "gpu-2"]
    assert snap.reading("K8s.nodegroup.gpu-1.nodes") == 2
    assert snap.reading("K8s.nodegroup.cpu-1.gpu") is False
    assert snap.reading("GPU.cluster.count") == 24
    assert snap.reading("GPU.cluster.product") == "NVIDIA-H100-80GB-HBM3"  # agreed
    assert snap.reading("GPU.cluster.driver") is None  # not agreed: per group only
    assert snap.lookup("GPU.cluster.driver", "gpu-1") == ("driver", "570.86.16")
    assert snap.lookup("GPU.cluster.driver", "gpu-2") == ("driver", "550.54.15")
    contexts = {s.subtype: s.context for m in snap.measurements for s in m.subtypes}
    assert contexts["nodegroup.gpu-1"] == {"nodes": "g0,g1"}
