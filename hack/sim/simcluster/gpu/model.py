"""Node GPU profiles, per-pod allocation, and the hook the process runtime calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client

from simcluster import kube
from simcluster.runtime.ownership import SMI, command_name

GPU_RESOURCE = "nvidia.com/gpu"
DRA_DRIVER = "gpu.nvidia.com"
FAULT_ANNOTATION = "sim.aicr.dev/gpu-fault"
DRIVER_ANNOTATION = "sim.aicr.dev/gpu-driver"
# Faults of a node's GPUs: a comma-separated set in FAULT_ANNOTATION (see simcluster.faults).
FAULTS = ("driver-not-loaded", "gpu-lost")
SMI_SCRIPT = Path(__file__).resolve().parent / "smi.py"
# CUDA version that each driver branch reports (nvidia-smi's "CUDA Version").
CUDA_BY_BRANCH = {"535": "12.2", "550": "12.4", "560": "12.6", "565": "12.7", "570": "12.8",
                  "575": "12.9", "580": "13.0"}  # fmt: skip


def runs_smi(container: dict[str, Any]) -> bool:
    """True when the container's command is nvidia-smi (any path)."""
    return command_name(container) == SMI


def node_profile(node: dict[str, Any]) -> dict[str, Any] | None:
    """The GPU profile of a Node dict, or None when it has no GPUs."""
    meta = node.get("metadata") or {}
    labels, notes = meta.get("labels") or {}, meta.get("annotations") or {}
    if labels.get("nvidia.com/gpu.present") != "true":
        return None
    driver = labels.get("nvidia.com/cuda.driver-version.full") or ".".join(
        labels.get(f"nvidia.com/cuda.driver.{p}", "0") for p in ("major", "minor", "rev")
    )
    loaded = notes.get(DRIVER_ANNOTATION) or driver
    cuda = labels.get("nvidia.com/cuda.runtime-version.full") or CUDA_BY_BRANCH.get(
        loaded.split(".")[0], "12.8"
    )
    return {
        "node": meta.get("name", ""),
        "product": labels.get("nvidia.com/gpu.product", "NVIDIA GPU").replace("-", " "),
        "count": int(labels.get("nvidia.com/gpu.count", "0")),
        "memoryMiB": int(labels.get("nvidia.com/gpu.memory", "0")),
        "driver": loaded,
        "cuda": cuda,
        "faults": node_faults(node),
    }


def node_faults(node: dict[str, Any]) -> list[str]:
    """The GPU faults set on a Node dict (FAULT_ANNOTATION, comma-separated)."""
    value = ((node.get("metadata") or {}).get("annotations") or {}).get(FAULT_ANNOTATION) or ""
    return [f for f in value.split(",") if f]


def _claimed_devices(api: client.ApiClient, pod: dict[str, Any]) -> list[int]:
    """Indexes of the GPUs the pod's allocated ResourceClaims hold (DRA)."""
    ns = pod["metadata"]["namespace"]
    resource = client.ResourceV1Api(api)
    out: list[int] = []
    # Claims named in the spec, and claims generated from templates (named in the status).
    named = [c.get("resourceClaimName") for c in pod["spec"].get("resourceClaims") or []]
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    generated = [s.get("resourceClaimName") for s in statuses]
    for name in dict.fromkeys(n for n in named + generated if n):
        claim = kube.to_dict(api, resource.read_namespaced_resource_claim(name, ns))
        results = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
        for r in results.get("results") or []:
            if r.get("driver") == DRA_DRIVER and str(r.get("device", "")).startswith("gpu-"):
                out.append(int(str(r["device"]).split("-", 1)[1]))
    return sorted(out)


def allocated(api: client.ApiClient, pod: dict[str, Any]) -> list[int]:
    """Which of the node's GPUs the pod was given (device-plugin limit or DRA claims)."""
    total = 0
    for c in pod["spec"].get("containers") or []:
        limits = (c.get("resources") or {}).get("limits") or {}
        total += int(str(limits.get(GPU_RESOURCE, "0")))
    if total:
        return list(range(total))
    return _claimed_devices(api, pod)


def smi_argv(
    api: client.ApiClient, pod: dict[str, Any], argv: list[str], workdir: Path, python: str
) -> list[str]:
    """The argv that plays nvidia-smi for this pod on its node (writes the profile file)."""
    node = kube.to_dict(api, client.CoreV1Api(api).read_node(pod["spec"]["nodeName"]))
    profile = node_profile(node)
    if profile is not None:
        profile["gpus"] = allocated(api, pod)
    path = workdir / "gpu-profile.json"
    path.write_text(json.dumps(profile))
    return [python, str(SMI_SCRIPT), str(path), *argv[1:]]


def mark_node(
    api: client.ApiClient, node: str, fault: str | None = None, driver: str | None = None
) -> None:
    """Set (or clear, with None) a node's GPU fault and loaded-driver annotations."""
    if fault is not None and fault not in FAULTS:
        raise ValueError(f"unknown GPU fault {fault!r}; expected one of {FAULTS}")
    body = {"metadata": {"annotations": {FAULT_ANNOTATION: fault, DRIVER_ANNOTATION: driver}}}
    client.CoreV1Api(api).patch_node(node, body)
