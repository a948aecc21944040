"""expected-resources: each enabled component's expectedResources exist and are healthy.

Supported kinds: Deployment, DaemonSet, StatefulSet (available/ready), Service
(ready endpoints through its EndpointSlices), ConfigMap, Secret, ServiceAccount
(exist), CustomResourceDefinition (established), Pod, Namespace. Any other kind
is a failure naming it, never a pass. A component that declares nothing is
judged by the workloads of its namespace, and one with neither fails: nothing
passes vacuously. The judgement is the one platform-health uses.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks.conformance.platform_health import Verdict, judge
from aicr.result import CheckResult


def run(ctx: CheckContext) -> CheckResult:
    """Judge every enabled component's declared (or, failing that, namespaced) objects."""
    components = [c for c in ctx.recipe.component_refs if c.is_enabled]
    if not components:
        ctx.record("components", "enabled componentRefs in the recipe", "none", "failed")
        return ctx.failed("the recipe lists no enabled components: nothing to check")
    failing: list[Verdict] = []
    examined = 0
    for component in components:
        verdict = judge(ctx.kube, component)
        how = "expectedResources" if component.expected_resources else "namespace workloads"
        examined += len(verdict.looked_at)
        ctx.record(
            title=f"component {component.name} ({how})",
            asked="; ".join(verdict.looked_at) or "nothing",
            answer="; ".join(verdict.problems) or "all exist and are healthy",
            verdict="failed" if verdict.problems else "passed",
        )
        if verdict.problems:
            failing.append(verdict)
    if failing:
        details = "; ".join(f"{v.component}: {', '.join(v.problems)}" for v in failing)
        return ctx.failed(f"{len(failing)}/{len(components)} components not as expected: {details}")
    return ctx.passed(f"{examined} objects of {len(components)} components exist and are healthy")
