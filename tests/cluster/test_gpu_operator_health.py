"""gpu-operator-health on the simulated cluster: a stand-in operator whose operands really run.

Each operand is a DaemonSet on the GPU nodes (`gpu_operator.gpu_node_daemon_set`),
so `hack/sim/sim fault never-ready|image-pull NODE` breaks the operand pods
started on that node afterwards, as a hung or unpullable operand would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from deployhelp import run_check
from gpu_operator import (
    CRD,
    daemon_sets_ready,
    deployment,
    gpu_node_daemon_set,
    policy,
    policy_served,
    remove_policy_crd,
    restart_on,
)
from harness import SimCluster
from kubernetes import client

from aicr.checks.gpu_operator import OPERANDS

NODE0, NODE1 = "gpu-h100-0", "gpu-h100-1"
CHECK = "gpu-operator-health"
# the check's own pod stays off the GPU nodes, whose node faults would hit it too
OFF_GPU = {"orchestrator_node_selector": {"aicr.dev/node-group": "system"}}


@pytest.fixture
def operator(cluster: SimCluster) -> Iterator[str]:
    """A healthy operator in a fresh namespace; the recipe's component for it."""
    cluster.apply(CRD)
    cluster.wait_for(lambda: policy_served(cluster), 30, message="ClusterPolicy CRD served")
    ns = cluster.fresh_namespace("gpu-op")
    cluster.apply([deployment("gpu-operator"), *(gpu_node_daemon_set(o.app) for o in OPERANDS)], ns)
    cluster.apply(policy("ready"))
    cluster.wait_for(lambda: daemon_sets_ready(cluster, ns), 90, message=f"operands in {ns} ready")
    yield ns
    client.CustomObjectsApi(cluster.api()).delete_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy"
    )
    cluster.delete_namespace(ns, wait=False)


@pytest.fixture(scope="module", autouse=True)
def remove_crd(sim_cluster: SimCluster) -> Iterator[None]:
    """The ClusterPolicy CRD goes away with this module."""
    yield
    remove_policy_crd(sim_cluster)


def component(ns: str) -> str:
    return f"- name: gpu-operator\n  namespace: {ns}\n"


def _state_on(cluster: SimCluster, ns: str, app: str, node: str, want: str) -> bool:
    pods = cluster.core().list_namespaced_pod(ns, label_selector=f"app={app}").items
    for p in pods:
        if p.spec.node_name == node and not p.metadata.deletion_timestamp:
            for cs in p.status.container_statuses or []:
                waiting = cs.state.waiting.reason if cs.state.waiting else None
                if want == "not-ready" and cs.state.running and not cs.ready:
                    return True
                if waiting and re.fullmatch(want, waiting):
                    return True
    return False


def test_healthy_operator_passes(cluster: SimCluster, operator: str, tmp_path: Path) -> None:
    test = run_check(cluster, tmp_path, CHECK, component(operator), phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", f"GPU Operator healthy: ClusterPolicy ready; 6 operands ready on 2 GPU nodes "
        f"({NODE0}, {NODE1})")  # fmt: skip
    titles = [s["title"] for s in test["extra"]["evidence"]]
    assert titles == [
        "ClusterPolicy",
        "operator",
        "GPU nodes",
        *(f"operand {o.app}" for o in OPERANDS),
    ]


@pytest.mark.parametrize(
    ("fault", "app", "state", "why"),
    [("never-ready", "nvidia-dcgm-exporter", "not-ready", "is running but not ready"),
     ("image-pull", "nvidia-device-plugin-daemonset", "ErrImagePull|ImagePullBackOff",
      "container nvidia-device-plugin-daemonset is (ErrImagePull|ImagePullBackOff)")],
    ids=["never-ready", "image-pull"],
)  # fmt: skip
def test_a_broken_operand_fails_naming_the_node(
    cluster: SimCluster, operator: str, tmp_path: Path, fault: str, app: str, state: str, why: str
) -> None:
    cluster.fault(fault, NODE1)
    restart_on(cluster, operator, app, NODE1)
    cluster.wait_for(lambda: _state_on(cluster, operator, app, NODE1, state), 60,
                     message=f"{app} on {NODE1} shows {fault}")  # fmt: skip
    test = run_check(cluster, tmp_path, CHECK, component(operator), phase="conformance", **OFF_GPU)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(
        f"1/8 GPU Operator parts failed: operand {app}: no ready pod on {NODE1} \\({why}\\)",
        test["message"]), test["message"]  # fmt: skip


def test_a_policy_that_is_not_ready_fails(
    cluster: SimCluster, operator: str, tmp_path: Path
) -> None:
    cluster.apply(policy("notReady"))
    test = run_check(cluster, tmp_path, CHECK, component(operator), phase="conformance")
    assert (test["status"], test["message"]) == (
        "failed", "1/8 GPU Operator parts failed: ClusterPolicy: ClusterPolicy cluster-policy: "
        "state is notReady, not ready")  # fmt: skip
