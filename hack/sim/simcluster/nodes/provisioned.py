"""Nodes an autoscaler adds at run time, given the sim's GPU model like the static GPU nodes.

What is modelled (and nothing more): on a real node the kubelet reports the
kernel, GPU feature discovery labels the GPUs and the device plugin (or DRA
driver) advertises them. Here the runtime does that for every node Karpenter
creates (label `karpenter.sh/nodepool`) whose instance type is one of the
sim's node profiles: the profile's GPU labels and `sim.aicr.dev/profile`
annotation, its kernel, and its GPUs as `nvidia.com/gpu` capacity or a
ResourceSlice, following the cluster's GPU mode. `remove_all` is the sim's
reset for them: NodeClaims, the nodes and their ResourceSlices go.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from simcluster.cluster import kube
from simcluster.nodes.layout import (
    PROFILE_ANNOTATION,
    gpu_labels,
    load_profile,
    profile_names,
    root_facts,
)

NODEPOOL_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def is_provisioned(node: dict[str, Any]) -> bool:
    """True for a node an autoscaler created (not one of the sim's layout)."""
    return NODEPOOL_LABEL in ((node.get("metadata") or {}).get("labels") or {})


def profile_for(instance_type: str) -> str | None:
    """The node profile whose instance type is `instance_type`, if any."""
    for name in profile_names():
        if load_profile(name)["instanceType"] == instance_type:
            return name
    return None


def gpu_count_of(node: dict[str, Any]) -> int:
    """GPUs of a provisioned node's profile (0 for CPU profiles and unknown types)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    profile = profile_for(labels.get(INSTANCE_TYPE_LABEL, ""))
    gpu = load_profile(profile).get("gpu") if profile else None
    return int(gpu["count"]) if gpu else 0


def decoration(node: dict[str, Any]) -> dict[str, Any] | None:
    """Labels, annotations and kernel the node lacks, or None when it needs nothing."""
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    profile = profile_for(labels.get(INSTANCE_TYPE_LABEL, ""))
    if not is_provisioned(node) or profile is None:
        return None
    if (meta.get("annotations") or {}).get(PROFILE_ANNOTATION) == profile:
        return None
    spec = load_profile(profile)
    want = dict(gpu_labels(spec["gpu"], spec["instanceType"])) if "gpu" in spec else {}
    _, kernel = root_facts(profile, spec["osImage"])
    return {"labels": want, "annotations": {PROFILE_ANNOTATION: profile}, "kernel": kernel}


def decorate(api: client.ApiClient, name: str) -> bool:
    """Give node `name` its profile's GPU model if it is a new provisioned node; True if changed."""
    core = client.CoreV1Api(api)
    node = kube.to_dict(api, core.read_node(name))
    extra = decoration(node)
    if extra is None:
        return False

    def update() -> None:
        obj = kube.to_dict(api, core.read_node(name))
        obj["metadata"].setdefault("labels", {}).update(extra["labels"])
        obj["metadata"].setdefault("annotations", {}).update(extra["annotations"])
        core.replace_node(name, obj)

    def status() -> None:
        obj = kube.to_dict(api, core.read_node_status(name))
        info = obj["status"].setdefault("nodeInfo", {})
        info["kernelVersion"] = extra["kernel"]
        core.replace_node_status(name, obj)

    kube.retry_conflicts(update)
    kube.retry_conflicts(status)
    return True


def provisioned_nodes(api: client.ApiClient) -> list[str]:
    """Names of the nodes an autoscaler created."""
    items = client.CoreV1Api(api).list_node(label_selector=NODEPOOL_LABEL).items
    return sorted(n.metadata.name for n in items)


def remove_all(api: client.ApiClient) -> list[str]:
    """Delete every NodeClaim and provisioned node (the sim's reset); return the node names."""
    dyn = kube.dynamic(api)
    try:
        claims = dyn.resources.get(api_version="karpenter.sh/v1", kind="NodeClaim")
        items = claims.get().items
    except Exception:  # Karpenter not installed (or just removed): no NodeClaims
        claims, items = None, []
    if claims is not None:
        for c in items:
            kube.ignore_not_found(lambda c=c: claims.delete(name=c.metadata.name))
    names = provisioned_nodes(api)
    core = client.CoreV1Api(api)
    for name in names:
        if claims is None:  # nobody left to run Karpenter's termination finalizer
            kube.ignore_not_found(
                lambda n=name: core.patch_node(n, {"metadata": {"finalizers": None}})
            )
        kube.ignore_not_found(lambda n=name: core.delete_node(n))
    return names
