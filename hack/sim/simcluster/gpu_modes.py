"""GPU allocation modes, switchable per scenario as on real clusters.

- device-plugin: GPU nodes advertise `nvidia.com/gpu`; the DRA DeviceClass
  `gpu.nvidia.com` exists but no ResourceSlice publishes whole GPUs.
- dra: ResourceSlices (resource.k8s.io/v1) publish each GPU node's GPUs and the
  nodes advertise no `nvidia.com/gpu`; the real scheduler allocates claims.
- dual: both at once, a deliberately broken state the validator must catch.
"""

from __future__ import annotations

from typing import Any, Literal

from kubernetes import client

from simcluster import kube
from simcluster.gpu.smi import gpu_uuid
from simcluster.nodes import GPU_NODES, GPU_RESOURCE, gpu_count, load_profile

Mode = Literal["device-plugin", "dra", "dual"]
MODES: tuple[Mode, ...] = ("device-plugin", "dra", "dual")
DRIVER = "gpu.nvidia.com"
SLICE_LABEL = "sim.aicr.dev/gpu-slice"

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


def resource_slice(node: str) -> dict[str, Any]:
    """One ResourceSlice publishing every GPU of `node` with its attributes."""
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
        for i in range(gpu_count(node))
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


def set_mode(api: client.ApiClient, mode: Mode) -> None:
    """Switch every GPU node to `mode` (idempotent)."""
    if mode not in MODES:
        raise ValueError(f"unknown GPU mode {mode!r}; expected one of {MODES}")
    dyn = kube.dynamic(api)
    dc = dyn.resources.get(api_version="resource.k8s.io/v1", kind="DeviceClass")
    dc.server_side_apply(body=DEVICE_CLASS, field_manager="aicr-sim", force_conflicts=True)
    slices = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceSlice")
    for node in GPU_NODES:
        if mode in ("dra", "dual"):
            slices.server_side_apply(
                body=resource_slice(node), field_manager="aicr-sim", force_conflicts=True
            )
        else:
            kube.ignore_not_found(lambda n=node: slices.delete(name=f"{n}-{DRIVER}"))
        _set_node_gpus(api, node, None if mode == "dra" else gpu_count(node))
