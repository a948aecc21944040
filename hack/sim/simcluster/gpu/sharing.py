"""GPU sharing on the simulated GPU nodes: MIG partitions, time-slicing and MPS replicas.

What is modelled (and nothing more), driven by the GPU Operator's values as its
ClusterPolicy (`cluster-policy`) holds them, and by documented behaviour of the
components it deploys:

- The device plugin's sharing config: `spec.devicePlugin.config` (the chart's
  `devicePlugin.config`): `name`, a ConfigMap in the ClusterPolicy's operator
  namespace (`gpu-operator`), and `default`, the key every node uses unless its
  `nvidia.com/device-plugin.config` label names another. Each key is a
  device-plugin config file: `version: v1`, `sharing.timeSlicing` or
  `sharing.mps`, each with `renameByDefault` and `resources: [{name:
  nvidia.com/gpu, replicas: N}]` (NVIDIA/k8s-device-plugin README, "Shared
  Access to GPUs"; GPU Operator docs, "Time-Slicing GPUs in Kubernetes"). Only
  `nvidia.com/gpu` is replicated here (MPS supports nothing else; time-slicing
  of mixed-strategy MIG resources is not modelled).
- MIG: `spec.mig.strategy` (`single` or `mixed`, the chart's `mig.strategy`) and
  the MIG manager's layout: the node's `nvidia.com/mig.config` label, else
  `spec.migManager.config.default`, naming an entry of the GPU Operator's default
  mig-parted config (`assets/state-mig-manager/0400_configmap.yaml`, NVIDIA/gpu-operator
  commit a22dbf67): `all-<profile>` (every GPU split into that profile, as many as
  fit) or `all-balanced`. Profiles per GPU model are `MIG_PROFILES`: that config's
  instance counts and the NVIDIA MIG User Guide's "Supported MIG Profiles" tables
  (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html)
  for their fraction of memory (in eighths; memory here is that nominal fraction).
- What the device plugin advertises and GPU feature discovery labels, as
  k8s-device-plugin's `internal/lm/resource.go` and `mig-strategy.go` compute them
  (commit 1b826acc): without sharing `nvidia.com/gpu.replicas=1` and
  `nvidia.com/gpu.sharing-strategy=none`; with replicas, `nvidia.com/gpu` times
  the replicas (`nvidia.com/gpu.shared` instead under `renameByDefault`), the
  replicas and strategy labels, and `nvidia.com/gpu.product` suffixed `-SHARED`
  unless renamed; MIG `single`: `nvidia.com/gpu` counts MIG devices, the product
  reads `<product>-MIG-<profile>`, count and memory are the MIG device's; MIG
  `mixed`: one `nvidia.com/mig-<profile>` resource per profile with its own
  `.count`, `.memory`, `.product`, `.replicas` and `.sharing-strategy` labels,
  and no whole `nvidia.com/gpu`. The MIG manager's `nvidia.com/mig.config` and
  `nvidia.com/mig.config.state=success`, and `nvidia.com/mig.capable`.
- What each unit of a resource is (`units`): a MIG device of one GPU, or a
  replica of one whole GPU. The device plugin hands out free units, replicas
  spread over the GPUs least in use (the plugin's distributed allocation for
  shared resources); the container sees the GPUs (and MIG devices) behind them.

Faults of a node (simcluster.faults): `mig-not-applied` (the labels and
resources say MIG, but the GPUs were never partitioned: each MIG unit is a whole
GPU), `replicas-not-shared` (replicas are advertised, but the plugin hands a GPU
to one pod only: a later pod gets another GPU, or none when all are held).

`reconcile` applies it all to every GPU node through the API server; it runs
when a named scenario is loaded (and after `sim apply`), and `clear` undoes it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from simcluster.cluster import kube

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
OPERATOR_NAMESPACE = "gpu-operator"
POLICY = "cluster-policy"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
STATE_ANNOTATION = "sim.aicr.dev/gpu-sharing"  # the node's resolved sharing, for the runtime
MIG_NOT_APPLIED = "mig-not-applied"
REPLICAS_NOT_SHARED = "replicas-not-shared"

# GPU model (a part of GFD's product label) -> MIG profiles: (name, instances per GPU,
# memory in eighths of the GPU's), and the `all-balanced` layout, per the module docstring.
_H100_80 = (
    ("1g.10gb", 7, 1),
    ("1g.20gb", 4, 2),
    ("2g.20gb", 3, 2),
    ("3g.40gb", 2, 4),
    ("4g.40gb", 1, 4),
    ("7g.80gb", 1, 8),
)
MIG_PROFILES: dict[str, tuple[tuple[str, int, int], ...]] = {
    "A100-SXM4-40GB": (
        ("1g.5gb", 7, 1),
        ("1g.10gb", 4, 2),
        ("2g.10gb", 3, 2),
        ("3g.20gb", 2, 4),
        ("4g.20gb", 1, 4),
        ("7g.40gb", 1, 8),
    ),
    "A100-SXM4-80GB": _H100_80,
    "H100-80GB": _H100_80,
    "H100-SXM5-80GB": _H100_80,
    "H200": (
        ("1g.18gb", 7, 1),
        ("1g.35gb", 4, 2),
        ("2g.35gb", 3, 2),
        ("3g.71gb", 2, 4),
        ("4g.71gb", 1, 4),
        ("7g.141gb", 1, 8),
    ),
    "B200": (
        ("1g.23gb", 7, 1),
        ("1g.45gb", 4, 2),
        ("2g.45gb", 3, 2),
        ("3g.90gb", 2, 4),
        ("4g.90gb", 1, 4),
        ("7g.180gb", 1, 8),
    ),
}
BALANCED: dict[str, dict[str, int]] = {
    "A100-SXM4-40GB": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
    "A100-SXM4-80GB": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "H100-80GB": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "H100-SXM5-80GB": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "H200": {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1},
    "B200": {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1},
}


class SharingError(ValueError):
    """A sharing config the real components would refuse (named, with the field)."""


@dataclass(frozen=True)
class Sharing:
    """One node's resolved sharing: replicas of whole GPUs, or a MIG layout."""

    strategy: str = "none"  # none | time-slicing | mps
    replicas: int = 1
    rename: bool = False
    mig_strategy: str = "none"  # none | single | mixed
    mig_config: str = ""  # the mig-parted layout applied, e.g. all-1g.10gb

    @property
    def mig(self) -> bool:
        """MIG devices are what the node advertises."""
        return self.mig_strategy != "none" and bool(self.mig_config)


