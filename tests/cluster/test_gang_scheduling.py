"""gang-scheduling on the simulated cluster with real Kueue and coscheduling, healthy and broken.

One component start for the module (kueue and coscheduling together, as a
platform with both would run them); each test names its mechanism through
the recipe. Broken: coscheduling without its gang plugin (a gang that cannot
fit starts in part), the gang scheduler down (no gang runs), and a recipe
whose scheduler aicr does not recognise. (Kueue's webhook down is no case
for this check: its Job webhook then refuses the check's own Job too.)
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from component_logs import logs_on_failure
from deployhelp import run_check
from harness import SimCluster
from kubernetes import client
from simcluster.components import coscheduling

from aicr.checks.conformance.gang_scheduling.build import Gang, kueue_quota
from aicr.checks.kube import RestKube
from aicr.checks.probes import Deadline, ProbeSession
from aicr.k8s import KubeTarget
from aicr.kubeapi import KubeApi, credentials
from aicr.runner import Placement, cleanup, names

pytestmark = pytest.mark.components("kueue", "coscheduling")
logged = logs_on_failure(coscheduling.NAMESPACE, "app=scheduler-plugins-scheduler")

CHECK = "gang-scheduling"
GPU_OPERATOR = "- name: gpu-operator\n  namespace: gpu-operator\n"
KUEUE = GPU_OPERATOR + "- name: kueue\n  namespace: kueue-system\n"
COSCHEDULING = GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: scheduler-plugins\n"


def config(tmp_path: Path, start: int) -> str:
    path = tmp_path / "config.yaml"
    path.write_text("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n"
                    f"  validate:\n    checks:\n      {CHECK}:\n        params: "
                    f"{{observeSeconds: 5, startSeconds: {start}, admissionSeconds: 20}}\n")
    return str(path)


def run(cluster: SimCluster, tmp_path: Path, components: str, start: int = 60) -> dict[str, Any]:
    return run_check(cluster, tmp_path, CHECK, components, phase="conformance",
                     config=config(tmp_path, start))  # fmt: skip


def steps(test: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["title"], s["status"]) for s in test["extra"]["evidence"]]


def section(test: dict[str, Any], title: str) -> dict[str, Any]:
    (found,) = [s for s in test["extra"]["evidence"] if s["title"] == title]
    return found


def nothing_left(cluster: SimCluster) -> None:
    """No object of any aicr run is left: pods, Jobs, PodGroups, ClusterQueues, ResourceFlavors."""
    with KubeApi(credentials(KubeTarget(str(cluster.kubeconfig)))) as api:
        assert cleanup.remaining(api, names.run_selector(None)) == []


@logged
def test_kueue_admits_a_gpu_gang_whole_and_holds_one_over_its_quota(
    cluster: SimCluster, tmp_path: Path
) -> None:
    test = run(cluster, tmp_path, KUEUE)
    assert (test["status"], test["message"]) == (
        "passed", "Kueue schedules all-or-nothing: a gang of 2 pods (GPU) ran as a unit and a "
        "gang that cannot fit kept 0 pods bound for 5s"), test["message"]  # fmt: skip
    assert steps(test) == [("gang mechanism", "informational"), ("capacity", "informational"),
                           ("gang that fits", "passed"), ("gang that cannot fit", "passed"),
                           ("workloads", "passed")]  # fmt: skip
    assert section(test, "capacity")["verdict"].startswith("GPU-requesting: ")
    held = section(test, "gang that cannot fit")
    assert re.search(r"0/3 pods bound for \d+s; Workload job-gang-short-\w+: QuotaReserved=False "
                     r"\(Pending\)", held["verdict"]), held["verdict"]  # fmt: skip
    assert "observation window opens" in held["answer"]
    nothing_left(cluster)


@logged
def test_coscheduling_binds_a_pod_group_whole_and_none_of_one_that_cannot_fit(
    cluster: SimCluster, tmp_path: Path
) -> None:
    test = run(cluster, tmp_path, COSCHEDULING)
    assert (test["status"], test["message"]) == (
        "passed", "coscheduling (scheduler-plugins) schedules all-or-nothing: a gang of 2 pods "
        "(GPU) ran as a unit and a gang that cannot fit kept 0 pods bound for 5s"), \
        test["message"]  # fmt: skip
    held = section(test, "gang that cannot fit")
    # 9 one-GPU pods pinned to the 8-GPU node with the most free GPUs
    assert re.match(r"9 pods of 10m CPU and 1 GPU each, pinned to gpu-h100-\d", held["asked"])
    assert re.search(r"0/9 pods bound for \d+s; \d/9 members unschedulable", held["verdict"]), \
        held["verdict"]  # fmt: skip
    nothing_left(cluster)


@logged
def test_a_scheduler_without_its_gang_plugin_fails_naming_the_pods_that_ran(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("gang-plugin-disabled")
    apps = client.AppsV1Api(cluster.api())

    def rolled_out() -> bool:
        dep = apps.read_namespaced_deployment(coscheduling.NAME, coscheduling.NAMESPACE)
        s = dep.status
        return bool(s.updated_replicas == 1 and s.ready_replicas == 1 and s.replicas == 1)

    cluster.wait_for(rolled_out, 60, message="the scheduler without Coscheduling rolled out")
    test = run(cluster, tmp_path, COSCHEDULING)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(
        r"1/2 gang steps failed: gang that cannot fit: partial start: 8/9 pods of a gang that "
        r"cannot fit were bound: (gang-short-\d on gpu-h100-\d(, )?){8}", test["message"]
    ), test["message"]
    nothing_left(cluster)


@logged
def test_a_gang_scheduler_that_is_down_fails_the_gang_that_fits(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("gang-scheduler-down")
    test = run(cluster, tmp_path, COSCHEDULING, start=8)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(
        r"1/1 gang steps failed: gang that fits: 0/2 pods running within 8s: "
        r"gang-fits-0: Pending, not scheduled yet; gang-fits-1: Pending, not scheduled yet",
        test["message"]), test["message"]  # fmt: skip
    nothing_left(cluster)


def test_a_scheduler_aicr_does_not_recognise_fails_naming_it(
    cluster: SimCluster, tmp_path: Path
) -> None:
    test = run(cluster, tmp_path, GPU_OPERATOR + "- name: yunikorn\n  namespace: yunikorn\n")
    assert (test["status"], test["message"]) == (
        "failed", "1/1 gang steps failed: gang mechanism: found a scheduler aicr does not "
        "recognise as a gang scheduler: recipe component yunikorn"), test["message"]  # fmt: skip


def test_a_killed_checks_cluster_scoped_quota_is_removed_by_run_cleanup(
    cluster: SimCluster, namespace: str
) -> None:
    """Ctrl-C or a Job deadline kills the check before its session closes: run cleanup finds
    its ResourceFlavor and ClusterQueue (stored as v1beta2) by the run's labels."""
    run_id = "r" + secrets.token_hex(4)
    labels = names.check_labels(run_id, CHECK, "conformance")
    with KubeApi(credentials(KubeTarget(str(cluster.kubeconfig)))) as api:
        session = ProbeSession(RestKube(api), namespace, labels, Placement(), Deadline.after(60))
        for obj in kueue_quota("v1beta2", f"aicr-{run_id}", Gang("g", 2, 0, 10)):
            session.create(obj)
        assert sorted(cleanup.remaining(api, names.run_selector(run_id))) == [
            f"ClusterQueue aicr-{run_id}", f"ResourceFlavor aicr-{run_id}"]
    left = cleanup.cleanup(KubeTarget(str(cluster.kubeconfig)), run_id, all_runs=False)
    assert left == []
    nothing_left(cluster)
