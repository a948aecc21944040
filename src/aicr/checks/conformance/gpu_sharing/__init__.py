"""gpu-sharing: every GPU sharing strategy the cluster advertises is delivered to pods.

What it proves, for each strategy found on the nodes (never taken from the recipe;
GPU feature discovery's labels and the device plugin's resources, see ``build``),
on one schedulable node with enough free units (a DRA strategy's: a whole GPU of
the driver's ResourceSlices that no existing claim was allocated):

- MIG (hardware partitions are schedulable resources): a pod asking for one unit
  of the profile's resource (``nvidia.com/mig-<profile>``, or ``nvidia.com/gpu``
  under ``mig.strategy=single``) runs, and its ``nvidia-smi -L`` lists exactly one
  MIG device, of that profile;
- time-slicing or MPS (software sharing allows oversubscription): one pod more
  than the node has physical GPUs, each given one replica, all run at the same
  time, each sees exactly one GPU, and some physical GPU (its UUID) is seen by
  two of them;
- DRA sharing (the NVIDIA DRA driver's ``GpuConfig`` ``sharing.strategy``
  ``TimeSlicing`` or ``MPS``, advertised where its kubelet plugin's feature gate is
  on): two pods sharing one claim whose config asks for the strategy run at once
  and see the same one GPU.

What it does not: that shared work is isolated or fairly scheduled (MPS limits,
MIG fault isolation), sharing on nodes other than the one probed per strategy,
or partitionable devices.

How it fails: a strategy advertised but not delivered, naming it and the node: a
MIG pod that sees no MIG device (a whole GPU), several, or another profile; a
replica pod that sees no GPU or several, never runs, or pods that see as many
different GPUs as there are pods; DRA pods that never run (a claim the plugin
could not prepare: the kubelet's ``FailedPrepareDynamicResources`` event is
quoted, or that the namespace's events could not be read) or see different GPUs;
a listing that cannot be read. A strategy no schedulable node has room to prove
ends ``other``, naming the nodes passed over. No strategy advertised at all is a
skip, "no GPU sharing strategy advertised": the requirement then reads Not
Implemented, never a failure.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

from aicr.checks import CheckContext
from aicr.checks.conformance.gpu_sharing import build
from aicr.checks.conformance.gpu_sharing.params import Params as Params
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.probes import ProbePod
from aicr.checks.workload_images import workload_image
from aicr.kube import pod_status
from aicr.kube.gpu_inventory import NodePlan, plan_nodes
from aicr.kube.rest import KubeApiError
from aicr.result import CheckResult

NONE_ADVERTISED = "no GPU sharing strategy advertised"


def _free(plan: NodePlan) -> str:
    """Where the proof looked: each node's free units, the busy and unschedulable ones."""
    return "; ".join(
        [f"{t.node} {t.gpus}/{t.total} free" for t in plan.targets]
        + [f"{n} none free" for n in plan.busy]
        + plan.unschedulable
    )


def _place(
    ctx: CheckContext, offers: list[build.Offer], slices: list[dict[str, Any]]
) -> tuple[build.Offer | None, str]:
    """The offer to prove (the first node with room) and where it looked, or why none.

    A DRA strategy's claim takes one device of its node: whole GPUs of the driver's
    ResourceSlices minus those existing claims were allocated (``gpu_nodes.free_gpu_nodes``,
    the count every DRA check places by); the other strategies count the node's units
    minus the requests of its pods.
    """
    by_name = {str(n["metadata"]["name"]): n for n in ctx.kube.list("Node")}
    first = offers[0]
    nodes = [by_name[o.node] for o in offers if o.node in by_name]
    if first.dra:
        plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=True, slices=slices)
    else:
        capacity = {o.node: o.units for o in offers}
        used = build.requested(ctx.kube.list("Pod"), first.resource)
        plan = plan_nodes(nodes, capacity, used, ctx.workloads)
    fits = {t.node for t in plan.targets if t.gpus >= first.need}
    chosen = next((o for o in offers if o.node in fits), None)
    if chosen is not None:
        return chosen, _free(plan)
    short = [f"{t.node} ({t.gpus} free)" for t in plan.targets if t.node not in fits]
    before = f"too few free {first.resource}: {', '.join(short)}" if short else ""
    if first.dra and plan.busy:  # every device of these nodes is allocated to some claim
        before = (
            f"no free {first.resource} device (every one is allocated to a ResourceClaim): "
            f"{', '.join(plan.busy)}"
        )
        plan = dataclasses.replace(plan, busy=[])
    return None, plan.why_none(before)


def _prove_mig(ctx: CheckContext, offer: build.Offer, image: str, free: str) -> None:
    probe = ProbePod(
        build.probe_pod(offer, image),
        label=f"{offer.name} on {offer.node}",
        container=build.CONTAINER,
        asked=f"({image}, 1 {offer.resource}): nvidia-smi -L; free {offer.resource}: {free}",
        judge=functools.partial(build.judge_mig, offer),
        passed=f"a pod given 1 {offer.resource} sees exactly one MIG {offer.profile}",
    )
    ctx.probes.prove(ctx.step, [probe], budget=ctx.params.probe_seconds)


