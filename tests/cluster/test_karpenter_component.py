"""Karpenter (KWOK provider) for real: a GPU pod no node fits gets a new GPU node, then it goes."""

from __future__ import annotations

import time
from typing import Any

import pytest
from component_logs import logs_on_failure
from harness import SimCluster
from simcluster.cluster import kube
from simcluster.components import karpenter
from simcluster.nodes import provisioned
from simcluster.nodes.layout import PROFILE_ANNOTATION

pytestmark = pytest.mark.components("karpenter")
logged = logs_on_failure(karpenter.NAMESPACE, "app.kubernetes.io/name=karpenter")



def gpu_pod(name: str, gpus: int = 8) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"karpenter.sh/nodepool": karpenter.NODEPOOL},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
        },
    }  # fmt: skip


def node_claims(cluster: SimCluster) -> list[Any]:
    res = kube.dynamic(cluster.api()).resources.get(api_version="karpenter.sh/v1", kind="NodeClaim")
    return list(res.get().items)


@logged
def test_a_pending_gpu_pod_gets_a_gpu_node_that_goes_when_the_pod_does(
    cluster: SimCluster, namespace: str
) -> None:
    cluster._dirty = True  # provisioned nodes are removed by the reset if the test fails
    cluster.apply(gpu_pod("wants-8"), namespace)
    pod = cluster.wait_for_pod(namespace, "wants-8", lambda p: bool(p["spec"].get("nodeName")),
                               timeout=90, message="bound to a provisioned node")  # fmt: skip
    node = kube.to_dict(cluster.api(), cluster.core().read_node(pod["spec"]["nodeName"]))
    labels, notes = node["metadata"]["labels"], node["metadata"]["annotations"]
    assert labels[provisioned.NODEPOOL_LABEL] == karpenter.NODEPOOL
    assert labels["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    cluster.wait_for(
        lambda: (n := cluster.core().read_node(pod["spec"]["nodeName"])).metadata.labels.get(
            "nvidia.com/gpu.present") == "true" and n, timeout=30,
        message="the runtime to give the new node its GPU model")  # fmt: skip
    node = kube.to_dict(cluster.api(), cluster.core().read_node(pod["spec"]["nodeName"]))
    assert node["metadata"]["annotations"][PROFILE_ANNOTATION] == "p5-h100"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert notes.get("kwok.x-k8s.io/node") == "fake"
    assert len(node_claims(cluster)) == 1
    cluster.core().delete_namespaced_pod("wants-8", namespace, grace_period_seconds=0)
    cluster.wait_for(lambda: not provisioned.provisioned_nodes(cluster.api()), timeout=90,
                     message="the empty node consolidated away")  # fmt: skip
    # Karpenter lifts the NodeClaim's termination finalizer after its Node has gone
    cluster.wait_for(lambda: node_claims(cluster) == [], timeout=30,
                     message="the NodeClaim gone after its node")  # fmt: skip


@logged
def test_with_the_autoscaler_stopped_no_node_comes(cluster: SimCluster, namespace: str) -> None:
    cluster.fault("autoscaler-stopped")
    cluster.wait_for(
        lambda: not cluster.core().list_namespaced_pod(
            karpenter.NAMESPACE, label_selector="app.kubernetes.io/name=karpenter").items,
        timeout=30, message="Karpenter's pod gone")  # fmt: skip
    cluster.apply(gpu_pod("stranded"), namespace)
    end = time.monotonic() + 8
    while time.monotonic() < end:
        assert node_claims(cluster) == []
        assert not cluster.pod(namespace, "stranded")["spec"].get("nodeName")
        time.sleep(1)
    cluster.heal()
    cluster.wait_for(lambda: node_claims(cluster), timeout=90, message="a NodeClaim once healed")
