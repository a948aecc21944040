"""Where a run's results came from: each node group's software, and what ran the checks.

Per node group (``aicr.snapshot.groups``, from the nodes the run listed): the OS image,
kernel, kubelet, container runtime and NVIDIA driver the kubelet and GPU feature discovery
report, and the node image and bootstrap or platform version the provider labels, where it
sets one: EKS managed node groups ``eks.amazonaws.com/nodegroup-image`` (the AMI id), AKS
``kubernetes.azure.com/node-image-version``, GKE ``cloud.google.com/gke-os-distribution``,
Karpenter ``karpenter.k8s.aws/ec2nodeclass``. A label the group's nodes disagree on is
recorded as ``mixed``, never one node's value for all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aicr.snapshot.capture import node_readings
from aicr.snapshot.groups import group_nodes

# provenance key -> node reading (aicr.snapshot.capture.node_readings)
READINGS = {
    "osImage": "osImage",
    "kernel": "kernelVersion",
    "kubelet": "kubeletVersion",
    "containerRuntime": "containerRuntime",
    "nvidiaDriver": "gpuDriver",
    "instanceType": "instanceType",
}
# provenance key -> the provider labels that carry it, first found wins
LABELS = {
    "nodeImage": ("eks.amazonaws.com/nodegroup-image", "kubernetes.azure.com/node-image-version"),
    "platformVersion": (
        "kubernetes.azure.com/node-image-version",
        "cloud.google.com/gke-os-distribution",
        "karpenter.k8s.aws/ec2nodeclass",
        "eks.amazonaws.com/nodegroup-image",
    ),
}
MIXED = "mixed"


def node_groups(nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each node group's provenance: name, node count and every version recorded."""
    by_name = {str((n.get("metadata") or {}).get("name")): n for n in nodes}
    groups = group_nodes([(name, node_readings(dict(n))) for name, n in by_name.items()])
    out = []
    for group in groups:
        entry: dict[str, Any] = {"group": group.name, "nodes": len(group.nodes)}
        for key, reading in READINGS.items():
            if reading in group.readings:
                entry[key] = str(group.readings[reading])
        labels = [(by_name[n].get("metadata") or {}).get("labels") or {} for n in group.nodes]
        for key, names in LABELS.items():
            for label in names:
                values = {str(lab[label]) for lab in labels if label in lab}
                if values:
                    entry[key] = values.pop() if len(values) == 1 else MIXED
                    break
        out.append(entry)
    return out
