"""Sample run contexts and plans for runner tests."""

from __future__ import annotations

from datetime import timedelta

from aicr.catalog import load_catalog
from aicr.config import EMPTY_CONFIG
from aicr.kube.placement import Placement, Toleration
from aicr.kube.target import KubeTarget
from aicr.phases import Phase
from aicr.plan import PhasePlan, Plan, PlannedCheck
from aicr.recipe.load import parse_recipe
from aicr.runner.context import RunContext
from aicr.snapshot.model import Measurement, MeasurementType, Snapshot, Subtype

RECIPE = """
kind: RecipeResult
apiVersion: aicr.nvidia.com/v1alpha1
componentRefs:
  - name: gpu-operator
    namespace: gpu-operator
    expectedResources:
      - {kind: Deployment, name: gpu-operator}
  - name: kube-prometheus-stack
    namespace: monitoring
validation:
  deployment:
    checks: [check-nvidia-smi]
  conformance:
    checks: [platform-health, ai-service-metrics]
"""


def planned(name: str, timeout: timedelta | None = None) -> PlannedCheck:
    spec = load_catalog().get(name)
    assert spec is not None
    return PlannedCheck(spec, timeout or spec.timeout)


def sample_plan_obj() -> Plan:
    return Plan(
        phases=[
            PhasePlan(Phase.DEPLOYMENT, [planned("check-nvidia-smi")]),
            PhasePlan(
                Phase.CONFORMANCE,
                [planned("platform-health"), planned("ai-service-metrics")],
            ),
        ]
    )


def make_ctx(**overrides: object) -> RunContext:
    snapshot = Snapshot(
        measurements=[
            Measurement(
                type=MeasurementType.K8S,
                subtypes=[Subtype(subtype="server", data={"version": "v1.35.4"})],
            )
        ]
    )
    fields: dict[str, object] = {
        "run_id": "r0123abcd",
        "namespace": "aicr-validation",
        "recipe": parse_recipe(RECIPE),
        "recipe_source": "recipe.yaml",
        "snapshot": snapshot,
        "config": EMPTY_CONFIG,
        "kube": KubeTarget(),
        "image": "ghcr.io/aicr-dev/aicr-validator:v0.1.0",
        "workloads": Placement(
            node_selector={"nvidia.com/gpu.present": "true"},
            tolerations=(Toleration(key="nvidia.com/gpu", effect="NoSchedule", operator="Exists"),),
        ),
    }
    fields.update(overrides)
    return RunContext(**fields)  # type: ignore[arg-type]
