"""The pure parts of gang-scheduling: sizing the gangs, their objects, and judging what happened.

No client and no I/O: functions of the API's dicts, tested as tables. Labels,
the namespace and ``--node-selector`` / ``--toleration`` placement are added
by the probe session when the objects are created.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from aicr.checks.conformance.gang_scheduling.mechanisms import (
    COSCHEDULING,
    KAI,
    KUEUE,
    VOLCANO,
    Mechanism,
)
from aicr.checks.probe_pods import pinned_to, restricted_pod_spec
from aicr.kube import pod_status
from aicr.kube.gpu_inventory import NodePlan
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration

Obj = dict[str, Any]
IMAGE = "ubuntu"  # in aicr/checks/images.yaml
CONTAINER = "member"
COMMAND = ["sleep", "3600"]  # held until the check deletes it
MEMBER_CPU_MILLIS = 10  # what each member of a gang that only has to run requests
GANG_LABEL = "aicr.dev/gang"
POSITIVE, NEGATIVE = "gang-fits", "gang-short"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_GROUP_ANNOTATION = "pod-group-name"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
# The phases scheduler-plugins' PodGroup controller (v0.34.7, pkg/controllers/
# podgroup_controller.go) gives a gang none of whose members has started: Pending
# until minMember pods exist, then Scheduling until minMember run or succeed.
# Running, Finished and Failed follow a start; Unknown is never set.
HELD_PHASES = ("Pending", "Scheduling")
COUNTS = ("running", "succeeded", "failed")  # its status counts of the members' pod phases


def millicores(raw: Any) -> int:
    """A CPU quantity ("2", "1500m", "0.5") in millicores; 0 when absent or unparsable."""
    text = str(raw or "0").strip()
    try:
        if text.endswith("m"):
            return int(Decimal(text[:-1]))
        return int(Decimal(text) * 1000)
    except (InvalidOperation, ValueError):
        return 0


def cpu_requests(pod: Obj) -> int:
    """Millicores a pod's containers request."""
    spec = pod.get("spec") or {}
    return sum(
        millicores(((c.get("resources") or {}).get("requests") or {}).get("cpu"))
        for c in spec.get("containers") or []
    )


def cpu_use(nodes: list[Obj], pods: list[Obj]) -> tuple[dict[str, int], dict[str, int]]:
    """``(allocatable, requested)`` millicores per node, counting non-terminated pods."""
    capacity = {
        n["metadata"]["name"]: millicores(
            ((n.get("status") or {}).get("allocatable") or {}).get("cpu")
        )
        for n in nodes
    }
    used: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node and not pod_status.finished(p):
            used[node] = used.get(node, 0) + cpu_requests(p)
    return capacity, used


@dataclass(frozen=True)
class Gang:
    """One gang: its name, size, what each member requests, and the node it is pinned to."""

    name: str
    size: int
    gpus: int  # per member
    cpu_millis: int  # per member
    node: str | None = None  # pinned by required node affinity
    cannot_fit: str = ""  # why a pinned gang can never fit its node, for the evidence

    @property
    def members(self) -> list[str]:
        """The member pods' names (for the gangs the check creates as pods)."""
        return [f"{self.name}-{i}" for i in range(self.size)]

    @property
    def selector(self) -> str:
        """The label selector of its members."""
        return f"{GANG_LABEL}={self.name}"

    def describe(self) -> str:
        """What the gang asks for, as a phrase."""
        each = f"{self.cpu_millis}m CPU" + (f" and {self.gpus} GPU" if self.gpus else "")
        where = f", pinned to {self.node}" if self.node else ""
        return f"{self.size} pods of {each} each{where}"


@dataclass(frozen=True)
class Sizing:
    """The positive gang, and the facts the negative one is built from."""

    positive: Gang
    gpu: bool
    why: str  # why GPU-requesting or CPU-only, for the evidence


