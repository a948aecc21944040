"""secure-accelerator-access: a pod sees only the GPUs allocated to it, and no bypass shows more.

What it proves, in the recipe's allocation mode (an ``nvidia.com/gpu`` limit, or
in DRA mode a ResourceClaim), with vanilla ``ubuntu:22.04`` pods whose every
container lists its ``/dev/nvidia*`` entries and what ``nvidia-smi -L`` shows:

- positive: a container allocated one GPU sees exactly one;
- negative: a pod without an allocation sees none (on every schedulable GPU node);
- multi-container: in a pod whose first container is allocated a GPU, only that
  container sees it;
- cross-pod: two pods on one node, one GPU each, held at the same time, see
  different GPUs;
- bypass through the environment: an unprivileged pod that sets
  ``NVIDIA_VISIBLE_DEVICES=all`` without an allocation sees none (every GPU node);
- bypass through the RuntimeClass: a pod that names the GPU RuntimeClass the
  recipe's GPU Operator creates (``operator.runtimeClass``, chart default
  ``nvidia``) without an allocation sees none (every GPU node).

What it does not: that the GPU a container sees is the one the scheduler
allocated (dra-support shows that in DRA mode), privileged or host-path access
(refused by the workload namespace's Pod Security level), GPUs a node has but
does not advertise, or nodes outside ``--node-selector``.

How it fails: a probe whose container sees more or less than it should, naming
the pod, container and what it saw; two cross-pod pods given the same GPU; a
probe pod that never starts or never reports; a GPU RuntimeClass the recipe
names that does not exist; no schedulable GPU node, or too few free GPUs to
place a probe.
"""

from __future__ import annotations

import time
from typing import Any

from aicr.checks import CheckContext
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.secure_accelerator_access import build
from aicr.checks.conformance.secure_accelerator_access.params import Params as Params
from aicr.checks.conformance.secure_accelerator_access.params import preflight as preflight
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.gpu_operator import runtime_class
from aicr.checks.workload_images import workload_image
from aicr.errors import InputError
from aicr.kube import pod_status
from aicr.result import CheckResult


def _runtime_class(ctx: CheckContext) -> dict[str, Any] | None:
    if ctx.prepared:
        return ctx.prepared.get("runtimeClass")  # type: ignore[no-any-return]
    try:
        setting = runtime_class(ctx.recipe, None, "recipe")
    except InputError:
        setting = None
    return None if setting is None else {"name": setting.value, "source": str(setting)}


def _gpu_runtime_class(ctx: CheckContext) -> str | None:
    """The GPU RuntimeClass to probe, if the recipe names one and it exists."""
    rc = _runtime_class(ctx)
    if rc is None:
        ctx.record(
            "GPU RuntimeClass",
            "the recipe's gpu-operator operator.runtimeClass",
            "the recipe deploys no gpu-operator",
            "not tested: the recipe names no GPU RuntimeClass to try a bypass through",
        )
        return None
    with ctx.step("GPU RuntimeClass") as step:
        step.asked = f"RuntimeClass {rc['name']} ({rc['source']})"
        found = ctx.kube.get("RuntimeClass", rc["name"])
        step.answer = "not found" if found is None else f"handler {found.get('handler')}"
        if found is None:
            step.failed(
                f"RuntimeClass {rc['name']}, which the recipe's GPU Operator creates, "
                "does not exist"
            )
            return None
        step.info("a pod naming it is probed on every GPU node")
        return str(rc["name"])
    return None  # the step raised: recorded as other


def _report(ctx: CheckContext, pod: str, container: str, end: float) -> build.Report | str:
    """The container's report, read until it is complete or the budget is spent."""
    log = ctx.probes.logs_until(
        pod, container, lambda t: isinstance(build.read_report(t), build.Report), end
    )
    return build.read_report(log)


def _judge(ctx: CheckContext, probe: build.Probe, waited: Any, end: float, image: str) -> None:
    with ctx.step(probe.title) as step:
        step.asked = (
            "; ".join(build.describe(p, ctx.workload_namespace, image) for p in probe.pods)
            or "no pod"
        )
        if probe.unrunnable:
            step.failed(f"could not be placed: {probe.unrunnable}")
            return
        if probe.untested:
            step.info(f"not tested: {probe.untested}")
            return
        reports: dict[tuple[str, str], build.Report] = {}
        seen, problems = [], []
        for p in probe.pods:
            if p.name in waited.pending:
                problems.append(
                    f"pod {p.name} did not start within {int(waited.seconds)}s: "
                    f"{waited.pending[p.name]}"
                )
                continue
            for c in p.containers:
                got = _report(ctx, p.name, c, end)
                if isinstance(got, str):
                    where = pod_status.where(waited.objects.get(p.name))
                    problems.append(f"{p.name}/{c}: {got}; the pod: {where}")
                    continue
                reports[(p.name, c)] = got
                seen.append(f"{p.name}/{c}: {got}")
        step.answer = " | ".join(seen) or "no report"
        if not problems:
            problems = build.judge(probe, reports)
        if problems:
            step.failed("; ".join(problems))
        else:
            step.passed(build.verdict(probe))


def run(ctx: CheckContext) -> CheckResult:
    """Place every probe, start them all at once, then judge what each container saw."""
    dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    nodes = ctx.kube.list("Node")
    nodes_plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=dra)
    with ctx.step("GPU nodes") as step:
        step.asked = "Nodes with GPUs (" + ("ResourceSlices" if dra else "nvidia.com/gpu") + ")"
        step.answer = (
            "; ".join(
                [f"{t.node}: {t.gpus}/{t.total} GPUs free" for t in nodes_plan.targets]
                + [f"{n}: all GPUs in use" for n in nodes_plan.busy]
                + [f"{n}: skipped" for n in nodes_plan.unschedulable]
            )
            or "none"
        )
        if nodes_plan.targets or nodes_plan.busy:
            step.info(f"allocation mode {'DRA' if dra else 'device plugin'}")
        else:
            step.failed("no schedulable GPU node to probe")
    if not (nodes_plan.targets or nodes_plan.busy):
        return ctx.conclude("probes")
    plan = build.plan(nodes_plan.targets, nodes_plan.busy, _gpu_runtime_class(ctx))
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    for p in plan.pods:
        if dra and p.claimed:
            ctx.probes.create(build.claim(p))
        ctx.probes.create(build.manifest(p, image, dra))
    waited = ctx.probes.wait("Pod", pod_status.started, budget=ctx.params.probe_seconds)
    end = time.monotonic() + min(ctx.params.probe_seconds, ctx.deadline.for_waits())
    for probe in plan.probes:
        _judge(ctx, probe, waited, end, image)
    count = len({p.node for p in plan.pods})
    untested = "".join(
        f"; {p.title} not tested: {p.untested}" for p in plan.probes if p.untested
    ) + (
        ""
        if _runtime_class(ctx)
        else ("; RuntimeClass bypass not tested: the recipe names no GPU RuntimeClass")
    )
    ran = [p for p in plan.probes if not p.untested]
    return ctx.conclude(
        "probes",
        f"{len(ran)} probes on {count} GPU nodes "
        f"({'DRA' if dra else 'device plugin'}): each container saw only what "
        f"was allocated to it; no bypass showed a GPU{untested}",
    )
