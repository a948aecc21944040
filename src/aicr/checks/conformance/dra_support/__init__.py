"""dra-support: the DRA API is served and works, the DRA driver is healthy, a claim gets a GPU.

What it proves:
- ``resource.k8s.io`` is served (the newest of v1, v1beta2 and v1beta1 the cluster
  serves: 1.32 and 1.33 serve only the betas) with deviceclasses, resourceclaims,
  resourceclaimtemplates and resourceslices (API discovery); the steps after it
  use that version;
- a ResourceClaim can be created, read back and deleted in the run namespace;
- the DRA driver the recipe deploys (``nvidia-dra-driver-gpu``) is healthy, as
  platform-health judges a component, and in DRA mode publishes a ResourceSlice
  with whole GPUs for every GPU node (``nvidia.com/gpu.present=true``);
- in DRA mode (the recipe advertises whole GPUs through DRA), a pod with a
  claim for one GPU is allocated, runs on the node of the allocated device and
  its container lists exactly that device's UUID (``nvidia-smi -q -x``).

What it does not: in device-plugin mode no pod gets a GPU through DRA, and the
message says so ("GPU allocation through DRA not tested"). It does not test
sharing, partitioning or ComputeDomains.

How it fails: an API that is not served, or lacks a resource, fails; so do a
claim that cannot be created, read or deleted, an unhealthy driver, a GPU node
without slices, a probe that never finishes (with where it got to) or sees
another device. A recipe without the DRA driver is a skip ("not applicable").
"""

from __future__ import annotations

import time

from aicr.checks import CheckContext
from aicr.checks.allocation import DRA_DRIVER, AllocationMode, prepared_mode
from aicr.checks.components import judge
from aicr.checks.conformance.dra_support import build
from aicr.checks.conformance.dra_support.params import Params as Params
from aicr.checks.conformance.dra_support.params import preflight as preflight
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.kube import dra, pod_status
from aicr.kube.gpus import DRA_DRIVER as GPU_DRIVER
from aicr.kube.gpus import allocated, gpu_nodes, is_allocated
from aicr.result import CheckResult

GONE_SECONDS = 30.0


def _api(ctx: CheckContext) -> str | None:
    """The DRA version the cluster serves with every resource, or None (the step failed)."""
    groups = ctx.kube.groups().get(dra.GROUP)
    version = dra.pick(groups) or build.API
    with ctx.step(f"API {version}") as step:
        step.asked = (
            f"API discovery of {version} (the newest served of {dra.GROUP} "
            f"{', '.join(dra.VERSIONS)}; served: {', '.join(groups or []) or 'none listed'})"
        )
        served = ctx.kube.served(version)
        step.answer = "not served" if served is None else ", ".join(sorted(served)) or "none"
        missing = build.missing_resources(served)
        if served is None:
            step.failed(f"{version} is not served")
        elif missing:
            step.failed(f"{version} does not serve {', '.join(missing)}")
        else:
            step.passed(f"serves {', '.join(build.RESOURCES)}")
        return None if missing else version
    return None  # the step raised: recorded as other


def _lifecycle(ctx: CheckContext) -> None:
    ns, name = ctx.workload_namespace, build.LIFECYCLE_CLAIM
    with ctx.step("claim lifecycle") as step:
        step.asked = f"create, get and delete ResourceClaim {ns}/{name}"
        made = ctx.probes.create(build.lifecycle_claim())
        read = ctx.kube.get("ResourceClaim", name, ns)
        uid = (made.get("metadata") or {}).get("uid")
        if read is None or (read.get("metadata") or {}).get("uid") != uid:
            step.failed("the created claim could not be read back")
            return
        ctx.kube.delete("ResourceClaim", name, ns)
        end = time.monotonic() + GONE_SECONDS
        while ctx.kube.get("ResourceClaim", name, ns) is not None:
            if time.monotonic() >= end:
                step.failed(f"the claim was still there {GONE_SECONDS:.0f}s after its deletion")
                return
            time.sleep(0.5)
        step.answer = f"created (uid {uid}), read back, deleted and gone"
        step.passed("a ResourceClaim can be created, read and deleted")


