from __future__ import annotations

import pytest

from aicr.constraints import (
    Verdict,
    compare,
    evaluate,
    parse_expression,
    parse_gate,
    parse_version,
)
from aicr.recipe.model import Constraint
from aicr.snapshot.load import parse_snapshot

SNAPSHOT = parse_snapshot(
    """
measurements:
  - type: K8s
    subtypes:
      - subtype: server
        data: {version: v1.33.5-eks-1234}
  - type: OS
    subtypes:
      - subtype: sysctl
        data: {/proc/sys/kernel/osrelease: 6.8.0-1028-aws}
      - subtype: release
        data: {ID: ubuntu, VERSION_ID: 22.1, EMPTY: null}
  - type: GPU
    subtypes:
      - subtype: smi
        data: {driver: 570.86.16, mig: false}
"""
)


@pytest.mark.parametrize(
    ("actual", "expression", "holds"),
    [
        ("v1.33.0", ">= 1.30", True),
        ("v1.29.9", ">= 1.30", False),
        ("6.8.0-1028-aws", ">= 6.8", True),
        ("6.7.12", ">= 6.8", False),
        ("v25.10.1", "== v25.10.1", True),
        ("v25.10.1", "!= v25.10.1", False),
        ("570.86.16", "> 570", False),  # equal at the shorter precision
        ("571.0", "> 570", True),
        ("1.9", "< 1.10", True),  # numeric, not lexical
        ("ubuntu", "ubuntu", True),
        ("rhel", "ubuntu", False),
        ("ubuntu", "!= rhel", True),
    ],
)
def test_compare(actual: str, expression: str, holds: bool) -> None:
    assert compare(actual, parse_expression(expression)) is holds


def test_ordering_non_versions_is_an_error() -> None:
    with pytest.raises(ValueError, match="ordering needs two versions"):
        compare("ubuntu", parse_expression(">= 22"))


@pytest.mark.parametrize(
    ("text", "version"),
    [("v1.33.0", (1, 33, 0)), ("6.8.0-1028-aws", (6, 8, 0)), ("1.30", (1, 30)),
     ("abc", None), ("", None)],
)
def test_parse_version(text: str, version: tuple[int, ...] | None) -> None:
    assert parse_version(text) == version


@pytest.mark.parametrize(
    ("name", "value", "verdict", "message"),
    [
        ("K8s.server.version", ">= 1.32.4", Verdict.PASSED, "v1.33.5-eks-1234 satisfies >= 1.32.4"),
        ("K8s.server.version", ">= 1.34", Verdict.FAILED,
         "v1.33.5-eks-1234 does not satisfy >= 1.34"),
        ("OS.sysctl./proc/sys/kernel/osrelease", ">= 6.8", Verdict.PASSED, None),
        ("OS.release.VERSION_ID", "22.10", Verdict.FAILED, "22.1 does not satisfy == 22.10"),
        ("OS.release.EMPTY", "x", Verdict.MISSING, None),
        ("GPU.smi.cuda", ">= 12", Verdict.MISSING, None),
        ("GPU.smi.mig", "false", Verdict.PASSED, None),
        ("OS.release.ID", "> 3", Verdict.INVALID, None),
        ("OS.release.ID", ">=", Verdict.INVALID, "expression '>=' has no value to compare with"),
    ],
    ids=["pass", "fail", "kernel-suffix", "yaml-float-trap", "null-reading", "missing",
         "bool", "unorderable", "empty-expression"],
)
def test_evaluate(name: str, value: str, verdict: Verdict, message: str | None) -> None:
    result = evaluate(Constraint(name=name, value=value), SNAPSHOT)
    assert result.verdict == verdict
    if message:
        assert result.message == message
    assert result.blocks is (verdict != Verdict.PASSED)


def test_warning_severity_never_blocks() -> None:
    result = evaluate(Constraint(name="GPU.smi.cuda", value=">= 12", severity="warning"), SNAPSHOT)
    assert result.verdict == Verdict.MISSING and not result.blocks


@pytest.mark.parametrize(
    ("expression", "measured", "holds"),
    [
        (">= 50000", 50000.0, True),
        (">= 50000", 49999.99, False),  # no hidden tolerance
        ("<= 2000", 579.70, True),
        ("<= 579.5", 579.70, False),  # decimals are numbers, not version parts
        ("< 500", 500.0, False),
        ("> 150", 157.29, True),
        ("2000", 2000.0, True),  # bare number: exact
        ("!= 0", 0.0, False),
        ("!= 0", float("nan"), False),  # a figure never read passes nothing
    ],
)
def test_number_gate(expression: str, measured: float, holds: bool) -> None:
    assert parse_gate(expression).holds(measured) is holds


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (">= fast", "expression '>= fast' does not compare with a number"),
        (">=", "expression '>=' has no value to compare with"),
        (">= nan", "expression '>= nan' does not compare with a finite number"),
    ],
)
def test_number_gate_refuses(expression: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        parse_gate(expression)


def test_number_gate_renders_as_written() -> None:
    assert str(parse_gate(">=50000")) == ">= 50000"
