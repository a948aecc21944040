"""Node GPU profiles, per-pod allocation, and the hook the process runtime calls."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from simcluster.cluster import kube, paths
from simcluster.gpu import devices, sharing, vgpu
from simcluster.gpu.nccl import VERSION_ENV
from simcluster.gpu.smi import gpu_uuid
from simcluster.nodes.layout import NCCL_BUSBW_ANNOTATION
from simcluster.runtime import handlers
from simcluster.runtime.ownership import SMI, command_name

FAULT_ANNOTATION = "sim.aicr.dev/gpu-fault"
DRIVER_ANNOTATION = "sim.aicr.dev/gpu-driver"
# Faults of a node's GPUs: a comma-separated set in FAULT_ANNOTATION (see simcluster.faults).
FAULTS = (
    "driver-not-loaded",
    "gpu-lost",
    "permissive-toolkit",
    "runtimeclass-leak",
    "device-leak",
    "shared-device",
    "dra-driver-down",
    "mps-daemon-not-ready",
    "nccl-degraded",
    "nccl-wrong",
    "exporter-down",
    "exporter-unlabelled",
    "exporter-stale",
    "exporter-no-dra",
    "mig-not-applied",
    "replicas-not-shared",
    "vgpu-not-attached",
    "vgpu-unlicensed",
)
SMI_SCRIPT = Path(__file__).resolve().parent / "smi.py"
PROFTESTER = "dcgmproftester12"  # the GPU model's stand-in: the dcgm-exporter page shows it busy
LOAD_FILE = "gpu-load-until"  # in the container's folder: when its dcgmproftester12 load ends
REQUIRES_ROOT = -29  # DCGM_ST_REQUIRES_ROOT (NVIDIA/DCGM dcgmlib/dcgm_structs.h)
REQUIRES_ROOT_EXIT = REQUIRES_ROOT & 0xFF  # 227: what a shell sees of main() returning -29
NCCL_TOOLS = ("sshd", "mpirun", "all_reduce_perf")  # what simcluster.gpu.nccl plays
# CUDA version that each driver branch reports (nvidia-smi's "CUDA Version").
CUDA_BY_BRANCH = {
    "535": "12.2",
    "550": "12.4",
    "560": "12.6",
    "565": "12.7",
    "570": "12.8",
    "575": "12.9",
    "580": "13.0",
}


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
        "product": (sharing.base_product(labels) or "NVIDIA GPU").replace("-", " "),
        "count": int(labels.get("nvidia.com/gpu.count", "0")),
        "memoryMiB": int(labels.get("nvidia.com/gpu.memory", "0")),
        "driver": loaded,
        "cuda": cuda,
        "faults": node_faults(node),
        "ncclBusBw": float(notes.get(NCCL_BUSBW_ANNOTATION) or 0),
        # MIG: GFD's product and count then name the MIG devices; these are the GPUs'
        **(_mig_profile(notes) if sharing.of_node(node).mig else {}),
        # vGPUs: the type nvidia-smi names, their framebuffer and licensing (gpu.vgpu)
        **vgpu.smi_view(node, node_faults(node)),
    }


def _mig_profile(notes: dict[str, str]) -> dict[str, Any]:
    return {"count": int(notes.get(sharing.GPUS_ANNOTATION) or 0), "migEnabled": True}


def node_units(
    node: dict[str, Any] | None,
) -> tuple[dict[str, list[sharing.Device]] | None, tuple[str, ...]]:
    """The device plugin's units on a Node dict with sharing resolved (None: plain indices)."""
    if node is None or sharing.of_node(node) == sharing.Sharing():
        return None, tuple(node_faults(node or {}))
    faults = tuple(node_faults(node))
    return sharing.node_units(node, faults), faults


def node_faults(node: dict[str, Any]) -> list[str]:
    """The GPU faults set on a Node dict (FAULT_ANNOTATION, comma-separated)."""
    value = ((node.get("metadata") or {}).get("annotations") or {}).get(FAULT_ANNOTATION) or ""
    return [f for f in value.split(",") if f]


