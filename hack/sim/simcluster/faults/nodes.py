"""Node faults: annotations on a Node that the GPU node model and the runtime read.

`sim.aicr.dev/gpu-fault` holds a comma-separated set of GPU faults of the node,
`sim.aicr.dev/runtime-fault` the container runtime's (`no-sandbox-handler`);
`sim.aicr.dev/gpu-driver` the driver version actually loaded when it differs
from what the node's labels say. Both are plain Node annotations, so a test or
a user can also read what is set with `kubectl get node -o yaml`.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from simcluster.cluster import kube
from simcluster.gpu.model import DRIVER_ANNOTATION, FAULT_ANNOTATION
from simcluster.runtime.handlers import RUNTIME_FAULT_ANNOTATION

# A later release of the profiles' driver branch: what a node runs after an
# upgrade its feature-discovery labels have not caught up with.
MISMATCHED_DRIVER = "570.124.06"
FALLBACK_DRIVER = "570.86.16"


def with_fault(current: list[str], fault: str, on: bool) -> str | None:
    """The annotation value after adding (or removing) `fault`; None when the set is empty."""
    faults = [f for f in current if f != fault] + ([fault] if on else [])
    return ",".join(faults) or None


def mismatched_driver(labelled: str) -> str:
    """A driver version that differs from the one the node's labels name."""
    return MISMATCHED_DRIVER if labelled != MISMATCHED_DRIVER else FALLBACK_DRIVER


def _patch(api: client.ApiClient, node: str, key: str, value: Any) -> None:
    core = client.CoreV1Api(api)
    core.patch_node(node, {"metadata": {"annotations": {key: value}}})


def set_gpu_fault(api: client.ApiClient, node: str, fault: str, on: bool) -> None:
    """Add `fault` to (or remove it from) the node's GPU fault set."""
    _set_fault(api, node, FAULT_ANNOTATION, fault, on)


def set_runtime_fault(api: client.ApiClient, node: str, fault: str, on: bool) -> None:
    """Add `fault` to (or remove it from) the node's container runtime fault set."""
    _set_fault(api, node, RUNTIME_FAULT_ANNOTATION, fault, on)


def _set_fault(api: client.ApiClient, node: str, annotation: str, fault: str, on: bool) -> None:
    core = client.CoreV1Api(api)

    def update() -> None:
        obj = kube.to_dict(api, core.read_node(node))
        current = ((obj["metadata"].get("annotations") or {}).get(annotation) or "").split(",")
        value = with_fault([f for f in current if f], fault, on)
        body = {
            "metadata": {
                "resourceVersion": obj["metadata"]["resourceVersion"],
                "annotations": {annotation: value},
            }
        }
        core.patch_node(node, body)

    kube.retry_conflicts(update)


def set_loaded_driver(api: client.ApiClient, node: str, on: bool) -> None:
    """Load a driver other than the labelled one on `node` (or the labelled one again)."""
    core = client.CoreV1Api(api)
    labels = kube.to_dict(api, core.read_node(node))["metadata"].get("labels") or {}
    labelled = labels.get("nvidia.com/cuda.driver-version.full", "")
    _patch(api, node, DRIVER_ANNOTATION, mismatched_driver(labelled) if on else None)