def size_positive(size: int, gpu_plan: NodePlan | None, why_not_gpu: str | None) -> Sizing:
    """The positive gang: ``size`` GPU-requesting pods when that many GPUs are free, else CPU."""
    free = sum(t.gpus for t in gpu_plan.targets) if gpu_plan else 0
    if why_not_gpu is None and free >= size:
        return Sizing(
            Gang(POSITIVE, size, 1, MEMBER_CPU_MILLIS),
            True,
            f"GPU-requesting: {free} free GPUs on the schedulable GPU nodes",
        )
    why = why_not_gpu or f"only {free} free GPUs on the schedulable GPU nodes, {size} needed"
    return Sizing(Gang(POSITIVE, size, 0, MEMBER_CPU_MILLIS), False, f"CPU-only: {why}")


MAX_SHORT_MEMBERS = 16  # a pinned gang that cannot fit never has more members than this


def _short(allocatable: int, each: int) -> tuple[int, int]:
    """``(members, each)``: at least ``each`` per member, together more than ``allocatable``."""
    each = max(each, allocatable // MAX_SHORT_MEMBERS + 1, 1)
    return allocatable // each + 1, each


def size_pinned_negative(gpu: bool, gpu_plan: NodePlan | None, cpu_plan: NodePlan) -> Gang | str:
    """A gang that cannot fit its node even were the node empty, or why none can be built.

    Pinned to the schedulable node in scope with the most free GPUs (else CPU),
    its members together ask for more than that node's *allocatable*, so nothing
    another check frees meanwhile can make it fit, and no reservation is needed.
    GPU: one GPU each, one member more than the node's allocatable GPUs. CPU:
    three quarters of the node's free CPU each, so one member alone fits now
    with room to spare, and as many as exceed its allocatable CPU. Both keep to
    ``MAX_SHORT_MEMBERS`` members (each asks for more then).
    """
    if gpu and gpu_plan and gpu_plan.targets:
        t = min(gpu_plan.targets, key=lambda t: (-t.gpus, t.node))
        members, each = _short(t.total, 1)
        why = f"{members * each} GPUs in all; {t.node} has {t.total} allocatable"
        return Gang(NEGATIVE, members, each, MEMBER_CPU_MILLIS, t.node, why)
    if not cpu_plan.targets:
        return "no schedulable node in scope has free CPU to pin a gang to"
    t = min(cpu_plan.targets, key=lambda t: (-t.gpus, t.node))  # plan_nodes counts millicores
    members, each = _short(t.total, t.gpus * 3 // 4)
    why = f"{members * each}m CPU in all; {t.node} has {t.total}m allocatable"
    return Gang(NEGATIVE, members, 0, each, t.node, why)


def kueue_negative(positive: Gang) -> Gang:
    """One member more than the quota the check sets (exactly the positive gang's)."""
    return Gang(NEGATIVE, positive.size + 1, positive.gpus, positive.cpu_millis)


# ---- objects ------------------------------------------------------------------------
def _member_spec(gang: Gang, image: str, scheduler: str | None) -> Obj:
    requests = {"cpu": f"{gang.cpu_millis}m"}
    limits: dict[str, str] = {}
    if gang.gpus:
        requests[GPU_RESOURCE] = limits[GPU_RESOURCE] = str(gang.gpus)
    resources: Obj = {"requests": requests, **({"limits": limits} if limits else {})}
    container = {
        "name": CONTAINER,
        "image": image,
        "command": list(COMMAND),
        "resources": resources,
    }
    spec = restricted_pod_spec([container])
    spec["terminationGracePeriodSeconds"] = 0
    spec["tolerations"] = [gpu_toleration()]  # a CPU gang may be pinned to a GPU node
    if gang.node:
        spec["affinity"] = pinned_to(gang.node)
    if scheduler:
        spec["schedulerName"] = scheduler
    return spec


def pod_group(mechanism: Mechanism, version: str, gang: Gang, queue: str | None) -> Obj:
    """The PodGroup that makes ``gang`` one unit (minMember = its size)."""
    spec: Obj = {"minMember": gang.size}
    if mechanism in (KAI, VOLCANO) and queue:
        spec["queue"] = queue
    return {
        "apiVersion": f"{mechanism.group}/{version}",
        "kind": "PodGroup",
        "metadata": {"name": gang.name},
        "spec": spec,
    }


def member_pods(
    mechanism: Mechanism, gang: Gang, image: str, scheduler: str | None, queue: str | None
) -> list[Obj]:
    """The gang's pods, each tied to its PodGroup the way ``mechanism`` reads it."""
    labels = {GANG_LABEL: gang.name}
    annotations: dict[str, str] = {}
    if mechanism is COSCHEDULING:
        labels[COSCHEDULING_LABEL] = gang.name
    elif mechanism is KAI:
        annotations[KAI_GROUP_ANNOTATION] = gang.name
        if queue:
            labels[KAI_QUEUE_LABEL] = queue
    elif mechanism is VOLCANO:
        annotations[VOLCANO_GROUP_ANNOTATION] = gang.name
    pods = []
    for name in gang.members:
        meta: Obj = {"name": name, "labels": dict(labels)}
        if annotations:
            meta["annotations"] = dict(annotations)
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": _member_spec(gang, image, scheduler),
            }
        )
    return pods


