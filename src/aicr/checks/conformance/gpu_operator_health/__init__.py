"""gpu-operator-health: ClusterPolicy ready, every operand ready on every GPU node.

Every operand the ClusterPolicy deploys must have a ready pod on every GPU node
it should run on.

What it proves: the operator's Deployments in its namespace (the recipe's
``gpu-operator`` component) are available; every ClusterPolicy is in state
``ready``; for each per-node operand the policy switches on (driver, container
toolkit, device plugin, GPU feature discovery, DCGM exporter, validator) a pod
labelled with the operand's ``app`` is Running and Ready on every node labelled
``nvidia.com/gpu.present=true`` (or NFD's ``pci-10de.present``), except nodes
whose ``nvidia.com/gpu.deploy.<operand>`` label is set to anything but ``true``
(the operand's DaemonSet selects ``true`` only, and the operator sets ``true``
where the label is absent: another value is a user's ``false``) and nodes
labelled ``nvidia.com/gpu.deploy.operands=false`` (every operand kept off). A
pre-installed driver (EKS and GKE GPU images, DGX OS) is the ClusterPolicy's
``spec.driver.enabled: false``, not a node label: the driver is then recorded as
switched off by the policy, and the validator's pods (whose driver validation
finds the host's driver) stand for it.

What it does not: it runs no workload, so it says nothing about whether a pod
gets a GPU (check-nvidia-smi, secure-accelerator-access do). It only reads.

How it fails: each operand lacking a ready pod is a failed step naming every
node without one and why ("gpu-h100-1 (container c is CrashLoopBackOff)"); no
GPU node at all, no ClusterPolicy or one not ready fail too. A recipe without
the ``gpu-operator`` component is a skip ("not applicable").
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks import gpu_operator as op
from aicr.checks import health as h
from aicr.checks.conformance.gpu_operator_health import build
from aicr.ctrf import Status
from aicr.kube.gpus import GPU_PRESENT_LABEL, PCI_LABEL, gpu_nodes
from aicr.result import CheckResult


def run(ctx: CheckContext) -> CheckResult:
    """Read the operator's namespace, its ClusterPolicy and the GPU nodes; judge each operand."""
    component = op.component(ctx.recipe)
    if component is None:
        return ctx.skipped(f"not applicable: the recipe deploys no {op.COMPONENT}")
    ns = op.namespace(component)
    policies = ctx.kube.list("ClusterPolicy")
    with ctx.step("ClusterPolicy") as step:
        step.asked = "ClusterPolicies (nvidia.com/v1): status.state"
        step.answer = (
            "; ".join(
                f"{p['metadata']['name']}: {(p.get('status') or {}).get('state')}" for p in policies
            )
            or "none"
        )
        problems = op.policy_problems(policies)
        step.failed("; ".join(problems)) if problems else step.passed("ready")
    with ctx.step("operator") as step:
        step.asked = f"Deployments in {ns}"
        deployments = ctx.kube.list("Deployment", ns)
        step.answer = ", ".join(d["metadata"]["name"] for d in deployments) or "none"
        problems = [
            f"Deployment {ns}/{d['metadata']['name']}: {p}"
            for d in deployments
            for p in h.deployment(d)
        ]
        if not deployments:
            problems.append(f"no Deployment in {ns}")
        step.failed("; ".join(problems)) if problems else step.passed("available")
    nodes = ctx.kube.list("Node")
    gpu = gpu_nodes(nodes)
    deployed, off = build.expected_operands(policies[0] if len(policies) == 1 else None)
    with ctx.step("GPU nodes") as step:
        step.asked = f"Nodes labelled {GPU_PRESENT_LABEL}=true or {PCI_LABEL}=true"
        step.answer = ", ".join(gpu) or "none"
        switched = ", ".join(f"{o.app} (spec.{o.spec_key}.enabled=false)" for o in off)
        if gpu:
            tail = f"; switched off by the ClusterPolicy: {switched}" if off else ""
            step.info(f"{len(deployed)} operands expected on each{tail}")
        else:
            step.failed("no node is labelled as having an NVIDIA GPU")
    if not gpu:
        return ctx.conclude("GPU Operator parts")
    pods = ctx.kube.list("Pod", ns)
    verdicts = [build.judge_operand(o, nodes, pods) for o in deployed]
    for v in verdicts:
        with ctx.step(v.title) as step:
            step.asked = f"pods in {ns} labelled app={v.operand.app} ({v.operand.what})"
            step.answer = "; ".join(v.pods) or "no pod"
            tail = f"; opted out by label: {', '.join(v.opted_out)}" if v.opted_out else ""
            if v.problem:
                step.failed(v.problem + tail)
            else:
                step.passed(f"ready on {', '.join(v.ready) or 'no node'}{tail}")
    result = ctx.conclude("GPU Operator parts")
    if result.status != Status.PASSED:
        return result
    return ctx.passed(
        f"GPU Operator healthy: ClusterPolicy ready; {len(deployed)} operands "
        f"ready on {len(gpu)} GPU nodes ({', '.join(gpu)})"
    )
