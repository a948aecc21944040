"""gpu-allocation-policy: exactly one whole-GPU advertiser, and the cluster agrees with it.

The mode (device plugin or DRA) is resolved from the recipe's values before any
Job runs (``preflight``; a contradictory recipe exits 2 there). In the pod the
check compares that mode with what the cluster publishes: in device-plugin mode
every GPU node advertises ``nvidia.com/gpu`` and no ResourceSlice publishes its
whole GPUs; in DRA mode the reverse, and the ``gpu.nvidia.com`` DeviceClass
exists. Any mismatch fails and names the nodes.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks.allocation import AllocationMode, Resolution, resolve_mode
from aicr.checks.deployment.gpu_allocation_policy.params import preflight as preflight
from aicr.kube.dicts import KubeReader, Obj
from aicr.kube.gpus import (
    DRA_DRIVER,
    GPU_DEVICE_CLASS,
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    allocatable_gpus,
    is_whole_gpu,
)
from aicr.result import CheckResult, StepStatus

__all__ = ["AllocationMode", "preflight", "resolve_mode", "run"]


def resolution(ctx: CheckContext) -> Resolution:
    """The orchestrator's resolution, or (``aicr check run`` alone) one from the recipe."""
    if ctx.prepared:
        return Resolution.from_json(ctx.prepared)
    found = resolve_mode(ctx.recipe, None)
    note = "resolved in the check's pod from recipe overrides (no orchestrator preflight)"
    return Resolution(found.mode, found.settings, (*found.notes, note))


def whole_gpu_devices(slices: list[Obj]) -> dict[str, int]:
    """Node name -> number of whole GPUs the NVIDIA DRA driver publishes for it."""
    out: dict[str, int] = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") != DRA_DRIVER or not spec.get("nodeName"):
            continue
        gpus = [d for d in spec.get("devices") or [] if is_whole_gpu(d)]
        if gpus:
            out[spec["nodeName"]] = out.get(spec["nodeName"], 0) + len(gpus)
    return out


def gpu_nodes(nodes: list[Obj], published: dict[str, int]) -> list[str]:
    """Nodes that have GPUs by any account: GFD label, advertised resource or a slice."""
    names = []
    for n in nodes:
        name = n["metadata"]["name"]
        labels = n["metadata"].get("labels") or {}
        if labels.get(GPU_PRESENT_LABEL) == "true" or allocatable_gpus(n) or name in published:
            names.append(name)
    return sorted(names)


def mismatches(
    mode: AllocationMode, nodes: list[Obj], published: dict[str, int]
) -> tuple[list[str], list[str]]:
    """``(problems, per-node observations)`` of the cluster against ``mode``."""
    by_name = {n["metadata"]["name"]: n for n in nodes}
    seen, lacking, extra = [], [], []
    for name in gpu_nodes(nodes, published):
        plugin, slices = allocatable_gpus(by_name[name]), published.get(name, 0)
        seen.append(f"{name}: {GPU_RESOURCE}={plugin}, DRA whole GPUs={slices}")
        want, other = (plugin, slices) if mode == AllocationMode.DEVICE_PLUGIN else (slices, plugin)
        if not want:
            lacking.append(name)
        if other:
            extra.append(name)
    problems = []
    if mode == AllocationMode.DEVICE_PLUGIN:
        if lacking:
            problems.append(f"GPU nodes not advertising {GPU_RESOURCE}: {', '.join(lacking)}")
        if extra:
            problems.append(f"ResourceSlices also publish whole GPUs for: {', '.join(extra)}")
    else:
        if lacking:
            problems.append(
                f"GPU nodes without a ResourceSlice of whole GPUs: {', '.join(lacking)}"
            )
        if extra:
            problems.append(f"GPU nodes still advertising {GPU_RESOURCE}: {', '.join(extra)}")
    return problems, seen


def _observe(kube: KubeReader) -> tuple[list[Obj], dict[str, int]]:
    return kube.list("Node"), whole_gpu_devices(kube.list("ResourceSlice"))


def run(ctx: CheckContext) -> CheckResult:
    """Compare the resolved mode with what nodes and ResourceSlices publish."""
    res = resolution(ctx)
    why = "; ".join(str(s) for s in res.settings)
    ctx.record(
        "resolved mode",
        "recipe values: overrides, values files under --data, chart defaults",
        why + ("; " + "; ".join(res.notes) if res.notes else ""),
        f"{res.mode.value} mode",
    )
    nodes, published = _observe(ctx.kube)
    names = gpu_nodes(nodes, published)
    problems, seen = mismatches(res.mode, nodes, published)
    if not names:
        problems = ["no GPU node found (no nvidia.com/gpu.present label, resource or slice)"]
    if res.mode == AllocationMode.DRA and ctx.kube.get("DeviceClass", GPU_DEVICE_CLASS) is None:
        problems.append(f"DeviceClass {GPU_DEVICE_CLASS} does not exist")
    ctx.record(
        "cluster",
        f"Nodes (allocatable {GPU_RESOURCE}), ResourceSlices of driver {DRA_DRIVER}",
        "; ".join(seen) or "no GPU nodes",
        "; ".join(problems) or f"every GPU node is served by {res.mode.value} only",
        StepStatus.FAILED if problems else StepStatus.PASSED,
    )
    if problems:
        return ctx.failed(f"recipe resolves to {res.mode.value} mode, but " + "; ".join(problems))
    return ctx.passed(
        f"{res.mode.value} mode on {len(names)} GPU nodes ({', '.join(names)}), "
        "as the recipe resolves"
    )
