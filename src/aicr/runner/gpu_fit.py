"""GPU reservations as arithmetic: what the cluster has free, and where a check's need fits.

No client and no I/O, so every rule is tested on plain values. The inventory is
built from listed nodes, pods, ResourceSlices and ResourceClaims; the holdings
are what aicr checks (of this run and of others) reserved in the shared Lease.
GPUs used by aicr's own holders are counted once, through their holdings: their
pods and claims are left out of the inventory's "used".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from aicr.catalog.model import GpuNeed, gpu_count
from aicr.kube.gpu_inventory import free_gpu_nodes
from aicr.kube.names import CHECK_LABEL, RUN_ID_LABEL, holder_id
from aicr.kube.placement import Placement

Obj = dict[str, Any]
# Built without validation (``all`` alone is the model's one valid form), so importing the
# runner builds no pydantic validator: a no-cluster run never reserves GPUs (issue 34).
EVERY_FREE_GPU = GpuNeed.model_construct(all=True)


@dataclass(frozen=True)
class Holding:
    """What one check holds: GPUs per node, and whether it holds every free GPU."""

    gpus: dict[str, int] = field(default_factory=dict)
    all: bool = False

    @property
    def total(self) -> int:
        """GPUs held in all."""
        return sum(self.gpus.values())

    def __str__(self) -> str:
        spread = ", ".join(f"{node} {n}" for node, n in sorted(self.gpus.items()) if n)
        return ("every free GPU" if self.all else gpu_count(self.total)) + (
            f" ({spread})" if spread else ""
        )


@dataclass(frozen=True)
class Inventory:
    """Schedulable GPU nodes and the GPUs on each that nothing but aicr's holders uses."""

    usable: dict[str, int]
    without_gpus: tuple[str, ...] = ()  # labelled as GPU nodes, advertising none


def _ours(obj: Obj, holders: Collection[str]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    run, check = labels.get(RUN_ID_LABEL), labels.get(CHECK_LABEL)
    return bool(run and check) and holder_id(str(run), str(check)) in holders


def inventory(
    nodes: list[Obj],
    pods: list[Obj],
    slices: list[Obj],
    claims: list[Obj],
    placement: Placement,
    holders: Collection[str],
) -> Inventory:
    """Free GPUs per schedulable GPU node, not counting what ``holders``' workloads use.

    Each node is counted the way it publishes its GPUs (``gpu_inventory.gpu_counts``
    with no mode): DRA where ResourceSlices hold whole GPUs, else device plugin.
    """
    plan = free_gpu_nodes(
        nodes,
        placement,
        dra=None,
        pods=[p for p in pods if not _ours(p, holders)],
        slices=slices,
        claims=[c for c in claims if not _ours(c, holders)],
    )
    return Inventory({t.node: t.gpus for t in plan.targets}, tuple(plan.without_gpus))


def available(inv: Inventory, held: Iterable[Holding]) -> dict[str, int]:
    """Per usable node, the GPUs no holding takes."""
    taken: dict[str, int] = {}
    for h in held:
        for node, n in h.gpus.items():
            taken[node] = taken.get(node, 0) + n
    return {node: max(0, g - taken.get(node, 0)) for node, g in inv.usable.items()}


def _place(need: GpuNeed, free: dict[str, int]) -> dict[str, int] | None:
    """Where ``need`` goes in ``free`` (None: it does not fit)."""
    if need.count is not None:
        got: dict[str, int] = {}
        left = need.count
        for node in sorted(free, key=lambda n: (-free[n], n)):  # the scheduler spreads
            take = min(left, free[node])
            if take:
                got[node], left = take, left - take
        return got if left == 0 else None
    per_node = need.per_node or 0
    if need.nodes == "every":
        return {n: per_node for n in free} if all(g >= per_node for g in free.values()) else None
    fitting = sorted((n for n in free if free[n] >= per_node), key=lambda n: (free[n], n))
    if len(fitting) < need.nodes:  # best fit: keep roomy nodes whole for bigger needs
        return None
    return {n: per_node for n in fitting[: need.nodes]}


def fit(need: GpuNeed, inv: Inventory, held: Collection[Holding]) -> Holding | None:
    """The holding ``need`` gets now, or None while it must wait.

    Nothing fits beside a holding of every free GPU, and such a need fits only
    when nobody holds a GPU. A need larger than the cluster (fewer GPU nodes than
    it asks for, say) still starts once nobody holds a GPU, holding all of them:
    the check then judges the shortage itself instead of waiting for ever.
    """
    if any(h.all for h in held):
        return None
    free = available(inv, held)
    alone = not any(h.total for h in held)
    if not need.all:
        placed = _place(need, free)
        if placed is not None:
            return Holding(placed)
    return Holding({n: g for n, g in free.items() if g}, all=True) if alone else None


def free_text(inv: Inventory, held: Collection[Holding]) -> str:
    """What is free now, per node, for a waiting message."""
    free = available(inv, held)
    lost = (
        f" ({', '.join(inv.without_gpus)}: labelled as GPU nodes, advertising 0 GPUs)"
        if inv.without_gpus
        else ""
    )
    if not free:
        return "no schedulable GPU node" + lost
    return "free now " + ", ".join(f"{node} {n}" for node, n in sorted(free.items())) + lost
