"""The recipe's inference gates: ``inference-throughput`` (tok/s) and ``inference-ttft-p99`` (ms).

Each is a performance-phase constraint with its own operator and number
(``>= 50000``, ``<= 2000``), compared exactly: AICR's hidden 10% tolerance is
not applied. ``inference-model`` (a bare model id) names what the check
deploys, as in AICR's recipes.
"""

from __future__ import annotations

from dataclasses import dataclass

from aicr.constraints import NumberGate, parse_gate
from aicr.errors import InputError, Problem
from aicr.phases import Phase
from aicr.recipe.model import Recipe

THROUGHPUT = "inference-throughput"
TTFT_P99 = "inference-ttft-p99"
MODEL = "inference-model"


@dataclass(frozen=True)
class Gate:
    """One gate: which constraint, its threshold, and the figure it judges."""

    constraint: str
    gate: NumberGate
    figure: str  # what is measured, for messages
    unit: str

    def judge(self, measured: float) -> tuple[bool, str]:
        """``(holds, why)`` for the measured figure."""
        holds = self.gate.holds(measured)
        verb = "meets" if holds else "misses"
        return (
            holds,
            f"{self.figure} {measured:.2f} {self.unit} {verb} {self.constraint} {self.gate}",
        )


FIGURES = {THROUGHPUT: ("output token throughput", "tok/s"), TTFT_P99: ("TTFT p99", "ms")}


def _constraints(recipe: Recipe) -> list[tuple[int, str, str]]:
    section = recipe.validation.phase(Phase.PERFORMANCE) if recipe.validation else None
    return [
        (i, c.name, str(c.value))
        for i, c in enumerate((section.constraints if section else None) or [])
    ]


def gates(recipe: Recipe, source: str) -> list[Gate]:
    """The recipe's inference gates, in file order; InputError naming a malformed one."""
    found, problems = [], []
    for i, name, value in _constraints(recipe):
        if name not in FIGURES:
            continue
        try:
            gate = parse_gate(value)
        except ValueError as exc:
            where = f"validation.performance.constraints[{i}].value"
            hint = "a comparison with a number, e.g. '>= 50000'"
            problems.append(Problem(str(exc), source=source, field_path=where, hint=hint))
            continue
        figure, unit = FIGURES[name]
        found.append(Gate(name, gate, figure, unit))
    if problems:
        raise InputError(problems)
    return found


def model(recipe: Recipe) -> str | None:
    """The model the recipe's ``inference-model`` constraint names, if any."""
    return next((v.strip() for _, n, v in _constraints(recipe) if n == MODEL and v.strip()), None)
