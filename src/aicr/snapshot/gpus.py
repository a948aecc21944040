"""A node's GPU readings from what the cluster publishes about it, never from nvidia-smi.

Two sources, both read through the Kubernetes API: the labels GPU feature discovery
(GFD) puts on a node, and the devices the NVIDIA DRA driver publishes for it in
ResourceSlices. Running nvidia-smi would need a pod holding the GPUs, which is the
allocation bypass the accelerator checks forbid. Labels win where both speak;
ResourceSlices fill in what labels lack (clusters on DRA without GFD).
"""

from __future__ import annotations

from typing import Any

from aicr.snapshot.model import Reading

GPU_RESOURCE = "nvidia.com/gpu"
DRA_DRIVER = "gpu.nvidia.com"  # the NVIDIA DRA driver's name in ResourceSlices
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_MEMORY = "nvidia.com/gpu.memory"
GFD_DRIVER = "nvidia.com/cuda.driver-version.full"
GFD_DRIVER_PARTS = (
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
)
GFD_CUDA = "nvidia.com/cuda.runtime-version.full"
GFD_CUDA_PARTS = ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor")
# ResourceSlice device attribute -> our reading.
DRA_ATTRIBUTES = {
    "productName": "gpuProduct",
    "driverVersion": "gpuDriver",
    "cudaDriverVersion": "cuda",
}

Obj = dict[str, Any]


def quantity(value: Any) -> int:
    """An integer resource quantity; anything else (absent, ``1k``) counts as 0."""
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def _joined(labels: dict[str, str], full: str, parts: tuple[str, ...]) -> str | None:
    if labels.get(full):
        return labels[full]
    values = [labels.get(k) for k in parts]
    if values[0] and values[1]:
        return ".".join(v for v in values if v)
    return None


def _attribute(value: Any) -> Reading | None:
    """A DRA attribute value: exactly one of string, version, int or bool."""
    if not isinstance(value, dict):
        return None
    for kind in ("string", "version", "int", "bool"):
        if kind in value:
            found: Reading = value[kind]
            return found
    return None


def slice_devices(slices: list[Obj]) -> dict[str, list[dict[str, Reading | None]]]:
    """Node name -> the attributes of each whole GPU the NVIDIA DRA driver publishes there."""
    out: dict[str, list[dict[str, Reading | None]]] = {}
    for item in slices:
        spec = item.get("spec") or {}
        node = spec.get("nodeName")
        if spec.get("driver") != DRA_DRIVER or not node:
            continue
        for device in spec.get("devices") or []:
            attributes = {k: _attribute(v) for k, v in (device.get("attributes") or {}).items()}
            if attributes.get("type") == "gpu":
                out.setdefault(node, []).append(attributes)
    return out


def _uniform(values: list[Reading | None]) -> Reading | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def node_gpus(node: Obj, devices: list[dict[str, Reading | None]]) -> dict[str, Reading]:
    """The GPU readings of one node, as far as its labels and slices publish them.

    ``gpuCapacity``, ``gpuAllocatable``, ``gpuCount``, ``gpuProduct``, ``gpuDriver``,
    ``cuda``, ``gpuMemory`` and ``gpuSource`` (which of the two sources spoke).
    """
    status = node.get("status") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    capacity = quantity((status.get("capacity") or {}).get(GPU_RESOURCE))
    allocatable = quantity((status.get("allocatable") or {}).get(GPU_RESOURCE))
    data: dict[str, Reading | None] = {"gpuCapacity": capacity, "gpuAllocatable": allocatable}
    from_labels: dict[str, Reading | None] = {
        "gpuProduct": labels.get(GFD_PRODUCT) or None,
        "gpuDriver": _joined(labels, GFD_DRIVER, GFD_DRIVER_PARTS),
        "cuda": _joined(labels, GFD_CUDA, GFD_CUDA_PARTS),
        "gpuMemory": labels.get(GFD_MEMORY) or None,
    }
    from_slices = {
        ours: _uniform([d.get(theirs) for d in devices]) if devices else None
        for theirs, ours in DRA_ATTRIBUTES.items()
    }
    sources = []
    if any(v is not None for v in from_labels.values()) or labels.get(GFD_COUNT):
        sources.append("gfd-labels")
    if devices:
        sources.append("resourceslices")
    for key, value in from_labels.items():
        data[key] = value if value is not None else from_slices.get(key)
    count = quantity(labels.get(GFD_COUNT)) or allocatable or len(devices)
    if count:
        data["gpuCount"] = count
    if sources:
        data["gpuSource"] = "+".join(sources)
    return {k: v for k, v in data.items() if v is not None}
