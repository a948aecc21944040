"""The GPU Operator's objects as its chart renders them from a recipe's values.

What is modelled (and nothing more), from gpu-operator v25.10.1:

- the ClusterPolicy `cluster-policy` (`templates/clusterpolicy.yaml`): every
  operand's `enabled`, `operator.runtimeClass`, `mig.strategy`, `cdi`,
  `psa.enabled`, `devicePlugin.config` (`name`, `default`, rendered only with a
  name) and `migManager.config` (`name`, `default`). The images, env and
  resources it also renders are left out: nothing in the sim reads them. Its
  `status.state: ready` is what the operator writes once its operands are ready
  (sim-only: no operator reconciles here; the scenario's operand DaemonSets play
  them);
- the device plugin's config ConfigMap (`templates/plugin_config.yaml`): with
  `devicePlugin.config.create` and non-empty `data`, named `config.name` in the
  release namespace, holding `data`;
- the RuntimeClass the operator creates (`controllers/object_controls.go`,
  `transformRuntimeClass`): named `operator.runtimeClass`, its handler the same.

The values are the chart's defaults (`CHART_DEFAULTS`, from its `values.yaml`),
the recipe's values file over them, then its overrides (Helm's merge). A
scenario names them in its header (`gpuOperator: {valuesFile, overrides}`); the
values file defaults to the demo recipe's (`recipes/kind-inference.yaml`:
`components/gpu-operator/values-kind.yaml`). The GPU model then reads the
ClusterPolicy and ConfigMap as the device plugin and GFD would
(`simcluster.gpu.sharing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from simcluster.components.base import RECIPE_COMPONENTS, Manifest, dig, merge_values

NAMESPACE = "gpu-operator"  # the release namespace of the example recipes
POLICY = "cluster-policy"
DEFAULT_VALUES_FILE = "components/gpu-operator/values-kind.yaml"  # relative to recipes/
RECIPES = RECIPE_COMPONENTS.parent
# gpu-operator v25.10.1 deployments/gpu-operator/values.yaml: the keys rendered here.
CHART_DEFAULTS: dict[str, Any] = {
    "operator": {"runtimeClass": "nvidia"},
    "mig": {"strategy": "single"},
    "psa": {"enabled": False},
    "cdi": {"enabled": True},
    "driver": {"enabled": True},
    "toolkit": {"enabled": True},
    "devicePlugin": {
        "enabled": True,
        "config": {"create": False, "name": "", "default": "", "data": {}},
    },
    "dcgm": {"enabled": False},
    "dcgmExporter": {"enabled": True},
    "gfd": {"enabled": True},
    "migManager": {
        "enabled": True,
        "config": {"default": "all-disabled", "create": False, "name": "", "data": {}},
    },
    "nodeStatusExporter": {"enabled": False},
    "gds": {"enabled": False},
    "gdrcopy": {"enabled": False},
    "vgpuManager": {"enabled": False},
    "vgpuDeviceManager": {"enabled": True},
    "vfioManager": {"enabled": True},
    "ccManager": {"enabled": False},
    "kataManager": {"enabled": False},
    "sandboxWorkloads": {"enabled": False},
    "sandboxDevicePlugin": {"enabled": True},
}
# the operand blocks whose `enabled` the template renders, in its order
OPERANDS = (
    "driver",
    "vgpuManager",
    "kataManager",
    "vfioManager",
    "vgpuDeviceManager",
    "ccManager",
    "toolkit",
    "devicePlugin",
    "dcgm",
    "dcgmExporter",
    "gfd",
    "migManager",
    "nodeStatusExporter",
    "gds",
    "gdrcopy",
    "sandboxWorkloads",
    "sandboxDevicePlugin",
)


class ValuesError(ValueError):
    """A values file or overrides the renderer cannot use."""


def values(values_file: str | None = None, overrides: Mapping[str, Any] | None = None) -> Any:
    """The chart's defaults, the values file (relative to recipes/) over them, then overrides."""
    path = RECIPES / (values_file or DEFAULT_VALUES_FILE)
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValuesError(f"{path}: cannot read: {e.strerror}") from None
    if loaded is not None and not isinstance(loaded, dict):
        raise ValuesError(f"{path}: expected a mapping of Helm values")
    return merge_values(merge_values(CHART_DEFAULTS, loaded or {}), overrides or {})


def cluster_policy(v: Mapping[str, Any]) -> Manifest:
    """The ClusterPolicy the chart renders from values ``v`` (the keys listed above)."""
    spec: dict[str, Any] = {}
    if dig(v, "operator", "runtimeClass"):
        spec["operator"] = {"runtimeClass": str(v["operator"]["runtimeClass"])}
    spec["mig"] = {"strategy": str(v["mig"]["strategy"])} if dig(v, "mig", "strategy") else {}
    spec["psa"] = {"enabled": bool(dig(v, "psa", "enabled"))}
    spec["cdi"] = {"enabled": bool(dig(v, "cdi", "enabled"))}
    if dig(v, "cdi", "default"):
        spec["cdi"]["default"] = v["cdi"]["default"]
    for operand in OPERANDS:
        spec[operand] = {"enabled": bool(dig(v, operand, "enabled"))}
    plugin = dig(v, "devicePlugin", "config", default={}) or {}
    if plugin.get("name"):
        spec["devicePlugin"]["config"] = {"name": plugin["name"], "default": plugin.get("default")}
    mig = dig(v, "migManager", "config", default={}) or {}
    if mig:
        spec["migManager"]["config"] = {
            "name": mig.get("name") or "",
            "default": str(mig.get("default") or ""),
        }
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": POLICY},
        "spec": spec,
        "status": {"state": "ready"},
    }


