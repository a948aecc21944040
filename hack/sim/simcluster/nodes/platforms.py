"""Platform profiles: what a provider gives a cluster's nodes (hack/sim/platforms/*.yaml).

What is modelled (and nothing more): per provider, the labels its nodes carry
(instance type, region and zone, node group or pool), the `spec.providerID`
format, the GPU nodes' taints and provider labels, whether the node image brings
the NVIDIA driver (`pre-installed`) or the GPU Operator installs it (`operator`),
and the sandboxed runtime the platform configures (handler, the nodes that have
it, their label and taint, the RuntimeClass the platform creates). Every fact
is cited in the profile file and in docs/development.md ("Platform profiles").

Not modelled: the API server's version string (`v1.35.6-eks-...`, `-gke.`) is
the binary's build, the same on every profile; node names stay the sim's own
(nothing may read a provider from a node name).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from simcluster.cluster.paths import SIM_ROOT

DEFAULT = "kubeadm"
PLATFORMS_DIR = SIM_ROOT / "platforms"
Driver = Literal["pre-installed", "operator"]
_KEYS = {
    "name",
    "description",
    "region",
    "zones",
    "groupLabels",
    "groups",
    "instanceTypes",
    "providerID",
    "labels",
    "gpuLabels",
    "gpuTaints",
    "driver",
    "sandbox",
    "poolList",
}
_SANDBOX_KEYS = {"handler", "groups", "labels", "taints", "runtimeClass"}


class PlatformError(ValueError):
    """An unknown platform name or a malformed profile file."""


@dataclass(frozen=True)
class Sandbox:
    """The sandboxed runtime a platform configures on some of its nodes."""

    handler: str  # the containerd runtime handler (gVisor: runsc; GKE Sandbox: gvisor)
    groups: tuple[str, ...] | None  # the layout's node groups that have it (None: every node)
    labels: dict[str, str] = field(default_factory=dict)  # on those nodes
    taints: tuple[dict[str, str], ...] = ()  # on those nodes
    runtime_class: str | None = None  # the RuntimeClass the platform itself creates

    def on(self, group: str) -> bool:
        """True when nodes of the layout group `group` have the handler."""
        return self.groups is None or group in self.groups

    def runtime_class_manifest(self) -> dict[str, Any] | None:
        """The RuntimeClass the platform creates, scheduling onto its sandbox nodes."""
        if not self.runtime_class:
            return None
        rc: dict[str, Any] = {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": self.runtime_class},
            "handler": self.handler,
        }
        if self.labels or self.taints:
            rc["scheduling"] = {
                "nodeSelector": dict(self.labels),
                "tolerations": [
                    {
                        "key": t["key"],
                        "operator": "Equal",
                        "value": t.get("value", ""),
                        "effect": t["effect"],
                    }
                    for t in self.taints
                ],
            }
        return rc


@dataclass(frozen=True)
class Platform:
    """One provider's conventions for the sim's node layout."""

    name: str
    description: str
    region: str | None
    zones: tuple[str, ...]  # the layout's first, second... zone
    group_labels: tuple[str, ...]  # labels naming the node's group (pool), valued by `groups`
    groups: dict[str, str]  # layout group -> the provider's node group / pool name
    instance_types: dict[str, str]  # node profile -> instance type / machine type / VM size
    provider_id: str  # format with {zone}, {node}, {group}, {index}; "" when none is set
    labels: dict[str, str]  # on every node
    gpu_labels: dict[str, str]  # on GPU nodes
    gpu_taints: tuple[dict[str, str], ...]
    driver: Driver
    sandbox: Sandbox | None
    pool_list: str | None = None  # the provider CLI whose pool listing `platform pools` prints

    def zone(self, index: int) -> str | None:
        """The provider's name for the layout's zone number `index` (None: no zone label)."""
        return self.zones[index % len(self.zones)] if self.zones else None

    def group(self, layout_group: str) -> str:
        """The provider's name for a layout node group."""
        return self.groups.get(layout_group, layout_group)

    def instance_type(self, node_profile: str, fallback: str) -> str:
        """The instance type the provider calls a node profile's machine."""
        return self.instance_types.get(node_profile, fallback)


def names() -> list[str]:
    """Every platform profile's name, sorted."""
    return sorted(p.stem for p in PLATFORMS_DIR.glob("*.yaml"))


