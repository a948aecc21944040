"""driver-runtime-management: the runtime injects the driver, at the version the platform names.

What it proves: on every schedulable GPU node with a free GPU (each node, not one
per node group), a vanilla ``ubuntu:22.04`` pod allocated one GPU (an
``nvidia.com/gpu`` limit, or in DRA mode a ResourceClaim) finds ``nvidia-smi``
injected by the container runtime, and the driver version it reports equals
what the platform advertises for that node: GPU feature discovery's
``nvidia.com/cuda.driver-version.full`` label (or its major/minor/rev parts),
else the node's ResourceSlice ``driverVersion``.

What it does not: it does not upgrade or roll back a driver, and it says
nothing about nodes whose GPUs are all in use (named in the evidence).

How it fails: per node, naming it: nvidia-smi not injected (exit 127), failing
(its exit code and first line, e.g. the driver not loaded), a different
version than advertised (both versions named), nothing advertised at all, or a
probe that never finished. No GPU node to probe fails too.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from aicr.checks import CheckContext
from aicr.checks import smi_probes as smi
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.driver_runtime_management import build
from aicr.checks.conformance.driver_runtime_management.params import preflight as preflight
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.probes import ProbePod
from aicr.checks.workload_images import workload_image
from aicr.result import CheckResult


def run(ctx: CheckContext) -> CheckResult:
    """One vanilla pod with one GPU per GPU node; compare the driver it sees with the advertised."""
    dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    nodes = ctx.kube.list("Node")
    slices = ctx.kube.list("ResourceSlice") if dra else []
    plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=dra, slices=slices)
    by_name = {n["metadata"]["name"]: n for n in nodes}
    drivers = build.slice_drivers(slices)
    targets, sources = [], {}
    for t in plan.targets:
        version, sources[t.node] = build.advertised(by_name[t.node], drivers.get(t.node))
        targets.append(replace(t, gpus=1, driver=version))
    skipped = plan.busy + plan.unschedulable
    with ctx.step("GPU nodes") as step:
        step.asked = "Nodes with GPUs (" + ("ResourceSlices" if dra else "nvidia.com/gpu") + ")"
        step.answer = "; ".join(
            [f"{t.node}: advertises {t.driver} ({sources[t.node]})" for t in targets]
            + [f"{n}: skipped" for n in skipped]
        ) or ("none")
        if targets:
            step.info(f"{len(targets)} to probe")
        else:
            step.failed(
                "no GPU node could be examined"
                + (f": skipped {', '.join(skipped)}" if skipped else "")
            )
    if not targets:
        return ctx.conclude("GPU nodes")
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    if dra:
        for t in targets:
            ctx.probes.create(smi.gpu_claim(t))
    probes = [
        ProbePod(
            smi.probe_pod(t, image, dra=dra),
            label=f"node {t.node}",
            container=smi.CONTAINER,
            asked=f"({image}, 1 GPU): {' '.join(smi.COMMAND)}",
            judge=functools.partial(build.judge, t, sources[t.node]),
            passed=f"nvidia-smi injected; driver {t.driver} as advertised",
        )
        for t in targets
    ]
    ctx.probes.prove(ctx.step, probes)
    seen = ", ".join(f"{t.node} ({t.driver})" for t in targets)
    return ctx.conclude(
        "GPU nodes", f"driver injected and as advertised on {len(targets)} GPU nodes: {seen}"
    )
