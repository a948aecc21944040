"""Controllers are real: Jobs complete, namespaces finish deleting, Pod Security enforces."""

from __future__ import annotations

import pytest
from harness import SimCluster
from kubernetes import client
from kubernetes.client.rest import ApiException
from manifests import job, pod, validator_pod


def test_job_pod_is_scheduled_completes_and_job_is_complete(
    cluster: SimCluster, namespace: str
) -> None:
    cluster.apply(job("simple", {"containers": [{"name": "c", "image": "busybox:1"}]}), namespace)
    batch = client.BatchV1Api(cluster.api())

    def complete() -> bool:
        conds = batch.read_namespaced_job("simple", namespace).status.conditions or []
        return any(c.type == "Complete" and c.status == "True" for c in conds)

    cluster.wait_for(complete, timeout=60, message="Job Complete")
    pods = cluster.core().list_namespaced_pod(namespace, label_selector="job-name=simple").items
    assert len(pods) == 1
    assert pods[0].spec.node_name in cluster.nodes
    assert pods[0].status.phase == "Succeeded"
    assert pods[0].status.container_statuses[0].state.terminated.exit_code == 0


def test_deleting_a_namespace_finishes(cluster: SimCluster) -> None:
    ns = cluster.fresh_namespace("del")
    cluster.apply(pod("p"), ns)
    cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, ns)
    cluster.apply(validator_pod("done", ["sh", "-c", "exit 0"]), ns)
    cluster.apply(validator_pod("busy", ["sleep", "300"], terminationGracePeriodSeconds=1), ns)
    cluster.wait_for_phase(ns, "p", "Running")
    cluster.wait_for_phase(ns, "done", "Succeeded")
    cluster.wait_for_phase(ns, "busy", "Running")
    cluster.delete_namespace(ns, wait=True, timeout=90)


def test_restricted_namespace_is_enforced_and_others_are_not(cluster: SimCluster) -> None:
    privileged = {"securityContext": {"privileged": True}}
    restricted = cluster.fresh_namespace(
        "psa", labels={"pod-security.kubernetes.io/enforce": "restricted"}
    )
    plain = cluster.fresh_namespace("psa")
    manifest = pod("priv")
    manifest["spec"]["containers"][0].update(privileged)
    with pytest.raises(ApiException) as denied:
        cluster.core().create_namespaced_pod(restricted, manifest)
    assert denied.value.status == 403
    assert "violates PodSecurity" in denied.value.body
    cluster.core().create_namespaced_pod(plain, manifest)
    for ns in (restricted, plain):
        cluster.delete_namespace(ns, wait=False)


def test_kubernetes_service_has_no_endpoints_and_nodes_are_loopback(cluster: SimCluster) -> None:
    core = cluster.core()
    eps = client.DiscoveryV1Api(cluster.api()).list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=kubernetes"
    )
    assert all(not s.endpoints for s in eps.items)
    for node in core.list_node().items:
        ips = [a.address for a in node.status.addresses if a.type == "InternalIP"]
        assert ips == ["127.0.0.1"]
