"""Constraint expressions and version comparison, as AICR recipes write them.

An expression is ``OP VALUE`` with OP one of ``>= <= != == > <``, or a bare
value meaning exact match. Versions compare numerically after stripping a
leading ``v`` and any build suffix, at the shorter of the two precisions, so
``>= 6.8`` holds for ``6.8.0-1028-aws``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from aicr.recipe.model import Constraint
from aicr.snapshot.model import MeasurementType, Snapshot

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "!=": operator.ne,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
}
_EXPR = re.compile(r"^\s*(>=|<=|!=|==|>|<)?\s*(.*?)\s*$")
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[-+~_].*)?$")


class Verdict(StrEnum):
    """Outcome of one constraint."""

    PASSED = "passed"
    FAILED = "failed"
    MISSING = "missing"  # the snapshot has no reading at that path
    INVALID = "invalid"  # the reading or the expression cannot be compared


@dataclass(frozen=True)
class Expression:
    """A parsed constraint expression."""

    op: str  # "==" for a bare value
    operand: str

    def __str__(self) -> str:
        return f"{self.op} {self.operand}"


def parse_expression(text: str) -> Expression:
    """Parse ``'>= 1.30'`` or ``'ubuntu'``; raises ValueError on an empty operand."""
    match = _EXPR.match(text)
    assert match is not None  # the pattern matches any string
    op, operand = match.group(1) or "==", match.group(2)
    if not operand:
        raise ValueError(f"expression '{text}' has no value to compare with")
    return Expression(op, operand)


def parse_version(text: str) -> tuple[int, ...] | None:
    """``v1.33.0`` -> (1, 33, 0); ``6.8.0-1028-aws`` -> (6, 8, 0); not a version -> None."""
    match = _VERSION.match(text.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def compare(actual: str, expr: Expression) -> bool:
    """Whether ``actual`` satisfies ``expr``; raises ValueError when they cannot be compared."""
    want, have = parse_version(expr.operand), parse_version(actual)
    if want is not None and have is not None:
        width = min(len(want), len(have))
        return _OPS[expr.op](have[:width], want[:width])
    if expr.op in ("==", "!="):
        return _OPS[expr.op](actual.strip(), expr.operand)
    raise ValueError(
        f"cannot order '{actual}' against '{expr.operand}': ordering needs two versions"
    )


@dataclass(frozen=True)
class NumberGate:
    """A measured figure's threshold: ``>= 50000``, ``<= 2000`` (a bare number means ``==``).

    Unlike ``compare``, which reads ``579.70`` as the version 579.70, a gate
    compares real numbers, and with the expression's own operator: no tolerance.
    """

    op: str
    number: float
    operand: str  # the number as the recipe wrote it

    def holds(self, measured: float) -> bool:
        """Whether ``measured`` passes the gate (NaN, a figure never read, never does)."""
        return measured == measured and _OPS[self.op](measured, self.number)

    def __str__(self) -> str:
        return f"{self.op} {self.operand}"


def parse_gate(text: str) -> NumberGate:
    """Parse ``'>= 50000'``; raises ValueError when the operand is not a number."""
    expr = parse_expression(text)
    try:
        number = float(expr.operand)
    except ValueError:
        raise ValueError(f"expression '{text}' does not compare with a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"expression '{text}' does not compare with a finite number")
    return NumberGate(expr.op, number, expr.operand)


def render_reading(value: object) -> str:
    """A snapshot reading as the text constraints compare (YAML booleans as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class ConstraintResult:
    """One evaluated constraint."""

    name: str
    expression: str
    severity: str
    verdict: Verdict
    actual: str | None
    message: str
    remediation: str | None = None

    @property
    def blocks(self) -> bool:
        """A non-passing error-severity constraint blocks; warnings never do."""
        return self.verdict != Verdict.PASSED and self.severity == "error"


def evaluate(constraint: Constraint, snapshot: Snapshot) -> ConstraintResult:
    """Evaluate one measurement constraint; missing or unparsable data fails closed."""
    expr_text = render_reading(constraint.value)

    def result(verdict: Verdict, actual: str | None, message: str) -> ConstraintResult:
        return ConstraintResult(
            constraint.name,
            expr_text,
            constraint.severity,
            verdict,
            actual,
            message,
            constraint.remediation,
        )

    try:
        expr = parse_expression(expr_text)
    except ValueError as exc:
        return result(Verdict.INVALID, None, str(exc))
    found = snapshot.lookup(constraint.name)
    if found is None or found[1] is None:
        return result(
            Verdict.MISSING,
            None,
            f"no reading at {constraint.name} in the snapshot (a snapshot file that carries "
            "it, or a live capture that measures it, is needed)",
        )
    actual = render_reading(found[1])
    try:
        ok = compare(actual, expr)
    except ValueError as exc:
        return result(Verdict.INVALID, actual, str(exc))
    if ok:
        return result(Verdict.PASSED, actual, f"{actual} satisfies {expr}")
    return result(Verdict.FAILED, actual, f"{actual} does not satisfy {expr}")


def is_measurement_path(name: str) -> bool:
    """Whether ``name`` looks like ``Type.subtype.key`` with a known measurement type."""
    type_name, dot, rest = name.partition(".")
    return bool(dot and "." in rest) and type_name in {t.value for t in MeasurementType}
