"""cluster-autoscaling: pending GPU pods get a new node from the autoscaler, which goes again.

What it proves, by observing each event, never inferring one:
- which cluster autoscaler the cluster runs (Karpenter NodePools, AKS node
  auto-provisioning, Cluster Autoscaler's status ConfigMap, GKE and AKS
  cluster autoscalers; ``providers``);
- scale-up: with the free GPUs of every existing GPU node held by one pinned
  pod each, ``params.pods`` pods of ``params.gpusPerPod`` GPUs fit no existing
  node (the scheduler says so); in DRA mode those GPUs are ResourceClaims on
  the DRA driver's DeviceClass; within ``params.scaleUpSeconds`` a new node of
  a node group (a NodePool, or the group Cluster Autoscaler names) registers
  and every pod Runs on a new node;
- scale-down: once the workload is deleted, the new nodes are removed within
  ``params.scaleDownSeconds``; where the provider's delay is longer, that the
  removal began (NodeClaim deleted, Karpenter's disrupted taint, Cluster
  Autoscaler's deletion taints or ScaleDown candidates), and the message says
  the node was not yet gone.

What it does not: scale a node group of a given accelerator type by name.

How it fails: no recognised autoscaler ("no recognised cluster autoscaler",
never a skip: N/A is declared in the validate config); a pod that ran on an
existing node; no new node in time (with the scheduler's and the
autoscaler's own words), or at once when Karpenter says it will not
provision for pods with resource claims; a node that stays with no sign of
removal. Nodes the check caused are named when it ends, whatever ends it
(SIGTERM included): the workload is deleted and the node it waits on is
reported.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from aicr.checks import CheckContext
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.cluster_autoscaling import build, providers
from aicr.checks.conformance.cluster_autoscaling.params import Params as Params
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.workload_images import workload_image
from aicr.config import NA_PATH
from aicr.ctrf import Status
from aicr.kube import pod_status
from aicr.kube.gpu_inventory import NodePlan
from aicr.kube.gpus import GPU_DEVICE_CLASS, allocatable_gpus
from aicr.result import CheckResult, StepStatus

POLL_SECONDS = 1.0
Obj = dict[str, Any]


class Stopped(BaseException):
    """SIGTERM reached the check (Ctrl-C on the run, or its deadline): end now, cleanly.

    A BaseException, so no step records it as its own failure and goes on.
    """


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """Turn SIGTERM into ``Stopped`` while the check runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process
        raise Stopped("SIGTERM")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _provider(ctx: CheckContext) -> providers.Provider | None:
    with ctx.step("autoscaler") as step:
        served = ctx.kube.served(providers.KARPENTER_API)
        pools = ctx.kube.list("NodePool") if served and "nodepools" in served else []
        status = ctx.kube.get("ConfigMap", providers.CA_STATUS, providers.CA_NAMESPACE)
        step.asked = (
            f"API discovery of {providers.KARPENTER_API} and its NodePools; ConfigMap "
            f"{providers.CA_NAMESPACE}/{providers.CA_STATUS}"
        )
        nodes = ctx.kube.list("Node")
        candidates = (providers.karpenter(pools), providers.cluster_autoscaler(status, nodes))
        found = [p for p in candidates if p]
        karpenter = "not served" if served is None else f"served, {len(pools)} NodePools"
        step.answer = f"{providers.KARPENTER_API}: {karpenter}; {providers.CA_STATUS}: " + (
            "present" if status is not None else "absent"
        )
        if not found:
            why = (
                "Karpenter's API is served but it has no NodePool"
                if served is not None
                else f"no {providers.KARPENTER_API} NodePool"
            )
            step.failed(
                f"no recognised cluster autoscaler: {why}, no Cluster Autoscaler status "
                f"ConfigMap {providers.CA_NAMESPACE}/{providers.CA_STATUS}; a platform "
                "that provides none declares cluster_autoscaling N/A with a "
                f"justification in {NA_PATH}"
            )
            return None
        step.info("; ".join(f"{p.name}: {p.found}" for p in found))
        return found[0]
    return None


def _capacity(ctx: CheckContext, dra: bool) -> tuple[NodePlan, set[str]] | None:
    with ctx.step("existing GPU nodes") as step:
        nodes = ctx.kube.list("Node")
        step.asked = (
            "Nodes, the whole GPUs of gpu.nvidia.com ResourceSlices and the "
            "devices every ResourceClaim holds"
            if dra
            else "Nodes, their allocatable nvidia.com/gpu and every pod's GPU requests"
        )
        plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=dra)
        step.answer = (
            "; ".join(
                [f"{t.node}: {t.gpus}/{t.total} GPUs free" for t in plan.targets]
                + [f"{n}: all GPUs in use" for n in plan.busy]
                + [f"{n}: not schedulable" for n in plan.unschedulable]
            )
            or "no GPU node"
        )
        step.info(
            f"{len(nodes)} nodes before the scale-up; fill the free GPUs of "
            f"{len(plan.targets)} so that no existing node fits the GPU pods"
        )
        return plan, {str(n["metadata"]["name"]) for n in nodes}
    return None


