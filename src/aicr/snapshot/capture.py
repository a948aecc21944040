"""Capture a live cluster's measurements when no --snapshot is given.

From the API server, in AICR's measurement shape:

- ``K8s.server``: ``version`` (e.g. ``v1.35.4``), ``major``, ``minor``, ``platform``,
  ``goVersion`` - enough to derive which API features (DRA, PSA...) the server has.
- ``K8s.node``: ``count``, ``gpuNodes``, and ``kubeletVersion``, ``containerRuntime``,
  ``osImage``, ``kernelVersion``, ``architecture`` when every node agrees (a
  mixed value is left out, so a constraint on it fails closed as missing).
- ``K8s.node.<name>``: the same readings per node plus its GPU readings
  (``aicr.snapshot.gpus``) and ``instanceType``; the node's labels are the context.
- ``K8s.nodegroup.<name>``: each node group (``aicr.snapshot.groups``).
- ``OS.sysctl./proc/sys/kernel/osrelease``: each node group's kernel release, as the
  kubelet reports it (per group when groups differ).
- ``GPU.cluster`` (when any node has GPUs): ``count`` (GPUs over all nodes),
  ``nodes``, and ``product``, ``driver``, ``cuda``, ``memory`` where every GPU node
  agrees; where GPU groups disagree, each GPU group's own values under the same
  subtype with the group in its context.

Readings from the nodes' own files (``OS.release``, ``OS.container-toolkit``,
``NodeTopology.numa``) come from the node agents (``aicr.snapshot.agent``); without
them constraints on those fail closed as missing data.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aicr import __version__
from aicr.errors import ClusterError
from aicr.kube.target import KubeTarget, api_client, describe_api_error
from aicr.snapshot.gpus import node_gpus, slice_devices
from aicr.snapshot.groups import NodeGroup, group_nodes, group_subtype, grouped_subtypes
from aicr.snapshot.model import Measurement, MeasurementType, Reading, Snapshot, Subtype

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# The kubelet reports the kernel's release (uname -r), the very text of this sysctl.
KERNEL_SYSCTL = "/proc/sys/kernel/osrelease"
REQUEST_TIMEOUT_SECONDS = 30.0  # one API read; a healthy server answers in well under a second
UNIFORM_KEYS = ("kubeletVersion", "containerRuntime", "osImage", "kernelVersion", "architecture")
# GPU.cluster key -> the node reading it summarizes.
GPU_KEYS = {"product": "gpuProduct", "driver": "gpuDriver", "cuda": "cuda", "memory": "gpuMemory"}
Obj = dict[str, Any]


def node_readings(
    node: Obj, devices: list[dict[str, Reading | None]] | None = None
) -> dict[str, Reading]:
    """The readings of one node from its status, labels and ResourceSlice devices."""
    info = (node.get("status") or {}).get("nodeInfo") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    data: dict[str, Reading | None] = {
        "kubeletVersion": info.get("kubeletVersion"),
        "containerRuntime": info.get("containerRuntimeVersion"),
        "osImage": info.get("osImage"),
        "kernelVersion": info.get("kernelVersion"),
        "architecture": info.get("architecture"),
        "instanceType": labels.get(INSTANCE_TYPE) or None,
    }
    data.update(node_gpus(node, devices or []))
    return {k: v for k, v in data.items() if v is not None}


def _uniform(values: list[Any]) -> Any:
    distinct = {v for v in values if v is not None}
    return distinct.pop() if len(distinct) == 1 and None not in values else None


def _gpu_measurement(groups: list[NodeGroup]) -> Measurement:
    """``GPU.cluster``: totals and agreed values, and each GPU group's values when they differ."""
    gpu_groups = [g for g in groups if g.gpu]
    per_group: dict[str, dict[str, Reading]] = {
        g.name: {
            **{
                ours: g.readings[theirs]
                for ours, theirs in GPU_KEYS.items()
                if theirs in g.readings
            },
            "count": int(g.readings.get("gpuCount", 0)) * len(g.nodes),
            "nodes": len(g.nodes),
        }
        for g in gpu_groups
    }
    totals = {
        "count": sum(int(t["count"]) for t in per_group.values()),
        "nodes": sum(len(g.nodes) for g in gpu_groups),
    }
    subtypes = grouped_subtypes("cluster", per_group)
    agreed = subtypes.pop(0).data if subtypes and not subtypes[0].context else {}
    whole = Subtype(subtype="cluster", data={**agreed, **totals})
    return Measurement(type=MeasurementType.GPU, subtypes=[whole, *subtypes])


