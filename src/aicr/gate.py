"""The readiness gate: the recipe's top-level constraints against the snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr.constraints import ConstraintResult, evaluate, is_measurement_path
from aicr.errors import Problem, SchemaError
from aicr.recipe.model import Recipe
from aicr.snapshot.aks import qualify
from aicr.snapshot.model import MeasurementType, Snapshot


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
    results = [qualify(evaluate(c, snapshot), snapshot) for c in recipe.constraints]
    return GateOutcome(evaluated=True, results=results)
