"""The one GPU count: per allocation mode for checks, per node for the runner."""

from __future__ import annotations

from typing import Any

import pytest

from aicr.kube.gpu_inventory import free_gpu_nodes
from aicr.kube.placement import Placement

Obj = dict[str, Any]


def node(name: str, gpus: int) -> Obj:
    return {
        "metadata": {"name": name, "labels": {}},
        "status": {
            "allocatable": {"nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(node_name: str, gpus: int, phase: str = "Running") -> Obj:
    limits = {"nvidia.com/gpu": str(gpus)}
    return {
        "spec": {"nodeName": node_name, "containers": [{"resources": {"limits": limits}}]},
        "status": {"phase": phase},
    }


def slice_of(node_name: str, devices: int) -> Obj:
    whole = {"attributes": {"type": {"string": "gpu"}}}
    return {
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": node_name},
            "devices": [{"name": f"gpu-{i}", **whole} for i in range(devices)],
        }
    }


def claim(pool: str, device: str) -> Obj:
    result = {"driver": "gpu.nvidia.com", "pool": pool, "device": device}
    return {"status": {"allocation": {"devices": {"results": [result]}}}}


NODES = [node("plugin", 4), node("dra", 0)]
PODS = [pod("plugin", 1), pod("plugin", 2, phase="Succeeded")]
SLICES = [slice_of("dra", 8)]
CLAIMS = [claim("dra", "gpu-0"), claim("dra", "gpu-1")]


@pytest.mark.parametrize(
    ("dra", "free"),
    [
        (False, {"plugin": 3}),  # an ended pod holds nothing; slices are not read
        (True, {"dra": 6}),  # only ResourceSlices count, minus the claimed devices
        (None, {"plugin": 3, "dra": 6}),  # the runner: each node the way it publishes GPUs
    ],
    ids=["device-plugin", "dra", "per-node"],
)
def test_free_gpus_follow_the_allocation_mode(dra: bool | None, free: dict[str, int]) -> None:
    plan = free_gpu_nodes(NODES, Placement(), dra=dra, pods=PODS, slices=SLICES, claims=CLAIMS)
    assert {t.node: t.gpus for t in plan.targets} == free
