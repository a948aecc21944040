"""The pure part of virtualized-accelerator: what the cluster advertises, the probe, the verdict.

No client and no I/O: functions of the API's dicts and of what the probe printed,
tested as tables. What is read:

- vGPU nodes: GPU feature discovery labels a node whose GPUs NVML reports as
  vGPUs ``nvidia.com/vgpu.present=true``, with ``nvidia.com/vgpu.host-driver-version``
  and ``nvidia.com/vgpu.host-driver-branch`` (k8s-device-plugin / gpu-feature-discovery,
  ``getvGPULabels``: the labels are set when the vGPU interface lists devices). The
  node's GPUs are then its vGPUs, advertised by the device plugin as ``nvidia.com/gpu``
  like any GPU, and ``nvidia.com/gpu.product`` names the vGPU type (``GRID-A100-40C``).
- KubeVirt: ``KubeVirt.spec.configuration.permittedHostDevices.mediatedDevices``
  (each ``mdevNameSelector`` and ``resourceName``, e.g. ``nvidia.com/GRID_T4-16Q``),
  the mediated devices (vGPUs) KubeVirt lets virtual machines ask for, and the nodes'
  allocatable of those resources (KubeVirt user guide, "Host Devices Assignment").
- A vGPU pod's ``nvidia-smi -q``: ``GPU Virtualization Mode / Virtualization Mode``
  reads ``VGPU`` in a vGPU guest (``Pass-Through`` for a whole GPU given to a VM,
  ``None`` on bare metal), and ``Product Name`` is the vGPU type
  (``aicr.parsers.nvidia_smi.parse_query``). ``vGPU Software Licensed Product /
  License Status`` must read ``Licensed``: NVIDIA AI Enterprise's vGPU for Compute
  licensing page says "an unlicensed vGPU for Compute VM starts at full capability
  but enters a degraded state after a 20-minute grace period", compute "reduced to
  an idle level until a valid license is acquired". ``Unlicensed (Unrestricted)``
  is that grace period: a workload runs at full speed now and is throttled later,
  so it fails like any other unlicensed state, and so does a vGPU printing none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aicr.checks.probe_pods import pinned_to, restricted_pod_spec
from aicr.checks.smi_xml import first_line
from aicr.kube import names as k8s_names
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration, quantity
from aicr.parsers import ParseError
from aicr.parsers.nvidia_smi import QueriedGpu, parse_query

Obj = dict[str, Any]
IMAGE = "cuda-base"  # in aicr/checks/images.yaml
CONTAINER = "nvidia-smi"
VGPU_LABEL = "nvidia.com/vgpu.present"
HOST_DRIVER_VERSION_LABEL = "nvidia.com/vgpu.host-driver-version"
HOST_DRIVER_BRANCH_LABEL = "nvidia.com/vgpu.host-driver-branch"
PRODUCT_LABEL = "nvidia.com/gpu.product"
VGPU_MODE = "VGPU"  # nvidia-smi's Virtualization Mode in a vGPU guest
NOT_INJECTED = 127  # the shell's "not found": the runtime gave the pod no GPU tools


@dataclass(frozen=True)
class VgpuNode:
    """One node GPU feature discovery labels as holding vGPUs."""

    node: str
    vgpu_type: str  # its nvidia.com/gpu.product
    units: int  # allocatable nvidia.com/gpu
    host_driver: str  # "580.126.08 (r582_12)", or "" when unlabelled

    def describe(self) -> str:
        """What the node advertises, for the evidence."""
        host = f", host driver {self.host_driver}" if self.host_driver else ""
        return f"{self.vgpu_type or 'vGPU'}: {GPU_RESOURCE} {self.units}{host}"


def _labels(node: Obj) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def vgpu_nodes(nodes: list[Obj]) -> list[VgpuNode]:
    """The nodes labelled ``nvidia.com/vgpu.present=true``, by name."""
    out = []
    for n in sorted(nodes, key=lambda n: str(n["metadata"]["name"])):
        labels = _labels(n)
        if labels.get(VGPU_LABEL) != "true":
            continue
        alloc = (n.get("status") or {}).get("allocatable") or {}
        version = labels.get(HOST_DRIVER_VERSION_LABEL, "")
        branch = labels.get(HOST_DRIVER_BRANCH_LABEL, "")
        host = f"{version} ({branch})" if version and branch else version or branch
        out.append(
            VgpuNode(
                node=str(n["metadata"]["name"]),
                vgpu_type=labels.get(PRODUCT_LABEL, ""),
                units=quantity(alloc.get(GPU_RESOURCE)),
                host_driver=host,
            )
        )
    return out


def by_type(found: list[VgpuNode]) -> dict[str, list[VgpuNode]]:
    """Each vGPU type and the nodes offering it (each type is proven once)."""
    out: dict[str, list[VgpuNode]] = {}
    for v in found:
        out.setdefault(v.vgpu_type or "vGPU", []).append(v)
    return dict(sorted(out.items()))


def mediated_devices(kubevirts: list[Obj], nodes: list[Obj]) -> list[str]:
    """KubeVirt's permitted mediated devices, each with the nodes that advertise it."""
    out = []
    for kv in kubevirts:
        permitted = ((kv.get("spec") or {}).get("configuration") or {}).get(
            "permittedHostDevices"
        ) or {}
        for dev in permitted.get("mediatedDevices") or []:
            resource = str(dev.get("resourceName") or "")
            if not resource:
                continue
            on = [
                f"{n['metadata']['name']} {quantity(alloc[resource])}"
                for n in sorted(nodes, key=lambda n: str(n["metadata"]["name"]))
                if (alloc := (n.get("status") or {}).get("allocatable") or {}).get(resource)
            ]
            selector = dev.get("mdevNameSelector") or "?"
            out.append(f"{resource} ({selector}): {', '.join(on) or 'no node advertises it'}")
    return out


