"""GPU allocation modes, switchable per scenario as on real clusters.

- device-plugin: GPU nodes advertise `nvidia.com/gpu`; the DRA driver is
  installed with whole GPUs off (`resources.gpus.enabled: false`, as the
  recipes' overrides set it beside the device plugin), so no ResourceSlice
  publishes whole GPUs and the chart makes no GPU DeviceClass.
- dra: ResourceSlices (resource.k8s.io/v1) publish each GPU node's GPUs and the
  nodes advertise no `nvidia.com/gpu` (the recipes' `resources.gpus.enabled:
  true`); the real scheduler allocates claims.
- dual: both at once, a deliberately broken state the validator must catch.

The DeviceClasses are the ones nvidia-dra-driver-gpu 25.12.0 renders
(`templates/deviceclass-{gpu,mig,vfio-gpu,compute-domain-daemon,
compute-domain-default-channel}.yaml`) from the DRA driver's values: the file
the demo's recipe references (`recipes/components/nvidia-dra-driver-gpu/values.yaml`)
over the chart's defaults, with `resources.gpus.enabled` as the mode says.
ComputeDomains stay as the values give them (the chart's default: on), so their
two classes exist in every mode; no ResourceSlice publishes ComputeDomain
channels (the sim models no IMEX), so a claim for one stays unallocated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from kubernetes import client

from simcluster.cluster import kube
from simcluster.components.base import RECIPE_COMPONENTS, dig, merge_values
from simcluster.gpu.smi import gpu_uuid
from simcluster.nodes.layout import GPU_RESOURCE, load_profile

Mode = Literal["device-plugin", "dra", "dual"]
MODES: tuple[Mode, ...] = ("device-plugin", "dra", "dual")
DRIVER = "gpu.nvidia.com"
SLICE_LABEL = "sim.aicr.dev/gpu-slice"
MODE_FILE = "gpu-mode"  # in the run folder: the mode last switched to

DRA_API = "resource.k8s.io/v1"  # the newest the sim's API server serves
DRA_CHART = "nvidia-dra-driver-gpu"
# The DRA driver values the demo's recipe (recipes/kind-inference.yaml) references.
DRA_VALUES = RECIPE_COMPONENTS / DRA_CHART / "values.yaml"
# nvidia-dra-driver-gpu 25.12.0 values.yaml: what the DeviceClass templates read.
CHART_DEFAULTS: dict[str, Any] = {
    "resourceApiVersion": "",
    "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}},
}
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
# (template, DeviceClass, its driver, the CEL type it selects, extra CEL, values switch)
_CLASSES = (
    ("deviceclass-gpu.yaml", DRIVER, DRIVER, "gpu", "", "gpus"),
    ("deviceclass-mig.yaml", "mig.nvidia.com", DRIVER, "mig", "", "gpus"),
    ("deviceclass-vfio-gpu.yaml", "vfio.gpu.nvidia.com", DRIVER, "vfio", "", "gpus"),
    ("deviceclass-compute-domain-daemon.yaml", "compute-domain-daemon.nvidia.com",
     COMPUTE_DOMAIN_DRIVER, "daemon", "", "computeDomains"),
    ("deviceclass-compute-domain-default-channel.yaml",
     "compute-domain-default-channel.nvidia.com", COMPUTE_DOMAIN_DRIVER, "channel",
     f" && device.attributes['{COMPUTE_DOMAIN_DRIVER}'].id == 0", "computeDomains"),
)  # fmt: skip
CLASS_NAMES = tuple(c[1] for c in _CLASSES)


def dra_values(mode: Mode, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The DRA driver's values for ``mode``: the chart's defaults, the values file (or
    ``given``), and ``resources.gpus.enabled`` as the recipes' overrides set it."""
    if given is None:
        import yaml

        loaded = yaml.safe_load(DRA_VALUES.read_text(encoding="utf-8"))
        given = loaded if isinstance(loaded, dict) else {}
    gpus = {"resources": {"gpus": {"enabled": mode != "device-plugin"}}}
    return merge_values(merge_values(CHART_DEFAULTS, given), gpus)


