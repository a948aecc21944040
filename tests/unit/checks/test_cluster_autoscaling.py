"""cluster-autoscaling on fakes: providers from their published formats, scale events, cleanup.

Provider objects follow the published formats: Karpenter v1 NodePools
(karpenter.sh/v1, nodeClassRef groups karpenter.k8s.aws, karpenter.azure.com for
AKS node auto-provisioning with AKSNodeClass, karpenter.kwok.sh), Cluster
Autoscaler's YAML status ConfigMap (kubernetes/autoscaler
cluster-autoscaler/clusterstate/api/types.go: ClusterAutoscalerStatus with
autoscalerStatus, clusterWide, nodeGroups[].scaleDown; read 2026-12-01), its
TriggeredScaleUp event text ("pod triggered scale-up: [{group 0->1 (max: 3)}]")
and GKE's node-pool label with a managed instance group as the node group.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import cluster_autoscaling as check
from aicr.checks.conformance.cluster_autoscaling import providers
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube.names import workload_namespace
from aicr.kube.placement import Placement, Toleration
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
CHECK = "cluster-autoscaling"
RUN = "r0123abcd"
NS = workload_namespace(RUN, CHECK)
NEW = "gpu-x7k2p"
MIG = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroups/gpu-grp"
FULL = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
CA_STATUS_YAML = """\
time: 2026-12-01 10:00:00.000000000 +0000 UTC
autoscalerStatus: Running
clusterWide:
  health:
    status: Healthy
    nodeCounts:
      registered: {total: 3, ready: 3, notStarted: 0}
      longUnregistered: 0
      unregistered: 0
  scaleUp: {status: NoActivity}
  scaleDown: {status: %(down)s, candidates: %(n)s}
nodeGroups:
- name: %(group)s
  health: {status: Healthy, cloudProviderTarget: 1, minSize: 0, maxSize: 3}
  scaleUp: {status: NoActivity}
  scaleDown: {status: %(down)s, candidates: %(n)s, lastTransitionTime: "2026-12-01T10:00:05Z"}
