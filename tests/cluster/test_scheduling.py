"""The real scheduler decides: taints, tolerations, node and pod affinity, node groups."""

from __future__ import annotations

from typing import Any

from harness import SimCluster
from manifests import GPU_TOLERATION, pod


def _node_of(cluster: SimCluster, ns: str, name: str) -> str:
    p = cluster.wait_for_pod(ns, name, lambda p: bool(p["spec"].get("nodeName")))
    return str(p["spec"]["nodeName"])


def _unschedulable_message(cluster: SimCluster, ns: str, name: str) -> str:
    def cond(p: dict[str, Any]) -> bool:
        return any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in p.get("status", {}).get("conditions") or []
        )

    p = cluster.wait_for_pod(ns, name, cond, message="Unschedulable condition")
    return next(c["message"] for c in p["status"]["conditions"] if c["type"] == "PodScheduled")


def test_gpu_request_without_toleration_is_unschedulable(
    cluster: SimCluster, namespace: str
) -> None:
    res = {"limits": {"nvidia.com/gpu": "1"}}
    cluster.apply(pod("no-tol", resources=res), namespace)
    msg = _unschedulable_message(cluster, namespace, "no-tol")
    assert "untolerated taint" in msg and "nvidia.com/gpu" in msg


def test_gpu_request_with_toleration_lands_on_a_gpu_node(
    cluster: SimCluster, namespace: str
) -> None:
    res = {"limits": {"nvidia.com/gpu": "8"}}
    cluster.apply(pod("tol", resources=res, tolerations=[GPU_TOLERATION]), namespace)
    assert _node_of(cluster, namespace, "tol") in cluster.gpu_nodes
    cluster.wait_for_phase(namespace, "tol", "Running")


def test_untolerating_pods_avoid_gpu_nodes(cluster: SimCluster, namespace: str) -> None:
    for i in range(4):
        cluster.apply(pod(f"cpu-{i}"), namespace)
    nodes = {_node_of(cluster, namespace, f"cpu-{i}") for i in range(4)}
    assert nodes <= {"cpu-customer-0", "cpu-system-0"}


def test_node_affinity_selects_a_node_group(cluster: SimCluster, namespace: str) -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "aicr.dev/node-group", "operator": "In", "values": ["system"]}
                        ]
                    }
                ]
            }
        }
    }
    for i in range(3):
        cluster.apply(pod(f"sys-{i}", affinity=affinity), namespace)
        assert _node_of(cluster, namespace, f"sys-{i}") == "cpu-system-0"


def test_pod_affinity_follows_a_pod_across_node_groups(cluster: SimCluster, namespace: str) -> None:
    # "Prometheus" pinned to the customer group; a pod with required podAffinity to it
    # must land on the same node, even though it would otherwise spread.
    cluster.apply(
        pod("prometheus", labels={"app": "prometheus"}, nodeSelector={
            "aicr.dev/node-group": "customer"}),
        namespace,
    )  # fmt: skip
    assert _node_of(cluster, namespace, "prometheus") == "cpu-customer-0"
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "prometheus"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    for i in range(3):
        cluster.apply(pod(f"probe-{i}", affinity=affinity, tolerations=[GPU_TOLERATION]), namespace)
        assert _node_of(cluster, namespace, f"probe-{i}") == "cpu-customer-0"


def test_pod_affinity_to_absent_pod_is_unschedulable(cluster: SimCluster, namespace: str) -> None:
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "absent"}},
                 "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }  # fmt: skip
    cluster.apply(pod("orphan", affinity=affinity), namespace)
    assert "affinity" in _unschedulable_message(cluster, namespace, "orphan")


def test_image_locality_prefers_the_node_with_the_image(
    cluster: SimCluster, namespace: str
) -> None:
    image = f"registry.example/big-image:{cluster.run_id}"
    cluster.set_node_images("cpu-system-0", [image], size_bytes=3_000_000_000)
    placed = set()
    for i in range(3):
        cluster.apply(pod(f"img-{i}", image=image), namespace)
        placed.add(_node_of(cluster, namespace, f"img-{i}"))
    assert placed == {"cpu-system-0"}
