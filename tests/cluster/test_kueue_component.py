"""Kueue for real: quota admits a Job as a whole or not at all; its webhooks guard its objects."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from component_logs import logs_on_failure
from harness import SimCluster
from kubernetes import client
from kubernetes.client.rest import ApiException
from simcluster.cluster import kube
from simcluster.components import kueue

pytestmark = pytest.mark.components("kueue")
logged = logs_on_failure(kueue.NAMESPACE, "app.kubernetes.io/name=kueue")
API = "kueue.x-k8s.io/v1beta2"


def cluster_queue(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{"name": name, "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
            }],
        },
    }  # fmt: skip


def job(name: str, queue: str, pods: int, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": cpu}}}],
            }},
        },
    }  # fmt: skip


@pytest.fixture
def queue(cluster: SimCluster, namespace: str) -> Iterator[str]:
    """A ResourceFlavor and ClusterQueue with 4 CPUs of quota, and a LocalQueue in `namespace`."""
    name = f"q-{namespace}"
    cluster.apply([{"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}},
                   cluster_queue(name, "4")])  # fmt: skip
    cluster.apply({"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "lq"},
                   "spec": {"clusterQueue": name}}, namespace)  # fmt: skip
    yield "lq"
    dyn = kube.dynamic(cluster.api())
    for kind in ("ClusterQueue", "ResourceFlavor"):
        res = dyn.resources.get(api_version=API, kind=kind)
        kube.ignore_not_found(lambda res=res: res.delete(name=name))


def pods_of(cluster: SimCluster, ns: str, job_name: str) -> list[Any]:
    return cluster.core().list_namespaced_pod(ns, label_selector=f"job-name={job_name}").items


@logged
def test_a_job_within_quota_runs_and_one_over_it_starts_no_pod(
    cluster: SimCluster, namespace: str, queue: str
) -> None:
    cluster.apply(job("fits", queue, 2, "1"), namespace)
    cluster.wait_for(lambda: len([p for p in pods_of(cluster, namespace, "fits")
                                  if p.spec.node_name]) == 2,
                     timeout=60, message="both pods of the admitted Job bound")  # fmt: skip
    # 3 x 2 CPUs exceed the whole quota of 4: never admitted, even once "fits" has finished.
    cluster.apply(job("too-big", queue, 3, "2"), namespace)
    batch = client.BatchV1Api(cluster.api())
    assert batch.read_namespaced_job("too-big", namespace).spec.suspend is True
    end = time.monotonic() + 5
    while time.monotonic() < end:
        assert pods_of(cluster, namespace, "too-big") == []
        time.sleep(0.5)
    workloads = kube.dynamic(cluster.api()).resources.get(api_version=API, kind="Workload")
    (wl,) = [w for w in workloads.get(namespace=namespace).items
             if w.metadata.ownerReferences[0].name == "too-big"]  # fmt: skip
    reserved = {c.type: c.status for c in wl.status.conditions or []}
    assert reserved.get("QuotaReserved") == "False", wl.status


@logged
def test_webhook_down_refuses_kueue_objects_until_healed(cluster: SimCluster) -> None:
    cluster.fault("webhook-down")
    res = kube.dynamic(cluster.api()).resources.get(api_version=API, kind="ClusterQueue")

    def refused() -> str | None:
        try:
            res.create(body=cluster_queue("refused", "1"), dry_run="All")
        except ApiException as e:
            return str(e.body) if "failed calling webhook" in str(e.body) else None
        return None

    said = cluster.wait_for(refused, timeout=60, message="the webhook call to fail")
    assert kueue.SERVICE in said
    cluster.heal()
    cluster.wait_for(lambda: res.create(body=cluster_queue("ok", "1"), dry_run="All"),
                     timeout=90, message="ClusterQueues admitted again")  # fmt: skip