def _driver(ctx: CheckContext, dra: bool) -> None:
    component = ctx.recipe.component(DRA_DRIVER)
    assert component is not None
    with ctx.step("DRA driver") as step:
        verdict = judge(ctx.kube, component)
        nodes = gpu_nodes(ctx.kube.list("Node"))
        by_node = build.whole_gpus_by_node(ctx.kube.list("ResourceSlice"))
        step.asked = "; ".join(verdict.looked_at) + f"; ResourceSlices of {GPU_DRIVER}"
        step.answer = "; ".join(f"{n}: {by_node.get(n, 0)} whole GPUs" for n in nodes) or (
            "no GPU node"
        )
        problems = list(verdict.problems)
        if dra:
            problems += [
                f"GPU node {n} has no ResourceSlice with whole GPUs"
                for n in nodes
                if not by_node.get(n)
            ]
            if not nodes:
                problems.append("no node is labelled as having an NVIDIA GPU")
        if problems:
            step.failed("; ".join(problems))
        else:
            step.passed("healthy" + (f"; publishes GPUs for {', '.join(nodes)}" if dra else ""))


def _allocation(ctx: CheckContext) -> None:
    ns = ctx.workload_namespace
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    with ctx.step("GPU through a claim") as step:
        step.asked = (
            f"ResourceClaim {ns}/{build.GPU_CLAIM} for 1 GPU; pod {ns}/{build.POD} "
            f"({image}): {' '.join(build.COMMAND)}"
        )
        ctx.probes.create(build.probe_claim())
        ctx.probes.create(build.probe_pod(image))
        # Read the allocation while the pod holds the claim: once the pod has ended,
        # Kubernetes may release it, and the status no longer says what the pod got.
        claims = ctx.probes.wait("ResourceClaim", is_allocated, budget=ctx.params.probe_seconds)
        if build.GPU_CLAIM in claims.pending:
            pod = ctx.probes.wait("Pod", pod_status.finished, budget=0).objects.get(build.POD)
            step.failed(
                f"the claim was not allocated within {int(claims.seconds)}s; "
                f"the pod: {pod_status.where(pod)}"
            )
            return
        waited = ctx.probes.wait("Pod", pod_status.finished, budget=ctx.params.probe_seconds)
        pod = waited.objects.get(build.POD) or {}
        state = pod_status.terminated(pod)
        if build.POD in waited.pending or state is None:
            where = waited.pending.get(build.POD) or pod_status.where(pod)
            step.failed(f"the pod did not finish within {int(waited.seconds)}s: {where}")
            return
        problems, device, node = allocated(
            claims.objects.get(build.GPU_CLAIM), ctx.kube.list("ResourceSlice")
        )
        if device is None:
            step.failed("; ".join(problems))
            return
        log = ctx.probes.logs(build.POD, build.CONTAINER)
        problems, seen = build.judge_probe(device, node, pod, int(state.get("exitCode", -1)), log)
        step.answer = f"allocated {device.get('name')} on {node}; {seen}"
        if problems:
            step.failed("; ".join(problems))
        else:
            step.passed("the pod ran on the allocated device's node and saw exactly that GPU")


def run(ctx: CheckContext) -> CheckResult:
    """API, claim lifecycle, driver, then (DRA mode) a GPU through a claim."""
    component = ctx.recipe.component(DRA_DRIVER)
    if component is None or not component.is_enabled:
        return ctx.skipped(
            f"not applicable: the recipe deploys no {DRA_DRIVER} (DRA is not part of the recipe)"
        )
    dra_mode = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    version = _api(ctx)
    if version:
        _lifecycle(ctx)
    _driver(ctx, dra_mode)
    if dra_mode:
        _allocation(ctx)
    else:
        ctx.record(
            "GPU through a claim",
            "the recipe's whole-GPU allocation mode",
            "device-plugin",
            "not tested: the recipe advertises whole GPUs through the "
            "device plugin, so no pod gets a GPU through DRA",
        )
    result = ctx.conclude("DRA steps")
    if result.status != Status.PASSED:
        return result
    if dra_mode:
        return ctx.passed(
            f"DRA works: {version} served, claim lifecycle, driver "
            "healthy, a pod's claim got one GPU and its container saw exactly "
            "that GPU"
        )
    return ctx.passed(
        "DRA API served, claim lifecycle works and the DRA driver is healthy; GPU "
        "allocation through DRA not tested: the recipe advertises whole GPUs "
        "through the device plugin"
    )
