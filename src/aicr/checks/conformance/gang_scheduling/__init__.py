"""gang-scheduling: a gang starts as a unit, and a gang that cannot fit starts no pod at all.

What it proves, with the gang mechanism the recipe and the cluster show (KAI
scheduler, Kueue, coscheduling or Volcano PodGroups; ``params.mechanism``
chooses when several are served):

- positive: a gang of ``params.size`` pods (N >= 2), each requesting one GPU
  when that many are free (CPU-only otherwise; the evidence says which), is
  admitted as one unit (Kueue: its Workload admitted for all N; PodGroups:
  ``minMember`` N) and all N are bound and running together (coscheduling:
  the evidence adds what its controller wrote into the PodGroup's status);
- negative (all-or-nothing): a gang that cannot fit by construction keeps zero
  pods bound for the whole observation window (``params.observeSeconds``),
  while its admission object shows it waiting. With Kueue the check's own
  ClusterQueue holds exactly the positive gang's requests and the gang has one
  member more; otherwise the gang's pods are pinned by node affinity to one
  existing node and together ask for more than its allocatable GPUs (or CPU),
  so neither an autoscaler nor another check freeing GPUs meanwhile can make
  it fit; one member alone fits there.

What it does not: fairness, preemption, queue ordering, or gangs spanning
nodes outside ``--node-selector``. In DRA mode the gangs are CPU-only.
The run reserves ``params.size`` GPUs for it (catalog ``countParam``): the
positive gang's; the negative one needs none, it can never fit.

How it fails: no recognised gang mechanism (naming what was found, including
a scheduler aicr does not recognise), a positive gang that is not admitted or
not all running within ``params.startSeconds`` (with where each pod got to), a
negative gang of which any pod was bound (naming the pods that ran and their
nodes), or no admission object that shows the gang held back. The check never
suspends its Kueue Jobs itself: Kueue's Job webhook does; a Kueue that suspends
but never admits them leaves the first gang waiting ("still suspended"), and one
that does not suspend them lets it run without a Workload, the failure naming
the pods that ran.
"""

from __future__ import annotations

import time
from typing import Any

from aicr.checks import CheckContext
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.gang_scheduling import build
from aicr.checks.conformance.gang_scheduling.mechanisms import (
    COSCHEDULING,
    KAI,
    KUEUE,
    MECHANISMS,
    VOLCANO,
    Detection,
    Mechanism,
    detect,
)
from aicr.checks.conformance.gang_scheduling.params import Params as Params
from aicr.checks.conformance.gang_scheduling.params import preflight as preflight
from aicr.checks.steps import now_iso
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.kube import gpu_inventory, pod_status
from aicr.kube.kinds import of as kind_of
from aicr.kube.rest import KubeApiError
from aicr.result import CheckResult

ADMISSION_POLL_SECONDS = 0.5
GROUP_STATUS_SECONDS = 5  # how long a running gang's PodGroup status may lag its pods
DEFAULT_QUEUES = {KAI.name: "default-queue", VOLCANO.name: "default"}


def _ref(mechanism: Mechanism, version: str, kind: str) -> str:
    """The kinds-table key of ``kind`` at the served version."""
    return kind_of({"apiVersion": f"{mechanism.group}/{version}", "kind": kind}).ref


def _detect(ctx: CheckContext) -> Detection | None:
    with ctx.step("gang mechanism") as step:
        components = [c.name for c in ctx.recipe.component_refs if c.is_enabled]
        groups = ctx.kube.groups()
        resources = {
            f"{m.group}/{v}": ctx.kube.served(f"{m.group}/{v}") or []
            for m in MECHANISMS
            for v in groups.get(m.group) or []
        }
        found = detect(components, groups, resources, ctx.params.mechanism)
        step.asked = "recipe components; API discovery of " + ", ".join(m.group for m in MECHANISMS)
        step.answer = found.summary
        if found.chosen is None:
            step.failed(str(found.problem))
            return None
        step.info(f"testing {found.chosen.title} ({found.chosen.group}/{found.version})")
        return found
    return None


