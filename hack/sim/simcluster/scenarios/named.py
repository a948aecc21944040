"""Named scenarios (hack/sim/scenarios/NAME.yaml): a cluster's contents in one file.

The first YAML document is the header, a strict `Scenario` (name, what it
models, the components it runs, the GPU mode, and the GPU Operator's values:
`gpuOperator: {valuesFile, overrides}`, whose ClusterPolicy, device-plugin
config and RuntimeClass are rendered as the chart does, `simcluster.gpu.operator_values`);
every later document is a manifest applied as `sim apply` applies a file. `load` finds every mistake
before anything is created; `run` installs the components, applies the
manifests and waits until every workload they hold is ready.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from simcluster.cluster import kube, paths
from simcluster.components import install, registry, workloads
from simcluster.components.base import Component
from simcluster.gpu import operator_values
from simcluster.gpu.sharing import SharingError
from simcluster.gpu.vgpu import VgpuError
from simcluster.scenarios import contents as scenario

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

SCENARIOS = paths.SIM_ROOT / "scenarios"
HEADER_KEYS = {"kind", "name", "description", "components", "gpuMode", "gpuOperator"}
MODES = ("device-plugin", "dra")


class ScenarioError(ValueError):
    """A scenario or manifest file that cannot be used (exit 2, nothing created)."""


@dataclass(frozen=True)
class Scenario:
    """One named scenario."""

    name: str
    description: str
    components: tuple[Component, ...]
    gpu_mode: str
    manifests: tuple[dict[str, Any], ...]


def names() -> list[str]:
    """Every named scenario."""
    return sorted(p.stem for p in SCENARIOS.glob("*.yaml"))


def _documents(path: Path) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not YAML: {e}") from None


def read_manifests(path: Path, skip: int = 0) -> list[dict[str, Any]]:
    """The documents of a manifest file (after the first `skip`), each with apiVersion, kind
    and metadata.name."""
    docs = _documents(path)[skip:]
    for n, d in enumerate(docs, skip + 1):
        missing = [k for k in ("apiVersion", "kind") if not isinstance(d, dict) or not d.get(k)]
        if not missing and not (d.get("metadata") or {}).get("name"):
            missing = ["metadata.name"]
        if missing:
            raise ScenarioError(f"{path}: document {n}: {', '.join(missing)} missing")
    return docs


def load(name: str) -> Scenario:
    """The scenario called `name`; ScenarioError naming the file and field when it is wrong."""
    path = SCENARIOS / f"{name}.yaml"
    if not path.is_file():
        raise ScenarioError(
            f"unknown scenario {name!r} (scenarios: {', '.join(names())}; "
            "`hack/sim/sim scenario list`)"
        )
    docs = _documents(path)
    head = docs[0] if docs else None
    if not isinstance(head, dict) or head.get("kind") != "Scenario":
        raise ScenarioError(f"{path}: document 1: expected the header, `kind: Scenario`")
    unknown = sorted(set(head) - HEADER_KEYS)
    if unknown:
        raise ScenarioError(
            f"{path}: header: unknown key {unknown[0]!r} "
            f"(expected {', '.join(sorted(HEADER_KEYS))})"
        )
    if head.get("name") != name:
        raise ScenarioError(f"{path}: header: name must be {name!r} (the file's name)")
    mode = head.get("gpuMode", "device-plugin")
    if mode not in MODES:
        raise ScenarioError(f"{path}: header: gpuMode {mode!r}, expected one of {', '.join(MODES)}")
    wanted = head.get("components") or []
    try:
        components = registry.resolve(",".join(wanted)) if wanted else []
    except registry.ComponentInputError as e:
        raise ScenarioError(f"{path}: header: components: {e}") from None
    manifests = read_manifests(path, skip=1)
    operator = head.get("gpuOperator")
    if operator is not None:
        if not isinstance(operator, dict):
            raise ScenarioError(f"{path}: header: gpuOperator: expected a mapping")
        if any(d["kind"] == "ClusterPolicy" for d in manifests):
            raise ScenarioError(
                f"{path}: a ClusterPolicy document beside gpuOperator: the values render it"
            )
        try:
            manifests += operator_values.manifests(operator, f"{path}: header")
        except operator_values.ValuesError as e:
            raise ScenarioError(str(e)) from None
    return Scenario(
        name, str(head.get("description", "")), tuple(components), mode, tuple(manifests)
    )


def apply_and_wait(sim: Sim, docs: list[dict[str, Any]], timeout: float = 120.0) -> None:
    """Apply manifests, then wait until every workload among them is ready."""
    applied = scenario.apply(sim, docs)
    try:  # the GPU Operator's sharing config, as its device plugin and GFD would apply it
        scenario.apply_sharing(sim)
    except (SharingError, VgpuError) as e:
        raise install.ComponentError(f"GPU sharing: {e}") from None
    api = kube.api_client(sim.kubeconfig)
    deadline = time.monotonic() + timeout
    refs = [workloads.ref(o) for o in applied]
    while left := workloads.pending(api, refs):
        if time.monotonic() > deadline:
            raise install.ComponentError(f"not ready in {timeout:.0f} s: {', '.join(left)}")
        time.sleep(0.5)


def run(sim: Sim, s: Scenario) -> None:
    """Load scenario `s` into the running cluster and wait until it is ready."""
    if s.gpu_mode != scenario.current_mode(sim):
        scenario.set_mode(sim, s.gpu_mode)  # type: ignore[arg-type]
    if s.components:
        install.install(sim, list(s.components))
    apply_and_wait(sim, list(s.manifests))