def load(name: str) -> Platform:
    """The profile `name` (PlatformError naming a close match when there is none)."""
    path = PLATFORMS_DIR / f"{name}.yaml"
    if not path.is_file():
        close = difflib.get_close_matches(name, names(), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise PlatformError(f"unknown platform {name!r} (known: {', '.join(names())}){hint}")
    return parse(yaml.safe_load(path.read_text()), source=str(path.relative_to(SIM_ROOT)))


def _strs(doc: dict[str, Any], key: str, source: str) -> dict[str, str]:
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise PlatformError(f"{source}: {key}: expected a mapping")
    return {str(k): str(v) for k, v in value.items()}


def _taints(raw: Any, where: str) -> tuple[dict[str, str], ...]:
    out = []
    for t in raw or []:
        if not isinstance(t, dict) or not t.get("key") or not t.get("effect"):
            raise PlatformError(f"{where}: each taint needs key and effect")
        out.append({k: str(v) for k, v in t.items()})
    return tuple(out)


def parse(doc: Any, source: str) -> Platform:
    """A profile from its YAML document; unknown keys are refused."""
    if not isinstance(doc, dict):
        raise PlatformError(f"{source}: expected a mapping")
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise PlatformError(f"{source}: unknown keys {', '.join(unknown)}")
    driver = doc.get("driver")
    if driver not in ("pre-installed", "operator"):
        raise PlatformError(f"{source}: driver: expected pre-installed or operator")
    sandbox = None
    box = doc.get("sandbox")
    if box is not None:
        bad = sorted(set(box) - _SANDBOX_KEYS)
        if bad or not box.get("handler"):
            raise PlatformError(f"{source}: sandbox: needs handler; unknown keys {bad}")
        groups = box.get("groups")
        sandbox = Sandbox(
            handler=str(box["handler"]),
            groups=None if groups is None else tuple(str(g) for g in groups),
            labels=_strs(box, "labels", f"{source}: sandbox"),
            taints=_taints(box.get("taints"), f"{source}: sandbox.taints"),
            runtime_class=box.get("runtimeClass"),
        )
    return Platform(
        name=str(doc.get("name") or ""),
        description=str(doc.get("description") or ""),
        region=doc.get("region"),
        zones=tuple(str(z) for z in doc.get("zones") or ()),
        group_labels=tuple(str(g) for g in doc.get("groupLabels") or ()),
        groups=_strs(doc, "groups", source),
        instance_types=_strs(doc, "instanceTypes", source),
        provider_id=str(doc.get("providerID") or ""),
        labels=_strs(doc, "labels", source),
        gpu_labels=_strs(doc, "gpuLabels", source),
        gpu_taints=_taints(doc.get("gpuTaints"), f"{source}: gpuTaints"),
        driver=driver,
        sandbox=sandbox,
        pool_list=_pool_list(doc.get("poolList"), source),
    )


POOL_LISTS = {"az": "az aks nodepool list -o json"}


def _pool_list(raw: Any, source: str) -> str | None:
    if raw is not None and raw not in POOL_LISTS:
        raise PlatformError(f"{source}: poolList: expected one of {', '.join(POOL_LISTS)}")
    return None if raw is None else str(raw)


def pools(platform: Platform) -> list[dict[str, Any]]:
    """The node pools as the provider's CLI lists them (`az aks nodepool list -o json`).

    One pool per layout group, with the fields of an AKS AgentPool the profile gives: its
    name, VM size, node count, mode (the system pool `System`, the others `User`), OS,
    taints; `gpuProfile` unset, as for a pool created without `--gpu-driver` (AKS then
    installs the driver: "Use GPUs for compute-intensive workloads"; aicr reads it as
    `Install`). Empty for a profile with no pool listing.
    """
    from simcluster.nodes.layout import LAYOUT

    if platform.pool_list != "az":
        return []
    out: dict[str, dict[str, Any]] = {}
    for n in LAYOUT:
        pool = out.setdefault(n.group, {
            "name": platform.group(n.group),
            "vmSize": platform.instance_type(n.profile, n.profile),
            "count": 0,
            "mode": "System" if n.group == "system" else "User",
            "osType": "Linux",
            "nodeTaints": [f"{t['key']}={t.get('value', '')}:{t['effect']}"
                           for t in platform.gpu_taints] if n.group == "gpu" else None,
            "gpuProfile": None,
        })  # fmt: skip
        pool["count"] += 1
    return list(out.values())
