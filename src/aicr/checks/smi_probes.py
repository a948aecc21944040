"""nvidia-smi probes on GPU nodes: which nodes to probe, the probe pod, reading its answer.

Shared by check-nvidia-smi and driver-runtime-management.

No client and no I/O here, so every rule is tested on plain dicts. Labels,
namespace and ``--node-selector`` / ``--toleration`` placement are added by the
probe session when the objects are created.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr.checks.gpu import (
    DRA_DRIVER,
    DRIVER_FULL_LABEL,
    DRIVER_PART_LABELS,
    GPU_RESOURCE,
    allocatable_gpus,
    gpu_nodes,
    is_whole_gpu,
    quantity,
)
from aicr.checks.probe_pods import gpu_claim as probe_claim
from aicr.checks.probe_pods import gpu_toleration, pinned_to, restricted_pod_spec
from aicr.checks.smi_xml import first_line, read_probe
from aicr.runner import Placement
from aicr.runner import names as k8s_names

Obj = dict[str, Any]
CONTAINER = "nvidia-smi"
COMMAND = ["nvidia-smi", "-q", "-x"]
IMAGE = "cuda-base"  # in aicr/checks/images.yaml
TERMINAL_PHASES = ("Succeeded", "Failed")
CLAIM_REQUEST = "gpus"


def gpu_requests(pod: Obj) -> int:
    """GPUs a pod holds: the larger of its containers' sum and any init container's request."""
    spec = pod.get("spec") or {}

    def want(c: Obj) -> int:
        res = c.get("resources") or {}
        raw = (res.get("requests") or {}).get(GPU_RESOURCE) or (res.get("limits") or {}).get(
            GPU_RESOURCE, 0
        )
        return quantity(raw)

    main = sum(want(c) for c in spec.get("containers") or [])
    init = max((want(c) for c in spec.get("initContainers") or []), default=0)
    return max(main, init)


def driver_label(node: Obj) -> str | None:
    """The driver version GPU feature discovery labelled the node with."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if labels.get(DRIVER_FULL_LABEL):
        return str(labels[DRIVER_FULL_LABEL])
    parts = [labels.get(k) for k in DRIVER_PART_LABELS]
    return ".".join(str(p) for p in parts if p) if parts[0] else None


@dataclass(frozen=True)
class Target:
    """A GPU node to probe and how many GPUs the probe takes there."""

    node: str
    gpus: int
    total: int
    driver: str | None


@dataclass
class NodePlan:
    """Nodes to probe, nodes skipped (named, with why), nodes out of scope."""

    targets: list[Target] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    unschedulable: list[str] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)
    # Labelled as GPU nodes (GPU feature discovery, NFD) yet advertising none: a node
    # that lost its GPUs (driver or device plugin down, GPUs fallen off the bus).
    without_gpus: list[str] = field(default_factory=list)


def _tolerated(taint: Obj, tolerations: list[Obj]) -> bool:
    if taint.get("effect") not in ("NoSchedule", "NoExecute"):
        return True
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value") == taint.get("value"):
            return True
    return False


def tolerations(placement: Placement) -> list[Obj]:
    """The probe's tolerations: the GPU taint plus the user's ``--toleration``s."""
    return [gpu_toleration(), *(t.as_dict() for t in placement.tolerations)]


def device_plugin_gpus(nodes: list[Obj], pods: list[Obj]) -> tuple[dict[str, int], dict[str, int]]:
    """``(capacity, in use)`` per node: allocatable ``nvidia.com/gpu``, non-terminated requests."""
    capacity = {n["metadata"]["name"]: allocatable_gpus(n) for n in nodes}
    used: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node and (p.get("status") or {}).get("phase") not in TERMINAL_PHASES:
            used[node] = used.get(node, 0) + gpu_requests(p)
    return capacity, used


