"""gang-scheduling on fakes: detection, sizing, the gangs' objects, the verdicts, run() end to end.

KAI and Volcano cannot run here; their objects are built from their published
CRD schemas and sources, read at:
- NVIDIA/KAI-Scheduler 72de64fc8eca10fa8cca26a20156178f3edbe092 (2026-03-07):
  deployments/kai-scheduler/crds/scheduling.run.ai_podgroups.yaml (v2alpha2,
  spec.minMember/queue, status.schedulingConditions), the pod annotation
  `pod-group-name` (pkg/common/constants), the queue label and schedulerName
  of examples/quickstart, the UnschedulableOnNodePool condition with reason
  Unschedulable (pkg/scheduler/cache/status_updater);
- volcano-sh/volcano ed72c7c815a9fd547a787134676f73d42e9d049c (2026-08-20):
  config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml (v1beta1,
  phases Pending/Running/Unknown/Inqueue/Completed), the annotation
  `scheduling.k8s.io/group-name`, the gang plugin's Unschedulable condition
  with reason NotEnoughResources.

Coscheduling's PodGroup status is the one scheduler-plugins' controller writes,
read in the Go module sigs.k8s.io/scheduler-plugins v0.34.7: the phases of
apis/scheduling/v1alpha1/types.go (Pending, Running, Scheduling, Unknown,
Finished, Failed; `running`, `succeeded`, `failed` omitted when 0) as
pkg/controllers/podgroup_controller.go sets them: Pending, then Scheduling once
minMember pods exist, Running once minMember run or succeed, Failed or Finished
after; Unknown never.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import gang_scheduling
from aicr.checks.conformance.gang_scheduling import build
from aicr.checks.conformance.gang_scheduling.mechanisms import (
    COSCHEDULING,
    KAI,
    KUEUE,
    VOLCANO,
    detect,
)
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube import names
from aicr.kube.gpu_inventory import NodePlan, Target
from aicr.kube.placement import Placement, Toleration
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
NAME = "gang-scheduling"
DP = {"mode": "device-plugin", "settings": [], "notes": []}
RUN = "r0123abcd"
NS = names.workload_namespace(RUN, NAME)
GPU_OPERATOR = "componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
CONFIG = parse_config(
    "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
    f"    checks:\n      {NAME}:\n        params: {{observeSeconds: 0.3, startSeconds: 2, "
    "admissionSeconds: 0.3}\n"
)
GROUPS = {"kueue.x-k8s.io": ["v1beta2", "v1beta1"], "scheduling.x-k8s.io": ["v1alpha1"],
          "scheduling.run.ai": ["v2alpha2", "v2"], "scheduling.volcano.sh": ["v1beta1"],
          "scheduling.k8s.io": ["v1"]}  # fmt: skip
RESOURCES = {"kueue.x-k8s.io/v1beta2": ["workloads", "clusterqueues"],
             "kueue.x-k8s.io/v1beta1": ["workloads"],
             "scheduling.x-k8s.io/v1alpha1": ["podgroups"],
             "scheduling.run.ai/v2alpha2": ["podgroups"], "scheduling.run.ai/v2": ["queues"],
             "scheduling.volcano.sh/v1beta1": ["podgroups", "queues"]}  # fmt: skip


# ---- detection ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("components", "groups", "requested", "chosen", "problem"),
    [
        (["gpu-operator", "kai-scheduler"], GROUPS, None, "kai", None),
        (["kueue"], GROUPS, None, "kueue", None),
        (["scheduler-plugins"], GROUPS, None, "coscheduling", None),
        (["volcano"], GROUPS, None, "volcano", None),
        (["kai-scheduler"], GROUPS, "volcano", "volcano", None),
        ([], {"scheduling.x-k8s.io": ["v1alpha1"]}, None, "coscheduling", None),
        (["kai-scheduler"], {}, None, None, "the recipe deploys kai-scheduler, but the cluster "
         "does not serve scheduling.run.ai (podgroups, version v2alpha2)"),
        (["yunikorn"], GROUPS, None, None, "found a scheduler aicr does not recognise as a gang "
         "scheduler: recipe component yunikorn"),
        ([], {"scheduling.koordinator.sh": ["v1alpha1"], "scheduling.k8s.io": ["v1"]}, None, None,
         "found a scheduler aicr does not recognise as a gang scheduler: API group "
         "scheduling.koordinator.sh"),
        ([], {"scheduling.k8s.io": ["v1"]}, None, None, "no gang scheduler found: the recipe "
         "deploys none and the cluster serves none of KAI scheduler (scheduling.run.ai), Kueue "
         "(kueue.x-k8s.io), coscheduling (scheduler-plugins) (scheduling.x-k8s.io), Volcano "
         "(scheduling.volcano.sh)"),
    ],
    ids=["kai", "kueue", "coscheduling", "volcano", "param", "cluster-only", "not-served",
         "unrecognised-recipe", "unrecognised-api", "none"],
)  # fmt: skip
def test_detect_chooses_the_mechanism_or_says_why_none(
    components: list[str], groups: dict[str, list[str]], requested: str | None,
    chosen: str | None, problem: str | None,
) -> None:  # fmt: skip
    found = detect(components, groups, RESOURCES, requested)
    assert (found.chosen.name if found.chosen else None, found.problem) == (chosen, problem)


def test_an_unrecognised_api_beside_a_recognised_one_is_named_and_the_known_one_tested() -> None:
    found = detect([], {**GROUPS, "scheduling.koordinator.sh": ["v1alpha1"]}, RESOURCES)
    assert found.chosen is KAI
    assert "unrecognised: API group scheduling.koordinator.sh" in found.summary


def test_kueue_is_used_at_the_newest_version_it_serves() -> None:
    assert detect(["kueue"], GROUPS, RESOURCES).version == "v1beta2"
    old = {"kueue.x-k8s.io": ["v1beta1"]}
    assert detect(["kueue"], old, RESOURCES).version == "v1beta1"


# ---- sizing and objects --------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "millis"), [("2", 2000), ("1500m", 1500), ("0.5", 500),
                                             (None, 0), ("x", 0)])  # fmt: skip
def test_millicores(raw: Any, millis: int) -> None:
    assert build.millicores(raw) == millis


def plan(*free: int) -> NodePlan:
    return NodePlan(targets=[Target(f"g{i}", f, 8, None) for i, f in enumerate(free)])


def test_the_positive_gang_requests_gpus_only_when_enough_are_free() -> None:
    assert build.size_positive(2, plan(1, 1), None).gpu is True
    cpu = build.size_positive(3, plan(1, 1), None)
    assert (cpu.gpu, cpu.why) == (False, "CPU-only: only 2 free GPUs on the schedulable GPU "
                                         "nodes, 3 needed")  # fmt: skip
    assert build.size_positive(2, plan(8), "DRA mode").why == "CPU-only: DRA mode"


def cpu(**free_of_allocatable: tuple[int, int]) -> NodePlan:
    """A CPU plan: per node, (free, allocatable) millicores."""
    return NodePlan(targets=[Target(n, f, a, None) for n, (f, a) in free_of_allocatable.items()])


def test_the_pinned_gpu_gang_asks_for_more_than_its_nodes_allocatable_gpus() -> None:
    # g1 has 5 of its 8 GPUs free: 9 members of 1 GPU, so no GPU freed meanwhile makes it fit
    gang = build.size_pinned_negative(True, plan(3, 5), cpu())
    assert gang == build.Gang(build.NEGATIVE, 9, 1, build.MEMBER_CPU_MILLIS, "g1",
                              "9 GPUs in all; g1 has 8 allocatable")  # fmt: skip
    big = NodePlan(targets=[Target("x", 3, 32, None)])  # never more than 16 members
    assert build.size_pinned_negative(True, big, cpu()) == build.Gang(
        build.NEGATIVE, 11, 3, build.MEMBER_CPU_MILLIS, "x", "33 GPUs in all; x has 32 allocatable")


@pytest.mark.parametrize(("free", "members", "each"), [
    (8000, 2, 6000),  # an empty node: two of three quarters each, one fits
    (4000, 3, 3000),  # half busy: three, 9000m > 8000m even once the rest is freed
    (100, 16, 501),  # nearly full: 16 members at most, each then more than is free
])  # fmt: skip
def test_the_pinned_cpu_gang_asks_for_more_than_its_nodes_allocatable_cpu(
    free: int, members: int, each: int
) -> None:
    gang = build.size_pinned_negative(False, None, cpu(a=(free, 8000), b=(free // 2, 16000)))
    assert gang == build.Gang(build.NEGATIVE, members, 0, each, "a",  # the freest node
                              f"{members * each}m CPU in all; a has 8000m allocatable")  # fmt: skip
    assert members * each > 8000


def test_no_node_with_free_cpu_builds_no_pinned_gang() -> None:
    assert build.size_pinned_negative(False, None, cpu()) == (
        "no schedulable node in scope has free CPU to pin a gang to")


def test_member_pods_carry_what_each_mechanism_reads() -> None:
    gang = build.Gang("g", 2, 1, 10, "n1")
    cos, kai, vol = (build.member_pods(m, gang, "img", m.scheduler, q)[0]
                     for m, q in ((COSCHEDULING, None), (KAI, "default-queue"),
                                  (VOLCANO, "default")))  # fmt: skip
    assert cos["metadata"]["labels"][build.COSCHEDULING_LABEL] == "g"
    assert cos["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    assert kai["metadata"]["annotations"] == {"pod-group-name": "g"}
    assert kai["metadata"]["labels"]["kai.scheduler/queue"] == "default-queue"
    assert vol["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "g"}
    assert vol["spec"]["schedulerName"] == "volcano"
    res = cos["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "10m", "nvidia.com/gpu": "1"},
                   "limits": {"nvidia.com/gpu": "1"}}  # fmt: skip
    assert cos["spec"]["affinity"]["nodeAffinity"]
    assert build.pod_group(KAI, "v2alpha2", gang, "q")["spec"] == {"minMember": 2, "queue": "q"}
    assert build.pod_group(COSCHEDULING, "v1alpha1", gang, None)["spec"] == {"minMember": 2}


def test_the_kueue_quota_holds_exactly_the_positive_gang() -> None:
    flavor, queue = build.kueue_quota("v1beta2", "q", build.Gang("p", 2, 1, 10))
    assert flavor["apiVersion"] == queue["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    group = queue["spec"]["resourceGroups"][0]
    assert group["coveredResources"] == ["cpu", "nvidia.com/gpu"]
    assert group["flavors"][0]["resources"] == [{"name": "cpu", "nominalQuota": "20m"},
                                                {"name": "nvidia.com/gpu", "nominalQuota": "2"}]
    assert build.kueue_negative(build.Gang("p", 2, 1, 10)).size == 3


# ---- waiting evidence ------------------------------------------------------------------------
def unschedulable(name: str, message: str = "0/3 nodes are available") -> Obj:
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": message}  # fmt: skip
    return {"metadata": {"name": name}, "status": {"phase": "Pending", "conditions": [cond]}}


def kai_group(held: bool) -> Obj:
    conditions = [{"type": "UnschedulableOnNodePool", "nodePool": "default",
                   "reason": "Unschedulable", "status": "True",
                   "message": "Resources were not found for 3 pods"}] if held else []
    return {"metadata": {"name": "gang-short"},
            "status": {"phase": "Pending", "schedulingConditions": conditions}}  # fmt: skip


def volcano_group(held: bool) -> Obj:
    conditions = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                   "message": "3/3 tasks in gang unschedulable: pod group is not ready, "
                   "3 Pending, 3 minAvailable"}] if held else []
    return {"metadata": {"name": "gang-short"},
            "status": {"phase": "Inqueue", "conditions": conditions}}  # fmt: skip


def workload(reserved: str) -> Obj:
    return {"metadata": {"name": "job-gang-short-1"}, "status": {"conditions": [
        {"type": "QuotaReserved", "status": reserved, "reason": "Pending",
         "message": "couldn't assign flavors to pod set main: insufficient quota"}]}}  # fmt: skip


@pytest.mark.parametrize(
    ("mechanism", "admission", "pods", "said"),
    [
        (KUEUE, workload("False"), [], "Workload job-gang-short-1: QuotaReserved=False (Pending):"
         " couldn't assign flavors to pod set main: insufficient quota"),
        (KUEUE, workload("True"), [], None),
        (KUEUE, None, [], None),
        (KAI, kai_group(True), [], "PodGroup gang-short: UnschedulableOnNodePool (Unschedulable):"
         " Resources were not found for 3 pods"),
        (KAI, kai_group(False), [], None),
        (VOLCANO, volcano_group(True), [], "PodGroup gang-short: Unschedulable=True "
         "(NotEnoughResources): 3/3 tasks in gang unschedulable: pod group is not ready, "
         "3 Pending, 3 minAvailable"),
        (COSCHEDULING, {"metadata": {"name": "gang-short"}}, [unschedulable("a"), {"metadata": {
            "name": "b"}}], "1/2 members unschedulable; a: Unschedulable: 0/3 nodes are available"),
        (COSCHEDULING, {"metadata": {"name": "gang-short"}}, [{"metadata": {"name": "a"}}], None),
    ],
    ids=["kueue", "kueue-reserved", "kueue-none", "kai", "kai-silent", "volcano",
         "coscheduling-pods", "nothing"],
)  # fmt: skip
def test_waiting_evidence(mechanism: Any, admission: Obj | None, pods: list[Obj],
                          said: str | None) -> None:  # fmt: skip
    assert build.waiting_evidence(mechanism, admission, pods) == said


def coscheduling_group(**status: Any) -> Obj:
    return {"metadata": {"name": "gang-short"}, "status": status}


@pytest.mark.parametrize(
    ("status", "held"),
    [
        ({"phase": "Pending"}, True),  # fewer than minMember members yet (or not yet counted)
        ({"phase": "Scheduling", "occupiedBy": "ns/owner"}, True),  # all there, none running
        ({"phase": "Scheduling", "running": 1}, False),  # started in part
        ({"phase": "Scheduling", "succeeded": 1}, False),
        ({"phase": "Pending", "failed": 1}, False),  # members ran, then some went away
        ({"phase": "Running", "running": 9}, False),
        ({"phase": "Finished", "succeeded": 9}, False),
        ({"phase": "Failed", "failed": 1, "running": 8}, False),
        ({"phase": "Unknown"}, False),  # never set by v0.34.7's controller
        ({}, False),  # no controller reconciled it
    ],
    ids=lambda v: str(v) if isinstance(v, bool) else "-".join(f"{k}={w}" for k, w in v.items()),
)  # fmt: skip
def test_coscheduling_is_held_in_the_controllers_phases_of_a_gang_none_started(
    status: Obj, held: bool
) -> None:
    said = build.waiting_evidence(COSCHEDULING, coscheduling_group(**status), [])
    assert said == (f"PodGroup gang-short: phase {status['phase']}, 0 running, 0 succeeded, "
                    "0 failed" if held else None)  # fmt: skip


def test_coscheduling_group_status_says_the_phase_and_counts() -> None:
    assert build.group_status(coscheduling_group(phase="Running", running=2)) == (
        "PodGroup gang-short: phase Running, 2 running, 0 succeeded, 0 failed")
    assert build.group_status(coscheduling_group()) == "PodGroup gang-short: no status.phase yet"
    assert build.group_status(None) == "PodGroup gone"
    assert build.group_running(coscheduling_group(phase="Running", running=2), 2)
    assert not build.group_running(coscheduling_group(phase="Scheduling", running=1), 2)
    assert not build.group_running(coscheduling_group(phase="Running", running=1), 2)


def test_workload_admitted_needs_the_whole_gang() -> None:
    wl = {"metadata": {"name": "w"}, "spec": {"podSets": [{"name": "main", "count": 2}]},
          "status": {"conditions": [{"type": "Admitted", "status": "True"}]}}  # fmt: skip
    assert build.workload_admitted(wl, 2) is None
    assert build.workload_admitted(wl, 3) == "the Workload admits 2 pods, not the gang's 3"
    assert build.workload_admitted(None, 2) == "Kueue created no Workload for the Job"


# ---- run() on a fake cluster ------------------------------------------------------------------
def node(name: str, gpus: int, cpu: str = "8") -> Obj:
    status = {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": cpu},
              "conditions": [{"type": "Ready", "status": "True"}]}  # fmt: skip
    return {"kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {}, "status": status}


class Cluster(FakeKube):
    """A fake whose deletions cascade (a Job's pods, a PodGroup's members) as GC would."""

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        super().delete(kind, name, namespace)
        if kind == "Job":
            for pod in [o for o in self.objects if o["kind"] == "Pod"
                        and (o["metadata"].get("labels") or {}).get(build.GANG_LABEL) == name]:
                super().delete("Pod", pod["metadata"]["name"], namespace)


def running(pod: Obj, node_name: str = "g0") -> Obj:
    return {**pod, "spec": {**pod["spec"], "nodeName": node_name}, "status": {"phase": "Running"}}


def group_of(kube: Cluster, name: str) -> Obj:
    return next(o for o in kube.objects
                if o["kind"] == "PodGroup" and o["metadata"]["name"] == name)  # fmt: skip


def pg_controller(kube: Cluster, pod: Obj, runs: bool) -> None:
    """Plays scheduler-plugins' PodGroup controller on the member ``pod`` just created: Pending
    while fewer than minMember exist, then Scheduling, Running once minMember run."""
    group = group_of(kube, pod["metadata"]["labels"][build.GANG_LABEL])
    status = group.setdefault("status", {})
    members = status["members"] = status.get("members", 0) + 1  # kept for the play only
    if runs:
        status["running"] = status.get("running", 0) + 1
    size = group["spec"]["minMember"]
    status["phase"] = ("Pending" if members < size else
                       "Running" if status.get("running", 0) >= size else "Scheduling")


def scheduler(kube: Cluster, mechanism: Any, bind_short: int = 0, held: bool = True,
              controller: bool = True) -> None:  # fmt: skip
    """Plays the gang scheduler: the fitting gang runs; the short one waits (or binds in part).

    With ``controller`` coscheduling's PodGroup controller counts the members too.
    """
    bound = []

    def pod(p: Obj) -> list[Obj]:
        runs = p["metadata"]["labels"][build.GANG_LABEL] == build.POSITIVE or \
            len(bound) < bind_short  # fmt: skip
        if mechanism is COSCHEDULING and controller:
            pg_controller(kube, p, runs)
        if p["metadata"]["labels"][build.GANG_LABEL] == build.POSITIVE:
            return [running(p)]
        if len(bound) < bind_short:
            bound.append(p["metadata"]["name"])
            return [running(p)]
        if mechanism is KAI and held:
            group_of(kube, build.NEGATIVE)["status"] = kai_group(True)["status"]
        return [{**p, "status": unschedulable(p["metadata"]["name"])["status"]}] if held else []

    kube.script["Pod"] = pod


def kueue(kube: Cluster, manages_jobs: bool = True, suspends: bool = True) -> None:
    """Plays Kueue: a Job within the quota gets an admitted Workload and running pods.

    Its Job webhook suspends every queued Job (unless ``suspends`` is off). Without
    ``manages_jobs`` (``batch/job`` left out of its integrations, as Kueue 0.17
    does it) no Job gets a Workload: a suspended one waits, one not suspended runs
    at once, as the Job controller starts its pods.
    """

    def job(j: Obj) -> list[Obj]:
        size, name = j["spec"]["parallelism"], j["metadata"]["name"]
        assert "suspend" not in j["spec"]  # only Kueue's webhook may hold it back
        kube.objects[-1]["spec"]["suspend"] = suspends
        if not manages_jobs and suspends:
            return []
        fits = name == build.POSITIVE or not manages_jobs
        conditions = [{"type": "Admitted", "status": "True"}] if fits else \
            workload("False")["status"]["conditions"]  # fmt: skip
        if manages_jobs:
            kube.objects.append({
                "kind": "Workload", "metadata": {"name": f"job-{name}-1", "namespace": NS,
                                                 "ownerReferences": [{"kind": "Job",
                                                                      "name": name}]},
                "spec": {"podSets": [{"name": "main", "count": size}]},
                "status": {"conditions": conditions}})  # fmt: skip
        if fits:
            template = j["spec"]["template"]
            for i in range(size):
                kube._queue.append({"type": "ADDED", "object": running({
                    "kind": "Pod", "metadata": {"name": f"{name}-{i}", "namespace": NS,
                                                "labels": template["metadata"]["labels"]},
                    "spec": template["spec"]}, f"g{i}")})  # fmt: skip
        return []

    kube.script["Job"] = job


def run(kube: FakeKube, recipe: str) -> Any:
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe(recipe), CONFIG,
                       prepared={NAME: DP})  # fmt: skip
    return entrypoint.run_check(NAME, inputs, kube=kube)


def cluster(*extra: Obj) -> Cluster:
    kube = Cluster([node("g0", 8), node("g1", 8), *extra])
    kube.api_groups = dict(GROUPS)
    kube.discovery = {k: list(v) for k, v in RESOURCES.items()}
    return kube


def titles(result: Any) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def test_kueue_healthy_passes_and_removes_its_cluster_scoped_quota() -> None:
    kube = cluster()
    kueue(kube)
    result = run(kube, GPU_OPERATOR + "- name: kueue\n  namespace: kueue-system\n")
    assert (result.status, result.message) == (
        Status.PASSED, "Kueue schedules all-or-nothing: a gang of 2 pods (GPU) ran as a unit and "
        "a gang that cannot fit kept 0 pods bound for 0.3s"), result.message  # fmt: skip
    assert titles(result) == [("gang mechanism", "informational"), ("capacity", "informational"),
                              ("gang that fits", "passed"), ("gang that cannot fit", "passed"),
                              ("workloads", "passed")]  # fmt: skip
    deleted = [c[1:] for c in kube.calls if c[0] == "delete"]
    assert ("ClusterQueue.v1beta2", "", NS) in deleted and ("ResourceFlavor.v1beta2", "", NS) \
        in deleted  # fmt: skip
    created = [c[1] for c in kube.calls if c[0] == "create"]
    assert created == ["ResourceFlavor", "ClusterQueue", "LocalQueue", "Job", "Job"]


def test_a_kueue_that_suspends_jobs_it_never_admits_fails_saying_the_job_waits() -> None:
    kube = cluster()
    kueue(kube, manages_jobs=False)
    result = run(kube, GPU_OPERATOR + "- name: kueue\n  namespace: kueue-system\n")
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 gang steps failed: gang that fits: Kueue created no Workload for the "
        "Job; 0/2 pods running within 2s: Job gang-fits still suspended"), result.message


def test_a_kueue_that_does_not_gate_jobs_fails_naming_the_pods_that_ran_unadmitted() -> None:
    kube = cluster()
    kueue(kube, manages_jobs=False, suspends=False)
    result = run(kube, GPU_OPERATOR + "- name: kueue\n  namespace: kueue-system\n")
    assert (result.status, result.message) == (
        Status.FAILED,
        "1/1 gang steps failed: gang that fits: Kueue created no Workload for the "
        "Job, yet 2/2 of its pods ran: gang-fits-0 on g0, gang-fits-1 on g1",
    ), result.message
    assert ("delete", "Job", NS, build.POSITIVE) in kube.calls
    assert ("delete", "ClusterQueue.v1beta2", "", NS) in kube.calls


@pytest.mark.parametrize("mechanism", [COSCHEDULING, KAI, VOLCANO], ids=lambda m: m.name)
def test_pod_group_schedulers_pass_when_the_short_gang_is_held(mechanism: Any) -> None:
    kube = cluster()
    scheduler(kube, mechanism)
    if mechanism is VOLCANO:  # Volcano's gang plugin marks the PodGroup itself
        original = kube.create

        def create(obj: Obj) -> Obj:
            made = original(obj)
            if obj["kind"] == "PodGroup" and obj["metadata"]["name"] == build.NEGATIVE:
                kube.objects[-1]["status"] = volcano_group(True)["status"]
            return made

        kube.create = create  # type: ignore[method-assign]
    result = run(kube, GPU_OPERATOR + f"- name: {mechanism.components[0]}\n  namespace: s\n")
    assert result.status == Status.PASSED, result.message
    held = next(s for s in result.evidence if s.title == "gang that cannot fit")
    assert held.asked.startswith("9 pods of 10m CPU and 1 GPU each, pinned to g0 (9 GPUs in all; "
                                 "g0 has 8 allocatable, so it cannot fit even on an empty node)")
    assert held.verdict.startswith("0/9 pods bound for ")


def busy(name: str, node_name: str, gpus: int) -> Obj:
    """A pod of someone else's holding ``gpus`` GPUs on ``node_name``."""
    limits = {"nvidia.com/gpu": str(gpus)}
    container = {"name": "c", "resources": {"limits": limits, "requests": limits}}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "other", "labels": {}},
            "spec": {"nodeName": node_name, "containers": [container]},
            "status": {"phase": "Running"}}  # fmt: skip