def _kubelet_said(ctx: CheckContext, pods: list[str]) -> str:
    """Why the kubelet did not start these DRA pods, or that their events went unread.

    The kubelet's FailedPrepareDynamicResources says why a claim was not prepared;
    when the events cannot be read the step says so, and fails all the same.
    """
    import httpx

    try:
        events = ctx.kube.list("Event", ctx.workload_namespace)
    except (KubeApiError, httpx.HTTPError) as exc:
        return (
            f"the pods' events in {ctx.workload_namespace} could not be read ({exc}), so what "
            "the kubelet said of the claim is unknown"
        )
    return build.prepare_failures(events, pods)


def _prove_replicas(ctx: CheckContext, offer: build.Offer, image: str, free: str) -> None:
    count = build.DRA_PODS if offer.dra else offer.need
    names = [build.pod_name(offer, i) for i in range(count)]
    if offer.dra:
        ctx.probes.create(build.shared_claim(offer))
    for i in range(count):
        ctx.probes.create(build.probe_pod(offer, image, i))
    waited = ctx.probes.wait("Pod", pod_status.started, budget=ctx.params.probe_seconds)
    end = time.monotonic() + min(ctx.params.probe_seconds, ctx.deadline.for_waits())
    with ctx.step(f"{offer.name} on {offer.node}") as step:
        what = (
            f"ResourceClaim {ctx.workload_namespace}/{build.claim_name(offer)} for 1 GPU with a "
            f"GpuConfig sharing.strategy {offer.kind.removeprefix('DRA ')}; {count} pods "
            f"{ctx.workload_namespace}/{names[0]}.. ({image}) sharing it at once: nvidia-smi -L"
            if offer.dra
            else f"{count} pods {ctx.workload_namespace}/{names[0]}.. ({image}), 1 "
            f"{offer.resource} each, at once on a node of {offer.gpus} GPUs: nvidia-smi -L"
        )
        step.asked = f"{what}; free {offer.resource}: {free}"
        pods = {n: waited.objects.get(n) or {} for n in names}
        stuck = [n for n, p in pods.items() if n in waited.pending or pod_status.finished(p)]
        if stuck:
            late = [f"{n}: {waited.pending.get(n) or pod_status.where(pods[n])}" for n in stuck]
            said = _kubelet_said(ctx, stuck) if offer.dra else ""
            step.answer = "; ".join([*late, said] if said else late)
            step.failed(
                f"{len(late)}/{count} pods did not run at once within "
                f"{int(waited.seconds)}s: {step.answer}"
            )
            return
        views = [
            build.read_replica(
                n,
                ctx.probes.logs_until(n, build.CONTAINER, lambda t: build.LISTED in t, end),
            )
            for n in names
        ]
        judge = build.judge_shared_claim if offer.dra else build.judge_replicas
        problems, step.answer = judge(offer, views)
        if problems:
            step.failed("; ".join(problems))
            return
        uuid, holders = build.shared_gpu(views)
        on = "one claimed GPU" if offer.dra else f"{offer.gpus} GPUs"
        step.passed(f"{count} pods ran at once on {on}; {uuid} is shared by {', '.join(holders)}")


def run(ctx: CheckContext) -> CheckResult:
    """Find the strategies the nodes advertise; prove each on one node."""
    slices = ctx.kube.list("ResourceSlice")
    dra = build.dra_offers(ctx.kube.list("DaemonSet"), slices)
    groups = build.groups(ctx.kube.list("Node"), dra)
    with ctx.step("strategies") as step:
        step.asked = (
            "GPU nodes' feature-discovery labels and allocatable resources: MIG "
            "(nvidia.com/mig-<profile>, mig.strategy single), replicas "
            "(nvidia.com/gpu.sharing-strategy, nvidia.com/gpu.replicas); GKE's "
            "(cloud.google.com/gke-gpu-partition-size, gke-gpu-sharing-strategy, "
            "gke-max-shared-clients-per-gpu); the DRA driver's kubelet plugin FEATURE_GATES "
            f"({', '.join(build.DRA_GATES.values())}) and its ResourceSlices' whole GPUs"
        )
        step.answer = (
            "; ".join(f"{o.node}: {o.describe()}" for offers in groups.values() for o in offers)
            or "none"
        )
        step.info(f"{len(groups)} advertised: {', '.join(groups)}" if groups else NONE_ADVERTISED)
    if not groups:
        return ctx.skipped(NONE_ADVERTISED)
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    proven: list[str] = []
    # MIG first: its pods end, while replica pods hold their replicas until cleanup
    for name, offers in sorted(groups.items(), key=lambda g: g[1][0].kind != "MIG"):
        chosen, looked = _place(ctx, offers, slices)
        if chosen is None:
            with ctx.step(name) as step:
                step.asked = f"a node advertising {name} with {offers[0].need} free units"
                step.answer = looked
                step.other(f"no node has room to prove {name}: {looked}")
            continue
        if chosen.kind == "MIG":
            _prove_mig(ctx, chosen, image, looked)
        else:
            _prove_replicas(ctx, chosen, image, looked)
        proven.append(f"{name} on {chosen.node}")
    return ctx.conclude(
        "GPU sharing strategies",
        f"{len(proven)} GPU sharing strateg{'y' if len(proven) == 1 else 'ies'} delivered: "
        + ", ".join(proven),
    )
