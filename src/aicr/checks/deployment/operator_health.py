"""operator-health: every GPU Operator workload available and ready, its ClusterPolicy ready.

The namespace comes from the recipe's ``gpu-operator`` component. Every
Deployment, DaemonSet and StatefulSet there must be available; a DaemonSet that
selects no node (an operand switched off for every node, e.g. the MIG manager
on GPUs without MIG) is noted but not counted against the operator, unless no
DaemonSet runs anywhere. Pods stuck in a bad state are named. Every
ClusterPolicy (``nvidia.com/v1``) must report ``status.state: ready``; one the
operator marks ``ignored`` (a second policy) is reported as unhealthy too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aicr.checks import CheckContext
from aicr.checks import gpu_operator as op
from aicr.checks import health as h
from aicr.kube.dicts import KubeReader, Obj
from aicr.result import CheckResult, StepStatus


@dataclass
class Findings:
    """What was examined and what is wrong, in the words the message uses."""

    examined: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def judge_workloads(kube: KubeReader, ns: str, out: Findings) -> None:
    """Judge every Deployment, DaemonSet, StatefulSet and pod of namespace ``ns``."""
    workloads = 0
    running_daemonsets = 0
    for kind in h.WORKLOAD_KINDS:
        for obj in kube.list(kind, ns):
            name = f"{kind} {ns}/{obj['metadata']['name']}"
            out.examined.append(name)
            problems = h.JUDGES[kind](obj)
            if kind == "DaemonSet" and not (obj.get("status") or {}).get("desiredNumberScheduled"):
                out.notes.append(f"{name} selects no node")
                continue
            workloads += 1
            running_daemonsets += kind == "DaemonSet"
            out.problems += [f"{name}: {p}" for p in problems]
    for pod in kube.list("Pod", ns):
        name = f"Pod {ns}/{pod['metadata']['name']}"
        out.examined.append(name)
        gone = h.leftover(pod)
        if gone:
            out.notes.append(f"{name} {gone}")
        out.problems += [f"{name}: {p}" for p in h.namespace_pod(pod)]
    if workloads == 0:
        out.problems.append(f"namespace {ns} has no running Deployment, DaemonSet or StatefulSet")
    elif running_daemonsets == 0:
        out.problems.append(f"no operand DaemonSet in {ns} runs on any node")


def judge_policies(policies: list[Obj], out: Findings) -> None:
    """Every ClusterPolicy in state ready; none at all is a problem."""
    out.examined += [f"ClusterPolicy {p['metadata']['name']}" for p in policies]
    out.problems += op.policy_problems(policies)


def run(ctx: CheckContext) -> CheckResult:
    """Judge the operator's namespace and its ClusterPolicy."""
    component = op.component(ctx.recipe)
    if component is None:
        return ctx.skipped(f"not applicable: the recipe deploys no {op.COMPONENT}")
    ns = op.namespace(component)
    out = Findings()
    if ctx.kube.get("Namespace", ns) is None:
        out.problems.append(f"namespace {ns} does not exist")
    else:
        judge_workloads(ctx.kube, ns, out)
    judge_policies(ctx.kube.list("ClusterPolicy"), out)
    ctx.record(
        "GPU Operator",
        f"workloads and pods in {ns}; ClusterPolicies: " + ("; ".join(out.examined) or "none"),
        "; ".join(out.problems + out.notes) or "all available and ready",
        "failed" if out.problems else "passed",
        StepStatus.FAILED if out.problems else StepStatus.PASSED,
    )
    if out.problems:
        return ctx.failed(f"GPU Operator unhealthy: {'; '.join(out.problems)}")
    return ctx.passed(
        f"GPU Operator healthy: {len(out.examined)} objects in {ns} and its ClusterPolicy ready"
    )