def test_the_short_gang_is_sized_by_allocatable_gpus_not_free_ones() -> None:
    # another check holds 3 GPUs of g0 and 5 of g1: the freest node has 5 free of 8; were the
    # gang 6 (free + 1), the other check ending would let it fit
    kube = cluster(busy("x", "g0", 3), busy("y", "g1", 5))
    scheduler(kube, COSCHEDULING)
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.PASSED, result.message
    held = next(s for s in result.evidence if s.title == "gang that cannot fit")
    assert held.asked.startswith("9 pods of 10m CPU and 1 GPU each, pinned to g0 (9 GPUs in all; "
                                 "g0 has 8 allocatable"), held.asked


def test_a_partial_start_fails_naming_the_pods_that_ran() -> None:
    kube = cluster()
    scheduler(kube, COSCHEDULING, bind_short=2)
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 gang steps failed: gang that cannot fit: partial start: 2/9 pods of a "
        "gang that cannot fit were bound: gang-short-0 on g0, gang-short-1 on g0")  # fmt: skip
    # everything created was deleted, the PodGroups too
    deleted = {c[1:] for c in kube.calls if c[0] == "delete"}
    assert ("PodGroup", NS, build.NEGATIVE) in deleted and ("PodGroup", NS, build.POSITIVE) in \
        deleted  # fmt: skip


