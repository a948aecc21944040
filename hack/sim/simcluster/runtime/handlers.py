"""The runtime handlers a simulated node's containerd has configured, and which one a pod gets.

What is modelled (and nothing more): every node's containerd knows the default
runtime `runc`, the NVIDIA runtime under the handler the GPU Operator's
toolkit configures (the ClusterPolicy's `spec.operator.runtimeClass`, which
the chart renders from its values' `operator.runtimeClass`; `nvidia`, the
chart's default, without a ClusterPolicy) and, where the platform profile puts
it, gVisor under the handler the platform names it (`runsc` as gVisor's own docs
configure it, `gvisor` on GKE Sandbox nodes: the node's
`sim.aicr.dev/sandbox-handler` annotation, set from the profile by
`simcluster.nodes.layout`; a node without the annotation, such as one an
autoscaler added, has `runsc`), played by the real binary that
hack/sim/runsc.sh unpacks (see `gvisor`). A pod whose RuntimeClass names any
other handler, or the gVisor one on a node with the `no-sandbox-handler` fault
or without the binary, never gets a sandbox: it stays Pending, its containers
waiting in `ContainerCreating`, with a `FailedCreatePodSandBox` Warning event
carrying containerd's message, as a real kubelet reports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client

from simcluster.cluster import kube
from simcluster.nodes.layout import SANDBOX_HANDLER_ANNOTATION

GVISOR = "runsc"  # gVisor's handler where no platform names it otherwise
DEFAULT = "runc"
GPU_DEFAULT = "nvidia"  # the GPU Operator chart's operator.runtimeClass
RUNTIME_FAULT_ANNOTATION = "sim.aicr.dev/runtime-fault"
NO_SANDBOX_HANDLER = "no-sandbox-handler"
SANDBOX_FAILED = "FailedCreatePodSandBox"


def of_pod(api: client.ApiClient, pod: dict[str, Any]) -> str:
    """The handler of the pod's RuntimeClass (`runc` without one).

    A pod naming a RuntimeClass that does not exist is refused at admission by
    the API server, so a missing one is read as the default.
    """
    name = pod["spec"].get("runtimeClassName")
    if not name:
        return DEFAULT
    rc = kube.ignore_not_found(lambda: client.NodeV1Api(api).read_runtime_class(name))
    return str(rc.handler) if rc is not None else DEFAULT


def node_runtime_faults(node: dict[str, Any]) -> list[str]:
    """The runtime faults set on a Node dict (RUNTIME_FAULT_ANNOTATION, comma-separated)."""
    notes = (node.get("metadata") or {}).get("annotations") or {}
    return [f for f in (notes.get(RUNTIME_FAULT_ANNOTATION) or "").split(",") if f]


def gpu_handler(api: client.ApiClient) -> str:
    """The NVIDIA runtime's handler: the ClusterPolicy's `spec.operator.runtimeClass`."""
    found = kube.ignore_not_found(
        lambda: client.CustomObjectsApi(api).list_cluster_custom_object(
            "nvidia.com", "v1", "clusterpolicies"
        )
    )
    for policy in (found or {}).get("items") or []:
        named = ((policy.get("spec") or {}).get("operator") or {}).get("runtimeClass")
        if named:
            return str(named)
    return GPU_DEFAULT


def sandbox_handler(node: dict[str, Any]) -> str:
    """The handler the node's containerd runs gVisor under ("" when it has no gVisor)."""
    notes = (node.get("metadata") or {}).get("annotations") or {}
    return str(notes.get(SANDBOX_HANDLER_ANNOTATION, GVISOR))


def configured(handler: str, node: dict[str, Any], runsc: Path, gpu: str) -> bool:
    """True when the node's containerd has a runtime for `handler` (`gpu`: the NVIDIA one's)."""
    if handler and handler == sandbox_handler(node):
        return NO_SANDBOX_HANDLER not in node_runtime_faults(node) and runsc.is_file()
    return handler in (DEFAULT, gpu)


def available(api: client.ApiClient, handler: str, node: dict[str, Any], runsc: Path) -> bool:
    """`configured`, reading the NVIDIA handler only when the pod's is neither runc nor gVisor."""
    gpu = "" if handler in (DEFAULT, sandbox_handler(node)) else gpu_handler(api)
    return configured(handler, node, runsc, gpu)


def not_configured_message(handler: str) -> str:
    """The kubelet's event message for a handler containerd does not know."""
    return (
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox "
        f'runtime: no runtime for "{handler}" is configured'
    )
