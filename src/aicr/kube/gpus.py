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


def whole_gpus_by_node(slices: list[dict[str, Any]]) -> dict[str, int]:
    """Whole GPUs the NVIDIA DRA driver publishes per node, from its ResourceSlices."""
    found: dict[str, int] = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") == DRA_DRIVER and spec.get("nodeName"):
            n = sum(1 for d in spec.get("devices") or [] if is_whole_gpu(d))
            found[spec["nodeName"]] = found.get(spec["nodeName"], 0) + n
    return found


def gpu_nodes(nodes: list[dict[str, Any]]) -> list[str]:
    """Names of the nodes GPU feature discovery or NFD marks as having NVIDIA GPUs, sorted."""
    found = []
    for n in nodes:
        labels = (n.get("metadata") or {}).get("labels") or {}
        if labels.get(GPU_PRESENT_LABEL) == "true" or labels.get(PCI_LABEL) == "true":
            found.append(str(n["metadata"]["name"]))
    return sorted(found)


def gpu_toleration() -> dict[str, Any]:
    """Tolerates the taint GPU nodes commonly carry."""
    return {"key": GPU_TAINT, "operator": "Exists", "effect": "NoSchedule"}


def allocation_results(claim: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The devices a claim's status says it was allocated (driver, pool, device, request)."""
    allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def _devices(results: list[dict[str, Any]]) -> str:
    """Allocation results as ``driver/pool/device``, comma separated."""
    return ", ".join(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results)


def is_allocated(claim: dict[str, Any]) -> bool:
    """The claim's status names the devices it was given."""
    return bool(allocation_results(claim))


def allocated(
    claim: dict[str, Any] | None, slices: list[dict[str, Any]]
) -> tuple[list[str], dict[str, Any] | None, str | None]:
    """``(problems, the allocated device, its node)`` from the claim's status and the slices."""
    results = allocation_results(claim)
    if not results:
        return ["the claim was not allocated"], None, None
    if len(results) != 1 or results[0].get("driver") != DRA_DRIVER:
        got = _devices(results)
        return [f"the claim was allocated {got}, not one {DRA_DRIVER} device"], None, None
    r = results[0]
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") != DRA_DRIVER or (spec.get("pool") or {}).get("name") != r.get(
            "pool"
        ):
            continue
        for d in spec.get("devices") or []:
            if d.get("name") == r.get("device"):
                return [], d, spec.get("nodeName")
    return [f"device {r.get('pool')}/{r.get('device')} is in no ResourceSlice"], None, None


def device_uuid(device: dict[str, Any]) -> str:
    """The ``uuid`` attribute the NVIDIA DRA driver publishes for a device ("" when absent)."""
    return str(((device.get("attributes") or {}).get("uuid") or {}).get("string") or "")


def claim_state(claim: dict[str, Any] | None) -> str:
    """What a claim's status says, in words: allocated devices and who holds it, or not."""
    if claim is None:
        return "not found"
    results = allocation_results(claim)
    if not results:
        return "not allocated (its status has no allocation)"
    devices = _devices(results)
    holders = [str(r.get("name")) for r in (claim.get("status") or {}).get("reservedFor") or []]
    return f"allocated {devices}" + (
        f", reserved for {', '.join(holders)}" if holders else ", reserved for no pod"
    )


def _version_parts(version: str) -> tuple[tuple[int, str], ...]:
    return tuple(
        (int(p), "") if p.isdigit() else (-1, p) for p in version.strip().lstrip("v").split(".")
    )


def same_driver(a: str, b: str) -> bool:
    """Whether two NVIDIA driver versions name the same driver, compared as versions.

    nvidia-smi and GPU feature discovery print ``570.124.06``; the NVIDIA DRA driver
    publishes ``driverVersion`` as a semantic version, ``570.124.6`` (no leading zeros),
    so the parts are compared as numbers, never as strings.
    """
    return _version_parts(a) == _version_parts(b)