def _fill(ctx: CheckContext, plan: NodePlan, image: str, dra: bool) -> bool:
    with ctx.step("fill existing nodes") as step:
        if not plan.targets:
            step.asked = "no existing GPU node has a free GPU"
            step.info("nothing to fill")
            return True
        deadline = int(ctx.deadline.remaining())
        for t in plan.targets:
            if dra:
                ctx.probes.create(build.filler_claim(t))
            ctx.probes.create(build.filler(t, image, deadline, dra))
        how = " (its ResourceClaim)" if dra else ""
        step.asked = "; ".join(
            f"pod {build.filler_name(t.node)} on {t.node} with {t.gpus} GPUs{how}"
            for t in plan.targets
        )
        waited = ctx.probes.wait("Pod", build.running, budget=ctx.params.fill_seconds)
        step.answer = (
            "; ".join(
                f"{n}: Running on {p['spec'].get('nodeName')}"
                for n, p in sorted(waited.objects.items())
                if n not in waited.pending
            )
            or "none running"
        )
        if waited.pending:
            step.failed(
                "; ".join(
                    f"pod {n} holding existing GPUs did not start within "
                    f"{int(waited.seconds)}s: {w}"
                    for n, w in waited.pending.items()
                )
            )
            return False
        step.passed(f"the free GPUs of {len(plan.targets)} existing nodes are held")
        return True
    return False


class Watcher:
    """Polls the check's pods, the nodes and NodeClaims, noting each change once."""

    def __init__(self, ctx: CheckContext, provider: providers.Provider, before: set[str]) -> None:
        self.ctx, self.provider, self.before = ctx, provider, before
        self.timeline = build.Timeline()
        self.claims_before = {self._name(c) for c in self._claims()}
        self.caused: dict[str, Obj] = {}  # new nodes the check's pods or NodeClaims brought
        self.groups: dict[str, str | None] = {}
        self.nodes: dict[str, Obj] = {}
        self.claims: dict[str, Obj] = {}
        self.said: list[str] = []  # what the autoscaler told the pods, as of the last look

    @staticmethod
    def _name(obj: Obj) -> str:
        return str((obj.get("metadata") or {}).get("name"))

    def _claims(self) -> list[Obj]:
        return self.ctx.kube.list("NodeClaim") if self.provider.karpenter else []

    def events(self) -> list[Obj]:
        """Events about the check's pods (its namespace holds nothing else)."""
        return self.ctx.kube.list("Event", self.ctx.workload_namespace)

    def scale_up_pods(self) -> dict[str, Obj]:
        """The check's scale-up pods as they are now."""
        pods = self.ctx.kube.list("Pod", self.ctx.workload_namespace, self.ctx.probes.selector)
        return {self._name(p): p for p in pods if self._name(p).startswith(build.POD_PREFIX)}

    def look(self) -> dict[str, Obj]:
        """One look at everything; the scale-up pods."""
        note = self.timeline.note
        self.nodes = {self._name(n): n for n in self.ctx.kube.list("Node")}
        self.claims = {self._name(c): c for c in self._claims()}
        events = self.events()
        for name, claim in sorted(self.claims.items()):
            if name not in self.claims_before:
                pool = ((claim.get("metadata") or {}).get("labels") or {}).get(
                    providers.NODEPOOL_LABEL
                )
                note(f"claim/{name}", f"NodeClaim {name} created (NodePool {pool})")
                node = (claim.get("status") or {}).get("nodeName")
                if node and node in self.nodes:
                    self.caused.setdefault(node, self.nodes[node])
        pods = self.scale_up_pods()
        for name, pod in sorted(pods.items()):
            if (why := pod_status.unschedulable(pod)) is not None:
                note(f"unschedulable/{name}", f"pod {name} unschedulable: {why}")
            node = pod_status.node_of(pod)
            if build.running(pod):
                note(f"running/{name}", f"pod {name} Running on {node}")
            if node and node not in self.before and node in self.nodes:
                self.caused.setdefault(node, self.nodes[node])
        self.said = providers.autoscaler_events(events, self.provider)
        for line in self.said:
            note(f"event/{line}", f"{self.provider.name} event: {line}")
        for node, obj in sorted(self.nodes.items()):
            if node in self.before:
                continue
            group = providers.node_group(obj, self.provider, events)
            self.groups[node] = group
            note(
                f"node/{node}",
                f"node {node} registered (node group {group}, "
                f"{allocatable_gpus(obj)} GPUs allocatable)",
            )
        return pods

    def left(self) -> list[str]:
        """The nodes the check caused that are still there."""
        return sorted(n for n in self.caused if n in self.nodes)

    def claim_of(self, node: str) -> Obj | None:
        """The NodeClaim behind ``node`` (Karpenter)."""
        return next(
            (c for c in self.claims.values() if (c.get("status") or {}).get("nodeName") == node),
            None,
        )


