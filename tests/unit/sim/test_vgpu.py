"""vGPU nodes in the GPU model: GFD labels from the declaration, what nvidia-smi -q says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from simcluster.gpu import model, smi, vgpu
from simcluster.gpu.vgpu import VgpuError
from simcluster.scenarios import named

from aicr.parsers.nvidia_smi import parse_query
from real_captures import capture


def _declared() -> dict[str, Any]:
    [node] = [d for d in named.load("gpu-vgpu").manifests if d["kind"] == "Node"]
    return node


def _node(faults: str = "") -> dict[str, Any]:
    doc = _declared()
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8",
              "nvidia.com/gpu.memory": "81920", "nvidia.com/cuda.driver-version.full": "570.86.16",
              **vgpu.labels(vgpu.declaration(doc) or {})}  # fmt: skip
    notes = {**doc["metadata"]["annotations"],
             vgpu.PHYSICAL_ANNOTATION: "NVIDIA-H100-80GB-HBM3",
             model.FAULT_ANNOTATION: faults}  # fmt: skip
    return {"metadata": {"name": "gpu-h100-0", "labels": labels, "annotations": notes}}


def test_the_scenario_declares_one_node_and_gfd_labels_it_as_the_comment_says() -> None:
    decl = vgpu.declaration(_declared())
    assert decl is not None and decl["type"] == "NVIDIA H100-80C"
    assert vgpu.labels(decl) == {
        "nvidia.com/vgpu.present": "true",
        "nvidia.com/vgpu.host-driver-version": "580.126.08",
        "nvidia.com/vgpu.host-driver-branch": "r582_12",
        "nvidia.com/gpu.product": "NVIDIA-H100-80C",
        "nvidia.com/gpu.memory": "81920",
        "nvidia.com/mig.capable": "false",
    }
    assert vgpu.product_label("GRID A100-40C") == "GRID-A100-40C"  # as a real VKS node reads


@pytest.mark.parametrize(
    ("raw", "message"),
    [("{", "not JSON"), (json.dumps({"type": "x"}), "brand, memoryMiB, licensedProduct")],
)
def test_a_bad_declaration_is_named(raw: str, message: str) -> None:
    with pytest.raises(VgpuError, match=message):
        vgpu.declaration({"metadata": {"annotations": {vgpu.ANNOTATION: raw}}})


def _query(node: dict[str, Any]) -> str:
    profile = model.node_profile(node)
    assert profile is not None
    return smi.query({**profile, "gpus": [0]})


def test_a_vgpu_pod_reads_vgpu_as_a_real_guest_prints_it() -> None:
    [gpu] = parse_query(_query(_node()))
    assert (gpu.name, gpu.brand, gpu.virtualization_mode, gpu.host_vgpu_mode) == (
        "NVIDIA H100-80C", "NVIDIA Virtual Compute Server", "VGPU", None)  # fmt: skip
    assert (gpu.licensed_product, gpu.license_status) == (
        "NVIDIA Virtual Compute Server", "Licensed (Expiry: 2027-1-1 0:0:0 GMT)")  # fmt: skip
    assert gpu.uuid == smi.gpu_uuid("gpu-h100-0", 0)


def test_not_attached_shows_the_whole_gpu_passed_through() -> None:
    [gpu] = parse_query(_query(_node("vgpu-not-attached")))
    assert (gpu.name, gpu.virtualization_mode, gpu.licensed_product) == (
        "NVIDIA H100 80GB HBM3", "Pass-Through", None)  # fmt: skip


def test_unlicensed_prints_the_grace_state_a_real_unlicensed_guest_prints() -> None:
    [gpu] = parse_query(_query(_node("vgpu-unlicensed")))
    [real] = parse_query(capture("nvidia-smi", "a100-4c-vgpu-guest-unlicensed-q.txt"))
    seen = (gpu.name, gpu.virtualization_mode, gpu.licensed_product, gpu.license_status)
    assert seen == ("NVIDIA H100-80C", "VGPU", "NVIDIA Virtual Compute Server", real.license_status)
    assert not gpu.licensed and parse_query(_query(_node()))[0].licensed
    # on a node that declares no vGPUs the fault changes nothing
    labels = {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.memory": "81920",
    }
    notes = {model.FAULT_ANNOTATION: "vgpu-unlicensed"}
    plain = {"metadata": {"name": "g", "annotations": notes, "labels": labels}}
    [whole] = parse_query(_query(plain))
    assert (whole.virtualization_mode, whole.license_status) == ("Pass-Through", None)


def test_a_node_without_vgpus_is_passed_through_and_the_layout_is_the_real_tools() -> None:
    plain = {"metadata": {"name": "g", "labels": {
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81920"}}}  # fmt: skip
    text = _query(plain)
    [gpu] = parse_query(text)
    assert (gpu.name, gpu.virtualization_mode) == ("NVIDIA H100 80GB HBM3", "Pass-Through")
    # every key line of the model sits in the real capture's 42-column layout
    # (the tkgi log's one Attached line is hand-edited; the RTXA6000 guest's prints it whole)
    real = {line[: smi.KEY_WIDTH + 2] for name in ("tkgi-v100d-8c-vgpu-guest-q.txt",
            "rtxa6000-24q-vgpu-guest-unlicensed-q.txt")
            for line in capture("nvidia-smi", name).splitlines() if " : " in line}  # fmt: skip
    ours = {line[: smi.KEY_WIDTH + 2] for line in text.splitlines() if " : " in line}
    assert ours <= real
