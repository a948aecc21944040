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
from aicr.checks.components import NO_COMPONENTS, describe, judge_components
from aicr.recipe.model import ComponentRef
from aicr.result import CheckResult


def run(ctx: CheckContext) -> CheckResult:
    """Judge every enabled component's declared (or, failing that, namespaced) objects."""

    def title(component: ComponentRef) -> str:
        how = "expectedResources" if component.expected_resources else "namespace workloads"
        return f"component {component.name} ({how})"

    verdicts = judge_components(ctx, title, "all exist and are healthy")
    if verdicts is None:
        return ctx.failed(NO_COMPONENTS)
    failing = [v for v in verdicts if v.problems]
    if failing:
        return ctx.failed(
            f"{len(failing)}/{len(verdicts)} components not as expected: {describe(failing)}"
        )
    examined = sum(len(v.looked_at) for v in verdicts)
    return ctx.passed(f"{examined} objects of {len(verdicts)} components exist and are healthy")