@dataclass(frozen=True)
class Allocation:
    """The GPUs one container sees, and what the kubelet's pod-resources API lists for it."""

    visible: list[int]  # host indexes (see `devices.visible`)
    # `ListPodResources`' container entry: device-plugin devices (`nvidia.com/gpu`, by the
    # UUIDs the NVIDIA device plugin uses as device IDs) and DRA claims (`devices.claim_resources`)
    resources: dict[str, Any] = field(default_factory=dict)
    # the MIG devices it was given: their GPU, index there and profile
    migs: list[dict[str, Any]] = field(default_factory=list)


def container_gpus(
    api: client.ApiClient,
    pod: dict[str, Any],
    container: dict[str, Any],
    node: dict[str, Any],
    plugin: devices.DevicePlugin,
) -> Allocation:
    """The GPUs this container sees on `node` (see `devices`), and its pod resources."""
    profile = node_profile(node)
    if profile is None:
        return Allocation([])
    name, uid = node["metadata"]["name"], pod["metadata"]["uid"]
    granted = plugin.of(name, uid, container["name"])
    allocated = list(granted)
    ns = pod["metadata"]["namespace"]
    resource = client.ResourceV1Api(api)
    claims = []
    for claim in devices.claim_names(pod, container):
        obj = kube.to_dict(api, resource.read_namespaced_resource_claim(claim, ns))
        allocated += devices.claim_devices(obj, name)
        claims.append(devices.claim_resources(obj, name))
    env = {e.get("name"): e.get("value") for e in container.get("env") or []}
    security = container.get("securityContext") or {}
    visible = devices.visible(
        devices.Request(
            allocated=allocated,
            count=int(profile["count"]),
            faults=tuple(profile["faults"]),
            env_all=env.get("NVIDIA_VISIBLE_DEVICES") == "all",
            privileged=bool(security.get("privileged")),
            gpu_runtime_class=_gpu_runtime_class(api, pod),
        )
    )
    ids = [gpu_uuid(name, i) for i in granted]
    plugin_devices = [{"resourceName": devices.GPU_RESOURCE, "deviceIds": ids}] if ids else []
    labels = (node.get("metadata") or {}).get("labels") or {}
    migs = [
        {"gpu": d.gpu, "mig": d.mig, "profile": d.profile, "memoryMiB": _mig_memory(labels, d)}
        for d in plugin.devices_of(name, uid, container["name"])
        if d.mig is not None
    ]
    return Allocation(visible, {"devices": plugin_devices, "dynamicResources": claims}, migs)


def _mig_memory(labels: dict[str, str], device: sharing.Device) -> int:
    """A MIG device's memory as GFD labelled it: its profile's (mixed), else the node's (single)."""
    per = labels.get(f"{sharing.MIG_PREFIX}{device.profile}.memory")
    return int(per or labels.get("nvidia.com/gpu.memory") or 0)


def _gpu_runtime_class(api: client.ApiClient, pod: dict[str, Any]) -> bool:
    """True when the pod's RuntimeClass handler is the NVIDIA runtime's (`handlers.gpu_handler`)."""
    handler = handlers.of_pod(api, pod)
    return handler != handlers.DEFAULT and handler == handlers.gpu_handler(api)


