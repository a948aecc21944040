"""The GPU nodes a check's workloads can go to, read in the run's GPU allocation mode.

DRA mode reads ResourceSlices and ResourceClaims, device-plugin mode the pods'
GPU requests; the count itself is ``aicr.kube.gpu_inventory.free_gpu_nodes``,
the same one the runner reserves GPUs with.
"""

from __future__ import annotations

from typing import Any

from aicr.kube import gpu_inventory
from aicr.kube.dicts import KubeReader
from aicr.kube.gpu_inventory import NodePlan
from aicr.kube.placement import Placement


def free_gpu_nodes(
    kube: KubeReader,
    nodes: list[dict[str, Any]],
    placement: Placement,
    *,
    dra: bool,
    slices: list[dict[str, Any]] | None = None,
) -> NodePlan:
    """The plan for ``nodes`` (already listed); ``slices`` when the check listed them too."""
    if dra:
        return gpu_inventory.free_gpu_nodes(
            nodes,
            placement,
            dra=True,
            slices=kube.list("ResourceSlice") if slices is None else slices,
            claims=kube.list("ResourceClaim"),
        )
    return gpu_inventory.free_gpu_nodes(nodes, placement, dra=False, pods=kube.list("Pod"))