def test_zero_bound_without_a_sign_of_the_scheduler_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gang_scheduling, "GROUP_STATUS_SECONDS", 0.2)
    kube = cluster()
    # a scheduler that never looked at the gang, and no PodGroup controller
    scheduler(kube, COSCHEDULING, held=False, controller=False)
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.FAILED
    assert result.message.startswith(
        "1/2 gang steps failed: gang that cannot fit: no pod was bound, but nothing shows "
        "coscheduling (scheduler-plugins) holding the gang within 0.3s more: PodGroup: no status "
        "yet; gang-short-0: Pending"), result.message  # fmt: skip
    fits = next(s for s in result.evidence if s.title == "gang that fits")
    assert fits.status == Status.PASSED  # the PodGroup's status is evidence, never the verdict
    assert fits.answer.endswith("PodGroup gang-fits: no status.phase yet"), fits.answer


def test_coscheduling_evidence_is_the_pod_group_controllers_status() -> None:
    kube = cluster()
    scheduler(kube, COSCHEDULING)
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.PASSED, result.message
    fits, held = (next(s for s in result.evidence if s.title == t)
                  for t in ("gang that fits", "gang that cannot fit"))  # fmt: skip
    assert fits.answer.endswith("PodGroup gang-fits: phase Running, 2 running, 0 succeeded, "
                                "0 failed"), fits.answer  # fmt: skip
    assert held.verdict.endswith("PodGroup gang-short: phase Scheduling, 0 running, 0 succeeded, "
                                 "0 failed"), held.verdict  # fmt: skip