def _scale_up(ctx: CheckContext, w: Watcher, image: str, dra: bool) -> bool:
    p = ctx.params
    with ctx.step("scale-up") as step:
        deadline = int(ctx.deadline.remaining())
        pods = build.scale_up_pods(p.pods, p.gpus_per_pod, image, deadline, dra)
        how = (
            (
                f", each its own ResourceClaim from ResourceClaimTemplate {build.TEMPLATE} on "
                f"DeviceClass {GPU_DEVICE_CLASS}"
            )
            if dra
            else ""
        )
        step.asked = (
            f"{p.pods} pods of {p.gpus_per_pod} GPUs ({image}{how}) that no existing "
            "node fits; a new node and every pod Running within "
            f"{p.scale_up_seconds:.0f}s"
        )
        if dra:
            ctx.probes.create(build.scale_up_template(p.gpus_per_pod))
        w.timeline.note("created", f"created pods {', '.join(x['metadata']['name'] for x in pods)}")
        for pod in pods:
            ctx.probes.create(pod)
        end = time.monotonic() + min(p.scale_up_seconds, ctx.deadline.for_waits())
        seen = w.look()
        while not _scale_up_over(seen, w.before) and time.monotonic() < end:
            if providers.refused_claims(w.said, w.provider):
                break  # Karpenter holds this refusal permanent: no node will come
            time.sleep(POLL_SECONDS)
            seen = w.look()
        step.answer = w.timeline.text()
        if not all(build.running(x) for x in seen.values()) or len(seen) < p.pods:
            step.failed(_no_scale_up(w, seen, min(p.scale_up_seconds, end - w.timeline.start)))
            return False
        problems = build.judge_scale_up(seen, w.before, w.groups)
        if problems:
            step.failed("; ".join(problems))
            return False
        nodes = sorted({str(x["spec"]["nodeName"]) for x in seen.values()})
        step.passed(
            f"{w.provider.name} added {', '.join(_node_text(w, n) for n in nodes)} "
            f"and the {p.pods} pods Run there"
        )
        return True
    return False


def _scale_up_over(pods: dict[str, Obj], before: set[str]) -> bool:
    """Every pod Runs, or one Runs on an existing node (nothing more to see)."""
    running = [x for x in pods.values() if build.running(x)]
    return bool(pods) and (
        len(running) == len(pods) or any(x["spec"]["nodeName"] in before for x in running)
    )


def _node_text(w: Watcher, node: str) -> str:
    return f"node {node} (node group {w.groups.get(node)})"


def _no_scale_up(w: Watcher, pods: dict[str, Obj], seconds: float) -> str:
    """Why no scale-up was seen: where each pod got to and what the autoscaler said."""
    where = "; ".join(
        f"pod {n}: {pod_status.where(x)}" for n, x in sorted(pods.items()) if not build.running(x)
    )
    said = providers.autoscaler_events(w.events(), w.provider)
    claims = [n for n in w.claims if n not in w.claims_before]
    if providers.refused_claims(said, w.provider):
        after = time.monotonic() - w.timeline.start
        head = (
            f"{providers.KARPENTER_DRA_BEHAVIOUR}; it refused the pods {after:.0f}s after "
            "they were created"
        )
    else:
        head = f"no new node ran the pods within {seconds:.0f}s"
    parts = [f"{head}: {where}"]
    if w.provider.karpenter:
        parts.append(
            f"NodeClaims created: {', '.join(claims)}"
            if claims
            else "Karpenter created no NodeClaim"
        )
    parts.append(
        f"{w.provider.name} said: {' | '.join(said)}"
        if said
        else f"no event from {w.provider.name} on the pods"
    )
    return "; ".join(parts)


def _delete_workload(ctx: CheckContext) -> None:
    """Delete every pod the check made at once (the session's close waits for them)."""
    for made in ctx.probes.made:
        with contextlib.suppress(Exception):
            ctx.kube.delete(made.kind.ref, made.name, made.namespace)


