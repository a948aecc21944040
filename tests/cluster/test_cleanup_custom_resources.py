"""Run cleanup removes the custom resources a check created, even when the check never could.

A check's probe session removes its own objects; this covers the check that was
killed first (its Job's deadline, a node lost): the run's cleanup must find the
custom resource by the kinds the catalog lets checks create.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from harness import SimCluster
from kubernetes import client
from manifests import crd
from runhelp import remaining

from aicr.checks.probes import Deadline, ProbeSession
from aicr.kube import names
from aicr.kube.dicts import RestKube
from aicr.kube.placement import Placement
from aicr.kube.rest import KubeApi, KubeApiError, credentials
from aicr.kube.target import KubeTarget
from aicr.runner import cleanup

RAY_CRD = crd("ray.io", "rayclusters", "RayCluster")


@pytest.fixture
def rest(cluster: SimCluster) -> Iterator[RestKube]:
    """The REST client a check uses, with admin rights, and the RayCluster CRD installed."""
    cluster.apply(RAY_CRD)
    api = KubeApi(credentials(KubeTarget(str(cluster.kubeconfig))))

    def served() -> bool:
        try:
            api.get("/apis/ray.io/v1/rayclusters")
        except KubeApiError:
            return False
        return True

    cluster.wait_for(served, 30, message="RayCluster CRD served")
    yield RestKube(api)
    api.close()
    ext = client.ApiextensionsV1Api(cluster.api())
    try:
        ext.delete_custom_resource_definition(RAY_CRD["metadata"]["name"])
    except client.ApiException as exc:
        if exc.status != 404:
            raise

    def gone() -> bool:  # the next test's create is refused while the CRD is terminating
        try:
            ext.read_custom_resource_definition(RAY_CRD["metadata"]["name"])
        except client.ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    cluster.wait_for(gone, 60, message="RayCluster CRD gone")


def _raycluster(rest: RestKube, namespace: str) -> tuple[str, ProbeSession]:
    """A run id, and a check's probe session that created RayCluster ``rc`` with it."""
    run_id = "r" + secrets.token_hex(4)
    labels = names.check_labels(run_id, "robust-controller", "conformance")
    session = ProbeSession(rest, namespace, labels, Placement(), Deadline.after(60))
    session.create({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc"},
                    "spec": {"headGroupSpec": {}}})  # fmt: skip
    return run_id, session


def test_a_custom_resource_left_by_a_killed_check_is_removed_by_run_cleanup(
    cluster: SimCluster, namespace: str, rest: RestKube
) -> None:
    run_id, _ = _raycluster(rest, namespace)  # the check is killed: its session never closes
    assert remaining(cluster, run_id) == [f"RayCluster {namespace}/rc"]
    left = cleanup.cleanup(KubeTarget(str(cluster.kubeconfig)), run_id, all_runs=False)
    assert left == [] and remaining(cluster, run_id) == []
    assert rest.get("RayCluster", "rc", namespace) is None


def test_the_probe_session_removes_its_custom_resource_itself(
    cluster: SimCluster, namespace: str, rest: RestKube
) -> None:
    run_id, session = _raycluster(rest, namespace)
    section = session.close()
    assert section is not None and section.status == "passed", section
    assert section.asked == f"created RayCluster {namespace}/rc"
    assert remaining(cluster, run_id) == []
