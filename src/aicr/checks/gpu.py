"""How NVIDIA GPUs appear in the Kubernetes API: resource, taint, labels, DRA names.

The names every GPU check reads or writes, kept in one place.
"""

from __future__ import annotations

from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"  # the device plugin's extended resource
GPU_TAINT = "nvidia.com/gpu"  # the taint GPU node pools commonly carry
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"  # GPU feature discovery
PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"  # NFD: an NVIDIA PCI device
DRIVER_FULL_LABEL = "nvidia.com/cuda.driver-version.full"
DRIVER_PART_LABELS = tuple(f"nvidia.com/cuda.driver.{p}" for p in ("major", "minor", "rev"))
# The NVIDIA DRA driver: its driver name and the DeviceClass of its whole GPUs
DRA_DRIVER = "gpu.nvidia.com"
GPU_DEVICE_CLASS = "gpu.nvidia.com"


def quantity(raw: Any) -> int:
    """A whole-number resource quantity ("8"); 0 when absent or not a plain integer."""
    try:
        return int(str(raw))
    except ValueError:
        return 0


def allocatable_gpus(node: dict[str, Any]) -> int:
    """The node's allocatable ``nvidia.com/gpu`` (0 when absent or unparsable)."""
    return quantity(((node.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE, 0))


def is_whole_gpu(device: dict[str, Any]) -> bool:
    """A ResourceSlice device of the NVIDIA DRA driver that is a whole GPU (not a channel)."""
    return ((device.get("attributes") or {}).get("type") or {}).get("string") == "gpu"


def gpu_nodes(nodes: list[dict[str, Any]]) -> list[str]:
    """Names of the nodes GPU feature discovery or NFD marks as having NVIDIA GPUs, sorted."""
    found = []
    for n in nodes:
        labels = (n.get("metadata") or {}).get("labels") or {}
        if labels.get(GPU_PRESENT_LABEL) == "true" or labels.get(PCI_LABEL) == "true":
            found.append(str(n["metadata"]["name"]))
    return sorted(found)