def build(
    version: Obj,
    nodes: list[Obj],
    *,
    slices: list[Obj] | None = None,
    timestamp: str | None = None,
) -> Snapshot:
    """A snapshot from /version, the node list and the ResourceSlices (pure; tested)."""
    server: dict[str, Reading | None] = {
        "version": version.get("gitVersion"),
        "major": version.get("major"),
        "minor": str(version.get("minor", "")).rstrip("+") or None,
        "platform": version.get("platform"),
        "goVersion": version.get("goVersion"),
    }
    devices = slice_devices(slices or [])
    per_node = {
        n["metadata"]["name"]: node_readings(n, devices.get(n["metadata"]["name"])) for n in nodes
    }
    groups = group_nodes(list(per_node.items()))
    gpu_node_count = sum(len(g.nodes) for g in groups if g.gpu)
    summary: dict[str, Reading | None] = {"count": len(nodes), "gpuNodes": gpu_node_count}
    for key in UNIFORM_KEYS:
        value = _uniform([data.get(key) for data in per_node.values()])
        if value is not None:
            summary[key] = value
    k8s = [
        Subtype(subtype="server", data={k: v for k, v in server.items() if v is not None}),
        Subtype(subtype="node", data=summary),
    ]
    for node in nodes:
        name = node["metadata"]["name"]
        labels = (node.get("metadata") or {}).get("labels") or {}
        k8s.append(
            Subtype(
                subtype=f"node.{name}",
                data=dict(per_node[name]),
                context={str(k): str(v) for k, v in labels.items()},
            )
        )
    k8s += [group_subtype(g) for g in groups]
    measurements = [Measurement(type=MeasurementType.K8S, subtypes=k8s)]
    kernels = {
        g.name: {KERNEL_SYSCTL: g.readings["kernelVersion"]}
        for g in groups
        if "kernelVersion" in g.readings
    }
    sysctl = grouped_subtypes("sysctl", kernels, complete=len(kernels) == len(groups))
    if sysctl:
        measurements.append(Measurement(type=MeasurementType.OS, subtypes=sysctl))
    if gpu_node_count:
        measurements.append(_gpu_measurement(groups))
    metadata = {"source": "live capture", "version": __version__}
    if timestamp:
        metadata["timestamp"] = timestamp
    return Snapshot(
        kind="Snapshot",
        api_version="aicr.nvidia.com/v1alpha1",
        metadata=metadata,
        measurements=measurements,
    )


def _resource_slices(api: Any, request_timeout: float) -> list[Obj]:
    """Every ResourceSlice at the newest API version served, as v1 shows it; none without DRA."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.kube import dra

    custom: Any = client.CustomObjectsApi(api)

    def at(version: str) -> list[Obj]:
        answer = custom.list_cluster_custom_object(
            dra.GROUP,
            version,
            "resourceslices",
            _preload_content=False,
            _request_timeout=request_timeout,
        )
        items: list[Obj] = json.loads(answer.data).get("items") or []
        return items

    return dra.listed_v1(at, lambda e: isinstance(e, ApiException) and e.status == 404)


def capture(kube: KubeTarget, request_timeout: float = REQUEST_TIMEOUT_SECONDS) -> Snapshot:
    """Read server version, nodes and ResourceSlices; ClusterError when it cannot be reached."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = api_client(kube)
    versions: Any = client.VersionApi(api)
    core: Any = client.CoreV1Api(api)  # raw JSON (_preload_content=False), not models
    try:
        version = json.loads(
            versions.get_code(_preload_content=False, _request_timeout=request_timeout).data
        )
        listed = core.list_node(_preload_content=False, _request_timeout=request_timeout).data
        nodes = json.loads(listed).get("items") or []
        slices = _resource_slices(api, request_timeout)
    except ApiException as exc:
        raise ClusterError(f"cannot capture a snapshot: {describe_api_error(exc)}") from None
    except Exception as exc:
        raise ClusterError(f"cannot capture a snapshot: cannot reach the cluster: {exc}") from None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return build(version, nodes, slices=slices, timestamp=stamp)
