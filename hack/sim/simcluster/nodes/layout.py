"""The simulated nodes, built from KWOK node profiles (hack/sim/profiles).

Labels follow the AICR KWOK node template and GPU feature discovery; the
template's `kwok.x-k8s.io/node` taint is left out on purpose, because real
nodes do not carry it and the validator's placement must be tested as on a
real cluster. Every address is loopback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simcluster.cluster.paths import SIM_ROOT
from simcluster.gpu.sharing import gpu_model

GPU_RESOURCE = "nvidia.com/gpu"
NODE_GROUP_LABEL = "aicr.dev/node-group"
PROFILE_ANNOTATION = "sim.aicr.dev/profile"
MAX_PODS = "110"


@dataclass(frozen=True)
class NodeSpec:
    """One node of the layout: name, profile and placement."""

    name: str
    profile: str
    zone: str
    group: str


LAYOUT = (
    NodeSpec("gpu-h100-0", "p5-h100", "us-east-1a", "gpu"),
    NodeSpec("gpu-h100-1", "p5-h100", "us-east-1b", "gpu"),
    # Two CPU node groups that cannot reach each other on the modelled EKS
    # clusters (segregated security groups): "customer" and "system".
    NodeSpec("cpu-customer-0", "system-m7i", "us-east-1a", "customer"),
    NodeSpec("cpu-system-0", "system-m7i", "us-east-1b", "system"),
)
GPU_NODES = tuple(n.name for n in LAYOUT if n.group == "gpu")


def load_profile(name: str) -> dict[str, Any]:
    """The `spec` of hack/sim/profiles/<name>.yaml."""
    doc = yaml.safe_load((SIM_ROOT / "profiles" / f"{name}.yaml").read_text())
    spec: dict[str, Any] = doc["spec"]
    return spec


def profile_names() -> list[str]:
    """Names of every node profile (hack/sim/profiles/*.yaml)."""
    return sorted(p.stem for p in (SIM_ROOT / "profiles").glob("*.yaml"))


def node_root(profile: str) -> Path:
    """The host files of a profile's nodes (hack/sim/profiles/roots/<profile>)."""
    return SIM_ROOT / "profiles" / "roots" / profile


def root_facts(profile: str, fallback_image: str) -> tuple[str, str]:
    """(osImage, kernelVersion) as a kubelet reads them from the node's own files."""
    root = node_root(profile)
    image = fallback_image
    release = root / "etc" / "os-release"
    if release.is_file():
        for line in release.read_text().splitlines():
            key, _, value = line.partition("=")
            if key == "PRETTY_NAME":
                image = value.strip().strip('"')
    kernel_file = root / "proc" / "sys" / "kernel" / "osrelease"
    kernel = kernel_file.read_text().strip() if kernel_file.is_file() else "6.1.0-sim"
    return image, kernel


def gpu_labels(gpu: dict[str, Any], instance_type: str) -> dict[str, str]:
    """GPU feature-discovery labels for a profile's GPU block."""
    driver = str(gpu["driver"])
    major, minor, rev = ([*driver.split("."), "0", "0"])[:3]
    return {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": str(gpu["product"]),
        "nvidia.com/gpu.count": str(gpu["count"]),
        "nvidia.com/gpu.memory": str(gpu["memory"]),
        "nvidia.com/gpu.family": "hopper" if "H100" in str(gpu["product"]) else "blackwell",
        "nvidia.com/gpu.machine": instance_type,
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        # unshared (simcluster.gpu.sharing): what GFD labels with its config's defaults
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if gpu_model(str(gpu["product"])) else "false",
        "nvidia.com/mps.capable": "false",
    }


NCCL_BUSBW_ANNOTATION = "sim.aicr.dev/nccl-busbw"  # GB/s, the fabric's all-reduce bus bandwidth


def _fabric_annotations(prof: dict[str, Any]) -> dict[str, str]:
    """The GPU model's fabric figures from the profile (read by `simcluster.gpu.nccl`)."""
    busbw = (prof.get("fabric") or {}).get("ncclAllReduceBusBw")
    return {NCCL_BUSBW_ANNOTATION: str(busbw)} if busbw else {}


def node_manifest(n: NodeSpec, k8s_version: str, kubelet_port: int) -> dict[str, Any]:
    """The Node object (with status) for one layout entry."""
    prof = load_profile(n.profile)
    os_image, kernel = root_facts(n.profile, prof["osImage"])
    res = prof["resources"]
    labels = {
        "type": "kwok",
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": prof["arch"],
        "node.kubernetes.io/instance-type": prof["instanceType"],
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": n.zone,
        "aicr.nvidia.com/node-type": "accelerated" if "gpu" in prof else "system",
        NODE_GROUP_LABEL: n.group,
        "eks.amazonaws.com/nodegroup": n.group,
    }
    capacity = {
        "cpu": str(res["cpu"]),
        "memory": str(res["memory"]),
        "ephemeral-storage": str(res["storage"]),
        "pods": MAX_PODS,
    }
    taints: list[dict[str, str]] = []
    if "gpu" in prof:
        labels.update(gpu_labels(prof["gpu"], prof["instanceType"]))
        capacity[GPU_RESOURCE] = str(prof["gpu"]["count"])
        taints.append({"key": GPU_RESOURCE, "effect": "NoSchedule"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": n.name,
            "labels": labels,
            "annotations": {
                "kwok.x-k8s.io/node": "fake",
                PROFILE_ANNOTATION: n.profile,
                **_fabric_annotations(prof),
            },
        },
        "spec": {"taints": taints},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "addresses": [
                {"type": "InternalIP", "address": "127.0.0.1"},
                {"type": "Hostname", "address": n.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
            "nodeInfo": {
                "architecture": prof["arch"],
                "containerRuntimeVersion": "containerd://1.7.0",
                "kernelVersion": kernel,
                "kubeletVersion": k8s_version,
                "kubeProxyVersion": k8s_version,
                "operatingSystem": "linux",
                "osImage": os_image,
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
            "images": [],
        },
    }
