"""The GPU Operator's sharing values on the simulated cluster (hack/sim/scenarios/gpu-sharing-*).

`shared(cluster, scenario, policy=...)` applies the scenario's ClusterPolicy (its spec
merged with `policy`) and ConfigMap, lets the GPU model advertise them
(simcluster.gpu.sharing), and on exit removes both and puts whole GPUs back.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

from gpu_operator import CRD
from harness import SimCluster
from kubernetes import client
from simcluster.cluster import kube
from simcluster.scenarios import named

NODE = "gpu-h100-0"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _gpu_pods(cluster: SimCluster) -> list[str]:
    """Live pods on NODE that hold GPUs of any kind (earlier tests' namespaces still going)."""
    pods = cluster.core().list_pod_for_all_namespaces(field_selector=f"spec.nodeName={NODE}")
    return [
        f"{p.metadata.namespace}/{p.metadata.name}"
        for p in pods.items
        if p.status.phase not in ("Succeeded", "Failed")
        and any(str(k).startswith("nvidia.com/") for c in p.spec.containers
                for k in ((c.resources and c.resources.limits) or {}))
    ]  # fmt: skip


def quiet(cluster: SimCluster, names: list[str], namespace: str) -> None:
    """Delete these pods and wait until NODE has no pod holding a GPU."""
    core = cluster.core()
    for n in names:
        kube.ignore_not_found(
            lambda n=n: core.delete_namespaced_pod(n, namespace, grace_period_seconds=0)
        )
    cluster.wait_for(lambda: not _gpu_pods(cluster), 90, message=f"no GPU pods on {NODE}")


@contextlib.contextmanager
def shared(
    cluster: SimCluster, scenario: str, policy: dict[str, Any] | None = None
) -> Iterator[list[dict[str, Any]]]:
    """The GPU nodes advertise the scenario's sharing while inside; its manifests are given."""
    docs = copy.deepcopy(list(named.load(scenario).manifests))
    for d in docs:
        if d["kind"] == "ClusterPolicy":
            d["spec"] = _merge(d["spec"], policy or {})
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    cluster.apply([CRD, {"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": "gpu-operator"}}])  # fmt: skip
    policies = kube.dynamic(cluster.api()).resources.get(api_version="nvidia.com/v1",
                                                         kind="ClusterPolicy")  # fmt: skip
    before = kube.ignore_not_found(lambda: policies.get(name="cluster-policy").to_dict())
    # what the tests count assumes the node's GPUs free (earlier namespaces may still go)
    cluster.wait_for(lambda: not _gpu_pods(cluster), 90, message=f"no GPU pods on {NODE}")
    try:
        cluster.apply_gpu_sharing(docs)
        yield docs
    finally:
        core = client.CoreV1Api(cluster.api())
        for d in docs:
            if d["kind"] == "ConfigMap":
                meta = d["metadata"]
                kube.ignore_not_found(
                    lambda m=meta: core.delete_namespaced_config_map(m["name"], m["namespace"])
                )
        # the ClusterPolicy as it was (other tests read it), then the nodes' whole GPUs
        if before is None:
            kube.ignore_not_found(lambda: policies.delete(name="cluster-policy"))
        else:
            meta = {"name": "cluster-policy"}
            cluster.apply({"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": meta,
                           "spec": before.get("spec") or {},
                           "status": before.get("status") or {}})  # fmt: skip
        cluster.reset()
