"""virtualized-accelerator: the virtual GPUs the cluster advertises run workloads as vGPUs.

What it proves, for each vGPU type found on the nodes (GPU feature discovery's
``nvidia.com/vgpu.present`` and ``nvidia.com/gpu.product``, never the recipe; see
``build``), on one schedulable node of that type with a free ``nvidia.com/gpu``: a
pod asking for one ``nvidia.com/gpu``, scheduled as any GPU pod is (the same
resource, the same device plugin), runs, and its ``nvidia-smi -q`` lists exactly
one GPU whose virtualization mode is ``VGPU``, whose product name is the vGPU
type, and whose license status is ``Licensed`` (an unlicensed vGPU runs at full
speed for a 20-minute grace period and is degraded after it; see ``build``). The
evidence records the node's host driver labels and the guest's licensed product
and license status.

What it does not: that a vGPU is isolated or performs to its type, that its
licence stays renewed after the probe, vGPU types on nodes other than the one
probed per type, KubeVirt's mediated devices (found and named, but proving them
needs a VirtualMachineInstance, which it does not create), or DRA devices, which
it does not examine.

How it fails: a vGPU type advertised but not delivered, naming it and the node: a
pod that sees no GPU or several, a GPU whose virtualization mode is not ``VGPU``
(a passthrough or bare-metal GPU behind the vGPU labels), a vGPU naming no type, a
vGPU whose license status is anything but ``Licensed`` (named: ``Unlicensed
(Unrestricted)``, ``Unlicensed (Restricted)``, ``Unlicensed``, or none printed), a
pod that never runs, or a log that cannot be read. A type no schedulable node has
room to prove, or KubeVirt mediated devices alone, end ``other``. Nothing
advertised is a skip, "no virtualized accelerator advertised": the requirement
then reads Not Implemented, never a failure.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks.conformance.virtualized_accelerator import build
from aicr.checks.conformance.virtualized_accelerator.params import Params as Params
from aicr.checks.probes import ProbePod
from aicr.checks.workload_images import workload_image
from aicr.kube.gpu_inventory import device_plugin_gpus, plan_nodes
from aicr.kube.gpus import GPU_RESOURCE
from aicr.result import CheckResult

NONE_ADVERTISED = "no virtualized accelerator advertised"


def _place(ctx: CheckContext, offers: list[build.VgpuNode]) -> tuple[build.VgpuNode | None, str]:
    """The node to prove a vGPU type on (the first with a free unit), or why there is none."""
    by_name = {str(n["metadata"]["name"]): n for n in ctx.kube.list("Node")}
    nodes = [by_name[o.node] for o in offers if o.node in by_name]
    capacity, used = device_plugin_gpus(nodes, ctx.kube.list("Pod"))
    plan = plan_nodes(nodes, capacity, used, ctx.workloads)
    free = {t.node for t in plan.targets}
    chosen = next((o for o in offers if o.node in free), None)
    if chosen is not None:
        return chosen, ""
    # labelled vGPU yet advertising none: named even where no GPU label makes it a GPU node
    zero = sorted({*plan.without_gpus, *(o.node for o in offers if o.units <= 0)})
    return None, plan.why_none(without_gpus=zero)


def _prove(ctx: CheckContext, vgpu: build.VgpuNode, image: str) -> None:
    probe = ProbePod(
        build.probe_pod(vgpu, image),
        label=f"{vgpu.vgpu_type} on {vgpu.node}",
        container=build.CONTAINER,
        asked=f"({image}, 1 {GPU_RESOURCE}): nvidia-smi -q",
        judge=build.judge,
        passed=f"a pod given 1 {GPU_RESOURCE} sees one licensed vGPU, {vgpu.vgpu_type}",
    )
    ctx.probes.prove(ctx.step, [probe], budget=ctx.params.probe_seconds)


def run(ctx: CheckContext) -> CheckResult:
    """Find the vGPU types and mediated devices advertised; prove each vGPU type on one node."""
    nodes = ctx.kube.list("Node")
    types = build.by_type(build.vgpu_nodes(nodes))
    mediated = build.mediated_devices(ctx.kube.list("KubeVirt"), nodes)
    with ctx.step("virtualized accelerators") as step:
        step.asked = (
            f"nodes' feature-discovery labels ({build.VGPU_LABEL}, {build.PRODUCT_LABEL}, "
            "nvidia.com/vgpu.host-driver-*) and allocatable; KubeVirt's permitted mediated "
            "devices; DRA devices not examined"
        )
        step.answer = (
            (
                "; ".join(f"{v.node}: {v.describe()}" for vs in types.values() for v in vs)
                or "no vGPU node"
            )
            + "; KubeVirt mediated devices: "
            + ("; ".join(mediated) or "none")
        )
        found = [*(f"vGPU {t}" for t in types), *(f"mediated {m}" for m in mediated)]
        step.info(f"{len(found)} advertised: {', '.join(found)}" if found else NONE_ADVERTISED)
    if not types and not mediated:
        return ctx.skipped(NONE_ADVERTISED)
    if mediated:
        with ctx.step("KubeVirt mediated devices") as step:
            step.asked = "a VirtualMachineInstance given each permitted mediated device"
            step.answer = "; ".join(mediated)
            step.other(
                "KubeVirt mediated devices are advertised, and proving them needs a "
                "VirtualMachineInstance, which this check does not create"
            )
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    proven: list[str] = []
    for vgpu_type, offers in types.items():
        chosen, why = _place(ctx, offers)
        if chosen is None:
            with ctx.step(vgpu_type) as step:
                step.asked = f"a node advertising {vgpu_type} with a free {GPU_RESOURCE}"
                step.answer = why
                step.other(f"no node has room to prove {vgpu_type}: {why}")
            continue
        _prove(ctx, chosen, image)
        proven.append(f"{vgpu_type} on {chosen.node}")
    return ctx.conclude(
        "virtualized accelerators",
        f"{len(proven)} vGPU type{'' if len(proven) == 1 else 's'} delivered: " + ", ".join(proven),
    )