def device_classes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The DeviceClasses the chart renders from ``values`` (templates/deviceclass-*.yaml).

    The API version is ``resourceApiVersion``, else the newest served (the sim's: v1);
    at v1 the GPU class names ``extendedResourceName: nvidia.com/gpu`` (an alpha field in
    Kubernetes 1.34-1.35, dropped by an API server without the DRAExtendedResource gate).
    """
    version = str(values.get("resourceApiVersion") or DRA_API)
    out: list[dict[str, Any]] = []
    for _template, name, driver, kind, extra, switch in _CLASSES:
        if not dig(values, "resources", switch, "enabled", default=False):
            continue
        expression = (
            f"device.driver == '{driver}' && device.attributes['{driver}'].type == '{kind}'{extra}"
        )
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
        if name == DRIVER and version == DRA_API:
            spec["extendedResourceName"] = GPU_RESOURCE
        out.append(
            {"apiVersion": version, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
        )
    return out


def resource_slice(node: str, count: int) -> dict[str, Any]:
    """One ResourceSlice publishing the `count` GPUs of `node` with their attributes."""
    gpu = load_profile("p5-h100")["gpu"]
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {
                "type": {"string": "gpu"},
                "index": {"int": i},
                "uuid": {"string": gpu_uuid(node, i)},  # what nvidia-smi lists for it
                "productName": {"string": str(gpu["product"])},
                "brand": {"string": "Nvidia"},
                "architecture": {"string": "Hopper"},
                "cudaComputeCapability": {"version": "9.0.0"},
                "driverVersion": {"version": str(gpu["driver"])},
            },
            "capacity": {"memory": {"value": f"{int(gpu['memory'])}Mi"}},
        }
        for i in range(count)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}", "labels": {SLICE_LABEL: "true"}},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _set_node_gpus(api: client.ApiClient, node: str, count: int | None) -> None:
    core = client.CoreV1Api(api)

    def update() -> None:
        obj = kube.to_dict(api, core.read_node_status(node))
        for field in ("capacity", "allocatable"):
            res = obj["status"].setdefault(field, {})
            if count is None:
                res.pop(GPU_RESOURCE, None)
            else:
                res[GPU_RESOURCE] = str(count)
        core.replace_node_status(node, obj)

    kube.retry_conflicts(update)


def gpu_nodes(api: client.ApiClient) -> list[tuple[str, int]]:
    """(name, GPU count) of every GPU node, static or provisioned, from its labels."""
    items = client.CoreV1Api(api).list_node(label_selector="nvidia.com/gpu.present=true").items
    return sorted(
        (n.metadata.name, int(n.metadata.labels.get("nvidia.com/gpu.count", "0"))) for n in items
    )


def apply_mode(api: client.ApiClient, node: str, count: int, mode: Mode) -> None:
    """Advertise the `count` GPUs of `node` as `mode` says (idempotent)."""
    slices = kube.dynamic(api).resources.get(api_version="resource.k8s.io/v1", kind="ResourceSlice")
    if mode in ("dra", "dual"):
        slices.server_side_apply(
            body=resource_slice(node, count), field_manager="aicr-sim", force_conflicts=True
        )
    else:
        kube.ignore_not_found(lambda: slices.delete(name=f"{node}-{DRIVER}"))
    _set_node_gpus(api, node, None if mode == "dra" else count)


def set_mode(api: client.ApiClient, mode: Mode, given: Mapping[str, Any] | None = None) -> None:
    """Switch every GPU node to `mode` (idempotent), the DeviceClasses rendered from the DRA
    driver's values ``given`` (a recipe's; else the demo recipe's file)."""
    if mode not in MODES:
        raise ValueError(f"unknown GPU mode {mode!r}; expected one of {MODES}")
    dyn = kube.dynamic(api)
    dc = dyn.resources.get(api_version=DRA_API, kind="DeviceClass")
    wanted = device_classes(dra_values(mode, given))
    for body in wanted:
        dc.server_side_apply(body=body, field_manager="aicr-sim", force_conflicts=True)
    for name in set(CLASS_NAMES) - {b["metadata"]["name"] for b in wanted}:
        kube.ignore_not_found(lambda name=name: dc.delete(name=name))
    for node, count in gpu_nodes(api):
        apply_mode(api, node, count, mode)


def record_mode(sim_dir: Path, mode: Mode) -> None:
    """Remember `mode` in the run folder (nodes that join later follow it)."""
    (sim_dir / MODE_FILE).write_text(mode + "\n")


def recorded_mode(sim_dir: Path) -> Mode:
    """The mode last switched to on this run (device-plugin before any switch)."""
    try:
        text = (sim_dir / MODE_FILE).read_text().strip()
    except OSError:
        return "device-plugin"
    return next((m for m in MODES if m == text), "device-plugin")
