"""scheduler-plugins' Coscheduling for real: a PodGroup's pods bind together or not at all,
and its controller writes what became of them into the PodGroup's status."""

from __future__ import annotations

import time
from typing import Any

import pytest
from component_logs import logs_on_failure
from harness import SimCluster
from kubernetes import client
from simcluster.components import coscheduling

pytestmark = pytest.mark.components("coscheduling")
logged = logs_on_failure(coscheduling.NAMESPACE, coscheduling.PODS)

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name}, "spec": {"minMember": min_member}}  # fmt: skip


def member(group: str, i: int, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{group}-{i}", "labels": {GROUP_LABEL: group}},
        "spec": {
            "schedulerName": coscheduling.SCHEDULER_NAME,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu}}}],
        },
    }  # fmt: skip


def group_status(cluster: SimCluster, ns: str, name: str) -> dict[str, Any]:
    group = client.CustomObjectsApi(cluster.api()).get_namespaced_custom_object(
        "scheduling.x-k8s.io", "v1alpha1", ns, "podgroups", name)  # fmt: skip
    return dict(group.get("status") or {})


def bound(cluster: SimCluster, ns: str, group: str) -> list[str]:
    pods = cluster.core().list_namespaced_pod(ns, label_selector=f"{GROUP_LABEL}={group}").items
    return sorted(p.metadata.name for p in pods if p.spec.node_name)


@logged
def test_a_gang_that_fits_is_bound_as_a_unit(cluster: SimCluster, namespace: str) -> None:
    cluster.apply([pod_group("fits", 2), member("fits", 0, "1"), member("fits", 1, "1")],
                  namespace)  # fmt: skip
    names = cluster.wait_for(lambda: len(b := bound(cluster, namespace, "fits")) == 2 and b,
                             timeout=60, message="both members bound")  # fmt: skip
    assert names == ["fits-0", "fits-1"]
    # once both run, the controller counts them: minMember running makes the group Running
    status = cluster.wait_for(
        lambda: (s := group_status(cluster, namespace, "fits")).get("running") == 2 and s,
        timeout=30, message="the PodGroup's status counting both members running")  # fmt: skip
    assert status["phase"] == "Running"
    assert not status.get("succeeded") and not status.get("failed"), status


@logged
def test_a_gang_that_cannot_fit_binds_no_pod(cluster: SimCluster, namespace: str) -> None:
    # 150 CPUs fit only on the two GPU nodes (192 each): the third member fits nowhere.
    cluster.apply([pod_group("short", 3), *(member("short", i, "150") for i in range(3))],
                  namespace)  # fmt: skip
    # The scheduler must have seen the gang: its members get a scheduling condition.
    cluster.wait_for(
        lambda: all(p.status.conditions for p in cluster.core().list_namespaced_pod(
            namespace).items),
        timeout=60,
        message="members considered by the scheduler",
    )
    end = time.monotonic() + 5
    while time.monotonic() < end:
        assert bound(cluster, namespace, "short") == []
        time.sleep(0.5)
    # all three members exist, none runs: Scheduling, with nothing counted
    status = group_status(cluster, namespace, "short")
    assert status.get("phase") == "Scheduling", status
    assert not any(status.get(k) for k in ("running", "succeeded", "failed")), status
    events = client.CoreV1Api(cluster.api()).list_namespaced_event(namespace).items
    said = " ".join(e.message or "" for e in events)
    assert "short" in said or "PodGroup" in said or "Insufficient cpu" in said, said