def _plan(ctx: CheckContext) -> tuple[gpu_inventory.NodePlan, gpu_inventory.NodePlan]:
    """Free and allocatable GPUs per schedulable GPU node in scope, and CPU (millicores) per node.

    ``plan_nodes`` counts any resource: in the CPU plan a target's ``gpus`` are
    its free millicores and ``total`` its allocatable ones.
    """
    nodes, pods = ctx.kube.list("Node"), ctx.kube.list("Pod")
    gpu_plan = gpu_inventory.free_gpu_nodes(nodes, ctx.workloads, dra=False, pods=pods)
    return gpu_plan, gpu_inventory.plan_nodes(nodes, *build.cpu_use(nodes, pods), ctx.workloads)


def _sizing(ctx: CheckContext) -> build.Sizing | None:
    with ctx.step("capacity") as step:
        gpu_plan, cpu_plan = _plan(ctx)
        dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
        why = (
            "the recipe advertises GPUs through DRA; gang members request no claims"
            if dra
            else None
        )
        sizing = build.size_positive(ctx.params.size, gpu_plan, why)
        step.asked = "nodes, and every pod's GPU and CPU requests"
        step.answer = (
            "free GPUs: "
            + (", ".join(f"{t.node} {t.gpus}" for t in gpu_plan.targets) or "none")
            + "; free CPU: "
            + (", ".join(f"{t.node} {t.gpus}m" for t in cpu_plan.targets) or "none")
        )
        step.info(sizing.why)
        return sizing
    return None


class _Gangs:
    """Creates and observes the gangs of one mechanism at its served version."""

    def __init__(self, ctx: CheckContext, found: Detection) -> None:
        assert found.chosen is not None and found.version is not None
        self.ctx, self.m, self.version = ctx, found.chosen, found.version
        self.image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
        self.queue = ctx.params.queue or DEFAULT_QUEUES.get(self.m.name)
        self.scheduler = ctx.params.scheduler_name or self.m.scheduler
        self.quota_name = ctx.workload_namespace  # run-unique: names the cluster-scoped quota
        self.log: list[str] = []

    def note(self, what: str) -> None:
        """One timestamped line of what was created or observed."""
        self.log.append(f"{now_iso()} {what}")

    def create(self, gang: build.Gang) -> None:
        """Create ``gang`` the way the mechanism admits gangs."""
        ns = self.ctx.workload_namespace
        if self.m is KUEUE:
            job = build.kueue_job(gang, self.image, self.quota_name, self.ctx.workload_labels())
            self.ctx.probes.create(job)
            self.note(
                f"created Job {ns}/{gang.name} ({gang.describe()}) in LocalQueue {self.quota_name}"
            )
            return
        self.ctx.probes.create(build.pod_group(self.m, self.version, gang, self.queue))
        for pod in build.member_pods(self.m, gang, self.image, self.scheduler, self.queue):
            self.ctx.probes.create(pod)
        self.note(
            f"created PodGroup {ns}/{gang.name} (minMember {gang.size}) and "
            f"{gang.describe()}, schedulerName {self.scheduler}"
        )

    def quota(self, positive: build.Gang) -> None:
        """Kueue only: the check's ResourceFlavor, ClusterQueue and LocalQueue."""
        for obj in build.kueue_quota(self.version, self.quota_name, positive):
            self.ctx.probes.create(obj)
        self.ctx.probes.create(build.local_queue(self.version, self.quota_name))
        gpus = f" and {positive.size * positive.gpus} GPUs" if positive.gpus else ""
        self.note(
            f"created ResourceFlavor and ClusterQueue {self.quota_name} (quota "
            f"{positive.size * positive.cpu_millis}m CPU{gpus}) and its LocalQueue"
        )

    def start(self, gang: build.Gang, quota: bool = False) -> str | None:
        """Create ``gang`` (after the Kueue quota with ``quota``); why it was refused, if it was."""
        try:
            if quota:
                self.quota(gang)
            self.create(gang)
        except KubeApiError as exc:  # an admission webhook or the API refused an object
            return f"{self.m.title} refused the gang: {exc}"
        return None

    def admission(self, gang: build.Gang) -> build.Obj | None:
        """The object the mechanism admits the gang through (Workload or PodGroup)."""
        ns = self.ctx.workload_namespace
        if self.m is KUEUE:
            workloads = self.ctx.kube.list(_ref(KUEUE, self.version, "Workload"), ns)
            return build.owned_by(workloads, "Job", gang.name)
        return self.ctx.kube.get(_ref(self.m, self.version, "PodGroup"), gang.name, ns)

    def suspended(self, gang: build.Gang) -> str | None:
        """Kueue only: that the gang's Job is still suspended (no pods yet), if it is."""
        if self.m is not KUEUE:
            return None
        job = self.ctx.kube.get("Job", gang.name, self.ctx.workload_namespace)
        return f"Job {gang.name} still suspended" if build.is_suspended(job) else None

    def remove(self, gang: build.Gang) -> None:
        """Delete ``gang`` and wait until its pods are gone (their resources free again)."""
        ns = self.ctx.workload_namespace
        if self.m is KUEUE:
            self.ctx.kube.delete("Job", gang.name, ns)
        else:
            for name in gang.members:
                self.ctx.kube.delete("Pod", name, ns)
            self.ctx.kube.delete(_ref(self.m, self.version, "PodGroup"), gang.name, ns)
        waited = self.ctx.probes.wait("Pod", lambda _: False, budget=60, selector=gang.selector)
        self.note(
            f"deleted {gang.name}; its pods "
            + (
                "gone"
                if not [n for n, w in waited.pending.items() if w != "deleted"]
                else "still present"
            )
        )


