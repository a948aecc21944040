"""gang-scheduling on the simulated cluster with real Kueue and coscheduling, healthy and broken.

One component start for the module (kueue and coscheduling together, as a
platform with both would run them); each test names its mechanism through
the recipe. Broken: coscheduling without its gang plugin (a gang that cannot
fit starts in part), the gang scheduler down (no gang runs), a recipe whose
scheduler aicr does not recognise, and Kueue without its `batch/job` integration
or with its controller down: its Job webhook then refuses every Job, the run's own
check Job included (status other, in the webhook's words). The check's
ClusterRole, as the run renders it, deletes its own ClusterQueue and
ResourceFlavor and no other.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from component_logs import logs_on_failure
from deployhelp import run_check
from harness import SimCluster
from kubernetes import client
from kubernetes.client.rest import ApiException
from runhelp import make_ctx, planned
from simcluster.components import coscheduling, kueue

from aicr.checks.conformance.gang_scheduling.build import Gang, kueue_quota
from aicr.checks.probes import Deadline, ProbeSession
from aicr.kube import names
from aicr.kube.dicts import RestKube
from aicr.kube.placement import Placement
from aicr.kube.rest import KubeApi, credentials
from aicr.kube.target import KubeTarget
from aicr.runner import cleanup, manifests

pytestmark = pytest.mark.components("kueue", "coscheduling")
logged = logs_on_failure(coscheduling.NAMESPACE, coscheduling.PODS)
KUEUE_PODS = "app.kubernetes.io/name=kueue"
kueue_logged = logs_on_failure(kueue.NAMESPACE, KUEUE_PODS)

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


def rolled_out(cluster: SimCluster, namespace: str, name: str) -> None:
    """Wait until the Deployment's new template runs alone: one pod, updated and ready."""
    apps, core = client.AppsV1Api(cluster.api()), cluster.core()

    def done() -> bool:
        dep = apps.read_namespaced_deployment(name, namespace)
        s = dep.status
        selector = ",".join(f"{k}={v}" for k, v in dep.spec.selector.match_labels.items())
        pods = core.list_namespaced_pod(namespace, label_selector=selector).items
        return bool(s.observed_generation == dep.metadata.generation and s.updated_replicas == 1
                    and s.ready_replicas == 1 and s.replicas == 1
                    and len(pods) == 1)  # the old pod is gone, not only terminating

    cluster.wait_for(done, 90, message=f"{namespace}/{name} rolled out alone")


def fails_with(
    cluster: SimCluster, tmp_path: Path, components: str, pattern: str, start: int = 60
) -> None:
    """The check fails with a message matching ``pattern`` in full and leaves nothing behind."""
    test = run(cluster, tmp_path, components, start)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(pattern, test["message"]), test["message"]
    nothing_left(cluster)


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
    # scheduler-plugins' controller counts the running gang into its PodGroup's status
    fits = section(test, "gang that fits")
    assert "PodGroup gang-fits: phase Running, 2 running, 0 succeeded, 0 failed" in \
        fits["answer"], fits["answer"]  # fmt: skip
    held = section(test, "gang that cannot fit")
    # 9 one-GPU pods pinned to the node with the most free GPUs: one more than its allocatable
    assert re.match(r"9 pods of 10m CPU and 1 GPU each, pinned to (gpu-h100-\d) \(9 GPUs in all; "
                    r"\1 has 8 allocatable, so it cannot fit even on an empty node\)",
                    held["asked"]), held["asked"]  # fmt: skip
    # all 9 members exist and none runs: the controller's Scheduling phase, nothing counted
    assert re.fullmatch(r"0/9 pods bound for \d+s; PodGroup gang-short: phase Scheduling, "
                        r"0 running, 0 succeeded, 0 failed", held["verdict"]), \
        held["verdict"]  # fmt: skip
    nothing_left(cluster)


