"""The GPU Operator as the API shows it: its component name, ClusterPolicy, and operands.

Shared by operator-health (deployment) and gpu-operator-health (conformance),
so both read the operator's namespace and judge its ClusterPolicy the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aicr.checks.allocation import Setting, ValuesReader
from aicr.recipe.model import ComponentRef, Recipe

Obj = dict[str, Any]
COMPONENT = "gpu-operator"
DEFAULT_NAMESPACE = "gpu-operator"
READY_STATE = "ready"
DEPLOY_LABEL = "nvidia.com/gpu.deploy."  # + operand: the operand's DaemonSet selects it
# Each operand's DaemonSet selects nodes whose deploy label is "true" (the driver's:
# ``nodeSelector: nvidia.com/gpu.deploy.driver: "true"``, gpu-operator v25.10.1
# ``assets/state-*/0500_daemonset.yaml``). The operator sets every one to "true" on each GPU
# node, whatever the driver mode, and only where the label is absent
# (``controllers/state_manager.go``, ``gpuStateLabels``/``addGPUStateLabels``); any other
# value is a user's (``false``) and keeps the operand off that node. A pre-installed driver
# (EKS and GKE GPU node images, DGX OS) is not a label value: it is the ClusterPolicy's
# ``driver.enabled: false``, so no driver DaemonSet exists. A node without the label is
# one the operator has not labelled yet: the operand is still expected there.
# ``nvidia.com/gpu.deploy.operands=false`` on a node keeps every operand off it: the
# operator then removes all its deploy labels (``hasOperandsDisabled``).
OPERANDS_LABEL = DEPLOY_LABEL + "operands"
DEPLOY_ON = "true"
RUNTIME_CLASS_KEY = "operator.runtimeClass"  # the RuntimeClass the operator creates
DEFAULT_RUNTIME_CLASS = "nvidia"  # the chart's default


@dataclass(frozen=True)
class Operand:
    """One per-node operand: its DaemonSet's ``app`` label, ClusterPolicy switch, node label."""

    app: str
    spec_key: str  # ClusterPolicy ``spec.<key>.enabled`` (default true)
    deploy: str  # ``nvidia.com/gpu.deploy.<deploy>``
    what: str


OPERANDS = (
    Operand("nvidia-driver-daemonset", "driver", "driver", "driver"),
    Operand(
        "nvidia-container-toolkit-daemonset", "toolkit", "container-toolkit", "container toolkit"
    ),
    Operand("nvidia-device-plugin-daemonset", "devicePlugin", "device-plugin", "device plugin"),
    Operand("gpu-feature-discovery", "gfd", "gpu-feature-discovery", "GPU feature discovery"),
    Operand("nvidia-dcgm-exporter", "dcgmExporter", "dcgm-exporter", "DCGM exporter"),
    Operand("nvidia-operator-validator", "validator", "operator-validator", "validator"),
)


def component(recipe: Recipe) -> ComponentRef | None:
    """The recipe's enabled ``gpu-operator`` component, if any."""
    ref = recipe.component(COMPONENT)
    return ref if ref is not None and ref.is_enabled else None


def namespace(ref: ComponentRef) -> str:
    """The operator's namespace (the recipe's, else the chart's default)."""
    return ref.namespace or DEFAULT_NAMESPACE


def policy_problems(policies: list[Obj]) -> list[str]:
    """Every ClusterPolicy must be ready (a second one, ``ignored``, is not); none is a problem."""
    if not policies:
        return ["no ClusterPolicy (nvidia.com/v1) exists"]
    problems = []
    for p in policies:
        state = (p.get("status") or {}).get("state")
        if state != READY_STATE:
            problems.append(
                f"ClusterPolicy {p['metadata']['name']}: state is "
                f"{state or 'unset'}, not {READY_STATE}"
            )
    return problems


def enabled(policy: Obj, operand: Operand) -> bool:
    """Whether the ClusterPolicy deploys ``operand`` (the CRD's default: yes)."""
    section = (policy.get("spec") or {}).get(operand.spec_key) or {}
    return section.get("enabled", True) is not False


def runtime_class(recipe: Recipe, data_dir: str | None, source: str) -> Setting | None:
    """The GPU RuntimeClass the recipe's GPU Operator creates (``operator.runtimeClass``).

    Read like the allocation mode's values: overrides, then the values file under
    ``--data``, then the chart's default. None when the recipe deploys no GPU Operator.
    """
    ref = component(recipe)
    if ref is None:
        return None
    return ValuesReader(recipe, data_dir, source).value(
        ref, RUNTIME_CLASS_KEY, DEFAULT_RUNTIME_CLASS
    )
