"""GPU allocation modes, switchable per scenario as on real clusters.

- device-plugin: GPU nodes advertise `nvidia.com/gpu`; the DRA DeviceClass
  `gpu.nvidia.com` exists but no ResourceSlice publishes whole GPUs.
- dra: ResourceSlices (resource.k8s.io/v1) publish each GPU node's GPUs and the
  nodes advertise no `nvidia.com/gpu`; the real scheduler allocates claims.
- dual: both at once, a deliberately broken state the validator must catch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from kubernetes import client

from simcluster.cluster import kube
from simcluster.gpu.smi import gpu_uuid
from simcluster.nodes.layout import GPU_RESOURCE, load_profile

Mode = Literal["device-plugin", "dra", "dual"]
MODES: tuple[Mode, ...] = ("device-plugin", "dra", "dual")
DRIVER = "gpu.nvidia.com"
SLICE_LABEL = "sim.aicr.dev/gpu-slice"
MODE_FILE = "gpu-mode"  # in the run folder: the mode last switched to

DEVICE_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": DRIVER},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": f"device.driver == '{DRIVER}' && "
                    f"device.attributes['{DRIVER}'].type == 'gpu'"
                }
            }
        ]
    },
}


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


def set_mode(api: client.ApiClient, mode: Mode) -> None:
    """Switch every GPU node to `mode` (idempotent)."""
    if mode not in MODES:
        raise ValueError(f"unknown GPU mode {mode!r}; expected one of {MODES}")
    dyn = kube.dynamic(api)
    dc = dyn.resources.get(api_version="resource.k8s.io/v1", kind="DeviceClass")
    dc.server_side_apply(body=DEVICE_CLASS, field_manager="aicr-sim", force_conflicts=True)
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