@dataclass(frozen=True)
class Device:
    """What one unit of an advertised resource is: a whole GPU, or a MIG device on it."""

    gpu: int
    mig: int | None = None  # the MIG device's index among its GPU's
    profile: str = ""


def gpu_model(product: str) -> str | None:
    """The MIG_PROFILES key a GFD product label (`NVIDIA-H100-80GB-HBM3`) names, if any."""
    return next((m for m in sorted(MIG_PROFILES, key=len, reverse=True) if m in product), None)


def layout(product: str, config: str) -> list[tuple[str, int]]:
    """(profile, instances) on each GPU for a mig-parted layout name; SharingError if none."""
    model = gpu_model(product)
    if model is None:
        raise SharingError(
            f"{product} has no MIG profiles (MIG-capable: {', '.join(MIG_PROFILES)})"
        )
    if config == "all-balanced":
        return list(BALANCED[model].items())
    counts = {name: n for name, n, _ in MIG_PROFILES[model]}
    profile = config.removeprefix("all-")
    if not config.startswith("all-") or profile not in counts:
        known = ", ".join(["all-balanced", *(f"all-{p}" for p in counts)])
        raise SharingError(f"mig config {config!r} is not one for {model} ({known})")
    return [(profile, counts[profile])]


# What GFD labels on a real H100 80GB HBM3 under mixed (NVIDIA/cloud-native-docs
# gpu-operator/manifests/output/mig-mixed-node-labels.json, commit 52dcb7b8, Apache-2.0).
MEASURED_MIB = {
    ("H100-80GB", "1g.10gb"): 9984,
    ("H100-80GB", "2g.20gb"): 20096,
    ("H100-80GB", "3g.40gb"): 40320,
}


