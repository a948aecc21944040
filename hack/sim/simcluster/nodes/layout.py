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
from simcluster.nodes import platforms
from simcluster.nodes.platforms import Platform

GPU_RESOURCE = "nvidia.com/gpu"
NODE_GROUP_LABEL = "aicr.dev/node-group"
PROFILE_ANNOTATION = "sim.aicr.dev/profile"
# The gVisor handler the node's containerd has (simcluster.runtime.handlers), from the
# platform profile; "" when it has none.
SANDBOX_HANDLER_ANNOTATION = "sim.aicr.dev/sandbox-handler"
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
ZONES = tuple(sorted({n.zone for n in LAYOUT}))  # the layout's zones, first to last


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


# The GPU Operator's node labels, as its ClusterPolicy controller sets them on every node
# labelled nvidia.com/gpu.present=true (gpu-operator v25.10.1 controllers/state_manager.go:
# `gpuStateLabels["container"]`, added by `addGPUStateLabels` only where absent, so a value
# a user set stays). They are the same whatever the driver mode: the operator never writes
# another value (no "pre-installed"); a pre-installed driver is the ClusterPolicy's
# `driver.enabled: false` (no driver DaemonSet), which the validator's driver validation
# then finds on the host (`cmd/nvidia-validator` validateHostDriver).
OPERATOR_STATE_LABELS = {
    f"nvidia.com/gpu.deploy.{operand}": "true"
    for operand in (
        "driver",
        "gpu-feature-discovery",
        "container-toolkit",
        "device-plugin",
        "dcgm",
        "dcgm-exporter",
        "node-status-exporter",
        "operator-validator",
    )
}
# ... and on a MIG-capable GPU (`hasMIGCapableGPU`: nvidia.com/mig.capable=true) the MIG manager's.
MIG_MANAGER_LABEL = "nvidia.com/gpu.deploy.mig-manager"


def gpu_labels(gpu: dict[str, Any], instance_type: str) -> dict[str, str]:
    """GPU feature discovery's labels for a profile's GPU block, and the GPU Operator's."""
    driver = str(gpu["driver"])
    major, minor, rev = ([*driver.split("."), "0", "0"])[:3]
    mig_capable = bool(gpu_model(str(gpu["product"])))
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
        **OPERATOR_STATE_LABELS,
        **({MIG_MANAGER_LABEL: "true"} if mig_capable else {}),
        # unshared (simcluster.gpu.sharing): what GFD labels with its config's defaults
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if mig_capable else "false",
        "nvidia.com/mps.capable": "false",
    }


NCCL_BUSBW_ANNOTATION = "sim.aicr.dev/nccl-busbw"  # GB/s, the fabric's all-reduce bus bandwidth


def _fabric_annotations(prof: dict[str, Any]) -> dict[str, str]:
    """The GPU model's fabric figures from the profile (read by `simcluster.gpu.nccl`)."""
    busbw = (prof.get("fabric") or {}).get("ncclAllReduceBusBw")
    return {NCCL_BUSBW_ANNOTATION: str(busbw)} if busbw else {}


def node_manifest(
    n: NodeSpec, k8s_version: str, kubelet_port: int, platform: Platform | None = None
) -> dict[str, Any]:
    """The Node object (with status) for one layout entry, as `platform` gives it."""
    plat = platform or platforms.load(platforms.DEFAULT)
    prof = load_profile(n.profile)
    os_image, kernel = root_facts(n.profile, prof["osImage"])
    res = prof["resources"]
    instance_type = plat.instance_type(n.profile, prof["instanceType"])
    index = LAYOUT.index(n)
    zone = plat.zone(ZONES.index(n.zone))
    group = plat.group(n.group)
    labels = {
        "type": "kwok",
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": prof["arch"],
        "aicr.nvidia.com/node-type": "accelerated" if "gpu" in prof else "system",
        NODE_GROUP_LABEL: n.group,  # the sim's own placement label (every profile)
        **{key: group for key in plat.group_labels},
        **plat.labels,
    }
    if plat.instance_types:  # a cloud provider's label: none on a profile that lists none
        labels["node.kubernetes.io/instance-type"] = instance_type
    if plat.region:
        labels["topology.kubernetes.io/region"] = plat.region
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    capacity = {
        "cpu": str(res["cpu"]),
        "memory": str(res["memory"]),
        "ephemeral-storage": str(res["storage"]),
        "pods": MAX_PODS,
    }
    taints: list[dict[str, str]] = []
    if "gpu" in prof:
        labels.update(gpu_labels(prof["gpu"], prof["instanceType"]))
        labels.update(plat.gpu_labels)
        capacity[GPU_RESOURCE] = str(prof["gpu"]["count"])
        taints += [dict(t) for t in plat.gpu_taints]
    box = plat.sandbox
    sandboxed = box is not None and box.on(n.group)
    if box is not None and sandboxed:
        labels.update(box.labels)
        taints += [dict(t) for t in box.taints]
    spec: dict[str, Any] = {"taints": taints}
    if plat.provider_id:
        spec["providerID"] = plat.provider_id.format(
            zone=zone or "", node=n.name, group=group, index=index
        )
    annotations = {
        "kwok.x-k8s.io/node": "fake",
        PROFILE_ANNOTATION: n.profile,
        SANDBOX_HANDLER_ANNOTATION: box.handler if box is not None and sandboxed else "",
        **_fabric_annotations(prof),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": labels, "annotations": annotations},
        "spec": spec,
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