def dra_gpus(slices: list[Obj], claims: list[Obj]) -> tuple[dict[str, int], dict[str, int]]:
    """``(capacity, in use)`` per node: whole GPUs in ResourceSlices, devices claims hold."""
    capacity: dict[str, int] = {}
    owner: dict[tuple[str, str], str] = {}  # (pool, device) -> node
    for s in slices:
        spec = s.get("spec") or {}
        node, pool = spec.get("nodeName"), str((spec.get("pool") or {}).get("name", ""))
        if spec.get("driver") != DRA_DRIVER or not node:
            continue
        for d in spec.get("devices") or []:
            if is_whole_gpu(d):
                capacity[node] = capacity.get(node, 0) + 1
                owner[(pool, str(d.get("name")))] = node
    used: dict[str, int] = {}
    for c in claims:
        allocation = (c.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("driver") != DRA_DRIVER:
                continue
            node_of = owner.get((str(r.get("pool")), str(r.get("device"))))
            if node_of:
                used[node_of] = used.get(node_of, 0) + 1
    return capacity, used


def plan_nodes(
    nodes: list[Obj], capacity: dict[str, int], used: dict[str, int], placement: Placement
) -> NodePlan:
    """Schedulable GPU nodes with their free GPUs; busy, unschedulable and GPU-less ones named.

    A node with no capacity is left out unless it is labelled as a GPU node: then it
    is named in ``without_gpus``, never dropped, since a node that lost its GPUs is
    what a GPU check must catch.
    """
    plan = NodePlan()
    tols = tolerations(placement)
    labelled = set(gpu_nodes(nodes))
    for n in sorted(nodes, key=lambda n: str(n["metadata"]["name"])):
        name = n["metadata"]["name"]
        total = capacity.get(name, 0)
        if total <= 0 and name not in labelled:
            continue
        labels = n["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in placement.node_selector.items()):
            plan.out_of_scope.append(name)
            continue
        if total <= 0:
            plan.without_gpus.append(name)
            continue
        spec, status = n.get("spec") or {}, n.get("status") or {}
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        untolerated = [t for t in spec.get("taints") or [] if not _tolerated(t, tols)]
        if spec.get("unschedulable") or not ready or untolerated:
            why = (
                "cordoned"
                if spec.get("unschedulable")
                else "not Ready"
                if not ready
                else (
                    "taint " + ", ".join(f"{t.get('key')}:{t.get('effect')}" for t in untolerated)
                )
            )
            plan.unschedulable.append(f"{name} ({why})")
            continue
        free = total - used.get(name, 0)
        if free <= 0:
            plan.busy.append(name)
            continue
        plan.targets.append(Target(name, free, total, driver_label(n)))
    return plan


def claim_name(node: str) -> str:
    """The ResourceClaim of the probe on ``node`` (DRA mode)."""
    return k8s_names.bounded(f"nvidia-smi-{node}")


def gpu_claim(target: Target) -> Obj:
    """A ResourceClaim for ``target.gpus`` whole GPUs of the NVIDIA DRA driver."""
    return probe_claim(claim_name(target.node), target.gpus, CLAIM_REQUEST)


def pod_name(node: str) -> str:
    """The probe pod's name for ``node``."""
    return k8s_names.bounded(f"nvidia-smi-{node}")


def probe_pod(target: Target, image: str, dra: bool = False) -> Obj:
    """The pod that runs nvidia-smi on one node with ``target.gpus`` GPUs (limit, or claim)."""
    container: Obj = {
        "name": CONTAINER,
        "image": image,
        "command": list(COMMAND),
        "resources": {"limits": {GPU_RESOURCE: str(target.gpus)}},
    }
    if dra:
        container["resources"] = {"claims": [{"name": CLAIM_REQUEST}]}
    spec = restricted_pod_spec([container])
    spec["affinity"] = pinned_to(target.node)
    spec["tolerations"] = [gpu_toleration()]
    if dra:
        spec["resourceClaims"] = [
            {"name": CLAIM_REQUEST, "resourceClaimName": claim_name(target.node)}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name(target.node)},
        "spec": spec,
    }


def judge(target: Target, exit_code: int | None, log: str) -> tuple[list[str], str]:
    """``(problems, what was seen)`` for one node's probe."""
    report = read_probe(exit_code, log)
    if isinstance(report, str):
        return [report], first_line(log)
    seen = (
        f"{len(report.gpus)} GPUs ({', '.join(sorted({g.name for g in report.gpus})) or '-'}), "
        f"driver {report.driver}, CUDA {report.cuda or 'unknown'}"
    )
    problems = []
    if len(report.gpus) != target.gpus:
        problems.append(f"nvidia-smi sees {len(report.gpus)} GPUs, {target.gpus} were allocated")
    if target.driver is None:
        problems.append(
            f"the node has no {DRIVER_FULL_LABEL} label to compare driver {report.driver}"
        )
    elif report.driver != target.driver:
        problems.append(f"driver {report.driver} loaded, the node's labels say {target.driver}")
    return problems, seen