def memory_mib(product: str, gpu_memory: int, profile: str) -> int:
    """A MIG profile's memory: as measured (MEASURED_MIB), else its fraction of the GPU's."""
    model = gpu_model(product) or ""
    if (model, profile) in MEASURED_MIB:
        return MEASURED_MIB[(model, profile)]
    eighths = next((e for name, _, e in MIG_PROFILES.get(model, ()) if name == profile), 8)
    return gpu_memory * eighths // 8


def units(
    sharing: Sharing, product: str, count: int, faults: tuple[str, ...] = ()
) -> dict[str, list[Device]]:
    """Resource name -> its units on a node with `count` GPUs of `product`.

    A unit's position is its device-plugin device; replicas of a GPU are consecutive
    rounds over the GPUs. With `mig-not-applied` each MIG unit is a whole GPU.
    """
    if sharing.mig:
        per_gpu = [p for p, n in layout(product, sharing.mig_config) for _ in range(n)]
        out: dict[str, list[Device]] = {}
        for g in range(count):
            for j, p in enumerate(per_gpu):
                name = GPU if sharing.mig_strategy == "single" else MIG_PREFIX + p
                out.setdefault(name, []).append(Device(g, j, p))
        if MIG_NOT_APPLIED in faults:  # never partitioned: each unit lands on a whole GPU
            out = {r: [Device(i % count) for i in range(len(d))] for r, d in out.items()}
        return out
    name = SHARED if sharing.rename and sharing.replicas > 1 else GPU
    return {name: [Device(g) for _ in range(sharing.replicas) for g in range(count)]}


def advertised(
    sharing: Sharing, labels: dict[str, str], count: int, memory: int
) -> tuple[dict[str, str | None], dict[str, str]]:
    """(labels to set, None to remove; capacity) of a GPU node with this sharing.

    `labels` are the node's own GFD labels without sharing (product, memory).
    """
    product = labels.get("nvidia.com/gpu.product", "")
    out: dict[str, str | None] = {
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if gpu_model(product) else "false",
        "nvidia.com/mps.capable": "false",
    }
    capacity: dict[str, str] = {}
    if sharing.mig:
        if sharing.mig_strategy == "mixed":  # GFD's whole-GPU labels of MIG-enabled GPUs
            out["nvidia.com/gpu.replicas"] = "0"
        out["nvidia.com/mig.strategy"] = sharing.mig_strategy
        out[MIG_CONFIG_LABEL] = sharing.mig_config
        out["nvidia.com/mig.config.state"] = "success"
        for resource, devs in units(sharing, product, count).items():
            profile = devs[0].profile
            # under single the MIG devices are nvidia.com/gpu and relabel it; under mixed each
            # profile's resource has its own labels
            per = {
                "product": f"{product}-MIG-{profile}",
                "count": str(len(devs)),
                "memory": str(memory_mib(product, memory, profile)),
            }
            if resource != GPU:
                per.update({"replicas": "1", "sharing-strategy": "none"})
            out.update({f"{resource}.{k}": v for k, v in per.items()})
            capacity[resource] = str(len(devs))
        return out, capacity
    if sharing.replicas > 1:
        out["nvidia.com/gpu.replicas"] = str(sharing.replicas)
        out["nvidia.com/gpu.sharing-strategy"] = sharing.strategy
        if not sharing.rename:
            out["nvidia.com/gpu.product"] = f"{product}-SHARED"
        if sharing.strategy == "mps":
            out["nvidia.com/mps.capable"] = "true"
    for resource, devs in units(sharing, product, count).items():
        capacity[resource] = str(len(devs))
    return out, capacity