def write_tools(
    workdir: Path,
    profile: dict[str, Any] | None,
    python: str,
    nccl_state: Path | None = None,
    nccl_version: str = "",
    uid: int = 0,
) -> Path:
    """Write the container's GPU profile, `nvidia-smi` and `dcgmproftester12`; return the folder.

    The folder goes first on the container's PATH when it sees GPUs, as the
    NVIDIA container toolkit mounts nvidia-smi into GPU containers. With
    `nccl_state` (a container of the nccl-tests image) it also holds the
    nccl-tests tools the GPU model plays (`simcluster.gpu.nccl`), sharing that state,
    printing as the release `nccl_version` (the one the image's tag names). `uid` is
    the user the container runs as (`run_as_user`): DCGM's load generator refuses any but
    root.
    """
    path = workdir / "gpu-profile.json"
    path.write_text(json.dumps(profile))
    tools = workdir / "bin"
    tools.mkdir(exist_ok=True)
    smi = tools / SMI
    smi.write_text(f'#!/bin/sh\nexec {python} {SMI_SCRIPT} {path} "$@"\n')
    smi.chmod(0o755)
    # DCGM's load generator: keeps the container's GPUs busy for -d s. It writes when the
    # load ends (epoch seconds) to LOAD_FILE, which the DCGM exporter model reads: a GPU
    # reads busy only while a load runs on it, as a real GPU held by an idle process
    # reads 0 % utilization; a load killed early (SIGTERM) writes its end then.
    # Not root: dcgmproftester's embedded host engine fails to start ("CacheManager Init
    # Failed. Error: -29", DCGM_ST_REQUIRES_ROOT; NVIDIA/DCGM issues 79 and 102) and main()
    # returns that -29 from Init(), which the shell sees as 227
    # (dcgmproftester/DcgmProfTester.cpp). No load is recorded.
    load = tools / PROFTESTER
    refuse = (
        f'echo "CacheManager Init Failed. Error: {REQUIRES_ROOT}" >&2\nexit {REQUIRES_ROOT_EXIT}\n'
        if uid != 0
        else ""
    )
    load.write_text(
        "#!/bin/sh\n" + refuse + 'd=30\nwhile [ $# -gt 0 ]; do [ "$1" = -d ] && d=$2; shift; done\n'
        'echo "dcgmproftester12: loading the allocated GPUs for ${d}s"\n'
        # killed before -d ends (as a pod's own script may stop its load): the load ends now
        f"trap 'kill $! 2>/dev/null; echo $(date +%s) > {workdir / LOAD_FILE} 2>/dev/null; "
        "exit 143' TERM INT\n"
        f"echo $(( $(date +%s) + d )) > {workdir / LOAD_FILE} 2>/dev/null\n"
        'sleep "$d" &\nwait $!\n'
    )
    load.chmod(0o755)
    if nccl_state is not None:
        nccl_state.mkdir(parents=True, exist_ok=True)
        for tool in NCCL_TOOLS:
            shim = tools / tool
            shim.write_text(
                f"#!/bin/sh\n{VERSION_ENV}={nccl_version} PYTHONPATH={paths.SIM_ROOT} "
                f"exec {python} -m "
                f'simcluster.gpu.nccl {nccl_state} {path} {tool} "$@"\n'
            )
            shim.chmod(0o755)
    return tools


def run_as_user(pod: dict[str, Any], container: dict[str, Any]) -> int:
    """The user a container runs as: its `runAsUser`, else the pod's, else root.

    The sim plays every image as its own user root (no image config is read), which is
    what DCGM's images run as.
    """
    pod_context = (pod.get("spec") or {}).get("securityContext")
    for context in (container.get("securityContext"), pod_context):
        user = (context or {}).get("runAsUser")
        if user is not None:
            return int(user)
    return 0


def smi_argv(workdir: Path, argv: list[str], python: str) -> list[str]:
    """The argv that plays a container's `nvidia-smi ARGS` command (after `write_tools`)."""
    return [python, str(SMI_SCRIPT), str(workdir / "gpu-profile.json"), *argv[1:]]


def mark_node(
    api: client.ApiClient, node: str, fault: str | None = None, driver: str | None = None
) -> None:
    """Set (or clear, with None) a node's GPU fault and loaded-driver annotations."""
    if fault is not None and fault not in FAULTS:
        raise ValueError(f"unknown GPU fault {fault!r}; expected one of {FAULTS}")
    body = {"metadata": {"annotations": {FAULT_ANNOTATION: fault, DRIVER_ANNOTATION: driver}}}
    client.CoreV1Api(api).patch_node(node, body)
