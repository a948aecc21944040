"""Judging the components a recipe deploys: namespace, expected resources, workloads.

Shared by platform-health and expected-resources, so both judge a component the
same way: a namespace that exists and is Active; every declared expected
resource present and healthy (``aicr.checks.health``); without declarations,
the workloads of its namespace. A component with nothing to judge is a problem:
nothing passes vacuously.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aicr.checks import CheckContext
from aicr.checks import health as h
from aicr.kube.dicts import KubeReader, NotSupported
from aicr.recipe.model import ComponentRef
from aicr.result import StepStatus


@dataclass
class Verdict:
    """What was looked at for one component and what is wrong with it."""

    component: str
    looked_at: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _service(kube: KubeReader, ns: str, name: str) -> list[str]:
    svc = kube.get("Service", name, ns)
    if svc is None:
        return ["not found"]
    if not (svc.get("spec") or {}).get("selector"):
        return []  # headless/external services have no endpoints to judge
    slices = kube.list("EndpointSlice", ns, f"kubernetes.io/service-name={name}")
    ready = sum(
        1
        for s in slices
        for e in s.get("endpoints") or []
        if (e.get("conditions") or {}).get("ready") is not False
    )
    return [] if ready else ["has no ready endpoints"]


def _expected(kube: KubeReader, kind: str, name: str, ns: str | None) -> list[str]:
    if kind == "Service":
        return _service(kube, ns or "default", name)
    judge = h.JUDGES.get(kind)
    if judge is None:
        return [
            f"kind {kind} is not one aicr can judge (supported: "
            f"{', '.join(sorted([*h.JUDGES, 'Service']))})"
        ]
    try:
        obj = kube.get(kind, name, ns)
    except NotSupported:
        return [f"kind {kind} cannot be read"]
    return ["not found"] if obj is None else judge(obj)


def _workloads(kube: KubeReader, ns: str, verdict: Verdict) -> None:
    found = 0
    for kind in h.WORKLOAD_KINDS:
        for obj in kube.list(kind, ns):
            found += 1
            name = obj["metadata"]["name"]
            verdict.looked_at.append(f"{kind} {ns}/{name}")
            verdict.problems += [f"{kind} {ns}/{name}: {p}" for p in h.JUDGES[kind](obj)]
    pods = kube.list("Pod", ns)
    for pod in pods:
        name = f"Pod {ns}/{pod['metadata']['name']}"
        gone = h.leftover(pod)
        verdict.looked_at.append(f"{name} ({gone})" if gone else name)
        verdict.problems += [f"{name}: {p}" for p in h.namespace_pod(pod)]
    if found == 0:
        if pods:
            for pod in pods:
                if h.pod(pod) == [] and (pod.get("status") or {}).get("phase") == "Running":
                    return
        verdict.problems.append(
            f"namespace {ns} has no Deployment, DaemonSet, StatefulSet or running pod, "
            "and the recipe declares no expectedResources: nothing shows the component runs"
        )


def judge(kube: KubeReader, component: ComponentRef) -> Verdict:
    """Look at one component and say what is wrong with it."""
    verdict = Verdict(component.name)
    ns = component.namespace
    expected = component.expected_resources or []
    if ns:
        verdict.looked_at.append(f"Namespace {ns}")
        obj = kube.get("Namespace", ns)
        if obj is None:
            verdict.problems.append(f"namespace {ns} does not exist")
            return verdict
        verdict.problems += [f"namespace {ns} {p}" for p in h.namespace(obj)]
    for res in expected:
        where = res.namespace or ns
        label = f"{res.kind} {where + '/' if where else ''}{res.name}"
        verdict.looked_at.append(label)
        verdict.problems += [f"{label}: {p}" for p in _expected(kube, res.kind, res.name, where)]
    if not expected:
        if not ns:
            verdict.problems.append(
                "declares neither a namespace nor expectedResources: nothing to check"
            )
        else:
            _workloads(kube, ns, verdict)
    return verdict


def judge_components(
    ctx: CheckContext, title: Callable[[ComponentRef], str], healthy: str
) -> list[Verdict] | None:
    """Judge every enabled component, one evidence section each; None when there are none.

    Shared by platform-health and expected-resources so both judge components the same way.
    """
    components = [c for c in ctx.recipe.component_refs if c.is_enabled]
    if not components:
        ctx.record(
            "components", "enabled componentRefs in the recipe", "none", "failed", StepStatus.FAILED
        )
        return None
    verdicts = []
    for component in components:
        verdict = judge(ctx.kube, component)
        ctx.record(
            title=title(component),
            asked="; ".join(verdict.looked_at) or "nothing",
            answer="; ".join(verdict.problems) or healthy,
            verdict="failed" if verdict.problems else "passed",
            status=StepStatus.FAILED if verdict.problems else StepStatus.PASSED,
        )
        verdicts.append(verdict)
    return verdicts


NO_COMPONENTS = "the recipe lists no enabled components: nothing to check"


def describe(failing: list[Verdict]) -> str:
    """``component: problem, problem; component: problem``."""
    return "; ".join(f"{v.component}: {', '.join(v.problems)}" for v in failing)