def kueue_quota(version: str, name: str, gang: Gang) -> list[Obj]:
    """ResourceFlavor and ClusterQueue holding exactly ``gang``'s requests (cluster-scoped)."""
    api = f"{KUEUE.group}/{version}"
    quotas = [{"name": "cpu", "nominalQuota": f"{gang.size * gang.cpu_millis}m"}]
    if gang.gpus:
        quotas.append({"name": GPU_RESOURCE, "nominalQuota": str(gang.size * gang.gpus)})
    queue = {
        "apiVersion": api,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": [q["name"] for q in quotas],
                    "flavors": [{"name": name, "resources": quotas}],
                }
            ],
        },
    }
    return [{"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": name}}, queue]


def local_queue(version: str, name: str) -> Obj:
    """The LocalQueue in the workload namespace that feeds the check's ClusterQueue."""
    return {
        "apiVersion": f"{KUEUE.group}/{version}",
        "kind": "LocalQueue",
        "metadata": {"name": name},
        "spec": {"clusterQueue": name},
    }


def kueue_job(gang: Gang, image: str, queue: str, labels: dict[str, str]) -> Obj:
    """A Job of ``gang.size`` parallel pods in ``queue``: Kueue admits it whole.

    Not suspended here: Kueue's Job webhook suspends a queued Job until its
    Workload is admitted, so a Kueue that does not manage Jobs lets it run at
    once, which the check sees, instead of leaving it suspended by the check.
    """
    template_labels = {**labels, GANG_LABEL: gang.name}
    spec = _member_spec(gang, image, None)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": gang.name, "labels": {KUEUE_QUEUE_LABEL: queue}},
        "spec": {
            "parallelism": gang.size,
            "completions": gang.size,
            "backoffLimit": 0,
            "template": {"metadata": {"labels": template_labels}, "spec": spec},
        },
    }


# ---- judging --------------------------------------------------------------------------
def is_bound(pod: Obj) -> bool:
    """The scheduler gave the pod a node."""
    return bool((pod.get("spec") or {}).get("nodeName"))


def is_suspended(job: Obj | None) -> bool:
    """The Job exists and is suspended (``spec.suspend``)."""
    return bool(((job or {}).get("spec") or {}).get("suspend"))


def is_running(pod: Obj) -> bool:
    """Bound and running."""
    return is_bound(pod) and (pod.get("status") or {}).get("phase") == "Running"


def condition(obj: Obj | None, kind: str) -> Obj | None:
    """The status condition of type ``kind``, if any."""
    return next(
        (
            c
            for c in ((obj or {}).get("status") or {}).get("conditions") or []
            if c.get("type") == kind
        ),
        None,
    )


def _said(cond: Obj) -> str:
    reason = f" ({cond.get('reason')})" if cond.get("reason") else ""
    return f"{cond.get('type')}={cond.get('status')}{reason}: {cond.get('message', '')}".rstrip()


