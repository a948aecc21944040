"""operator-health, expected-resources, gpu-operator-version and gpu-allocation-policy on fakes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube, daemon_set, deleting, deployment, evicted, ns, pod

from aicr.catalog import load_catalog
from aicr.checks import CheckContext, RunInputs
from aicr.checks.deployment import (
    expected_resources,
    gpu_allocation_policy,
    gpu_operator_version,
    operator_health,
)
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
RECIPE = """
componentRefs:
- name: gpu-operator
  namespace: gpu-operator
  overrides: {devicePlugin: {enabled: true}}
  expectedResources:
  - {kind: Deployment, name: gpu-operator}
  - {kind: DaemonSet, name: nvidia-device-plugin-daemonset}
validation:
  deployment:
    constraints:
    - {name: Deployment.gpu-operator.version, value: '>= v25.3.0'}
"""


def run(module: Any, name: str, objects: list[Obj], recipe: str = RECIPE,
        prepared: dict[str, Any] | None = None) -> CheckResult:  # fmt: skip
    spec = load_catalog().get(name)
    assert spec is not None
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), EMPTY_CONFIG,
                       prepared=prepared or {})  # fmt: skip
    result: CheckResult = module.run(CheckContext(spec, inputs, kube=FakeKube(objects)))
    return result


def policy(state: str | None = "ready", name: str = "cluster-policy") -> Obj:
    return {"kind": "ClusterPolicy", "metadata": {"name": name},
            "status": {"state": state} if state else {}}  # fmt: skip


IMAGE = "nvcr.io/nvidia/gpu-operator:v25.10.1"


def operator(labels: dict[str, str] | None = None, image: str = IMAGE, available: int = 1) -> Obj:
    dep = deployment("gpu-operator", "gpu-operator", available=available)
    dep["metadata"]["labels"] = labels or {}
    dep["spec"]["template"] = {"spec": {"containers": [{"name": "gpu-operator", "image": image}]}}
    return dep


HEALTHY = [
    ns("gpu-operator"),
    operator(),
    daemon_set("gpu-operator", "nvidia-device-plugin-daemonset"),
    daemon_set("gpu-operator", "nvidia-mig-manager", want=0, ready=0),
    pod("gpu-operator", "gpu-operator-abc"),
    policy(),
]


def swap(objs: list[Obj], new: Obj) -> list[Obj]:
    key = (new["kind"], new["metadata"]["name"])
    return [o for o in objs if (o["kind"], o["metadata"]["name"]) != key] + [new]


# ---- operator-health ----------------------------------------------------------------------
def test_operator_health_passes_and_lists_every_object() -> None:
    result = run(operator_health, "operator-health", HEALTHY)
    assert result.status == Status.PASSED, result.message
    asked = result.evidence[0].asked
    for name in ("Deployment gpu-operator/gpu-operator", "Pod gpu-operator/gpu-operator-abc",
                 "ClusterPolicy cluster-policy", "DaemonSet gpu-operator/nvidia-mig-manager"):
        assert name in asked
    assert "DaemonSet gpu-operator/nvidia-mig-manager selects no node" in result.evidence[0].answer


OPERATOR_BROKEN = [
    (swap(HEALTHY, policy("notReady")),
     "GPU Operator unhealthy: ClusterPolicy cluster-policy: state is notReady, not ready"),
    ([o for o in HEALTHY if o["kind"] != "ClusterPolicy"],
     "GPU Operator unhealthy: no ClusterPolicy (nvidia.com/v1) exists"),
    (swap(swap(HEALTHY, operator(available=0)),
           daemon_set("gpu-operator", "nvidia-device-plugin-daemonset", ready=1)),
     "GPU Operator unhealthy: Deployment gpu-operator/gpu-operator: 0/1 replicas available; "
     "DaemonSet gpu-operator/nvidia-device-plugin-daemonset: 1/2 pods ready"),
    ([*HEALTHY, pod("gpu-operator", "nvidia-driver-x", waiting="CrashLoopBackOff")],
     "GPU Operator unhealthy: Pod gpu-operator/nvidia-driver-x: container c is CrashLoopBackOff"),
    ([policy()], "GPU Operator unhealthy: namespace gpu-operator does not exist"),
    ([ns("gpu-operator"), policy()],
     "GPU Operator unhealthy: namespace gpu-operator has no running Deployment, DaemonSet or "
     "StatefulSet"),
]  # fmt: skip


@pytest.mark.parametrize(("objs", "message"), OPERATOR_BROKEN,
                         ids=["policy-not-ready", "no-policy", "workloads", "crashloop",
                              "no-namespace", "empty-namespace"])  # fmt: skip
def test_operator_health_names_every_unhealthy_object(objs: list[Obj], message: str) -> None:
    result = run(operator_health, "operator-health", objs)
    assert result.status == Status.FAILED
    assert result.message == message


def test_operator_health_leftover_and_terminating_pods_are_noted_not_unhealthy() -> None:
    objs = [*HEALTHY, evicted("gpu-operator", "gpu-operator-old", "ReplicaSet"),
            evicted("gpu-operator", "nvidia-dcgm-exporter-old", "DaemonSet"),
            deleting("gpu-operator", "gpu-feature-discovery-old")]  # fmt: skip
    result = run(operator_health, "operator-health", objs)
    assert result.status == Status.PASSED, result.message
    answer = result.evidence[0].answer
    assert "Pod gpu-operator/gpu-operator-old is a Failed leftover (Evicted) that its " \
           "ReplicaSet replaces" in answer  # fmt: skip
    assert "Pod gpu-operator/gpu-feature-discovery-old is being deleted" in answer


def test_operator_health_a_failed_bare_pod_is_still_unhealthy() -> None:
    bare = pod("gpu-operator", "debug", phase="Failed")
    result = run(operator_health, "operator-health", [*HEALTHY, bare])
    assert result.message == "GPU Operator unhealthy: Pod gpu-operator/debug: is Failed"


def test_operator_health_skips_without_gpu_operator() -> None:
    result = run(operator_health, "operator-health", [], recipe="componentRefs: [{name: x}]")
    assert (result.status, result.message) == (
        Status.SKIPPED, "not applicable: the recipe deploys no gpu-operator")


# ---- gpu-operator-version -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("dep", "status", "message"),
    [
        (operator(), Status.PASSED, "GPU Operator v25.10.1 (image tag of container gpu-operator "
         f"({IMAGE}) of gpu-operator/gpu-operator) satisfies >= v25.3.0"),
        (operator({"app.kubernetes.io/version": "v24.9.2"}), Status.FAILED,
         "GPU Operator v24.9.2 (label app.kubernetes.io/version of gpu-operator/gpu-operator) "
         "does not satisfy >= v25.3.0"),
        (operator({"helm.sh/chart": "gpu-operator-v25.3.1"}), Status.PASSED,
         "GPU Operator v25.3.1 (label helm.sh/chart of gpu-operator/gpu-operator) satisfies "
         ">= v25.3.0"),
        (operator(image="nvcr.io/nvidia/gpu-operator@sha256:abc"), Status.FAILED,
         "cannot tell the version of Deployment gpu-operator/gpu-operator: no "
         "app.kubernetes.io/version or helm.sh/chart label and no versioned image tag"),
    ],
    ids=["image-tag", "too-old-label", "chart-label", "digest-only"],
)  # fmt: skip
def test_gpu_operator_version(dep: Obj, status: Status, message: str) -> None:
    result = run(gpu_operator_version, "gpu-operator-version", [dep])
    assert (result.status, result.message) == (status, message)


def test_gpu_operator_version_missing_and_not_applicable() -> None:
    result = run(gpu_operator_version, "gpu-operator-version", [])
    assert result.message == "no GPU Operator Deployment found in namespace gpu-operator"
    result = run(gpu_operator_version, "gpu-operator-version", [operator()],
                 recipe="componentRefs: [{name: gpu-operator}]")  # fmt: skip
    assert (result.status, result.message) == (
        Status.SKIPPED, "not applicable: no Deployment.gpu-operator.version constraint")


# ---- expected-resources ---------------------------------------------------------------------
def test_expected_resources_unsupported_kind_fails_and_evidence_lists_objects() -> None:
    result = run(expected_resources, "expected-resources", HEALTHY)
    assert result.status == Status.PASSED, result.message
    assert result.evidence[0].title == "component gpu-operator (expectedResources)"
    recipe = RECIPE.replace("{kind: Deployment, name: gpu-operator}",
                            "{kind: ClusterPolicy, name: cluster-policy}")  # fmt: skip
    result = run(expected_resources, "expected-resources", HEALTHY, recipe)
    assert result.status == Status.FAILED
    assert "ClusterPolicy gpu-operator/cluster-policy: kind ClusterPolicy is not one aicr can " \
        "judge" in result.message


def test_expected_resources_nothing_declared_is_judged_by_namespace() -> None:
    recipe = "componentRefs: [{name: cert-manager, namespace: cert-manager}]"
    result = run(expected_resources, "expected-resources", [ns("cert-manager")], recipe)
    assert result.status == Status.FAILED
    assert "nothing shows the component runs" in result.message
    objs = [ns("cert-manager"), deployment("cert-manager", "cm"), pod("cert-manager", "cm-1")]
    result = run(expected_resources, "expected-resources", objs, recipe)
    assert result.status == Status.PASSED
    assert result.evidence[0].asked == (
        "Namespace cert-manager; Deployment cert-manager/cm; Pod cert-manager/cm-1")


# ---- gpu-allocation-policy -------------------------------------------------------------------
def node(name: str, gpus: int | None) -> Obj:
    alloc = {"nvidia.com/gpu": str(gpus)} if gpus is not None else {}
    labels = {"nvidia.com/gpu.present": "true"}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": alloc}}  # fmt: skip


def rslice(node_name: str, count: int = 8) -> Obj:
    gpu = {"type": {"string": "gpu"}}
    devices = [{"name": f"gpu-{i}", "attributes": gpu} for i in range(count)]
    spec = {"driver": "gpu.nvidia.com", "nodeName": node_name, "devices": devices}
    return {"kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"}, "spec": spec}


DEVICE_CLASS = {"kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"}}
DP = {"mode": "device-plugin", "settings": [], "notes": []}
DRA = {"mode": "dra", "settings": [], "notes": []}
POLICY = [
    (DP, [node("a", 8), node("b", 8)], Status.PASSED,
     "device-plugin mode on 2 GPU nodes (a, b), as the recipe resolves"),
    (DP, [node("a", 8), node("b", None), rslice("a")], Status.FAILED,
     "recipe resolves to device-plugin mode, but GPU nodes not advertising nvidia.com/gpu: b; "
     "ResourceSlices also publish whole GPUs for: a"),
    (DRA, [node("a", None), rslice("a"), DEVICE_CLASS], Status.PASSED,
     "dra mode on 1 GPU nodes (a), as the recipe resolves"),
    (DRA, [node("a", 8), node("b", None), rslice("a")], Status.FAILED,
     "recipe resolves to dra mode, but GPU nodes without a ResourceSlice of whole GPUs: b; "
     "GPU nodes still advertising nvidia.com/gpu: a; DeviceClass gpu.nvidia.com does not exist"),
    (DP, [], Status.FAILED, "recipe resolves to device-plugin mode, but no GPU node found "
     "(no nvidia.com/gpu.present label, resource or slice)"),
]  # fmt: skip


@pytest.mark.parametrize(("prepared", "objs", "status", "message"), POLICY,
                         ids=["dp-ok", "dp-mismatch", "dra-ok", "dra-mismatch", "no-gpus"])
def test_gpu_allocation_policy(
    prepared: Obj, objs: list[Obj], status: Status, message: str
) -> None:
    prep = {"gpu-allocation-policy": prepared}
    result = run(gpu_allocation_policy, "gpu-allocation-policy", objs, prepared=prep)
    assert (result.status, result.message) == (status, message)


def test_gpu_allocation_policy_resolves_in_pod_without_preflight() -> None:
    result = run(gpu_allocation_policy, "gpu-allocation-policy", [node("a", 8)])
    assert result.status == Status.PASSED
    assert "no orchestrator preflight" in result.evidence[0].answer