def _positive(ctx: CheckContext, gangs: _Gangs, gang: build.Gang, why: str) -> bool:
    with ctx.step("gang that fits") as step:
        step.asked = f"{gang.describe()} ({why}), admitted through {gangs.m.title}"
        refused = gangs.start(gang, quota=gangs.m is KUEUE)
        if refused:
            step.answer = "; ".join(gangs.log)
            step.failed(refused)
            return False
        waited = ctx.probes.wait(
            "Pod",
            build.is_running,
            budget=ctx.params.start_seconds,
            selector=gang.selector,
            expect=gang.size,
        )
        now = ctx.kube.list("Pod", ctx.workload_namespace, gang.selector)
        running = sorted(
            f"{p['metadata']['name']} on {p['spec']['nodeName']}"
            for p in now
            if build.is_running(p)
        )
        gangs.note(f"running together: {', '.join(running) or 'none'}")
        admission = gangs.admission(gang)
        problems = []
        if gangs.m is KUEUE:
            not_admitted = build.workload_admitted(admission, gang.size)
            if not_admitted and running:  # pods Kueue never admitted: it does not gate Jobs
                problems.append(
                    f"{not_admitted}, yet {len(running)}/{gang.size} of its pods "
                    f"ran: {', '.join(running)}"
                )
            elif not_admitted:
                problems.append(not_admitted)
            else:
                gangs.note(
                    f"Workload {(admission or {})['metadata']['name']} admitted for "
                    f"{gang.size} pods"
                )
        if gangs.m is COSCHEDULING:
            gangs.note(_group_status(ctx, gangs, gang, wait=len(running) == gang.size))
        if len(running) < gang.size:
            where = "; ".join(f"{n}: {w}" for n, w in waited.pending.items()) or (
                gangs.suspended(gang) or f"{len(running)}/{gang.size} running at the end"
            )
            problems.append(
                f"{len(running)}/{gang.size} pods running within {int(waited.seconds)}s: {where}"
            )
        step.answer = "; ".join(gangs.log)
        if problems:
            step.failed("; ".join(problems))
            return False
        step.passed(f"all {gang.size} pods bound and running together")
        gangs.remove(gang)
        return True
    return False


def _group_status(ctx: CheckContext, gangs: _Gangs, gang: build.Gang, wait: bool) -> str:
    """What the PodGroup's status says: evidence only, never the verdict.

    With ``wait`` (the whole gang runs) its controller, which counts the pods
    after they run, gets a few seconds to show them running.
    """
    end = time.monotonic() + (min(GROUP_STATUS_SECONDS, ctx.deadline.for_waits()) if wait else 0)
    while True:
        group = gangs.admission(gang)
        if build.group_running(group, gang.size) or time.monotonic() >= end:
            return build.group_status(group)
        time.sleep(ADMISSION_POLL_SECONDS)


def _negative_gang(ctx: CheckContext, gangs: _Gangs, sizing: build.Sizing) -> build.Gang | str:
    """Kueue: one member over the check's quota; else pinned to a node it cannot fit on."""
    if gangs.m is KUEUE:
        return build.kueue_negative(sizing.positive)
    gpu_plan, cpu_plan = _plan(ctx)  # again: the positive gang is gone
    return build.size_pinned_negative(sizing.gpu, gpu_plan, cpu_plan)