"""


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check, "POLL_SECONDS", 0.0)


def node(name: str, gpus: int = 8, **labels: str) -> Obj:
    return {"kind": "Node", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)},
                       "conditions": [{"type": "Ready", "status": "True"}]}}  # fmt: skip


def node_pool(name: str, group: str = "karpenter.kwok.sh", after: str = "5s") -> Obj:
    return {"kind": "NodePool", "metadata": {"name": name}, "spec": {
        "template": {"spec": {"nodeClassRef": {"group": group, "kind": "KWOKNodeClass",
                                               "name": "default"}}},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": after}}}  # fmt: skip


def ca_status(group: str, down: str = "NoCandidates", n: int = 0) -> Obj:
    return {"kind": "ConfigMap", "metadata": {"name": providers.CA_STATUS,
                                              "namespace": providers.CA_NAMESPACE},
            "data": {"status": CA_STATUS_YAML % {"group": group, "down": down,
                                                 "n": n}}}  # fmt: skip


def event(reason: str, message: str, by: str, pod: str = "scale-up-0") -> Obj:
    return {"kind": "Event", "metadata": {"name": f"{pod}.{reason}", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": pod}, "reason": reason,
            "message": message, "source": {"component": by},
            "lastTimestamp": "2026-12-01T10:00:01Z"}  # fmt: skip


class Cloud(FakeKube):
    """A cluster whose autoscaler adds node NEW some looks after GPU pods pend, then removes it.

    ``up``/``down``: looks (Node lists) before the node comes / goes; None: never.
    ``claim``: Karpenter makes a NodeClaim; ``began``: what marks the node's removal
    instead of removing it; ``new_labels``: the new node's labels; ``stop_at``: the
    look at which SIGTERM arrives.
    """

    def __init__(self, *objects: Obj, up: int | None = 2, down: int | None = 2,
                 claim: bool = True, began: str | None = None, new_labels: dict[str, str]
                 | None = None, on_existing: bool = False, stop_at: int | None = None,
                 ) -> None:  # fmt: skip
        super().__init__(list(objects))
        self.up, self.down, self.claim, self.began = up, down, claim, began
        self.new_labels = new_labels if new_labels is not None else {
            providers.NODEPOOL_LABEL: "gpu"}  # fmt: skip
        self.on_existing, self.stop_at = on_existing, stop_at
        self.looks = 0
        self.pending_since: int | None = None
        self.deleted_at: int | None = None
        self.script["Pod"] = self._kubelet

    def _kubelet(self, pod: Obj) -> list[Obj]:
        if not pod["metadata"]["name"].startswith("fill"):
            return []
        term = pod["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]  # fmt: skip
        host = term["matchExpressions"][0]["values"][0]
        return [{**pod, "spec": {**pod["spec"], "nodeName": host}, "status": {"phase": "Running"}}]

    def _ours(self) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == "Pod"
                and o["metadata"]["name"].startswith("scale-up")]  # fmt: skip

    def _tick(self) -> None:
        self.looks += 1
        if self.stop_at is not None and self.looks >= self.stop_at:
            self.stop_at = None  # one signal, as the kubelet sends when the run is stopped
            os.kill(os.getpid(), signal.SIGTERM)
        pods = self._ours()
        if pods and self.pending_since is None:
            self.pending_since = self.looks
            for p in pods:
                p["status"] = {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": FULL}]}  # fmt: skip
        if self.on_existing and pods:
            for p in pods:
                p["spec"]["nodeName"], p["status"] = "gpu-0", {"phase": "Running"}
            return
        since = self.pending_since
        if since is not None and self.up is not None and self.looks == since + self.up:
            self.objects.append(node(NEW, **self.new_labels))
            if self.claim:
                self.objects.append({"kind": "NodeClaim", "metadata": {"name": NEW, "labels": {
                    providers.NODEPOOL_LABEL: "gpu"}}, "status": {"nodeName": NEW}})  # fmt: skip
            for p in pods:
                p["spec"]["nodeName"], p["status"] = NEW, {"phase": "Running"}
        if since is not None and not pods and self.deleted_at is None:
            self.deleted_at = self.looks
        if self.deleted_at is not None and self.down is not None and \
                self.looks == self.deleted_at + self.down:  # fmt: skip
            if self.began:
                self._mark()
            else:
                self.objects = [o for o in self.objects if o["metadata"]["name"] != NEW]

    def _mark(self) -> None:
        for o in self.objects:
            if o["metadata"]["name"] != NEW:
                continue
            if self.began == "claim-deleted" and o["kind"] == "NodeClaim":
                o["metadata"]["deletionTimestamp"] = "2026-12-01T10:01:00Z"
            if self.began == "candidates" and o["kind"] == "Node":
                self.objects = [c for c in self.objects if c["kind"] != "ConfigMap"]
                self.objects.append(ca_status(MIG, "CandidatesPresent", 1))
                return

    def listing(self, kind: str, namespace: str | None = None,
                label_selector: str | None = None) -> tuple[list[Obj], str]:  # fmt: skip
        if kind == "Node":
            self._tick()
        return super().listing(kind, namespace, label_selector)


def karpenter_cloud(**how: Any) -> Cloud:
    kube = Cloud(node("gpu-0"), node("cpu-0", 0), node_pool("gpu"), **how)
    kube.discovery[providers.KARPENTER_API] = ["nodepools", "nodeclaims"]
    return kube


def run(kube: FakeKube, params: str = "{}", recipe: str = "componentRefs: []\n",
        placement: Placement | None = None) -> Any:  # fmt: skip
    config = parse_config(
        "{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: {validate: "
        f"{{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}", "config.yaml")  # fmt: skip
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe(recipe), config,
                       workloads=placement or Placement())  # fmt: skip
    return entrypoint.run_check(CHECK, inputs, kube=kube)


def steps(result: Any) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def made(kube: FakeKube) -> list[str]:
    return [c[3] for c in kube.calls if c[0] == "create"]


def deleted(kube: FakeKube) -> list[str]:
    return [c[3] for c in kube.calls if c[0] == "delete"]


# ---- providers, from their published formats -------------------------------------------
@pytest.mark.parametrize(("group", "name"), [
    ("karpenter.k8s.aws", "Karpenter (AWS)"),
    ("karpenter.azure.com", "AKS node auto-provisioning (Karpenter)"),
    ("karpenter.kwok.sh", "Karpenter (KWOK provider)"),
    ("example.com", "Karpenter (example.com)"),
])  # fmt: skip
def test_karpenter_is_named_for_its_node_class_group(group: str, name: str) -> None:
    found = providers.karpenter([node_pool("gpu", group), node_pool("cpu", group)])
    assert found is not None
    assert (found.name, found.node_groups, found.found) == (
        name, ("cpu", "gpu"), "karpenter.sh/v1 NodePools cpu, gpu")
    assert providers.karpenter([]) is None


def test_cluster_autoscaler_from_its_status_configmap_and_the_platform_from_node_labels() -> None:
    gke = [node("n", **{"cloud.google.com/gke-nodepool": "gpu-pool"})]
    found = providers.cluster_autoscaler(ca_status(MIG), gke)
    assert found is not None
    assert (found.kind, found.name, found.node_groups, found.found) == (
        "cluster-autoscaler", "GKE cluster autoscaler", (MIG,),
        "ConfigMap kube-system/cluster-autoscaler-status (Running)")  # fmt: skip
    aks = [node("n", **{"kubernetes.azure.com/agentpool": "gpupool"})]
    assert providers.cluster_autoscaler(ca_status("g"), aks).name == "AKS cluster autoscaler"  # type: ignore[union-attr]
    plain = {"kind": "ConfigMap", "metadata": {"name": providers.CA_STATUS},
             "data": {"status": "Cluster-autoscaler status at 2026-12-01 10:00:00:\n"
                                "Cluster-wide:\n  Health: Healthy (ready=3)\n"}}  # fmt: skip
    old = providers.cluster_autoscaler(plain, [])
    assert old is not None
    assert (old.name, old.found) == ("Cluster Autoscaler", "ConfigMap kube-system/"
                                     "cluster-autoscaler-status (status in the plain-text form)")
    assert providers.cluster_autoscaler(None, gke) is None


def test_the_node_group_comes_from_the_label_or_the_scale_up_event() -> None:
    ca = providers.Provider("cluster-autoscaler", "Cluster Autoscaler", (), "")
    up = event("TriggeredScaleUp", f"pod triggered scale-up: [{{{MIG} 0->1 (max: 3)}}]",
               "cluster-autoscaler")  # fmt: skip
    assert providers.node_group(node("n"), ca, [up]) == MIG
    assert providers.node_group(node("n"), ca, []) is None
    gke = node("n", **{"cloud.google.com/gke-nodepool": "gpu-pool"})
    assert providers.node_group(gke, ca, []) == "gpu-pool"
    kar = providers.Provider("karpenter", "Karpenter", ("gpu",), "")
    assert providers.node_group(node("n", **{providers.NODEPOOL_LABEL: "gpu"}), kar, []) == "gpu"
    assert providers.node_group(gke, kar, [up]) is None


@pytest.mark.parametrize(("node_obj", "claim", "status", "want"), [
    (node("n"), {"metadata": {"name": "c", "deletionTimestamp": "T1"}}, None,
     "NodeClaim c deleted at T1"),
    ({**node("n"), "spec": {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule",
                                        "timeAdded": "T2"}]}}, None, None,
     "node tainted karpenter.sh/disrupted since T2"),
    ({**node("n"), "spec": {"taints": [{"key": "ToBeDeletedByClusterAutoscaler",
                                        "effect": "NoSchedule"}]}}, None, None,
     "node tainted ToBeDeletedByClusterAutoscaler"),
    (node("n"), None, providers.read_status(ca_status("g", "CandidatesPresent", 1)),
     "Cluster Autoscaler status: node group g scaleDown CandidatesPresent (1 candidates) since "
     "2026-12-01T10:00:05Z"),
    (node("n"), None, providers.read_status(ca_status("g")), None),
    (node("n"), {"metadata": {"name": "c"}}, None, None),
])  # fmt: skip
def test_signs_that_scale_down_began(
    node_obj: Obj, claim: Obj | None, status: Obj | None, want: str | None
) -> None:
    assert providers.scale_down_began(node_obj, claim, status, {"g"}) == want


def test_only_the_autoscalers_own_events_are_quoted_once_each() -> None:
    kar = providers.Provider("karpenter", "Karpenter", (), "")
    said = [event("FailedScheduling", "exceed limits", "karpenter"),
            event("FailedScheduling", "exceed limits", "karpenter", pod="scale-up-1"),
            event("FailedScheduling", "0/2 nodes", "default-scheduler")]  # fmt: skip
    assert providers.autoscaler_events(said, kar) == ["FailedScheduling: exceed limits"]


# ---- run() against a scripted cluster --------------------------------------------------
def test_karpenter_adds_a_node_for_pods_no_existing_node_fits_and_removes_it() -> None:
    kube = karpenter_cloud()
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, f"Karpenter (KWOK provider) added node {NEW} (node group gpu) for 2 "
        "pending GPU pods that no existing node fit, the pods ran there, and it removed it once "
        "the workload was deleted")  # fmt: skip
    assert steps(result) == [("autoscaler", "informational"), ("existing GPU nodes",
                             "informational"), ("fill existing nodes", "passed"),
                             ("scale-up", "passed"), ("scale-down", "passed"),
                             ("workloads", "passed")]  # fmt: skip
    assert made(kube) == ["fill-gpu-0", "scale-up-0", "scale-up-1"]
    assert sorted(set(deleted(kube))) == sorted(made(kube))
    assert not [o for o in kube.objects if o["kind"] == "Pod"]
    up = result.evidence[3].answer
    for seen in ("created pods scale-up-0, scale-up-1", "pod scale-up-0 unschedulable: 0/2 nodes",
                 f"NodeClaim {NEW} created (NodePool gpu)",
                 f"node {NEW} registered (node group gpu, 8 GPUs allocatable)",
                 f"pod scale-up-1 Running on {NEW}"):  # fmt: skip
        assert seen in up, up
    assert up.startswith("+0.0s (20")
    down = result.evidence[4].answer
    assert down.split("; ")[0].endswith("deleted the workload") and f"node {NEW} removed" in down


def test_the_fillers_take_each_nodes_free_gpus_and_honour_the_placement() -> None:
    busy = {"kind": "Pod", "metadata": {"name": "other", "namespace": "team"},
            "spec": {"nodeName": "gpu-0", "containers": [
                {"resources": {"limits": {"nvidia.com/gpu": "3"}}}]},
            "status": {"phase": "Running"}}  # fmt: skip
    kube = karpenter_cloud()
    kube.objects.append(busy)
    seen: list[Obj] = []
    create = kube.create
    kube.create = lambda obj: (seen.append(copy.deepcopy(obj)), create(obj))[1]  # type: ignore[method-assign]
    result = run(kube, "{pods: 1, gpusPerPod: 2}")
    assert result.status == Status.PASSED, result.message
    fill, pod = seen
    assert fill["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "5"}
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "2"}
    assert pod["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.10"
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in \
        pod["spec"]["tolerations"]  # fmt: skip
    assert result.evidence[1].answer == "gpu-0: 5/8 GPUs free"


def test_no_recognised_autoscaler_fails_and_creates_nothing() -> None:
    kube = Cloud(node("gpu-0"))
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 steps failed: autoscaler: no recognised cluster autoscaler: no "
        "karpenter.sh/v1 NodePool, no Cluster Autoscaler status ConfigMap "
        "kube-system/cluster-autoscaler-status; a platform that provides none declares "
        "cluster_autoscaling N/A with a justification in "
        "spec.validate.evidence.cncf.notApplicable")  # fmt: skip
    assert made(kube) == []
    kube.discovery[providers.KARPENTER_API] = ["nodepools"]
    assert "Karpenter's API is served but it has no NodePool" in run(kube).message


def test_no_new_node_fails_with_the_schedulers_and_the_autoscalers_words() -> None:
    kube = karpenter_cloud(up=None)
    kube.objects.append(event("FailedScheduling", "Failed to schedule pod, all available "
                              "instance types exceed limits for nodepool (NodePool=gpu)",
                              "karpenter"))  # fmt: skip
    result = run(kube, "{scaleUpSeconds: 0.2}")
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 steps failed: scale-up: no new node ran the pods within 0s: pod "
        "scale-up-0: Pending, unschedulable: 0/2 nodes are available: 2 Insufficient "
        "nvidia.com/gpu.; pod scale-up-1: Pending, unschedulable: 0/2 nodes are available: 2 "
        "Insufficient nvidia.com/gpu.; Karpenter created no NodeClaim; Karpenter (KWOK "
        "provider) said: FailedScheduling: Failed to schedule pod, all available instance types "
        "exceed limits for nodepool (NodePool=gpu)")  # fmt: skip
    assert steps(result)[-1] == ("workloads", "passed")
    assert sorted(set(deleted(kube))) == sorted(made(kube))


def test_a_pod_that_ran_on_an_existing_node_shows_no_scale_up() -> None:
    result = run(karpenter_cloud(on_existing=True))
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 steps failed: scale-up: pod scale-up-0 ran on existing node gpu-0: "
        "an existing node had room, so no scale-up was shown; pod scale-up-1 ran on existing "
        "node gpu-0: an existing node had room, so no scale-up was shown")  # fmt: skip


def test_a_new_node_outside_any_node_group_does_not_count() -> None:
    result = run(karpenter_cloud(new_labels={}, claim=False))
    assert result.status == Status.FAILED
    assert result.message.startswith(f"1/2 steps failed: scale-up: pod scale-up-0 ran on new "
                                     f"node {NEW}, which belongs to no node group")  # fmt: skip


def test_a_node_that_stays_with_no_sign_of_removal_fails_and_is_reported() -> None:
    kube = karpenter_cloud(down=None)
    kube.objects[2] = node_pool("gpu", after="1h")
    result = run(kube, "{scaleDownSeconds: 0.2}")
    assert (result.status, result.message) == (
        Status.FAILED, f"1/3 steps failed: scale-down: {NEW} still there 0s after the workload "
        "was deleted, with no sign of removal (NodePool gpu consolidationPolicy WhenEmpty, "
        "consolidateAfter 1h)")  # fmt: skip
    left = next(s for s in result.evidence if s.title == "nodes caused")
    assert left.answer == (f"node {NEW} (node group gpu) left for Karpenter (KWOK provider) to "
                           "remove; the check deleted the workload")  # fmt: skip


def test_scale_down_that_began_but_outlasts_the_bound_passes_and_says_so() -> None:
    result = run(karpenter_cloud(began="claim-deleted"), "{scaleDownSeconds: 0.3}")
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith(
        "the pods ran there, and it began removing it within 0s "
        f"({NEW}: NodeClaim {NEW} deleted at 2026-12-01T10:01:00Z), not yet gone within the "
        "check's bound")  # fmt: skip
    assert "nodes caused" in [s.title for s in result.evidence]


def test_gke_cluster_autoscaler_scale_up_and_its_scale_down_candidates() -> None:
    gke = {"cloud.google.com/gke-nodepool": "gpu-pool"}
    kube = Cloud(node("gpu-0", **gke), ca_status(MIG), claim=False, began="candidates",
                 new_labels=gke)  # fmt: skip
    kube.objects.append(event("TriggeredScaleUp", f"pod triggered scale-up: [{{{MIG} 0->1 "
                              "(max: 3)}]", "cluster-autoscaler"))  # fmt: skip
    result = run(kube, "{scaleDownSeconds: 0.3}")
    assert result.status == Status.PASSED, result.message
    assert result.message.startswith(
        f"GKE cluster autoscaler added node {NEW} (node group gpu-pool) for 2 pending GPU pods")
    assert result.message.endswith(
        f"({NEW}: Cluster Autoscaler status: node group {MIG} scaleDown CandidatesPresent (1 "
        "candidates) since 2026-12-01T10:00:05Z), not yet gone within the check's bound"
    ), result.message  # fmt: skip
    up = result.evidence[3].answer
    assert f"GKE cluster autoscaler event: TriggeredScaleUp: pod triggered scale-up: [{{{MIG}" in up


def test_sigterm_deletes_the_workload_and_names_the_node_it_waits_on() -> None:
    kube = karpenter_cloud(stop_at=6)
    result = run(kube)
    assert result.status == Status.OTHER
    assert result.message == (
        "stopped before the end: the workload was deleted; node "
        f"{NEW} (node group gpu) left for Karpenter (KWOK provider) to remove; the check "
        "deleted the workload")  # fmt: skip
    assert sorted(set(deleted(kube))) == sorted(made(kube))
    assert steps(result)[-1] == ("workloads", "passed")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored after the check


DRA_RECIPE = ("componentRefs:\n- name: gpu-operator\n"
              "  overrides: {devicePlugin: {enabled: false}}\n"
              "- name: nvidia-dra-driver-gpu\n"
              "  overrides: {resources: {gpus: {enabled: true}},\n"
              "              gpuResourcesEnabledOverride: true}\n")  # fmt: skip
# Karpenter v1.14.1's event on a pod with resource claims while IGNORE_DRA_REQUESTS is true
# (pkg/controllers/provisioning/scheduling/scheduler.go Scheduler.add, events.go
# PodFailedToScheduleEvent)
DRA_REFUSAL = ("Failed to schedule pod, pod has Dynamic Resource Allocation requirements that "
               "are not yet supported by Karpenter")  # fmt: skip


def dra_cloud(**how: Any) -> Cloud:
    """gpu-0's 8 GPUs in a ResourceSlice of the NVIDIA DRA driver, 3 held by another claim."""
    kube = karpenter_cloud(**how)
    kube.objects[0]["status"]["allocatable"] = {}
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}} for i in range(8)]
    kube.objects.append({"kind": "ResourceSlice", "metadata": {"name": "gpu-0-gpu.nvidia.com"},
                         "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-0",
                                  "pool": {"name": "gpu-0"}, "devices": devices}})  # fmt: skip
    held = [{"driver": "gpu.nvidia.com", "pool": "gpu-0", "device": f"gpu-{i}", "request": "r"}
            for i in range(3)]  # fmt: skip
    kube.objects.append({"kind": "ResourceClaim", "metadata": {"name": "other", "namespace": "t"},
                         "status": {"allocation": {"devices": {"results": held}}}})  # fmt: skip
    return kube