def plugin_config(text: str, where: str) -> tuple[str, int, bool]:
    """(strategy, replicas of nvidia.com/gpu, renameByDefault) of a device-plugin config file."""
    doc = yaml.safe_load(text) or {}
    if not isinstance(doc, dict) or doc.get("version") != "v1":
        raise SharingError(f"{where}: not a device-plugin config (version: v1)")
    sharing = doc.get("sharing") or {}
    found = [
        (k, s)
        for k, s in (("time-slicing", sharing.get("timeSlicing")), ("mps", sharing.get("mps")))
        if s
    ]
    if len(found) > 1:
        raise SharingError(f"{where}: sharing.timeSlicing and sharing.mps are mutually exclusive")
    if not found:
        return "none", 1, False
    strategy, spec = found[0]
    replicas = 1
    for r in spec.get("resources") or []:
        if r.get("name") != GPU:
            raise SharingError(f"{where}: only {GPU} is replicated here, not {r.get('name')}")
        replicas = int(r.get("replicas") or 1)
    return strategy, replicas, bool(spec.get("renameByDefault"))


def resolve(
    policy: dict[str, Any], configs: dict[str, str], node_labels: dict[str, str]
) -> Sharing:
    """A node's sharing from the ClusterPolicy spec, the config ConfigMap's data and its labels."""
    spec = policy.get("spec") or {}
    mig_strategy = str((spec.get("mig") or {}).get("strategy") or "none")
    mig_default = str((((spec.get("migManager") or {}).get("config") or {}).get("default")) or "")
    mig_config = node_labels.get(MIG_CONFIG_LABEL) or mig_default
    if mig_config == "all-disabled":
        mig_config = ""
    if mig_strategy != "none" and mig_config:
        return Sharing(mig_strategy=mig_strategy, mig_config=mig_config)
    chosen = (spec.get("devicePlugin") or {}).get("config") or {}
    key = node_labels.get(CONFIG_LABEL) or chosen.get("default")
    if not chosen.get("name") or not key:
        return Sharing()
    if key not in configs:
        raise SharingError(f"ConfigMap {chosen['name']} has no key {key!r}")
    strategy, replicas, rename = plugin_config(configs[key], f"{chosen['name']}/{key}")
    return (
        Sharing(strategy=strategy, replicas=replicas, rename=rename) if replicas > 1 else Sharing()
    )


def of_node(node: dict[str, Any]) -> Sharing:
    """The sharing `reconcile` recorded on a Node dict (none when it recorded nothing)."""
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(STATE_ANNOTATION)
    return Sharing(**json.loads(raw)) if raw else Sharing()


def node_units(node: dict[str, Any], faults: tuple[str, ...]) -> dict[str, list[Device]]:
    """The units a Node dict's device plugin hands out (see `units`)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    count = int(labels.get("nvidia.com/gpu.count", "0") or 0)
    sharing = of_node(node)
    if sharing.mig:  # GFD's count is then the MIG devices'; the GPUs are the profile's
        count = int(((node.get("metadata") or {}).get("annotations") or {}).get(GPUS_ANNOTATION, 0))
    return units(sharing, base_product(labels), count, faults)


GPUS_ANNOTATION = "sim.aicr.dev/gpu-count"  # physical GPUs while GFD's count says MIG devices
_SHARING_KEYS = ("nvidia.com/mig.strategy", MIG_CONFIG_LABEL, "nvidia.com/mig.config.state")
_BASE_KEYS = ("nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory")


def base_product(labels: dict[str, str]) -> str:
    """GFD's product label without what MIG (`-MIG-<profile>`) or sharing (`-SHARED`) add."""
    return labels.get("nvidia.com/gpu.product", "").split("-MIG-")[0].removesuffix("-SHARED")