@logged
def test_a_scheduler_without_its_gang_plugin_fails_naming_the_pods_that_ran(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("gang-plugin-disabled")
    rolled_out(cluster, coscheduling.NAMESPACE, coscheduling.NAME)
    fails_with(cluster, tmp_path, COSCHEDULING,
               r"1/2 gang steps failed: gang that cannot fit: partial start: 8/9 pods of a gang "
               r"that cannot fit were bound: (gang-short-\d on gpu-h100-\d(, )?){8}")  # fmt: skip


@logged
def test_a_gang_scheduler_that_is_down_fails_the_gang_that_fits(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("gang-scheduler-down")
    fails_with(cluster, tmp_path, COSCHEDULING,
               r"1/1 gang steps failed: gang that fits: 0/2 pods running within 8s: "
               r"gang-fits-0: Pending, not scheduled yet; gang-fits-1: Pending, not scheduled yet",
               start=8)  # fmt: skip


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


def test_the_checks_role_deletes_its_own_cluster_queue_and_no_one_elses(
    cluster: SimCluster, namespace: str
) -> None:
    """RBAC cannot narrow create to names, but the run knows the run-unique name of the
    check's quota when it renders the role, so delete is pinned to it."""
    ctx = make_ctx(cluster, namespace=namespace)
    check = planned(CHECK)
    own, other = names.workload_namespace(ctx.run_id, CHECK), f"someone-elses-{ctx.run_id}"
    labels = names.run_labels(ctx.run_id)  # run cleanup removes all of it at the end
    cluster.apply([manifests.service_account(ctx, check), *manifests.cluster_rbac(ctx, check)])
    admin = client.CustomObjectsApi(cluster.api())
    as_check = client.CustomObjectsApi(cluster.api_as(
        cluster.token_for(namespace, names.check_name(ctx.run_id, CHECK))))  # fmt: skip
    try:
        for api, name in ((admin, other), (as_check, own)):
            for obj in kueue_quota("v1beta2", name, Gang("g", 2, 0, 10)):
                obj["metadata"]["labels"] = labels
                api.create_cluster_custom_object("kueue.x-k8s.io", "v1beta2",
                                                 f"{obj['kind'].lower()}s", obj)  # fmt: skip
        for plural in ("clusterqueues", "resourceflavors"):
            with pytest.raises(ApiException) as denied:
                as_check.delete_cluster_custom_object("kueue.x-k8s.io", "v1beta2", plural, other)
            assert denied.value.status == 403, denied.value.body
            assert f'cannot delete resource "{plural}"' in json.loads(denied.value.body)["message"]
            as_check.delete_cluster_custom_object("kueue.x-k8s.io", "v1beta2", plural, own)
            admin.get_cluster_custom_object("kueue.x-k8s.io", "v1beta2", plural, other)
    finally:
        assert cleanup.cleanup(KubeTarget(str(cluster.kubeconfig)), ctx.run_id,
                               all_runs=False) == []  # fmt: skip
    nothing_left(cluster)


def kueue_rolled_out(cluster: SimCluster) -> None:
    rolled_out(cluster, kueue.NAMESPACE, kueue.NAME)


def kueue_gone(cluster: SimCluster) -> None:
    cluster.wait_for(lambda: not cluster.core().list_namespaced_pod(
        kueue.NAMESPACE, label_selector=KUEUE_PODS).items, 60,
        message="Kueue's pod gone")  # fmt: skip


@kueue_logged
@pytest.mark.parametrize(
    ("fault", "settled", "refusal"),
    [
        # Kueue 0.17 registers its Job webhook even without the integration, and it then
        # dereferences options it was never given
        ("queue-jobs-unmanaged", kueue_rolled_out,
         r'admission webhook "mjob\.kb\.io" denied the request: panic: runtime error: invalid '
         r"memory address or nil pointer dereference.*"),
        ("webhook-down", kueue_gone,
         r'Internal error occurred: failed calling webhook "mjob\.kb\.io": .*no endpoints '
         r'available for service "kueue-webhook-service"'),
    ],
    ids=["batch-job-integration-left-out", "controller-down"],
)  # fmt: skip
def test_a_broken_kueue_refuses_the_checks_own_job_in_its_webhooks_words(
    cluster: SimCluster, tmp_path: Path, fault: str, settled: Any, refusal: str
) -> None:
    """Kueue's Job webhook matches every Job outside its own and kube-system's namespaces:
    broken, it refuses the run's Job of the check itself, which is never a pass or a skip."""
    kueue_rolled_out(cluster)  # no Kueue pod still starting from an earlier test's healing
    cluster.fault(fault)
    settled(cluster)
    test = run(cluster, tmp_path, KUEUE)
    assert test["status"] == "other", test["message"]
    assert re.fullmatch(r"cannot create Job aicr-r[0-9a-f]{8}-gang-scheduling: HTTP 500 Internal "
                        r"Server Error: " + refusal, test["message"]), test["message"]  # fmt: skip
    nothing_left(cluster)