def test_dra_mode_holds_free_devices_by_claim_and_the_pods_claim_from_a_template() -> None:
    kube = dra_cloud()
    seen: list[Obj] = []
    create = kube.create
    kube.create = lambda obj: (seen.append(copy.deepcopy(obj)), create(obj))[1]  # type: ignore[method-assign]
    result = run(kube, "{pods: 1, gpusPerPod: 2}", recipe=DRA_RECIPE)
    assert result.status == Status.PASSED, result.message
    assert [(o["kind"], o["metadata"]["name"]) for o in seen] == [
        ("ResourceClaim", "fill-gpu-0"), ("Pod", "fill-gpu-0"),
        ("ResourceClaimTemplate", "scale-up"), ("Pod", "scale-up-0")]  # fmt: skip
    claim, fill, template, pod = seen
    want = {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                        "allocationMode": "ExactCount", "count": 5}}  # fmt: skip
    assert claim["spec"]["devices"]["requests"] == [want]
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {**want, "exactly": {**want["exactly"], "count": 2}}]  # fmt: skip
    assert fill["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimName": "fill-gpu-0"}]
    assert pod["spec"]["resourceClaims"] == [{"name": "gpus",
                                              "resourceClaimTemplateName": "scale-up"}]  # fmt: skip
    for p in (fill, pod):
        assert p["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpus"}]}
    assert result.evidence[1].answer == "gpu-0: 5/8 GPUs free"
    assert "ResourceClaimTemplate scale-up on DeviceClass gpu.nvidia.com" in \
        result.evidence[3].asked  # fmt: skip
    assert sorted(set(deleted(kube))) == sorted(set(made(kube)))


