from __future__ import annotations

import pytest

from aicr import gate
from aicr.errors import SchemaError
from aicr.recipe.load import parse_recipe
from aicr.snapshot.load import parse_snapshot

SNAPSHOT = parse_snapshot(
    "measurements:\n  - type: K8s\n    subtypes:\n      - subtype: server\n"
    "        data: {version: v1.31.0}\n"
)


def test_all_failing_constraints_are_reported_together() -> None:
    recipe = parse_recipe(
        "constraints:\n"
        "  - {name: K8s.server.version, value: '>= 1.32'}\n"
        "  - {name: OS.release.ID, value: ubuntu}\n"
        "  - {name: GPU.smi.driver, value: '>= 570', severity: warning}\n"
        "  - {name: K8s.server.version, value: '>= 1.30'}\n"
    )
    outcome = gate.run(recipe, SNAPSHOT)
    assert outcome.evaluated and not outcome.passed
    assert [r.name for r in outcome.blocking] == ["K8s.server.version", "OS.release.ID"]
    assert [r.name for r in outcome.warnings] == ["GPU.smi.driver"]
    extra = outcome.as_extra()
    assert extra["passed"] is False
    verdicts = [c["verdict"] for c in extra["constraints"]]
    assert verdicts == ["failed", "missing", "missing", "passed"]


def test_only_warnings_pass_the_gate() -> None:
    recipe = parse_recipe("constraints:\n  - {name: GPU.smi.driver, value: x, severity: warning}\n")
    assert gate.run(recipe, SNAPSHOT).passed


def test_without_snapshot_the_gate_is_not_evaluated_and_does_not_pass() -> None:
    outcome = gate.run(parse_recipe("{}"), None, why_not="no snapshot given with --no-cluster")
    assert not outcome.evaluated and not outcome.passed
    assert outcome.as_extra()["reason"] == "no snapshot given with --no-cluster"


def test_non_measurement_constraint_names_are_bad_input() -> None:
    recipe = parse_recipe("constraints:\n  - {name: Deployment.gpu-operator.version, value: x}\n")
    with pytest.raises(SchemaError) as exc:
        gate.check_paths(recipe, "r.yaml")
    assert str(exc.value) == (
        "r.yaml: constraints[0].name: 'Deployment.gpu-operator.version' is not a measurement "
        "path (expected Type.subtype.key with Type one of K8s, GPU, OS, SystemD, NodeTopology)"
    )
