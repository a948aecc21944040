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
``spec.validate.checks.check-nvidia-smi.params.image``.

In DRA mode (the recipe resolves whole GPUs to the NVIDIA DRA driver) the
capacity is each node's whole GPUs in ResourceSlices, the GPUs in use those
allocated to ResourceClaims, and each probe gets a ResourceClaim for the free
GPUs of its node instead of an ``nvidia.com/gpu`` limit.
"""

from __future__ import annotations

import time
from typing import Any

from aicr.checks import CheckContext
from aicr.checks.deployment import nvidia_smi as smi
from aicr.checks.deployment.allocation import AllocationMode, resolve_mode
from aicr.checks.images import workload_image
from aicr.errors import InputError
from aicr.k8s import read_pod_log
from aicr.recipe.model import Recipe
from aicr.result import CheckResult

POLL_SECONDS = 1.0
POD_BUDGET_MARGIN = 30  # seconds kept from the check's timeout to read logs and clean up


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """The whole-GPU mode, resolved in the orchestrator like gpu-allocation-policy does."""
    return {"mode": resolve_mode(recipe, data_dir, source).mode.value}


def _mode(ctx: CheckContext) -> AllocationMode:
    if ctx.prepared:
        return AllocationMode(ctx.prepared["mode"])
    try:
        return resolve_mode(ctx.recipe, None).mode
    except InputError:
        return (
            AllocationMode.DEVICE_PLUGIN
        )  # the recipe says nothing usable: probe what nodes offer


def _wait(core: Any, ns: str, names: list[str], deadline: float) -> dict[str, Any]:
    """Pods by name once each is terminal or the deadline passed (last state seen)."""
    last: dict[str, Any] = {}
    pending = set(names)
    while pending:
        for name in sorted(pending):
            pod = core.api_client.sanitize_for_serialization(core.read_namespaced_pod(name, ns))
            last[name] = pod
            if (pod.get("status") or {}).get("phase") in smi.TERMINAL_PHASES:
                pending.discard(name)
        if pending and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        elif pending:
            break
    return last


def _exit_code(pod: dict[str, Any]) -> int | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if terminated is not None:
            return int(terminated.get("exitCode", -1))
    return None


def _stuck(pod: dict[str, Any], seconds: int) -> str:
    status = pod.get("status") or {}
    cond: dict[str, Any] = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {}
    )
    why = f" ({cond.get('reason')}: {cond.get('message')})" if cond.get("status") == "False" else ""
    return f"pod did not finish within {seconds}s: {status.get('phase', 'Pending')}{why}"


def run(ctx: CheckContext) -> CheckResult:
    """Probe every schedulable GPU node with a pinned nvidia-smi pod."""
    mode = _mode(ctx)
    dra = mode == AllocationMode.DRA
    from kubernetes import client

    nodes = ctx.kube.list("Node")
    if dra:
        capacity, used = smi.dra_gpus(
            ctx.kube.list("ResourceSlice"), ctx.kube.list("ResourceClaim")
        )
    else:
        capacity, used = smi.device_plugin_gpus(nodes, ctx.kube.list("Pod"))
    plan = smi.plan_nodes(nodes, capacity, used, ctx.workloads)
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
        )
        or "no node advertises nvidia.com/gpu",
        f"{len(plan.targets)} to probe",
    )
    skipped = ", ".join(plan.busy + plan.unschedulable)
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
    # Any: manifests are plain dicts, which the client serialises as they are.
    core: Any = client.CoreV1Api(ctx.api)
    claims: Any = client.ResourceV1Api(ctx.api)
    names = []
    for target in plan.targets:
        if dra:
            claim = smi.gpu_claim(target, ctx.workload_labels())
            claims.create_namespaced_resource_claim(ns, claim)
        body = smi.probe_pod(target, image, ctx.workload_labels(), ctx.workloads, dra=dra)
        core.create_namespaced_pod(ns, body)
        names.append(body["metadata"]["name"])
    budget = max(30, int(ctx.spec.timeout.total_seconds()) - POD_BUDGET_MARGIN)
    pods = _wait(core, ns, names, time.monotonic() + budget)
    failures, seen = [], []
    for target, name in zip(plan.targets, names, strict=True):
        pod = pods[name]
        code = _exit_code(pod)
        if code is None:
            problems, answer = [_stuck(pod, budget)], "no result"
        else:
            log = read_pod_log(core, name, ns, container=smi.CONTAINER)
            problems, answer = smi.judge(target, code, log)
        ctx.record(
            f"node {target.node}",
            f"pod {ns}/{name}: {' '.join(smi.COMMAND)} with {target.gpus} GPUs "
            f"({'ResourceClaim' if dra else 'nvidia.com/gpu limit'}; {image})",
            answer,
            "; ".join(problems) or "matches the allocation and the node's driver label",
        )
        if problems:
            failures.append(f"{target.node}: {'; '.join(problems)}")
        else:
            seen.append(f"{target.node} ({answer})")
        core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
        if dra:
            claims.delete_namespaced_resource_claim(smi.claim_name(target.node), ns)
    tail = f"; skipped (busy or unschedulable): {skipped}" if skipped else ""
    if failures:
        return ctx.failed(
            f"nvidia-smi failed on {len(failures)}/{len(plan.targets)} GPU nodes: "
            + " | ".join(failures)
            + tail
        )
    return ctx.passed(f"nvidia-smi on {len(seen)} GPU nodes: {', '.join(seen)}{tail}")