def test_a_gang_that_never_runs_fails_with_where_each_pod_got_to() -> None:
    kube = cluster()  # no scheduler plays: every pod stays as created
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.FAILED
    assert result.message.startswith(
        "1/1 gang steps failed: gang that fits: 0/2 pods running within 2s: gang-fits-0: "
    ), result.message
    assert ("delete", "Pod", NS, "gang-fits-0") in kube.calls


def test_too_few_gpus_make_the_gangs_cpu_only_and_say_so() -> None:
    kube = Cluster([node("c0", 0), node("c1", 0)])
    kube.api_groups, kube.discovery = dict(GROUPS), {k: list(v) for k, v in RESOURCES.items()}
    scheduler(kube, COSCHEDULING)
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.PASSED, result.message
    assert "(CPU-only)" in result.message
    capacity = next(s for s in result.evidence if s.title == "capacity")
    assert capacity.verdict == ("CPU-only: only 0 free GPUs on the schedulable GPU nodes, "
                                "2 needed")  # fmt: skip
    held = next(s for s in result.evidence if s.title == "gang that cannot fit")
    assert held.asked.startswith("2 pods of 6000m CPU each, pinned to c0")


def test_a_raising_step_still_cleans_up() -> None:
    kube = cluster()
    scheduler(kube, COSCHEDULING)
    original = kube.get

    def get(kind: str, name: str, namespace: str | None = None) -> Obj | None:
        if kind == "PodGroup" and name == build.NEGATIVE:
            raise RuntimeError("boom")
        return original(kind, name, namespace)

    kube.get = get  # type: ignore[method-assign]
    result = run(kube, GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n")
    assert result.status == Status.OTHER
    assert "gang that cannot fit: raised RuntimeError: boom" in result.message
    assert ("delete", "PodGroup", NS, build.NEGATIVE) in kube.calls


def test_node_selector_and_tolerations_reach_every_member_and_the_pinned_node() -> None:
    kube = cluster()
    kube.objects[1]["metadata"]["labels"] = {"pool": "b"}  # only g1 is in scope
    scheduler(kube, COSCHEDULING)
    placement = Placement(node_selector={"pool": "b"},
                          tolerations=(Toleration(key="team", effect="NoSchedule"),))  # fmt: skip
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe(
        GPU_OPERATOR + "- name: scheduler-plugins\n  namespace: s\n"), CONFIG,
        workloads=placement, prepared={NAME: DP})  # fmt: skip
    made: list[Obj] = []
    original = kube.create

    def create(obj: Obj) -> Obj:
        made.append(obj)
        return original(obj)

    kube.create = create  # type: ignore[method-assign]
    result = entrypoint.run_check(NAME, inputs, kube=kube)
    assert result.status == Status.PASSED, result.message
    held = next(s for s in result.evidence if s.title == "gang that cannot fit")
    assert held.asked.startswith("9 pods of 10m CPU and 1 GPU each, pinned to g1")
    pods = [o["spec"] for o in made if o["kind"] == "Pod"]
    assert len(pods) == 2 + 9
    assert all(p["nodeSelector"] == {"pool": "b"} for p in pods)
    assert all({"key": "team", "operator": "Equal", "effect": "NoSchedule"} in p["tolerations"]
               for p in pods)  # fmt: skip
    assert not [o for o in kube.objects if o["kind"] in ("Pod", "PodGroup")]  # all deleted
