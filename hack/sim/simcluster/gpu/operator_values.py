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
