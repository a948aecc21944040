"""NVIDIA vGPU on the simulated GPU nodes: nodes that are VMs given vGPUs by their hypervisor.

What is modelled (and nothing more):

- The platform's fact: a GPU node is a VM whose hypervisor (vSphere with the NVIDIA
  vGPU manager, as VMware vSphere Kubernetes Service and TKGI run their GPU
  workers) gave it vGPUs of one type instead of whole GPUs. It is a platform
  profile, declared on the Node (as a scenario's Node document writes it) in the
  annotation `sim.aicr.dev/vgpu`, JSON: `type` (the vGPU type as NVML names it,
  `NVIDIA H100-80C`), `brand` (nvidia-smi's Product Brand), `memoryMiB` (its
  framebuffer), `licensedProduct` and `licenseStatus` (what the guest's licensing
  daemon obtained), `hostDriverVersion` and `hostDriverBranch` (the hypervisor's
  vGPU manager). One vGPU per GPU of the node's profile.
- What GPU feature discovery labels on such a node (k8s-device-plugin's
  gpu-feature-discovery, `getvGPULabels`: when its vGPU interface lists devices):
  `nvidia.com/vgpu.present=true`, `nvidia.com/vgpu.host-driver-version`,
  `nvidia.com/vgpu.host-driver-branch`; and, as for any GPU, `nvidia.com/gpu.product`
  from the device's name with spaces as dashes (`GRID-A100-40C` on a real VKS node)
  and `nvidia.com/gpu.memory`. The device plugin advertises the vGPUs as
  `nvidia.com/gpu`, unchanged. `nvidia.com/mig.capable` is `false`: the GPU
  Operator never manages MIG on a vGPU node (its `hasMIGCapableGPU` returns false
  when `vgpu.host-driver-version` is set).
- What the guest's `nvidia-smi -q` prints (`simcluster.gpu.smi`): Product Name the
  vGPU type, `GPU Virtualization Mode` `VGPU` with `Host VGPU Mode` `N/A`, and the
  `vGPU Software Licensed Product` section, as a real guest prints them
  (tests/data/real/nvidia-smi/tkgi-v100d-8c-vgpu-guest-q.txt). Nodes without the
  declaration print `Pass-Through`: the profile's nodes are EC2 instances, VMs to
  which the Nitro hypervisor passes whole GPUs.

Faults of a node (simcluster.faults): `vgpu-not-attached` (GFD's labels say vGPU,
but the VM's GPU is a whole GPU passed through: the pod's nvidia-smi -q names the
physical GPU and `Pass-Through`); `vgpu-unlicensed` (the guest's licensing daemon
holds no licence, no license server being reachable or configured: License Status
reads `Unlicensed (Unrestricted)`, the state a real guest prints in its 20-minute
grace period at full speed, as two real unlicensed guests do,
tests/data/real/nvidia-smi/*-unlicensed-q.txt; the licensed product stays the one
the guest asks for).

`reconcile` applies the labels to every declared node through the API server
(after `simcluster.gpu.sharing`, whose labels it then overrides); it runs when a
named scenario is loaded, and `reset` of the nodes removes the declaration.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from simcluster.cluster import kube

ANNOTATION = "sim.aicr.dev/vgpu"
PHYSICAL_ANNOTATION = "sim.aicr.dev/vgpu-physical-product"  # the GPU behind, for the fault
NOT_ATTACHED = "vgpu-not-attached"
UNLICENSED = "vgpu-unlicensed"
UNLICENSED_STATUS = "Unlicensed (Unrestricted)"  # nvidia-smi's License Status in the grace period
KEYS = ("type", "brand", "memoryMiB", "licensedProduct", "licenseStatus",
        "hostDriverVersion", "hostDriverBranch")  # fmt: skip


class VgpuError(ValueError):
    """A declaration the platform could not have made (named, with the field)."""


def declaration(node: dict[str, Any]) -> dict[str, Any] | None:
    """The node's vGPU declaration, or None; VgpuError when it lacks a key."""
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    if not raw:
        return None
    try:
        decl = json.loads(raw)
    except json.JSONDecodeError as e:
        raise VgpuError(f"{ANNOTATION}: not JSON: {e}") from None
    missing = [k for k in KEYS if not isinstance(decl, dict) or k not in decl]
    if missing:
        raise VgpuError(f"{ANNOTATION}: {', '.join(missing)} missing")
    return dict(decl)


def product_label(name: str) -> str:
    """GFD's `nvidia.com/gpu.product` for an NVML device name: spaces as dashes."""
    return name.strip().replace(" ", "-")


def labels(decl: dict[str, Any]) -> dict[str, str]:
    """What GPU feature discovery labels a node whose GPUs are these vGPUs."""
    return {
        "nvidia.com/vgpu.present": "true",
        "nvidia.com/vgpu.host-driver-version": str(decl["hostDriverVersion"]),
        "nvidia.com/vgpu.host-driver-branch": str(decl["hostDriverBranch"]),
        "nvidia.com/gpu.product": product_label(str(decl["type"])),
        "nvidia.com/gpu.memory": str(decl["memoryMiB"]),
        "nvidia.com/mig.capable": "false",
    }


def smi_view(node: dict[str, Any], faults: list[str]) -> dict[str, Any]:
    """What the node's nvidia-smi shows for its GPUs: {} unless the node holds vGPUs.

    `product`: the name nvidia-smi prints; `vgpu`: the licensing it prints, or absent
    (a whole GPU, `Pass-Through`).
    """
    decl = declaration(node)
    if decl is None:
        return {}
    notes = (node.get("metadata") or {}).get("annotations") or {}
    if NOT_ATTACHED in faults:
        physical = str(notes.get(PHYSICAL_ANNOTATION) or "").replace("-", " ")
        return {"product": physical} if physical else {}
    licensing = {k: decl[k] for k in ("brand", "licensedProduct", "licenseStatus")}
    if UNLICENSED in faults:
        licensing["licenseStatus"] = UNLICENSED_STATUS
    return {"product": str(decl["type"]), "memoryMiB": int(decl["memoryMiB"]), "vgpu": licensing}


def reconcile(api: client.ApiClient, base: dict[str, dict[str, str]]) -> None:
    """Label every GPU node that declares vGPUs as GFD would (`base`: its profile's labels)."""
    core = client.CoreV1Api(api)
    for name, own in base.items():

        def update(name: str = name, own: dict[str, str] = own) -> None:
            obj = kube.to_dict(api, core.read_node(name))
            decl = declaration(obj)
            if decl is None:
                return
            physical = own.get("nvidia.com/gpu.product", "")
            body = {
                "metadata": {
                    "resourceVersion": obj["metadata"]["resourceVersion"],
                    "labels": labels(decl),
                    "annotations": {PHYSICAL_ANNOTATION: physical},
                }
            }
            core.patch_node(name, body)

        kube.retry_conflicts(update)


def forget(api: client.ApiClient, node: str) -> None:
    """Remove a node's vGPU declaration (the labels are the caller's to reset)."""
    body = {"metadata": {"annotations": {ANNOTATION: None, PHYSICAL_ANNOTATION: None}}}
    client.CoreV1Api(api).patch_node(node, body)