def test_dra_mode_fails_at_once_with_karpenters_refusal_of_pods_with_claims() -> None:
    kube = dra_cloud(up=None)
    kube.objects.append(event("FailedScheduling", DRA_REFUSAL, "karpenter"))
    result = run(kube, "{scaleUpSeconds: 2}", recipe=DRA_RECIPE)
    assert result.status == Status.FAILED
    # the seconds are measured (a loaded machine may take more than half of one)
    assert re.match(re.escape(
        "1/2 steps failed: scale-up: Karpenter does not provision nodes for pods with DRA "
        "resource claims while its IGNORE_DRA_REQUESTS option is true (its default from v1.7 to "
        "v1.14.1 at least); it refused the pods ") + r"\d+s" + re.escape(" after they were "
        "created: pod scale-up-0: Pending, unschedulable: 0/2 nodes"), result.message
    ), result.message  # fmt: skip
    assert result.message.endswith(
        f"Karpenter created no NodeClaim; Karpenter (KWOK provider) said: FailedScheduling: "
        f"{DRA_REFUSAL}"), result.message  # fmt: skip
    assert kube.looks < 10  # it stopped at the refusal, not after 2 s of looks
    assert steps(result)[-1] == ("workloads", "passed")
    assert sorted(set(deleted(kube))) == sorted(set(made(kube)))