def _read_policy(api: client.ApiClient) -> tuple[dict[str, Any], dict[str, str]]:
    dyn = kube.dynamic(api)
    try:
        res = dyn.resources.get(api_version="nvidia.com/v1", kind="ClusterPolicy")
        policy = res.get(name=POLICY).to_dict()
    except Exception:  # no GPU Operator (CRD or policy): nothing is shared
        return {}, {}
    name = (((policy.get("spec") or {}).get("devicePlugin") or {}).get("config") or {}).get("name")
    if not name:
        return policy, {}
    try:
        cm = client.CoreV1Api(api).read_namespaced_config_map(name, OPERATOR_NAMESPACE)
    except ApiException as e:
        raise SharingError(
            f"ConfigMap {OPERATOR_NAMESPACE}/{name} not readable: {e.reason}"
        ) from None
    return policy, dict(cm.data or {})


def reconcile(api: client.ApiClient, base: dict[str, dict[str, str]], plugin: bool) -> None:
    """Advertise every GPU node's sharing as the ClusterPolicy and its config say.

    `base`: node name -> its GFD labels without sharing (from its profile); `plugin`:
    the GPU mode has the device plugin advertising (not `dra`).
    """
    policy, configs = _read_policy(api)
    core = client.CoreV1Api(api)
    for name, labels in base.items():
        obj = kube.to_dict(api, core.read_node(name))
        current = dict(obj["metadata"].get("labels") or {})
        if current.get(MIG_CONFIG_LABEL) == of_node(obj).mig_config:
            current.pop(MIG_CONFIG_LABEL, None)  # the layout applied last time, not a node's own
        sharing = resolve(policy, configs, current) if policy else Sharing()
        _apply(api, name, sharing, labels, plugin)


def clear(api: client.ApiClient, base: dict[str, dict[str, str]], plugin: bool) -> None:
    """Advertise every GPU node's whole GPUs again, unshared."""
    for name, labels in base.items():
        _apply(api, name, Sharing(), labels, plugin)


def _apply(
    api: client.ApiClient, node: str, sharing: Sharing, base: dict[str, str], plugin: bool
) -> None:
    count = int(base.get("nvidia.com/gpu.count", "0"))
    labels, capacity = advertised(sharing, base, count, int(base.get("nvidia.com/gpu.memory", "0")))
    core = client.CoreV1Api(api)
    state = json.dumps(asdict(sharing)) if sharing != Sharing() else None

    def update() -> None:
        obj = kube.to_dict(api, core.read_node(node))
        current = obj["metadata"].get("labels") or {}
        drop = {k: None for k in current if k.startswith(MIG_PREFIX) or k in _SHARING_KEYS}
        keep = {k: base[k] for k in _BASE_KEYS if k in base}
        body = {
            "metadata": {
                "resourceVersion": obj["metadata"]["resourceVersion"],
                "labels": {**drop, **keep, **labels},
                "annotations": {
                    STATE_ANNOTATION: state,
                    GPUS_ANNOTATION: str(count) if sharing.mig else None,
                },
            }
        }
        core.patch_node(node, body)

    kube.retry_conflicts(update)

    def update_status() -> None:
        obj = kube.to_dict(api, core.read_node_status(node))
        for field in ("capacity", "allocatable"):
            res = obj["status"].setdefault(field, {})
            for k in [k for k in res if k in (GPU, SHARED) or k.startswith(MIG_PREFIX)]:
                res.pop(k)
            if plugin:  # the device plugin advertises; in DRA mode it does not run
                res.update(capacity)
                if sharing.mig and sharing.mig_strategy == "mixed":
                    res[GPU] = "0"  # every GPU is MIG-enabled: none is advertised whole
        core.replace_node_status(node, obj)

    kube.retry_conflicts(update_status)
