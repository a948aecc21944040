"""Node groups: nodes that look alike to the API, so one agent pod can speak for each group.

Nodes are grouped by instance type, GPU product, count, memory, driver and CUDA, OS image,
kernel, kubelet, container runtime and architecture. Groups are named ``gpu-N`` and
``cpu-N`` in order of their first node's name, and recorded as ``K8s.nodegroup.<name>``.

Readings that differ between groups are recorded once per group: a subtype of the
same name whose ``context["aicr/node-group"]`` names the group (``grouped_subtypes``). A
reading every group agrees on is recorded once, without a group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aicr.snapshot.model import GROUP_CONTEXT, MeasurementType, Reading, Snapshot, Subtype

GROUP_KEYS = (
    "instanceType",
    "gpuProduct",
    "gpuCount",
    "gpuMemory",
    "gpuDriver",
    "cuda",
    "osImage",
    "kernelVersion",
    "kubeletVersion",
    "containerRuntime",
    "architecture",
)
GROUP_SUBTYPE = "nodegroup"


@dataclass(frozen=True)
class NodeGroup:
    """Nodes that share every ``GROUP_KEYS`` reading."""

    name: str
    nodes: tuple[str, ...]
    readings: Mapping[str, Reading]

    @property
    def gpu(self) -> bool:
        """Whether the group's nodes have GPUs."""
        count = self.readings.get("gpuCount", 0)
        return isinstance(count, int) and count > 0


def group_nodes(per_node: list[tuple[str, Mapping[str, Reading]]]) -> list[NodeGroup]:
    """Group nodes (name, readings) by their ``GROUP_KEYS`` readings."""
    shapes: dict[tuple[Reading | None, ...], list[str]] = {}
    readings: dict[tuple[Reading | None, ...], dict[str, Reading]] = {}
    for name, data in sorted(per_node, key=lambda item: item[0]):
        shape = tuple(data.get(k) for k in GROUP_KEYS)
        shapes.setdefault(shape, []).append(name)
        readings.setdefault(shape, {k: data[k] for k in GROUP_KEYS if k in data})
    counters = {True: 0, False: 0}
    groups = []
    for shape, nodes in shapes.items():
        gpu = NodeGroup("", (), readings[shape]).gpu
        counters[gpu] += 1
        name = f"{'gpu' if gpu else 'cpu'}-{counters[gpu]}"
        groups.append(NodeGroup(name, tuple(nodes), readings[shape]))
    return groups


def group_subtype(group: NodeGroup) -> Subtype:
    """``K8s.nodegroup.<name>``: node count, whether it has GPUs, the shared readings."""
    data: dict[str, Reading | None] = {"nodes": len(group.nodes), "gpu": group.gpu}
    data.update(group.readings)
    return Subtype(
        subtype=f"{GROUP_SUBTYPE}.{group.name}", data=data, context={"nodes": ",".join(group.nodes)}
    )


def grouped_subtypes(
    name: str, per_group: Mapping[str, Mapping[str, Reading]], *, complete: bool = True
) -> list[Subtype]:
    """Subtype ``name`` for readings taken per group.

    One subtype without a group holds the keys every group agrees on; when groups
    disagree on any key, each group also gets its own subtype with all its keys.
    ``complete=False`` (some group could not be read) records per group only, so no
    reading passes for cluster-wide when a group is unknown.
    """
    tables = list(per_group.values())
    if not tables:
        return []
    keys = set().union(*tables)
    agreed = {
        k: tables[0][k]
        for k in sorted(keys)
        if all(k in t and t[k] == tables[0][k] for t in tables)
    }
    out = [Subtype(subtype=name, data=dict(agreed))] if agreed and complete else []
    if len(agreed) < len(keys) or not complete:
        out += [
            Subtype(subtype=name, data=dict(table), context={GROUP_CONTEXT: group})
            for group, table in per_group.items()
            if table
        ]
    return out


def from_snapshot(snapshot: Snapshot) -> list[NodeGroup]:
    """The node groups a live capture recorded (``K8s.nodegroup.<name>``)."""
    out = []
    for m in snapshot.measurements:
        for sub in m.subtypes:
            if m.type == MeasurementType.K8S and sub.subtype.startswith(f"{GROUP_SUBTYPE}."):
                nodes = tuple(n for n in (sub.context or {}).get("nodes", "").split(",") if n)
                shared = {k: v for k, v in sub.data.items() if k in GROUP_KEYS and v is not None}
                out.append(NodeGroup(sub.subtype.removeprefix(f"{GROUP_SUBTYPE}."), nodes, shared))
    return out
