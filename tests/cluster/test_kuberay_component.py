"""KubeRay for real: its webhook rejects an invalid RayCluster; it reconciles a valid one."""

from __future__ import annotations

from typing import Any

import pytest
from component_logs import logs_on_failure
from harness import SimCluster
from kubernetes.client.rest import ApiException
from simcluster.cluster import kube
from simcluster.components import kuberay

pytestmark = pytest.mark.components("kuberay")
logged = logs_on_failure(kuberay.NAMESPACE, "app.kubernetes.io/name=kuberay")


def ray_cluster(name: str, groups: list[str]) -> dict[str, Any]:
    pod = {"spec": {"containers": [{"name": "ray", "image": "docker.io/rayproject/ray:2.46.0"}]}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": pod},
            "workerGroupSpecs": [{"groupName": g, "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                                  "rayStartParams": {}, "template": pod} for g in groups],
        },
    }  # fmt: skip


@logged
def test_the_webhook_refuses_duplicate_worker_groups(cluster: SimCluster, namespace: str) -> None:
    res = kube.dynamic(cluster.api()).resources.get(api_version="ray.io/v1", kind="RayCluster")
    with pytest.raises(ApiException) as refused:
        res.create(body=ray_cluster("twice", ["w", "w"]), namespace=namespace)
    assert refused.value.status == 422
    assert "worker group names must be unique" in str(refused.value.body)


@logged
def test_a_valid_ray_cluster_gets_its_head_pod(cluster: SimCluster, namespace: str) -> None:
    cluster.apply(ray_cluster("ok", ["w"]), namespace)
    heads = cluster.wait_for(
        lambda: cluster.core().list_namespaced_pod(
            namespace, label_selector="ray.io/cluster=ok,ray.io/node-type=head").items,
        timeout=60, message="the operator to create the head pod")  # fmt: skip
    assert len(heads) == 1
