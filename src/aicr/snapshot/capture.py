"""Capture the Kubernetes-level measurements of a live cluster when no --snapshot is given.

Everything here comes from the API server (no agent on a node), in AICR's
measurement shape:

- ``K8s.server``: ``version`` (e.g. ``v1.35.4``), ``major``, ``minor``, ``platform``,
  ``goVersion`` - enough to derive which API features (DRA, PSA...) the server has.
- ``K8s.node``: ``count``, ``gpuNodes``, and ``kubeletVersion``, ``containerRuntime``,
  ``osImage``, ``kernelVersion``, ``architecture`` when every node agrees (a
  mixed value is left out, so a constraint on it fails closed as missing).
- ``K8s.node.<name>``: the same readings per node plus ``gpuCapacity``,
  ``gpuAllocatable``, ``gpuProduct``, ``instanceType``; the node's labels are the
  subtype's ``context``.
- ``GPU.cluster`` (when any node has GPUs): ``count`` (allocatable
  ``nvidia.com/gpu``), ``nodes``, and ``product``, ``driver`` (from GPU feature
  discovery labels), ``memory`` when uniform.

Readings that need an agent on a node (``OS.*``, ``GPU.smi.*``, ``SystemD.*``,
``NodeTopology.*``) are not captured: constraints on them fail closed as
missing data until a snapshot file provides them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aicr import __version__
from aicr.errors import ClusterError
from aicr.k8s import KubeTarget, api_client, describe_api_error
from aicr.snapshot.model import Measurement, MeasurementType, Reading, Snapshot, Subtype

GPU_RESOURCE = "nvidia.com/gpu"
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_MEMORY = "nvidia.com/gpu.memory"
GFD_DRIVER = "nvidia.com/cuda.driver-version.full"
GFD_DRIVER_PARTS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor",
                    "nvidia.com/cuda.driver.rev")  # fmt: skip
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
REQUEST_TIMEOUT_SECONDS = 30.0  # one API read; a healthy server answers in well under a second
UNIFORM_KEYS = ("kubeletVersion", "containerRuntime", "osImage", "kernelVersion", "architecture")

Obj = dict[str, Any]


def _quantity(value: Any) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def _driver(labels: dict[str, str]) -> str | None:
    if labels.get(GFD_DRIVER):
        return labels[GFD_DRIVER]
    parts = [labels.get(k) for k in GFD_DRIVER_PARTS]
    if parts[0] and parts[1]:
        return ".".join(p for p in parts if p)
    return None


def node_readings(node: Obj) -> dict[str, Reading | None]:
    """The readings of one node from its status and labels."""
    status = node.get("status") or {}
    info = status.get("nodeInfo") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    data: dict[str, Reading | None] = {
        "kubeletVersion": info.get("kubeletVersion"),
        "containerRuntime": info.get("containerRuntimeVersion"),
        "osImage": info.get("osImage"),
        "kernelVersion": info.get("kernelVersion"),
        "architecture": info.get("architecture"),
        "gpuCapacity": _quantity((status.get("capacity") or {}).get(GPU_RESOURCE)),
        "gpuAllocatable": _quantity((status.get("allocatable") or {}).get(GPU_RESOURCE)),
    }
    if labels.get(GFD_PRODUCT):
        data["gpuProduct"] = labels[GFD_PRODUCT]
    if labels.get(INSTANCE_TYPE):
        data["instanceType"] = labels[INSTANCE_TYPE]
    driver = _driver(labels)
    if driver:
        data["gpuDriver"] = driver
    return {k: v for k, v in data.items() if v is not None}


def _uniform(values: list[Any]) -> Any:
    distinct = {v for v in values if v is not None}
    return distinct.pop() if len(distinct) == 1 and None not in values else None


def build(version: Obj, nodes: list[Obj], *, timestamp: str | None = None) -> Snapshot:
    """A snapshot from the server's /version answer and the node list (pure; tested)."""
    server: dict[str, Reading | None] = {
        "version": version.get("gitVersion"),
        "major": version.get("major"),
        "minor": str(version.get("minor", "")).rstrip("+") or None,
        "platform": version.get("platform"),
        "goVersion": version.get("goVersion"),
    }
    per_node = [(n["metadata"]["name"], node_readings(n), n) for n in nodes]
    gpu_nodes = [(name, data, n) for name, data, n in per_node if data.get("gpuCapacity")]
    summary: dict[str, Reading | None] = {"count": len(nodes), "gpuNodes": len(gpu_nodes)}
    for key in UNIFORM_KEYS:
        value = _uniform([data.get(key) for _, data, _ in per_node])
        if value is not None:
            summary[key] = value
    k8s = [Subtype(subtype="server", data={k: v for k, v in server.items() if v is not None}),
           Subtype(subtype="node", data=summary)]  # fmt: skip
    for name, data, node in per_node:
        labels = (node.get("metadata") or {}).get("labels") or {}
        k8s.append(Subtype(subtype=f"node.{name}", data=data,
                           context={str(k): str(v) for k, v in labels.items()}))  # fmt: skip
    measurements = [Measurement(type=MeasurementType.K8S, subtypes=k8s)]
    if gpu_nodes:
        gpu: dict[str, Reading | None] = {
            "count": sum(_quantity(d.get("gpuAllocatable")) for _, d, _ in gpu_nodes),
            "nodes": len(gpu_nodes),
        }
        for key, source in (("product", "gpuProduct"), ("driver", "gpuDriver")):
            value = _uniform([d.get(source) for _, d, _ in gpu_nodes])
            if value is not None:
                gpu[key] = value
        memory = _uniform([(n["metadata"].get("labels") or {}).get(GFD_MEMORY)
                           for _, _, n in gpu_nodes])  # fmt: skip
        if memory is not None:
            gpu["memory"] = memory
        measurements.append(
            Measurement(type=MeasurementType.GPU, subtypes=[Subtype(subtype="cluster", data=gpu)])
        )
    metadata = {"source": "live capture (Kubernetes API only)", "version": __version__}
    if timestamp:
        metadata["timestamp"] = timestamp
    return Snapshot(kind="Snapshot", api_version="aicr.nvidia.com/v1alpha1",
                    metadata=metadata, measurements=measurements)  # fmt: skip


def capture(kube: KubeTarget, request_timeout: float = REQUEST_TIMEOUT_SECONDS) -> Snapshot:
    """Read server version and nodes from the cluster; ClusterError when it cannot be reached."""
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
    except ApiException as exc:
        raise ClusterError(f"cannot capture a snapshot: {describe_api_error(exc)}") from None
    except Exception as exc:
        raise ClusterError(f"cannot capture a snapshot: cannot reach the cluster: {exc}") from None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return build(version, nodes, timestamp=stamp)
