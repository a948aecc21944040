"""A GPU Operator stand-in on the simulated cluster: its Deployment, device-plugin DaemonSet,
ClusterPolicy CRD and policy, for the deployment checks' tests and the benchmark."""

from __future__ import annotations

from typing import Any

from harness import SimCluster
from kubernetes import client
from manifests import GPU_TOLERATION, crd
from simcluster.cluster import kube

CRD = crd("nvidia.com", "clusterpolicies", "ClusterPolicy", scope="Cluster")
IMAGE = "nvcr.io/nvidia/gpu-operator:v25.10.1"


def deployment(name: str, image: str = IMAGE, labels: dict[str, str] | None = None,
               node_selector: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {"containers": [{"name": name, "image": image}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }  # fmt: skip


def daemon_set(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nvcr.io/x:1"}]}}},
    }  # fmt: skip


def policy(state: str) -> dict[str, Any]:
    meta = {"name": "cluster-policy"}
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": meta,
            "spec": {}, "status": {"state": state}}  # fmt: skip


def wait_available(cluster: SimCluster, ns: str, names: list[str]) -> None:
    apps = client.AppsV1Api(cluster.api())

    def ready() -> bool:
        for n in names:
            if (apps.read_namespaced_deployment(n, ns).status.available_replicas or 0) < 1:
                return False
        for ds in apps.list_namespaced_daemon_set(ns).items:
            s = ds.status
            if not s.desired_number_scheduled or s.number_ready != s.desired_number_scheduled:
                return False
        return True

    cluster.wait_for(ready, 60, message=f"workloads in {ns} available")


def operator_component(ns: str) -> str:
    return f"- name: gpu-operator\n  namespace: {ns}\n"


def install_operator(cluster: SimCluster, ns: str, state: str = "ready", **dep: Any) -> None:
    cluster.apply([deployment("gpu-operator", **dep), daemon_set("nvidia-device-plugin-daemonset")],
                  ns)  # fmt: skip
    cluster.apply(policy(state))


def gpu_node_daemon_set(app: str) -> dict[str, Any]:
    """A DaemonSet on the GPU nodes whose pods the process runtime really runs (busybox sleep).

    The fault annotation is left empty, so `hack/sim/sim fault never-ready|image-pull NODE`
    breaks its pods started on that node afterwards.
    """
    meta = {"labels": {"app": app}, "annotations": {"sim.aicr.dev/fault": ""}}
    spec = {
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "tolerations": [GPU_TOLERATION],
        "containers": [{"name": app, "image": "busybox:1.36", "command": ["sleep", "3600"]}],
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": app},
            "spec": {"selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": meta, "spec": spec}}}  # fmt: skip


def daemon_sets_ready(cluster: SimCluster, ns: str) -> bool:
    """Every DaemonSet in ``ns`` targets a node and is ready on all it targets."""
    for ds in client.AppsV1Api(cluster.api()).list_namespaced_daemon_set(ns).items:
        s = ds.status
        if not s.desired_number_scheduled or (s.number_ready or 0) != s.desired_number_scheduled:
            return False
    return True


def restart_on(cluster: SimCluster, ns: str, app: str, node: str) -> None:
    """Delete the ``app`` pod on ``node``; its DaemonSet starts a new one there."""
    core = cluster.core()
    for p in core.list_namespaced_pod(ns, label_selector=f"app={app}").items:
        if p.spec.node_name == node:
            core.delete_namespaced_pod(p.metadata.name, ns, grace_period_seconds=0)


def policy_served(cluster: SimCluster) -> bool:
    """The ClusterPolicy CRD is served (its kind can be listed)."""
    try:
        client.CustomObjectsApi(cluster.api()).list_cluster_custom_object(
            "nvidia.com", "v1", "clusterpolicies"
        )
    except client.ApiException:
        return False
    return True


def remove_policy_crd(cluster: SimCluster) -> None:
    """Delete the ClusterPolicy CRD and wait until it is gone.

    A module that applies it next would otherwise meet it still terminating, and
    its ClusterPolicy would vanish with it.
    """
    api = client.ApiextensionsV1Api(cluster.api())
    name = CRD["metadata"]["name"]
    kube.ignore_not_found(lambda: api.delete_custom_resource_definition(name))
    cluster.wait_for(
        lambda: kube.ignore_not_found(lambda: api.read_custom_resource_definition(name)) is None,
        60, message=f"CRD {name} gone",
    )  # fmt: skip
