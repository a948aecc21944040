"""virtualized-accelerator on fakes: the vGPU nodes advertised, what each pod saw, the verdicts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.virtualized_accelerator import build
from aicr.checks.conformance.virtualized_accelerator.build import VgpuNode
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe
from real_captures import capture

Obj = dict[str, Any]
GUEST = capture("nvidia-smi", "tkgi-v100d-8c-vgpu-guest-q.txt")  # a real vGPU guest's log
PASSTHROUGH = GUEST.replace(": VGPU\n", ": Pass-Through\n")
# real guests in the grace period, unlicensed at full speed (510 vCS; 535 vWS, its whole log)
UNLICENSED = capture("nvidia-smi", "a100-4c-vgpu-guest-unlicensed-q.txt")
UNLICENSED_WHOLE = capture("nvidia-smi", "rtxa6000-24q-vgpu-guest-unlicensed-q.txt")
LICENSE_LINE = f"{'        License Status':<42}: Licensed (Expiry: 2025-3-19 7:29:4 GMT)\n"
VGPU = {"nvidia.com/vgpu.present": "true", "nvidia.com/gpu.product": "GRID-V100D-8C",
        "nvidia.com/vgpu.host-driver-version": "535.216.01",
        "nvidia.com/vgpu.host-driver-branch": "r535_00"}  # fmt: skip


def node(name: str, labels: dict[str, str], **alloc: str) -> Obj:
    ready = [{"type": "Ready", "status": "True"}]
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"allocatable": alloc, "conditions": ready}}  # fmt: skip


def kubevirt(*resources: str) -> Obj:
    devices = [{"mdevNameSelector": "GRID T4-16Q", "resourceName": r} for r in resources]
    return {"kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"permittedHostDevices": {
                "mediatedDevices": devices}}}}  # fmt: skip


def test_vgpu_nodes_read_gfd_labels_and_allocatable() -> None:
    plain = node(
        "b", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, **{"nvidia.com/gpu": "8"}
    )
    found = build.vgpu_nodes([node("v", VGPU, **{"nvidia.com/gpu": "1"}), plain])
    assert found == [VgpuNode("v", "GRID-V100D-8C", 1, "535.216.01 (r535_00)")]
    assert found[0].describe() == (
        "GRID-V100D-8C: nvidia.com/gpu 1, host driver 535.216.01 (r535_00)")  # fmt: skip
    two = build.by_type(build.vgpu_nodes([node("v1", VGPU), node("v0", VGPU)]))
    assert [(t, [v.node for v in vs]) for t, vs in two.items()] == [("GRID-V100D-8C", ["v0", "v1"])]


def test_mediated_devices_name_the_nodes_that_advertise_them() -> None:
    nodes = [node("k0", {}, **{"nvidia.com/GRID_T4-16Q": "2"}), node("k1", {})]
    assert build.mediated_devices([kubevirt("nvidia.com/GRID_T4-16Q", "nvidia.com/X")], nodes) == [
        "nvidia.com/GRID_T4-16Q (GRID T4-16Q): k0 2",
        "nvidia.com/X (GRID T4-16Q): no node advertises it"]  # fmt: skip
    assert build.mediated_devices([{"kind": "KubeVirt", "spec": {}}], nodes) == []


V = VgpuNode("v", "GRID-V100D-8C", 1, "")


def test_judge_passes_a_real_vgpu_guests_log() -> None:
    assert build.judge(0, GUEST) == ([], (
        "GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 GRID V100D-8C (virtualization mode VGPU; "
        "NVIDIA Virtual Compute Server: Licensed (Expiry: 2025-3-19 7:29:4 GMT))"))  # fmt: skip


@pytest.mark.parametrize(
    ("code", "log", "problems"),
    [(0, PASSTHROUGH, ["its GPU GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 (GRID V100D-8C) "
                       "reports virtualization mode Pass-Through, not VGPU"]),
     (0, GUEST.replace("    GPU Virtualization Mode\n", "    GPU Mode\n"),
      ["its GPU GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 (GRID V100D-8C) reports "
       "virtualization mode not printed, not VGPU"]),
     (0, GUEST.replace("    Product Name                          : GRID V100D-8C\n", ""),
      ["its vGPU GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 names no vGPU type (Product Name)"]),
     (0, GUEST + GUEST[GUEST.index("GPU 0000"):].replace("GPU-57abc772", "GPU-67abc772"),
      ["the pod given 1 nvidia.com/gpu sees 2 GPUs"]),
     (0, "\n==============NVSMI LOG==============\nDriver Version : 535.216.01\n",
      ["the pod given 1 nvidia.com/gpu sees no GPU"]),
     (127, "", ["the pod given 1 nvidia.com/gpu sees no GPU: nvidia-smi was not injected"]),
     (9, "NVIDIA-SMI has failed\n", ["nvidia-smi -q exited 9: NVIDIA-SMI has failed"]),
     (0, "garbage\n", ["cannot read nvidia-smi -q: no NVSMI LOG banner: not nvidia-smi -q "
                       "output"]),
     (0, UNLICENSED, ["its vGPU GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264 (GRID A100-4C) is not "
                      "licensed: License Status Unlicensed (Unrestricted) (NVIDIA Virtual Compute "
                      "Server); an unlicensed vGPU is degraded after a 20-minute grace period"]),
     (0, UNLICENSED_WHOLE, ["its vGPU GPU-bf0881b6-032a-11f0-825b-5c07a73a413d (NVIDIA "
                            "RTXA6000-24Q) is not licensed: License Status Unlicensed "
                            "(Unrestricted) (NVIDIA RTX Virtual Workstation); an unlicensed vGPU "
                            "is degraded after a 20-minute grace period"]),
     (0, GUEST.replace(LICENSE_LINE, LICENSE_LINE.replace(
         "Licensed (Expiry: 2025-3-19 7:29:4 GMT)", "Unlicensed (Restricted)")),
      ["its vGPU GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 (GRID V100D-8C) is not licensed: "
       "License Status Unlicensed (Restricted) (NVIDIA Virtual Compute Server); an unlicensed "
       "vGPU is degraded after a 20-minute grace period"]),
     (0, GUEST.replace(LICENSE_LINE, "").replace(
         "    vGPU Software Licensed Product\n"
         "        Product Name                      : NVIDIA Virtual Compute Server\n", ""),
      ["its vGPU GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 (GRID V100D-8C) is not licensed: "
       "License Status not printed (no licensed product); an unlicensed vGPU is degraded "
       "after a 20-minute grace period"])],
    ids=["passthrough", "no-mode", "no-type", "two-gpus", "no-gpu", "not-injected", "smi-fails",
         "unreadable", "unlicensed-grace-510", "unlicensed-grace-535", "restricted",
         "no-licence-printed"],
)  # fmt: skip
def test_judge_fails_what_is_not_one_vgpu(code: int, log: str, problems: list[str]) -> None:
    assert build.judge(code, log)[0] == problems


def test_probe_pod_asks_for_one_gpu_on_the_node() -> None:
    pod = build.probe_pod(V, "img")
    c = pod["spec"]["containers"][0]
    assert (pod["metadata"]["name"], c["command"], c["resources"]) == (
        "vgpu-grid-v100d-8c",
        ["nvidia-smi", "-q"],
        {"limits": {"nvidia.com/gpu": "1"}},
    )
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["v"]


def fake(objects: list[Obj], logs: dict[str, str], exit_code: int = 0) -> FakeKube:
    kube = FakeKube(objects)

    def finished(pod: Obj) -> list[Obj]:
        state = {"terminated": {"exitCode": exit_code}}
        return [{**pod, "status": {"phase": "Succeeded" if exit_code == 0 else "Failed",
                                   "containerStatuses": [{"name": build.CONTAINER,
                                                          "state": state}]}}]  # fmt: skip

    kube.script["Pod"] = finished
    kube.logs_of.update(logs)
    return kube


def run(kube: FakeKube) -> Any:
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe("componentRefs: []\n"),
                       EMPTY_CONFIG)  # fmt: skip
    return entrypoint.run_check("virtualized-accelerator", inputs, kube=kube)


def test_a_vgpu_delivered_passes_and_cleans_up() -> None:
    kube = fake([node("v0", VGPU, **{"nvidia.com/gpu": "1"})], {"vgpu-grid-v100d-8c": GUEST})
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, "1 vGPU type delivered: GRID-V100D-8C on v0")  # fmt: skip
    assert [(s.title, s.status.value) for s in result.evidence] == [
        ("virtualized accelerators", "informational"), ("GRID-V100D-8C on v0", "passed"),
        ("workloads", "passed")]  # fmt: skip
    assert result.evidence[0].answer == (
        "v0: GRID-V100D-8C: nvidia.com/gpu 1, host driver 535.216.01 (r535_00); "
        "KubeVirt mediated devices: none")  # fmt: skip
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert made == ["vgpu-grid-v100d-8c"]
    assert [c[3] for c in kube.calls if c[0] == "delete"] == made


def test_nothing_advertised_is_a_skip_with_the_reason() -> None:
    result = run(fake([node("g0", {"nvidia.com/gpu.present": "true"}, **{"nvidia.com/gpu": "8"})],
                      {}))  # fmt: skip
    assert (result.status, result.message) == (
        Status.SKIPPED,
        "no virtualized accelerator advertised",
    )
    assert [s.title for s in result.evidence] == ["virtualized accelerators"]


def test_a_vgpu_label_over_a_passthrough_gpu_fails_naming_type_and_node() -> None:
    result = run(fake([node("v0", VGPU, **{"nvidia.com/gpu": "1"})],
                      {"vgpu-grid-v100d-8c": PASSTHROUGH}))  # fmt: skip
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 virtualized accelerators failed: GRID-V100D-8C on v0: its GPU "
        "GPU-57abc772-1dd3-11b2-8fae-e31710b8f307 (GRID V100D-8C) reports virtualization mode "
        "Pass-Through, not VGPU")  # fmt: skip


def test_an_unlicensed_vgpu_fails_naming_its_state_and_cleans_up() -> None:
    kube = fake([node("v0", VGPU, **{"nvidia.com/gpu": "1"})], {"vgpu-grid-v100d-8c": UNLICENSED})
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED,
        "1/1 virtualized accelerators failed: GRID-V100D-8C on v0: its vGPU "
        "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264 (GRID A100-4C) is not licensed: License Status "
        "Unlicensed (Unrestricted) (NVIDIA Virtual Compute Server); an unlicensed vGPU is "
        "degraded after a 20-minute grace period",
    )
    step = {s.title: s for s in result.evidence}["GRID-V100D-8C on v0"]
    assert step.status.value == "failed"
    assert step.answer == (
        "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264 GRID A100-4C (virtualization mode VGPU; "
        "NVIDIA Virtual Compute Server: Unlicensed (Unrestricted))"
    )
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert [c[3] for c in kube.calls if c[0] == "delete"] == made == ["vgpu-grid-v100d-8c"]


def test_no_free_vgpu_and_kubevirt_alone_are_other() -> None:
    result = run(fake([node("v0", VGPU, **{"nvidia.com/gpu": "0"})], {}))
    assert (result.status, result.message) == (
        Status.OTHER, "1/1 virtualized accelerators could not be judged: GRID-V100D-8C: no node "
        "has room to prove GRID-V100D-8C: advertising 0: v0")  # fmt: skip
    kv = [node("k0", {}, **{"nvidia.com/GRID_T4-16Q": "2"}), kubevirt("nvidia.com/GRID_T4-16Q")]
    result = run(fake(kv, {}))
    assert result.status == Status.OTHER
    assert result.message == (
        "1/1 virtualized accelerators could not be judged: KubeVirt mediated devices: KubeVirt "
        "mediated devices are advertised, and proving them needs a VirtualMachineInstance, "
        "which this check does not create")  # fmt: skip