def _scale_down(ctx: CheckContext, w: Watcher) -> tuple[bool, str]:
    """Delete the workload, then wait for the new nodes to go; (passed, what happened)."""
    p = ctx.params
    with ctx.step("scale-down") as step:
        caused = sorted(w.caused)
        step.asked = (
            f"delete the workload; nodes {', '.join(caused)} removed within "
            f"{p.scale_down_seconds:.0f}s"
        )
        _delete_workload(ctx)
        mark = len(w.timeline.entries)
        w.timeline.note("deleted", "deleted the workload")
        end = time.monotonic() + min(p.scale_down_seconds, ctx.deadline.for_waits())
        began: dict[str, str] = {}
        while True:
            w.look()
            status = _ca_status(ctx, w)
            grown = providers.scaled_up_groups(w.events())
            for node in w.left():
                groups = {g for g in (w.groups.get(node), *grown) if g}
                sign = providers.scale_down_began(
                    w.nodes.get(node), w.claim_of(node), status, groups
                )
                if sign and w.timeline.note(f"began/{node}", f"scale-down of {node} began: {sign}"):
                    began[node] = sign
            for node in caused:
                if node not in w.nodes:
                    w.timeline.note(f"gone/{node}", f"node {node} removed")
            if not w.left() or time.monotonic() >= end:
                break
            time.sleep(POLL_SECONDS)
        step.answer = w.timeline.text(mark)
        left = w.left()
        bound = f"{min(p.scale_down_seconds, end - w.timeline.start):.0f}s"
        if not left:
            step.passed(f"{', '.join(caused)} removed once the workload was deleted")
            return True, "removed it once the workload was deleted"
        unbegun = [n for n in left if n not in began]
        if unbegun:
            pools = ctx.kube.list("NodePool") if w.provider.karpenter else []
            delay = providers.scale_down_delay(pools, w.groups.get(unbegun[0]))
            step.failed(
                f"{', '.join(unbegun)} still there {p.scale_down_seconds:.0f}s after the "
                "workload was deleted, with no sign of removal" + (f" ({delay})" if delay else "")
            )
            return False, ""
        signs = "; ".join(f"{n}: {began[n]}" for n in left)
        step.passed(
            f"scale-down began within {bound} ({signs}); not removed yet within the check's bound"
        )
        return True, (
            f"began removing it within {bound} ({signs}), not yet gone within the check's bound"
        )
    return False, ""


def _ca_status(ctx: CheckContext, w: Watcher) -> Obj | None:
    if w.provider.karpenter:
        return None
    return providers.read_status(
        ctx.kube.get("ConfigMap", providers.CA_STATUS, providers.CA_NAMESPACE)
    )


def _report_left(ctx: CheckContext, w: Watcher | None, why: str) -> str:
    """Name the nodes the check caused that are still there (evidence and stdout)."""
    if w is None:
        return ""
    with contextlib.suppress(Exception):
        w.nodes = {w._name(n): n for n in ctx.kube.list("Node")}
    left = w.left()
    if not left:
        return ""
    text = (
        f"{', '.join(_node_text(w, n) for n in left)} left for {w.provider.name} to "
        "remove; the check deleted the workload"
    )
    ctx.record(
        "nodes caused",
        f"nodes the check's pods brought ({why})",
        text,
        "the autoscaler removes them; nothing of the check holds them",
        StepStatus.INFO,
    )
    print(f"cluster-autoscaling: {text}", flush=True)
    return text


def run(ctx: CheckContext) -> CheckResult:
    """Find the autoscaler, fill existing GPU nodes, watch the scale-up, then the scale-down."""
    watcher: Watcher | None = None
    try:
        with _stoppable():
            dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
            provider = _provider(ctx)
            if provider is None:
                return ctx.conclude("steps")
            found = _capacity(ctx, dra)
            if found is None:
                return ctx.conclude("steps")
            plan, before = found
            image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
            if not _fill(ctx, plan, image, dra):
                return ctx.conclude("steps")
            watcher = Watcher(ctx, provider, before)
            up = _scale_up(ctx, watcher, image, dra)
            down, how = _scale_down(ctx, watcher) if up else (False, "")
            result = ctx.conclude("steps")
            if up and down and result.status == Status.PASSED:
                nodes = ", ".join(_node_text(watcher, n) for n in sorted(watcher.caused))
                _report_left(ctx, watcher, "scale-down under way")
                return ctx.passed(
                    f"{provider.name} added {nodes} for {ctx.params.pods} pending "
                    f"GPU pods that no existing node fit, the pods ran there, and "
                    f"it {how}"
                )
            _delete_workload(ctx)
            _report_left(ctx, watcher, "the check failed")
            return ctx.conclude("steps")
    except Stopped:
        _delete_workload(ctx)
        left = _report_left(ctx, watcher, "the check was stopped")
        print("cluster-autoscaling: stopped; deleted the workload", file=sys.stderr, flush=True)
        return ctx.other(
            "stopped before the end: the workload was deleted" + (f"; {left}" if left else "")
        )