def _negative(ctx: CheckContext, gangs: _Gangs, sizing: build.Sizing) -> None:
    with ctx.step("gang that cannot fit") as step:
        gangs.log.clear()
        gang = _negative_gang(ctx, gangs, sizing)
        if isinstance(gang, str):
            step.failed(f"no gang that cannot fit could be built: {gang}")
            return
        how = (
            f"one pod more than ClusterQueue {gangs.quota_name}'s quota"
            if gangs.m is KUEUE
            else f"{gang.cannot_fit}, so it cannot fit even on an empty node"
        )
        step.asked = (
            f"{gang.describe()} ({how}); watched {ctx.params.observe_seconds:g}s for any bound pod"
        )
        refused = gangs.start(gang)
        if refused:
            step.answer = "; ".join(gangs.log)
            step.failed(refused)
            return
        gangs.note("observation window opens")
        began = time.monotonic()
        waited = ctx.probes.wait(
            "Pod",
            build.is_bound,
            budget=ctx.params.observe_seconds,
            selector=gang.selector,
            expect=gang.size,
        )
        watched = time.monotonic() - began
        gangs.note(f"observation window closes after {watched:.1f}s")
        evidence, pods = _held(ctx, gangs, gang)
        bound = sorted(
            set(build.bound_names(waited.objects))
            | set(build.bound_names({p["metadata"]["name"]: p for p in pods}))
        )
        step.answer = "; ".join(gangs.log)
        if bound:
            step.failed(
                f"partial start: {len(bound)}/{gang.size} pods of a gang that cannot "
                f"fit were bound: {', '.join(bound)}"
            )
        elif waited.seconds < ctx.params.observe_seconds:
            step.other(
                f"the check's deadline left {waited.seconds:.0f}s of the "
                f"{ctx.params.observe_seconds:g}s observation window"
            )
        elif evidence is None:
            step.failed(
                f"no pod was bound, but nothing shows {gangs.m.title} holding the gang "
                f"within {ctx.params.admission_seconds:g}s more: " + _where(gangs, gang, pods)
            )
        else:
            step.passed(f"0/{gang.size} pods bound for {watched:.0f}s; {evidence}")


def _held(ctx: CheckContext, gangs: _Gangs, gang: build.Gang) -> tuple[str | None, list[Any]]:
    """The admission object's evidence that the gang waits (looked for a bounded while)."""
    end = time.monotonic() + min(ctx.params.admission_seconds, ctx.deadline.for_waits())
    while True:
        pods = ctx.kube.list("Pod", ctx.workload_namespace, gang.selector)
        evidence = build.waiting_evidence(gangs.m, gangs.admission(gang), pods)
        if evidence or time.monotonic() >= end or any(build.is_bound(p) for p in pods):
            if evidence:
                gangs.note(f"held: {evidence}")
            return evidence, pods
        time.sleep(ADMISSION_POLL_SECONDS)


def _where(gangs: _Gangs, gang: build.Gang, pods: list[Any]) -> str:
    admission = gangs.admission(gang)
    kind = "Workload" if gangs.m is KUEUE else "PodGroup"
    parts = [f"{kind}: {pod_status.where(admission)}"]
    parts += [f"{p['metadata']['name']}: {pod_status.where(p)}" for p in pods]
    return "; ".join(parts)


def run(ctx: CheckContext) -> CheckResult:
    """Detect the mechanism, then the gang that fits, then the one that cannot."""
    found = _detect(ctx)
    if found is None:
        return ctx.conclude("gang steps")
    sizing = _sizing(ctx)
    if sizing is None:
        return ctx.conclude("gang steps")
    gangs = _Gangs(ctx, found)
    if _positive(ctx, gangs, sizing.positive, sizing.why):
        _negative(ctx, gangs, sizing)
    result = ctx.conclude("gang steps")
    if result.status != Status.PASSED:
        return result
    kind = "GPU" if sizing.gpu else "CPU-only"
    return ctx.passed(
        f"{gangs.m.title} schedules all-or-nothing: a gang of "
        f"{sizing.positive.size} pods ({kind}) ran as a unit and a gang that "
        f"cannot fit kept 0 pods bound for {ctx.params.observe_seconds:g}s"
    )