def test_the_refusal_is_karpenters_only() -> None:
    said = [f"FailedScheduling: {DRA_REFUSAL}"]
    kar = providers.karpenter([node_pool("gpu")])
    ca = providers.cluster_autoscaler(ca_status("g"), [])
    assert kar is not None and ca is not None
    assert providers.refused_claims(said, kar) == said[0]
    assert providers.refused_claims(said, ca) is None
    assert providers.refused_claims(["FailedScheduling: exceed limits"], kar) is None


def test_node_selector_and_tolerations_reach_every_pod_and_only_selected_nodes_are_filled() -> None:
    kube = Cloud(node("gpu-0", pool="a"), node("gpu-1", pool="b"), node_pool("gpu"))
    kube.discovery[providers.KARPENTER_API] = ["nodepools", "nodeclaims"]
    seen: list[Obj] = []
    create = kube.create
    kube.create = lambda obj: (seen.append(copy.deepcopy(obj)), create(obj))[1]  # type: ignore[method-assign]
    placement = Placement(node_selector={"pool": "a"},
                          tolerations=(Toleration(key="team", effect="NoSchedule"),))  # fmt: skip
    result = run(kube, placement=placement)
    assert result.status == Status.PASSED, result.message
    assert [p["metadata"]["name"] for p in seen] == ["fill-gpu-0", "scale-up-0", "scale-up-1"]
    for pod in seen:
        assert pod["spec"]["nodeSelector"] == {"pool": "a"}
        assert {"key": "team", "operator": "Equal", "effect": "NoSchedule"} in \
            pod["spec"]["tolerations"]  # fmt: skip
