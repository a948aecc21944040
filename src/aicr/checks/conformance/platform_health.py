"""platform-health: every component the recipe deploys is there and healthy.

For each enabled component: its namespace exists and is Active; every declared
expected resource exists and is healthy; a component that declares none is
judged by the workloads (Deployments, DaemonSets, StatefulSets, pods) in its
namespace. A component with nothing to judge fails: the check never passes
vacuously.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks.components import NO_COMPONENTS, describe, judge_components
from aicr.result import CheckResult


def run(ctx: CheckContext) -> CheckResult:
    """Judge every enabled component of the recipe."""
    verdicts = judge_components(ctx, lambda c: f"component {c.name}", "all healthy")
    if verdicts is None:
        return ctx.failed(NO_COMPONENTS)
    failing = [v for v in verdicts if v.problems]
    if failing:
        return ctx.failed(
            f"{len(failing)}/{len(verdicts)} components unhealthy: {describe(failing)}"
        )
    names = ", ".join(v.component for v in verdicts)
    return ctx.passed(f"{len(verdicts)} components healthy: {names}")
