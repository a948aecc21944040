"""check-nvidia-smi: nvidia-smi works on every schedulable GPU node and sees its GPUs.

One pod per schedulable GPU node, pinned to it by required node affinity,
requesting every GPU that is free there (all of them on an idle node), runs
``nvidia-smi -q -x``. Its output, read through the pod log API, must parse, list
exactly the allocated number of GPUs, and report the driver version the node's
GPU feature discovery labels name. A node whose GPUs are all in use is skipped
and named; the check fails when no node could be examined or any examined node
fails. Pods go in the check's run-unique workload namespace, placed by
``--node-selector`` / ``--toleration``; the image is ``cuda-base`` from the
pinned image list (``aicr images list``), replaced by
``spec.validate.checks.check-nvidia-smi.params.image``. The pods (and claims)
go through the probe session, so they are deleted, and seen gone, however the
check ends.

In DRA mode (the recipe resolves whole GPUs to the NVIDIA DRA driver) the
capacity is each node's whole GPUs in ResourceSlices, the GPUs in use those
allocated to ResourceClaims, and each probe gets a ResourceClaim for the free
GPUs of its node instead of an ``nvidia.com/gpu`` limit.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks import smi_probes as smi
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.deployment.check_nvidia_smi.params import preflight as preflight
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.workload_images import workload_image
from aicr.kube import pod_status
from aicr.result import CheckResult, StepStatus


def run(ctx: CheckContext) -> CheckResult:
    """Probe every schedulable GPU node with a pinned nvidia-smi pod."""
    mode = prepared_mode(ctx.prepared, ctx.recipe)
    dra = mode == AllocationMode.DRA
    nodes = ctx.kube.list("Node")
    plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=dra)
    ctx.record(
        "GPU nodes",
        (
            "ResourceSlices of gpu.nvidia.com; devices allocated to ResourceClaims per node"
            if dra
            else "Nodes with allocatable nvidia.com/gpu; GPU requests of non-terminated pods"
        ),
        "; ".join(
            [f"{t.node}: {t.gpus}/{t.total} free" for t in plan.targets]
            + [f"{n}: all GPUs in use" for n in plan.busy]
            + [f"{n}: not schedulable" for n in plan.unschedulable]
            + [f"{n}: outside --node-selector" for n in plan.out_of_scope]
            + [f"{n}: labelled as a GPU node, advertises 0 GPUs" for n in plan.without_gpus]
        )
        or "no node advertises nvidia.com/gpu",
        f"{len(plan.targets)} to probe",
    )
    skipped = ", ".join(plan.busy + plan.unschedulable)
    lost = [
        f"{n}: labelled as a GPU node but advertises 0 "
        + ("whole GPUs in ResourceSlices" if dra else "allocatable nvidia.com/gpu")
        for n in plan.without_gpus
    ]
    if not plan.targets and lost:
        return ctx.failed(f"no GPU node could be examined: {' | '.join(lost)}")
    if not plan.targets:
        return ctx.failed(
            "no GPU node could be examined"
            + (
                f": skipped {skipped}"
                if skipped
                else ": no schedulable node advertises nvidia.com/gpu"
            )
        )
    ns = ctx.workload_namespace
    image = workload_image(smi.IMAGE, check=ctx.spec.name, config=ctx.config)
    for target in plan.targets:
        if dra:
            ctx.probes.create(smi.gpu_claim(target))
        ctx.probes.create(smi.probe_pod(target, image, dra=dra))
    waited = ctx.probes.wait("Pod", pod_status.finished)
    failures, seen = [], []
    for target in plan.targets:
        name = smi.pod_name(target.node)
        state = pod_status.terminated(waited.objects.get(name) or {})
        if name in waited.pending or state is None:
            where = waited.pending.get(name) or pod_status.where(waited.objects.get(name))
            problems, answer = (
                [f"pod did not finish within {int(waited.seconds)}s: {where}"],
                ("no result"),
            )
        else:
            log = ctx.probes.logs(name, smi.CONTAINER)
            problems, answer = smi.judge(target, int(state.get("exitCode", -1)), log)
        ctx.record(
            f"node {target.node}",
            f"pod {ns}/{name}: {' '.join(smi.COMMAND)} with {target.gpus} GPUs "
            f"({'ResourceClaim' if dra else 'nvidia.com/gpu limit'}; {image})",
            answer,
            "; ".join(problems) or "matches the allocation and the node's driver label",
            StepStatus.FAILED if problems else StepStatus.PASSED,
        )
        if problems:
            failures.append(f"{target.node}: {'; '.join(problems)}")
        else:
            seen.append(f"{target.node} ({answer})")
    tail = f"; skipped (busy or unschedulable): {skipped}" if skipped else ""
    failures += lost
    if failures:
        examined = len(plan.targets) + len(lost)
        return ctx.failed(
            f"nvidia-smi failed on {len(failures)}/{examined} GPU nodes: "
            + " | ".join(failures)
            + tail
        )
    return ctx.passed(f"nvidia-smi on {len(seen)} GPU nodes: {', '.join(seen)}{tail}")