def plugin_config_map(v: Mapping[str, Any]) -> Manifest | None:
    """The device plugin's config ConfigMap (templates/plugin_config.yaml), when created."""
    config = dig(v, "devicePlugin", "config", default={}) or {}
    if not config.get("create") or not config.get("data"):
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": config["name"], "namespace": NAMESPACE},
        "data": {str(k): str(d) for k, d in config["data"].items()},
    }


def runtime_class(v: Mapping[str, Any]) -> Manifest:
    """The RuntimeClass the operator creates: ``operator.runtimeClass``, handler the same."""
    name = str(dig(v, "operator", "runtimeClass") or CHART_DEFAULTS["operator"]["runtimeClass"])
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name},
        "handler": name,
    }


def manifests(header: Mapping[str, Any], where: Path | str) -> list[Manifest]:
    """What a scenario's ``gpuOperator`` header renders: ConfigMap, ClusterPolicy, RuntimeClass."""
    unknown = sorted(set(header) - {"valuesFile", "overrides"})
    if unknown:
        raise ValuesError(f"{where}: gpuOperator: unknown key {unknown[0]!r} "
                          "(expected valuesFile, overrides)")  # fmt: skip
    overrides = header.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ValuesError(f"{where}: gpuOperator.overrides: expected a mapping")
    v = values(header.get("valuesFile"), overrides)
    config = plugin_config_map(v)
    return [*([config] if config else []), cluster_policy(v), runtime_class(v)]


# ---- the operator and its per-node operands, for `sim recipe` -----------------------------
# gpu-operator v25.10.1: (values block, DaemonSet and its `app` label, deploy label, image
# in values.yaml). The DaemonSets select nodes labelled nvidia.com/gpu.deploy.<label>=true
# (assets/state-*/0500_daemonset.yaml, gpu-feature-discovery/0500_daemonset.yaml,
# state-node-status-exporter/0700_daemonset.yaml). The DCGM exporter's is the
# `dcgm-exporter` component; the validator runs whatever the values say.
OPERAND_DAEMONSETS = (
    ("driver", "nvidia-driver-daemonset", "driver", "nvcr.io/nvidia/driver:580.105.08"),
    ("toolkit", "nvidia-container-toolkit-daemonset", "container-toolkit",
     "nvcr.io/nvidia/k8s/container-toolkit:v1.18.1"),
    ("devicePlugin", "nvidia-device-plugin-daemonset", "device-plugin",
     "nvcr.io/nvidia/k8s-device-plugin:v0.18.1"),
    ("gfd", "gpu-feature-discovery", "gpu-feature-discovery",
     "nvcr.io/nvidia/k8s-device-plugin:v0.18.1"),
    ("dcgm", "nvidia-dcgm", "dcgm", "nvcr.io/nvidia/cloud-native/dcgm:4.4.2-1-ubuntu22.04"),
    ("nodeStatusExporter", "nvidia-node-status-exporter", "node-status-exporter",
     "nvcr.io/nvidia/gpu-operator:v25.10.1"),
    (None, "nvidia-operator-validator", "operator-validator",
     "nvcr.io/nvidia/gpu-operator:v25.10.1"),
)  # fmt: skip
OPERATOR_IMAGE = "nvcr.io/nvidia/gpu-operator:v25.10.1"  # values.yaml operator.*


def cluster_policy_crd() -> Manifest:
    """The ClusterPolicy CRD the chart installs (its schema left open: nothing here validates)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterpolicies.nvidia.com"},
        "spec": {
            "group": "nvidia.com",
            "scope": "Cluster",
            "names": {
                "plural": "clusterpolicies",
                "singular": "clusterpolicy",
                "kind": "ClusterPolicy",
                "listKind": "ClusterPolicyList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def operator_deployment() -> Manifest:
    """The operator's Deployment: `gpu-operator` whatever the fullname
    (templates/operator.yaml names it literally), labelled `app: gpu-operator`."""
    labels = {"app": "gpu-operator", "app.kubernetes.io/component": "gpu-operator"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "gpu-operator",
            "namespace": NAMESPACE,
            "labels": {**labels, "app.kubernetes.io/version": OPERATOR_IMAGE.rsplit(":", 1)[1]},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "gpu-operator", "image": OPERATOR_IMAGE}]},
            },
        },
    }


def operand_daemon_sets(v: Mapping[str, Any]) -> list[Manifest]:
    """The DaemonSet of every per-node operand the values switch on (the DCGM exporter's aside)."""
    out: list[Manifest] = []
    for block, name, label, image in OPERAND_DAEMONSETS:
        if block is not None and not dig(v, block, "enabled"):
            continue
        labels = {"app": name}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
                "spec": {
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "nodeSelector": {f"nvidia.com/gpu.deploy.{label}": "true"},
                            "tolerations": [{"operator": "Exists"}],
                            "containers": [{"name": name, "image": image}],
                        },
                    },
                },
            }
        )
    return out


def from_values(v: Mapping[str, Any]) -> list[Manifest]:
    """What the chart and the operator make from merged values ``v`` (see `values`): the CRD,
    the operator, the device plugin's ConfigMap, ClusterPolicy, RuntimeClass and operands."""
    config = plugin_config_map(v)
    return [
        cluster_policy_crd(),
        operator_deployment(),
        *([config] if config else []),
        cluster_policy(v),
        runtime_class(v),
        *operand_daemon_sets(v),
    ]
