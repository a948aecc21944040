"""The readiness gate: the recipe's top-level constraints against the snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from aicr.constraints import ConstraintResult, Verdict, evaluate, is_measurement_path
from aicr.errors import Problem, SchemaError
from aicr.recipe.model import Constraint, Recipe
from aicr.snapshot.aks import qualify
from aicr.snapshot.model import GROUP_CONTEXT, MeasurementType, Snapshot


@dataclass(frozen=True)
class GateOutcome:
    """The gate's verdict; ``evaluated`` is False when there was no snapshot to check."""

    evaluated: bool
    results: list[ConstraintResult] = field(default_factory=list)
    reason: str | None = None

    @property
    def passed(self) -> bool:
        """True when evaluated and no error-severity constraint failed."""
        return self.evaluated and not self.blocking

    @property
    def blocking(self) -> list[ConstraintResult]:
        """Every constraint that fails the gate."""
        return [r for r in self.results if r.blocks]

    @property
    def warnings(self) -> list[ConstraintResult]:
        """Warning-severity constraints that did not pass."""
        return [r for r in self.results if not r.blocks and r.verdict != "passed"]

    def as_extra(self) -> dict[str, Any]:
        """The gate as recorded in the report's ``extra``."""
        return {
            "evaluated": self.evaluated,
            "passed": self.passed,
            **({"reason": self.reason} if self.reason else {}),
            "constraints": [
                {
                    "name": r.name,
                    "expression": r.expression,
                    "severity": r.severity,
                    "verdict": r.verdict.value,
                    **({"actual": r.actual} if r.actual is not None else {}),
                    "message": r.message,
                    **({"remediation": r.remediation} if r.remediation else {}),
                }
                for r in self.results
            ],
        }


def check_paths(recipe: Recipe, source: str) -> None:
    """Top-level constraints must name measurements; anything else is bad input (exit 2)."""
    kinds = ", ".join(t.value for t in MeasurementType)
    problems = [
        Problem(
            f"'{c.name}' is not a measurement path",
            source=source,
            field_path=f"constraints[{i}].name",
            hint=f"expected Type.subtype.key with Type one of {kinds}",
        )
        for i, c in enumerate(recipe.constraints)
        if not is_measurement_path(c.name)
    ]
    if problems:
        raise SchemaError(problems)


def run(recipe: Recipe, snapshot: Snapshot | None, *, why_not: str | None = None) -> GateOutcome:
    """Evaluate every top-level constraint; all failures are reported together."""
    if snapshot is None:
        return GateOutcome(evaluated=False, reason=why_not or "no snapshot")
    results = [qualify(evaluate_groups(c, snapshot), snapshot) for c in recipe.constraints]
    return GateOutcome(evaluated=True, results=results)


def evaluate_groups(constraint: Constraint, snapshot: Snapshot) -> ConstraintResult:
    """Evaluate against the cluster-wide reading, or else against every GPU node group.

    When node groups disagree on a reading the snapshot holds it per group; then the
    constraint must hold in each GPU group (in each group, on a cluster without GPU
    groups), and a GPU group without the reading fails closed as missing.
    """
    plain = evaluate(constraint, snapshot)
    if plain.verdict != Verdict.MISSING:
        return plain
    holding = [g for g in snapshot.grouped if snapshot.lookup(constraint.name, g) is not None]
    if not holding:
        return plain
    targets = snapshot.gpu_groups or holding
    results = {g: evaluate(constraint, _group_view(snapshot, g)) for g in targets}
    actual = ", ".join(f"{g}: {r.actual}" for g, r in results.items() if r.actual is not None)
    failing = {g: r for g, r in results.items() if r.verdict != Verdict.PASSED}
    if not failing:
        message = f"every GPU group satisfies it ({actual})"
        return replace(plain, verdict=Verdict.PASSED, actual=actual, message=message)
    first = next(iter(failing.values()))
    message = "; ".join(f"group {g}: {r.message}" for g, r in failing.items())
    return replace(plain, verdict=first.verdict, actual=actual or None, message=message)


def _group_view(snapshot: Snapshot, group: str) -> Snapshot:
    """The readings of one node group, as if they were cluster-wide."""
    measurements = [
        m.model_copy(
            update={
                "subtypes": [
                    s.model_copy(update={"context": None})
                    for s in m.subtypes
                    if (s.context or {}).get(GROUP_CONTEXT) == group
                ]
            }
        )
        for m in snapshot.measurements
    ]
    return snapshot.model_copy(update={"measurements": measurements})
