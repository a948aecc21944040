from __future__ import annotations

import pytest

from aicr import gate
from aicr.errors import SchemaError
from aicr.recipe.load import parse_recipe
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot

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


def grouped_snapshot() -> Snapshot:
    from aicr.snapshot.capture import build

    def node(name: str, gpus: int, driver: str | None, kernel: str) -> dict[str, object]:
        labels = {"nvidia.com/cuda.driver-version.full": driver} if driver else {}
        res = {"nvidia.com/gpu": str(gpus)} if gpus else {}
        return {"metadata": {"name": name, "labels": labels},
                "status": {"capacity": res, "allocatable": res,
                           "nodeInfo": {"kernelVersion": kernel}}}  # fmt: skip

    return build({"gitVersion": "v1.33.1"}, [node("a", 8, "570.86.16", "6.8.0"),
                                             node("b", 8, "550.54.15", "6.8.0"),
                                             node("c", 0, None, "5.4.0")])  # fmt: skip


@pytest.mark.parametrize(
    ("path", "expression", "verdict", "message"),
    [("GPU.cluster.driver", ">= 550", "passed",
      "every GPU group satisfies it (gpu-1: 570.86.16, gpu-2: 550.54.15)"),
     ("GPU.cluster.driver", ">= 570", "failed",
      "group gpu-2: 550.54.15 does not satisfy >= 570"),
     ("GPU.cluster.count", "== 16", "passed", "16 satisfies == 16"),  # cluster-wide wins
     ("K8s.server.version", ">= 1.33", "passed", "v1.33.1 satisfies >= 1.33")],
    ids=["every-group-passes", "one-group-fails", "cluster-wide", "not-grouped"],
)  # fmt: skip
def test_constraints_are_evaluated_against_every_gpu_group(
    path: str, expression: str, verdict: str, message: str
) -> None:
    recipe = parse_recipe(f"constraints:\n  - {{name: {path}, value: '{expression}'}}\n")
    result = gate.run(recipe, grouped_snapshot()).results[0]
    assert (result.verdict, result.message) == (verdict, message)


def test_a_gpu_group_without_the_reading_fails_closed() -> None:
    snap = grouped_snapshot()
    # the CPU group's kernel differs from the GPU groups'; only GPU groups are judged
    kernel = parse_recipe(
        "constraints:\n  - {name: K8s.nodegroup.gpu-1.kernelVersion, value: 6.8.0}\n"
    )
    assert gate.run(kernel, snap).passed
    from aicr.snapshot.model import GROUP_CONTEXT, Measurement, MeasurementType, Subtype

    extra = Measurement(type=MeasurementType.OS, subtypes=[
        Subtype(subtype="release", data={"ID": "ubuntu"}, context={GROUP_CONTEXT: "gpu-1"}),
        Subtype(subtype="release", data={"ID": "rhel"},
                context={GROUP_CONTEXT: "cpu-1"})])  # fmt: skip
    with_os = snap.model_copy(update={"measurements": [*snap.measurements, extra]})
    recipe = parse_recipe("constraints:\n  - {name: OS.release.ID, value: ubuntu}\n")
    result = gate.run(recipe, with_os).results[0]
    assert result.verdict == "missing"
    assert result.message.startswith("group gpu-2: no reading at OS.release.ID")
    assert result.actual == "gpu-1: ubuntu"
