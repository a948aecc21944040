"""gpu-operator-health on fakes: ClusterPolicy, the operator, every operand on every GPU node."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube, deployment

from aicr.catalog import load_catalog
from aicr.checks import CheckContext, RunInputs
from aicr.checks import gpu_operator as op
from aicr.checks.conformance import gpu_operator_health
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.kube.gpus import gpu_nodes
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
NS = "gpu-operator"
RECIPE = f"componentRefs:\n- name: gpu-operator\n  namespace: {NS}\n"
APPS = [o.app for o in op.OPERANDS]


def node(name: str, gpu: bool = True, **labels: str) -> Obj:
    base = {"nvidia.com/gpu.present": "true"} if gpu else {}
    return {"kind": "Node", "metadata": {"name": name, "labels": {**base, **labels}}}


def operand_pod(app: str, on: str, ready: bool = True, waiting: str | None = None) -> Obj:
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    return {
        "kind": "Pod",
        "metadata": {"name": f"{app}-{on}", "namespace": NS, "labels": {"app": app}},
        "spec": {"nodeName": on},
        "status": {"phase": "Running" if not waiting else "Pending",
                   "conditions": [{"type": "Ready", "status": str(ready)}],
                   "containerStatuses": [{"name": "c", "state": state}]},
    }  # fmt: skip


def policy(state: str = "ready", **spec: Any) -> Obj:
    return {"kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
            "spec": spec, "status": {"state": state}}  # fmt: skip


NODES = [node("g0"), node("g1"), node("cpu0", gpu=False)]


def healthy(skip: tuple[tuple[str, str], ...] = ()) -> list[Obj]:
    pods = [operand_pod(a, n) for a in APPS for n in ("g0", "g1") if (a, n) not in skip]
    return [*NODES, policy(), deployment(NS, "gpu-operator"), *pods]


def run(objects: list[Obj], recipe: str = RECIPE) -> CheckResult:
    spec = load_catalog().get("gpu-operator-health")
    assert spec is not None
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), EMPTY_CONFIG)
    result: CheckResult = gpu_operator_health.run(
        CheckContext(spec, inputs, kube=FakeKube(objects))
    )
    return result


def test_healthy_operator_passes_with_a_step_per_operand() -> None:
    result = run(healthy())
    assert (result.status, result.message) == (
        Status.PASSED,
        "GPU Operator healthy: ClusterPolicy ready; 6 operands ready on 2 GPU nodes (g0, g1)",
    )
    assert [(s.title, s.status.value) for s in result.evidence] == [
        ("ClusterPolicy", "passed"), ("operator", "passed"), ("GPU nodes", "informational"),
        *[(f"operand {a}", "passed") for a in APPS]]  # fmt: skip
    assert result.evidence[3].answer == (
        f"{NS}/nvidia-driver-daemonset-g0 on g0: ready; "
        f"{NS}/nvidia-driver-daemonset-g1 on g1: ready"
    )


def test_each_node_lacking_an_operand_is_named_with_why() -> None:
    objs = healthy(skip=(("nvidia-dcgm-exporter", "g1"), ("gpu-feature-discovery", "g0"),
                         ("nvidia-device-plugin-daemonset", "g0")))  # fmt: skip
    objs.append(operand_pod("gpu-feature-discovery", "g0", waiting="CrashLoopBackOff"))
    objs.append(operand_pod("nvidia-device-plugin-daemonset", "g0", ready=False))
    result = run(objs)
    assert (result.status, result.message) == (
        Status.FAILED,
        "3/8 GPU Operator parts failed: operand nvidia-device-plugin-daemonset: no ready pod "
        "on g0 (is running but not ready) | operand gpu-feature-discovery: no ready pod on g0 "
        "(container c is CrashLoopBackOff) | operand nvidia-dcgm-exporter: no ready pod on g1 "
        "(no pod)",
    )


def test_policy_not_ready_and_operator_unavailable_fail() -> None:
    objs = [o for o in healthy() if o["kind"] not in ("ClusterPolicy", "Deployment")]
    objs += [policy("notReady"), deployment(NS, "gpu-operator", available=0)]
    result = run(objs)
    assert result.message == (
        "2/8 GPU Operator parts failed: ClusterPolicy: ClusterPolicy cluster-policy: state is "
        "notReady, not ready | operator: Deployment gpu-operator/gpu-operator: 0/1 replicas "
        "available"
    )


def test_switched_off_operands_and_opted_out_nodes_are_not_expected() -> None:
    objs = [o for o in healthy(skip=(("nvidia-driver-daemonset", "g0"),
                                     ("nvidia-driver-daemonset", "g1"),
                                     ("nvidia-dcgm-exporter", "g1")))
            if o["kind"] != "ClusterPolicy" and o["metadata"]["name"] != "g1"]  # fmt: skip
    objs += [
        policy(driver={"enabled": False}),
        node("g1", **{"nvidia.com/gpu.deploy.dcgm-exporter": "false"}),
    ]
    result = run(objs)
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith("5 operands ready on 2 GPU nodes (g0, g1)")
    assert result.evidence[2].verdict == (
        "5 operands expected on each; switched off by the ClusterPolicy: "
        "nvidia-driver-daemonset (spec.driver.enabled=false)"
    )
    dcgm = next(s for s in result.evidence if s.title == "operand nvidia-dcgm-exporter")
    assert dcgm.verdict == (
        "ready on g0; opted out by label: g1 (nvidia.com/gpu.deploy.dcgm-exporter=false)"
    )


# What gpu-operator v25.10.1 sets on every GPU node, whatever the driver mode
# (controllers/state_manager.go gpuStateLabels["container"]; only where absent).
OPERATOR_LABELS = {f"nvidia.com/gpu.deploy.{o}": "true" for o in (
    "driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm",
    "dcgm-exporter", "node-status-exporter", "operator-validator")}  # fmt: skip


def test_a_pre_installed_driver_as_the_operator_shows_it() -> None:
    # EKS/GKE GPU images and DGX OS bring the driver: the recipe's values set
    # driver.enabled=false, the operator still labels deploy.driver=true and makes no
    # driver DaemonSet; the validator's driver validation finds the host's driver.
    nodes = [node("g0", **OPERATOR_LABELS), node("g1", **OPERATOR_LABELS)]
    pods = [operand_pod(a, n) for a in APPS if a != "nvidia-driver-daemonset"
            for n in ("g0", "g1")]  # fmt: skip
    objs = [*nodes, policy(driver={"enabled": False}), deployment(NS, "gpu-operator"), *pods]
    result = run(objs)
    assert (result.status, result.message) == (
        Status.PASSED,
        "GPU Operator healthy: ClusterPolicy ready; 5 operands ready on 2 GPU nodes (g0, g1)",
    )
    assert result.evidence[2].verdict == (
        "5 operands expected on each; switched off by the ClusterPolicy: "
        "nvidia-driver-daemonset (spec.driver.enabled=false)"
    )
    # ... and the same nodes with the driver left on and no driver pod: a missing driver
    objs = [*nodes, policy(), deployment(NS, "gpu-operator"), *pods]
    result = run(objs)
    assert result.status == Status.FAILED
    assert "operand nvidia-driver-daemonset: no ready pod on g0 (no pod), g1 (no pod)" in (
        result.message
    )


def test_operands_false_keeps_every_operand_off_the_node() -> None:
    # `nvidia.com/gpu.deploy.operands=false`: the operator removes the node's deploy labels
    # (state_manager.go hasOperandsDisabled), so no operand DaemonSet lands there.
    objs = [o for o in healthy() if o["metadata"]["name"] != "g1"
            and (o.get("spec") or {}).get("nodeName") != "g1"]  # fmt: skip
    objs.append(node("g1", **{"nvidia.com/gpu.deploy.operands": "false"}))
    result = run(objs)
    assert result.status == Status.PASSED, result.message
    driver = next(s for s in result.evidence if s.title == "operand nvidia-driver-daemonset")
    assert driver.verdict == (
        "ready on g0; opted out by label: g1 (nvidia.com/gpu.deploy.operands=false)"
    )


def test_no_gpu_node_and_no_policy_fail() -> None:
    result = run([node("cpu0", gpu=False), deployment(NS, "gpu-operator")])
    assert (result.status, result.message) == (
        Status.FAILED,
        "2/3 GPU Operator parts failed: ClusterPolicy: no ClusterPolicy "
        "(nvidia.com/v1) exists | GPU nodes: no node is labelled as having an NVIDIA GPU",
    )


def test_skips_without_gpu_operator_component() -> None:
    result = run(healthy(), recipe="componentRefs:\n- name: cert-manager\n  namespace: cm\n")
    assert (result.status, result.message) == (
        Status.SKIPPED,
        "not applicable: the recipe deploys no gpu-operator",
    )


@pytest.mark.parametrize(("labels", "gpu"), [
    ({"nvidia.com/gpu.present": "true"}, True),
    ({"feature.node.kubernetes.io/pci-10de.present": "true"}, True),
    ({"nvidia.com/gpu.present": "false"}, False),
    ({}, False),
])  # fmt: skip
def test_gpu_nodes_from_gfd_or_nfd_labels(labels: dict[str, str], gpu: bool) -> None:
    assert gpu_nodes([{"metadata": {"name": "n", "labels": labels}}]) == (["n"] if gpu else [])
