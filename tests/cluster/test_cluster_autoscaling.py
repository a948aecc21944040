"""cluster-autoscaling on the simulated cluster with Karpenter (KWOK provider) running for real.

Healthy: the check fills the two static GPU nodes, its GPU pods get a new node
of the NodePool `gpu`, and the node is consolidated away once they are gone
(the sim's NodePool consolidates after 5 s). Broken: a NodePool whose GPU
limit forbids the node, `sim fault autoscaler-stopped`, and no NodePool at all
(no recognised autoscaler: failed, never skipped). DRA mode: Karpenter v1.14.1
refuses pods with resource claims (its IGNORE_DRA_REQUESTS default), and the
check fails with its words. Ctrl-C on `aicr validate` during the scale-up
leaves nothing of the run, and the node Karpenter made for it goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from component_logs import logs_on_failure
from deployhelp import recipe_text, run_check
from harness import SimCluster
from runhelp import interrupted, remaining, start_validate
from simcluster.cluster import kube
from simcluster.components import karpenter
from simcluster.nodes import provisioned

pytestmark = pytest.mark.components("karpenter")
logged = logs_on_failure(karpenter.NAMESPACE, "app.kubernetes.io/name=karpenter")
CHECK = "cluster-autoscaling"
NO_COMPONENTS = "  []\n"
DRA = ("- name: gpu-operator\n  namespace: gpu-operator\n"
       "  overrides: {devicePlugin: {enabled: false}}\n"
       "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
       "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n")
# Karpenter v1.14.1, pkg/controllers/provisioning/scheduling/scheduler.go Scheduler.add with
# IGNORE_DRA_REQUESTS at its default (true), as its FailedScheduling event words it
DRA_REFUSAL = ("FailedScheduling: Failed to schedule pod, pod has Dynamic Resource Allocation "
               "requirements that are not yet supported by Karpenter")  # fmt: skip


def config_text(params: str) -> str:
    return ("{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: "
            f"{{validate: {{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}\n")  # fmt: skip


def config(tmp_path: Path, params: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(config_text(params))
    return str(path)


def steps(test: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["title"], s["status"]) for s in test["extra"]["evidence"]]


def leftovers(cluster: SimCluster) -> list[str]:
    pods = [p.metadata.name for p in cluster.core().list_pod_for_all_namespaces(
        label_selector=f"aicr.dev/check={CHECK}").items]  # fmt: skip
    spaces = [n.metadata.name for n in cluster.core().list_namespace().items
              if CHECK in n.metadata.name]  # fmt: skip
    return pods + spaces


def node_pools(cluster: SimCluster) -> Any:
    return kube.dynamic(cluster.api()).resources.get(api_version="karpenter.sh/v1",
                                                     kind="NodePool")  # fmt: skip


def node_claims(cluster: SimCluster) -> set[str]:
    found = kube.dynamic(cluster.api()).resources.get(api_version="karpenter.sh/v1",
                                                      kind="NodeClaim").get()  # fmt: skip
    return {c.metadata.name for c in found.items}


@pytest.fixture(autouse=True)
def _no_node_left(cluster: SimCluster) -> Iterator[None]:
    cluster._dirty = True  # the reset removes provisioned nodes should a test leave one
    yield
    cluster.wait_for(lambda: not provisioned.provisioned_nodes(cluster.api()), timeout=60,
                     message="the provisioned nodes gone")  # fmt: skip


@logged
def test_pending_gpu_pods_get_a_new_node_that_goes_once_they_do(
    cluster: SimCluster, tmp_path: Path
) -> None:
    params = "{scaleUpSeconds: 90, scaleDownSeconds: 90}"
    test = run_check(cluster, tmp_path, CHECK, NO_COMPONENTS, phase="conformance",
                     config=config(tmp_path, params))  # fmt: skip
    assert test["status"] == "passed", test["message"]
    assert re.fullmatch(
        r"Karpenter \(KWOK provider\) added node (\S+) \(node group gpu\) for 2 pending GPU pods "
        r"that no existing node fit, the pods ran there, and it removed it once the workload was "
        r"deleted", test["message"]), test["message"]  # fmt: skip
    assert steps(test) == [("autoscaler", "informational"), ("existing GPU nodes", "informational"),
                           ("fill existing nodes", "passed"), ("scale-up", "passed"),
                           ("scale-down", "passed"), ("workloads", "passed")]  # fmt: skip
    up = test["extra"]["evidence"][3]["answer"]
    assert "unschedulable: 0/" in up and "NodeClaim gpu-" in up, up
    assert test["requirements"]["cluster_autoscaling"] == "Implemented"
    assert leftovers(cluster) == []
    assert not provisioned.provisioned_nodes(cluster.api())


@logged
def test_a_node_pool_limit_that_forbids_the_node_fails_with_karpenters_words(
    cluster: SimCluster, tmp_path: Path
) -> None:
    pools = node_pools(cluster)
    pools.patch(name=karpenter.NODEPOOL, body={"spec": {"limits": {"nvidia.com/gpu": "4"}}},
                content_type="application/merge-patch+json")  # fmt: skip
    try:
        test = run_check(cluster, tmp_path, CHECK, NO_COMPONENTS, phase="conformance",
                         config=config(tmp_path, "{scaleUpSeconds: 20}"))  # fmt: skip
    finally:
        limit = str(karpenter.NODEPOOL_GPU_LIMIT)
        pools.patch(name=karpenter.NODEPOOL, body={"spec": {"limits": {"nvidia.com/gpu": limit}}},
                    content_type="application/merge-patch+json")  # fmt: skip
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "1/2 steps failed: scale-up: no new node ran the pods within 20s: pod scale-up-0: "
        "Pending, unschedulable: 0/"), test["message"]  # fmt: skip
    assert "Karpenter created no NodeClaim" in test["message"], test["message"]
    assert "exceed limits for nodepool" in test["message"], test["message"]
    assert leftovers(cluster) == []


@logged
def test_with_the_autoscaler_stopped_no_node_comes_and_the_check_says_so(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("autoscaler-stopped")
    test = run_check(cluster, tmp_path, CHECK, NO_COMPONENTS, phase="conformance",
                     config=config(tmp_path, "{scaleUpSeconds: 15}"))  # fmt: skip
    cluster.heal()
    assert test["status"] == "failed", test["message"]
    assert test["message"].endswith(
        "; Karpenter created no NodeClaim; no event from Karpenter (KWOK provider) on the pods"
    ), test["message"]  # fmt: skip
    assert leftovers(cluster) == []


def test_without_a_node_pool_no_autoscaler_is_recognised_and_the_check_fails(
    cluster: SimCluster, tmp_path: Path
) -> None:
    node_pools(cluster).delete(name=karpenter.NODEPOOL)
    try:
        test = run_check(cluster, tmp_path, CHECK, NO_COMPONENTS, phase="conformance")
    finally:
        cluster.apply(karpenter.node_pool())
    assert (test["status"], test["message"]) == (
        "failed", "1/1 steps failed: autoscaler: no recognised cluster autoscaler: Karpenter's "
        "API is served but it has no NodePool, no Cluster Autoscaler status ConfigMap "
        "kube-system/cluster-autoscaler-status; a platform that provides none declares "
        "cluster_autoscaling N/A with a justification in "
        "spec.validate.evidence.cncf.notApplicable")  # fmt: skip
    assert leftovers(cluster) == []


@logged
def test_in_dra_mode_karpenter_refuses_pods_with_claims_and_the_check_fails_with_its_words(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.set_mode("dra")
    test = run_check(cluster, tmp_path, CHECK, DRA, phase="conformance",
                     config=config(tmp_path, "{scaleUpSeconds: 90}"))  # fmt: skip
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(
        r"1/2 steps failed: scale-up: Karpenter does not provision nodes for pods with DRA "
        r"resource claims while its IGNORE_DRA_REQUESTS option is true \(its default from v1\.7 to "
        r"v1\.14\.1 at least\); it refused the pods \d+s after they were created: pod scale-up-0: "
        r"Pending, unschedulable: 0/\d+ nodes are available: .*; pod scale-up-1: Pending.*; "
        r"Karpenter created no NodeClaim; Karpenter \(KWOK provider\) said: "
        + re.escape(DRA_REFUSAL), test["message"]), test["message"]  # fmt: skip
    assert steps(test) == [("autoscaler", "informational"), ("existing GPU nodes", "informational"),
                           ("fill existing nodes", "passed"), ("scale-up", "failed"),
                           ("workloads", "passed")]  # fmt: skip
    existing = test["extra"]["evidence"][1]
    assert "ResourceSlices" in existing["asked"] and "GPUs free" in existing["answer"], existing
    assert "(its ResourceClaim)" in test["extra"]["evidence"][2]["asked"]
    assert leftovers(cluster) == []
    assert not provisioned.provisioned_nodes(cluster.api())


@logged
def test_ctrl_c_during_the_scale_up_leaves_nothing_and_the_new_node_goes(
    cluster: SimCluster, tmp_path: Path
) -> None:
    before = node_claims(cluster)
    recipe = recipe_text(NO_COMPONENTS, [CHECK], phase="conformance")
    proc = start_validate(cluster, tmp_path, recipe, config_text("{scaleUpSeconds: 120}"))
    try:
        made = cluster.wait_for(lambda: node_claims(cluster) - before, timeout=180,
                                message="Karpenter's NodeClaim for the check's pods")  # fmt: skip
    except BaseException:
        proc.kill()
        raise
    report = interrupted(proc, tmp_path)
    assert report["results"]["tests"][0]["name"] == CHECK
    assert remaining(cluster, report["runId"]) == []
    assert leftovers(cluster) == []
    gone = f"Karpenter's NodeClaims {sorted(made)} and their nodes gone"
    cluster.wait_for(lambda: not (made & node_claims(cluster))
                     and not provisioned.provisioned_nodes(cluster.api()), timeout=90,
                     message=gone)  # fmt: skip