def pod_name(vgpu: VgpuNode) -> str:
    """The probe pod's name, one per vGPU type."""
    what = "".join(c if c.isalnum() else "-" for c in vgpu.vgpu_type.lower()) or "vgpu"
    return k8s_names.bounded(f"vgpu-{what}")


def probe_pod(vgpu: VgpuNode, image: str) -> Obj:
    """A pod on the vGPU node given one ``nvidia.com/gpu`` that prints ``nvidia-smi -q``."""
    container = {
        "name": CONTAINER,
        "image": image,
        "command": ["nvidia-smi", "-q"],
        "resources": {"limits": {GPU_RESOURCE: "1"}},
    }
    spec = restricted_pod_spec([container])
    spec["affinity"] = pinned_to(vgpu.node)
    spec["tolerations"] = [gpu_toleration()]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name(vgpu)}, "spec": spec}


def _seen(gpus: list[QueriedGpu]) -> str:
    def one(g: QueriedGpu) -> str:
        licence = (
            f"; {g.licensed_product}: {g.license_status or 'no license status'}"
            if g.licensed_product
            else ""
        )
        return (
            f"{g.uuid} {g.name or '(no product name)'} (virtualization mode "
            f"{g.virtualization_mode or 'not printed'}{licence})"
        )

    return "; ".join(one(g) for g in gpus) or "no GPU"


def judge(exit_code: int | None, log: str) -> tuple[list[str], str]:
    """``(problems, what the pod saw)``: exactly one GPU, a vGPU, its type named, licensed."""
    if exit_code == NOT_INJECTED:
        return [f"the pod given 1 {GPU_RESOURCE} sees no GPU: nvidia-smi was not injected"], (
            "no GPU"
        )
    if exit_code != 0:
        first = first_line(log)
        return [f"nvidia-smi -q exited {exit_code}: {first}"], first
    try:
        gpus = parse_query(log)
    except ParseError as exc:
        return [f"cannot read nvidia-smi -q: {exc}"], "unreadable"
    seen = _seen(gpus)
    if len(gpus) != 1:
        many = "no GPU" if not gpus else f"{len(gpus)} GPUs"
        return [f"the pod given 1 {GPU_RESOURCE} sees {many}"], seen
    gpu = gpus[0]
    if gpu.virtualization_mode != VGPU_MODE:
        return [
            f"its GPU {gpu.uuid} ({gpu.name}) reports virtualization mode "
            f"{gpu.virtualization_mode or 'not printed'}, not {VGPU_MODE}"
        ], seen
    if not gpu.name:
        return [f"its vGPU {gpu.uuid} names no vGPU type (Product Name)"], seen
    if not gpu.licensed:
        product = gpu.licensed_product or "no licensed product"
        return [
            f"its vGPU {gpu.uuid} ({gpu.name}) is not licensed: License Status "
            f"{gpu.license_status or 'not printed'} ({product}); an unlicensed vGPU is "
            "degraded after a 20-minute grace period"
        ], seen
    return [], seen