def owned_by(objs: list[Obj], kind: str, name: str) -> Obj | None:
    """The first object an owner reference ties to ``kind`` ``name``."""
    for o in objs:
        for ref in (o.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == kind and ref.get("name") == name:
                return o
    return None


def workload_admitted(workload: Obj | None, size: int) -> str | None:
    """Why a Kueue Workload does not show ``size`` pods admitted as one unit; None when it does."""
    if workload is None:
        return "Kueue created no Workload for the Job"
    admitted = condition(workload, "Admitted")
    if not admitted or admitted.get("status") != "True":
        return f"the Workload is not admitted: {_said(admitted) if admitted else 'no condition'}"
    counts = [int(p.get("count") or 0) for p in (workload.get("spec") or {}).get("podSets") or []]
    if sum(counts) != size:
        return f"the Workload admits {sum(counts)} pods, not the gang's {size}"
    return None


def waiting_evidence(mechanism: Mechanism, admission: Obj | None, pods: list[Obj]) -> str | None:
    """What shows the mechanism holding the gang back, or None when nothing does.

    Kueue: its Workload is not admitted (QuotaReserved or Admitted false).
    PodGroup schedulers: the PodGroup's own status says so (KAI's
    UnschedulableOnNodePool scheduling condition, Volcano's Unschedulable
    condition, coscheduling's `HELD_PHASES` with no member counted running,
    succeeded or failed), or the scheduler marked the members unschedulable
    (PodScheduled=False).
    """
    if mechanism is KUEUE:
        if admission is None:
            return None
        for kind in ("QuotaReserved", "Admitted"):
            cond = condition(admission, kind)
            if cond and cond.get("status") == "False":
                return f"Workload {admission['metadata']['name']}: {_said(cond)}"
        return None
    found = []
    status = (admission or {}).get("status") or {}
    if mechanism is KAI:
        found += [
            f"{c.get('type')} ({c.get('reason')}): {c.get('message', '')}".rstrip()
            for c in status.get("schedulingConditions") or []
            if c.get("type") == "UnschedulableOnNodePool"
        ]
    elif mechanism is VOLCANO:
        cond = condition(admission, "Unschedulable")
        if cond and cond.get("status") == "True":
            found.append(_said(cond))
    elif status.get("phase") in HELD_PHASES and not any(status.get(k) for k in COUNTS):
        found.append(_phase_counts(status))
    if admission is not None and found:
        return f"PodGroup {admission['metadata']['name']}: " + "; ".join(found)
    held = [
        (p["metadata"]["name"], cond)
        for p in pods
        if (cond := condition(p, "PodScheduled")) and cond.get("status") == "False"
    ]
    if held:
        name, cond = held[0]
        return (
            f"{len(held)}/{len(pods)} members unschedulable; {name}: "
            f"{cond.get('reason', '')}: {cond.get('message', '')}".rstrip()
        )
    return None


def _phase_counts(status: Obj) -> str:
    return f"phase {status['phase']}, " + ", ".join(
        f"{int(status.get(k) or 0)} {k}" for k in COUNTS
    )


def group_running(group: Obj | None, size: int) -> bool:
    """A coscheduling PodGroup's status shows phase Running with ``size`` members running."""
    status = (group or {}).get("status") or {}
    return status.get("phase") == "Running" and int(status.get("running") or 0) >= size


def group_status(group: Obj | None) -> str:
    """What a coscheduling PodGroup's status says: its phase and member counts.

    The controller counts every pod labelled with the group's name, in any namespace.
    """
    if group is None:
        return "PodGroup gone"
    status = group.get("status") or {}
    if not status.get("phase"):
        return f"PodGroup {group['metadata']['name']}: no status.phase yet"
    return f"PodGroup {group['metadata']['name']}: {_phase_counts(status)}"


def bound_names(pods: dict[str, Obj], members: list[str] | None = None) -> list[str]:
    """``name on node`` of each pod that was bound (among ``members`` when given), sorted."""
    return [
        f"{n} on {p['spec']['nodeName']}"
        for n, p in sorted(pods.items())
        if is_bound(p) and (members is None or n in members)
    ]
