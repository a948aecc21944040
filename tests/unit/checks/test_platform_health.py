from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube, daemon_set, deleting, deployment, evicted, ns, pod

from aicr.catalog import load_catalog
from aicr.checks import CheckContext, RunInputs
from aicr.checks.conformance import platform_health
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe

RECIPE = """
componentRefs:
  - name: gpu-operator
    namespace: gpu-operator
    expectedResources:
      - {kind: Deployment, name: gpu-operator}
      - {kind: DaemonSet, name: nvidia-device-plugin-daemonset}
  - name: cert-manager
    namespace: cert-manager
  - name: disabled-thing
    namespace: nowhere
    enabled: false
"""

HEALTHY = [
    ns("gpu-operator"),
    ns("cert-manager"),
    deployment("gpu-operator", "gpu-operator"),
    daemon_set("gpu-operator", "nvidia-device-plugin-daemonset"),
    deployment("cert-manager", "cert-manager"),
    pod("cert-manager", "cert-manager-abc"),
]


def run(objects: list[dict], recipe: str = RECIPE):  # type: ignore[no-untyped-def]
    spec = load_catalog().get("platform-health")
    assert spec is not None
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), EMPTY_CONFIG)
    return platform_health.run(CheckContext(spec, inputs, kube=FakeKube(objects)))


def test_healthy_components_pass_with_evidence_per_component() -> None:
    result = run(HEALTHY)
    assert result.status == Status.PASSED, result.message
    assert result.message == "2 components healthy: gpu-operator, cert-manager"
    assert [s.title for s in result.evidence] == [
        "component gpu-operator",
        "component cert-manager",
    ]
    assert "Deployment gpu-operator/gpu-operator" in result.evidence[0].asked


def _replace(objs: list[dict], new: dict) -> list[dict]:
    key = (new["kind"], new["metadata"]["name"])
    return [o for o in objs if (o["kind"], o["metadata"]["name"]) != key] + [new]


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        (
            [
                o
                for o in HEALTHY
                if o["metadata"]["name"] != "gpu-operator" or o["kind"] != "Namespace"
            ],
            "gpu-operator: namespace gpu-operator does not exist",
        ),
        (
            _replace(HEALTHY, ns("cert-manager", "Terminating")),
            "cert-manager: namespace cert-manager is Terminating",
        ),
        (
            _replace(HEALTHY, deployment("gpu-operator", "gpu-operator", 2, 1)),
            "gpu-operator: Deployment gpu-operator/gpu-operator: 1/2 replicas available",
        ),
        (
            _replace(HEALTHY, daemon_set("gpu-operator", "nvidia-device-plugin-daemonset", 0, 0)),
            "Deployment gpu-operator/gpu-operator",  # checked below: the DS message
        ),
        (
            [o for o in HEALTHY if o["kind"] != "DaemonSet"],
            "DaemonSet gpu-operator/nvidia-device-plugin-daemonset: not found",
        ),
        (
            [*HEALTHY, pod("cert-manager", "cert-manager-webhook-x", waiting="CrashLoopBackOff")],
            "Pod cert-manager/cert-manager-webhook-x: container c is CrashLoopBackOff",
        ),
    ],
    ids=[
        "ns-missing",
        "ns-terminating",
        "deploy-unavailable",
        "ds-no-nodes",
        "ds-missing",
        "crashloop",
    ],
)
def test_broken_components_fail_with_a_precise_message(objects: list[dict], message: str) -> None:
    result = run(objects)
    assert result.status == Status.FAILED
    if message.startswith("Deployment"):
        assert "runs on no node (0 desired pods)" in result.message
    else:
        assert message in result.message


def test_leftover_evicted_and_terminating_pods_do_not_make_a_component_unhealthy() -> None:
    result = run([*HEALTHY, evicted("cert-manager", "cert-manager-old"),
                  deleting("cert-manager", "cert-manager-going")])  # fmt: skip
    assert (result.status, result.evidence[1].answer) == (Status.PASSED, "all healthy")
    assert result.evidence[1].asked.split("; ")[-2:] == [
        "Pod cert-manager/cert-manager-old (is a Failed leftover (Evicted) that its ReplicaSet "
        "replaces)", "Pod cert-manager/cert-manager-going (is being deleted)"]  # fmt: skip


def test_component_with_nothing_declared_and_no_workloads_fails() -> None:
    objects = [o for o in HEALTHY if o["metadata"].get("namespace") != "cert-manager"]
    result = run(objects)
    assert result.status == Status.FAILED
    assert "cert-manager: namespace cert-manager has no Deployment" in result.message
    assert "nothing shows the component runs" in result.message


def test_recipe_without_components_fails_never_passes_vacuously() -> None:
    result = run(HEALTHY, recipe="componentRefs: []\n")
    assert result.status == Status.FAILED
    assert "nothing to check" in result.message


def test_unsupported_kind_fails_closed() -> None:
    recipe = RECIPE.replace("kind: DaemonSet", "kind: ClusterPolicy")
    result = run(HEALTHY, recipe)
    assert result.status == Status.FAILED
    assert "kind ClusterPolicy is not one aicr can judge" in result.message
