"""How many GPUs each node has and uses, and which GPU nodes a workload can go to.

Pure arithmetic on API-shaped dicts, shared by the runner (what a check may
reserve) and every check that counts GPUs: device-plugin GPUs (allocatable
``nvidia.com/gpu`` minus the requests of non-terminated pods) or DRA GPUs
(whole GPUs of the NVIDIA driver's ResourceSlices minus the devices claims hold).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr.kube import pod_status
from aicr.kube.gpus import (
    DRA_DRIVER,
    DRIVER_FULL_LABEL,
    DRIVER_PART_LABELS,
    GPU_RESOURCE,
    allocatable_gpus,
    gpu_nodes,
    gpu_toleration,
    is_whole_gpu,
    quantity,
)
from aicr.kube.placement import Placement, tolerated

Obj = dict[str, Any]


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

    def why_none(self, before: str = "", without_gpus: list[str] | None = None) -> str:
        """Why no node suits: ``before``, then the skipped nodes by reason ("no node" if none).

        ``without_gpus`` replaces the plan's own list, for a caller that knows more
        nodes advertising none.
        """
        zero = self.without_gpus if without_gpus is None else without_gpus
        parts = (
            before,
            f"busy: {', '.join(self.busy)}" if self.busy else "",
            f"unschedulable: {', '.join(self.unschedulable)}" if self.unschedulable else "",
            f"out of scope: {', '.join(self.out_of_scope)}" if self.out_of_scope else "",
            f"advertising 0: {', '.join(zero)}" if zero else "",
        )
        return "; ".join(p for p in parts if p) or "no node"


def tolerations(placement: Placement) -> list[Obj]:
    """The probe's tolerations: the GPU taint plus the user's ``--toleration``s."""
    return [gpu_toleration(), *(t.as_dict() for t in placement.tolerations)]


def device_plugin_gpus(nodes: list[Obj], pods: list[Obj]) -> tuple[dict[str, int], dict[str, int]]:
    """``(capacity, in use)`` per node: allocatable ``nvidia.com/gpu``, non-terminated requests."""
    capacity = {n["metadata"]["name"]: allocatable_gpus(n) for n in nodes}
    used: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node and not pod_status.finished(p):
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
        untolerated = [t for t in spec.get("taints") or [] if not tolerated(t, tols)]
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


def gpu_counts(
    nodes: list[Obj], pods: list[Obj], slices: list[Obj], claims: list[Obj], dra: bool | None
) -> tuple[dict[str, int], dict[str, int]]:
    """``(capacity, in use)`` per node, counted the way the allocation mode says.

    ``dra`` True: whole GPUs in ResourceSlices minus allocated claims; False:
    allocatable ``nvidia.com/gpu`` minus the requests of non-terminal pods. None
    (a cluster that may run both, as the runner sees it): a node with whole GPUs
    in ResourceSlices is counted the DRA way, any other the device-plugin way.
    """
    if dra is True:
        return dra_gpus(slices, claims)
    plugin_cap, plugin_used = device_plugin_gpus(nodes, pods)
    if dra is False:
        return plugin_cap, plugin_used
    dra_cap, dra_used = dra_gpus(slices, claims)
    capacity = {**plugin_cap, **{n: g for n, g in dra_cap.items() if g > 0}}
    used = {n: (dra_used if dra_cap.get(n) else plugin_used).get(n, 0) for n in capacity}
    return capacity, used


def free_gpu_nodes(
    nodes: list[Obj],
    placement: Placement,
    *,
    dra: bool | None,
    pods: list[Obj] | None = None,
    slices: list[Obj] | None = None,
    claims: list[Obj] | None = None,
) -> NodePlan:
    """The GPU nodes a workload placed by ``placement`` can go to, with their free GPUs.

    The one count shared by the runner (``dra=None``) and every check that counts
    GPUs (its allocation mode); ``plan_nodes`` says which nodes are busy, out of
    scope, unschedulable or without GPUs.
    """
    capacity, used = gpu_counts(nodes, pods or [], slices or [], claims or [], dra)
    return plan_nodes(nodes, capacity, used, placement)
