"""GPU sharing in the GPU model: what the GPU Operator's values advertise, who gets which unit."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
import yaml
from simcluster.gpu import sharing, smi
from simcluster.gpu.devices import DevicePlugin
from simcluster.gpu.sharing import Device, Sharing, SharingError
from simcluster.scenarios import named

from aicr.checks import smi_probes
from aicr.kube.gpu_inventory import Target
from aicr.parsers.nvidia_smi import XmlMigDevice, parse_xml
from real_captures import capture

H100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81920"}  # fmt: skip
TIME_SLICING = (
    "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
    "    - name: nvidia.com/gpu\n      replicas: 4\n"
)


def _policy(name: str) -> dict[str, Any]:
    docs = named.load(name).manifests
    return next(d for d in docs if d["kind"] == "ClusterPolicy")


def _configs(name: str) -> dict[str, str]:
    docs = named.load(name).manifests
    return next((d["data"] for d in docs if d["kind"] == "ConfigMap"), {})


def test_the_scenarios_resolve_to_what_their_comments_say() -> None:
    ts_name = "gpu-sharing-time-slicing"
    ts = sharing.resolve(_policy(ts_name), _configs(ts_name), {})
    assert ts == Sharing(strategy="time-slicing", replicas=4)
    mig = sharing.resolve(_policy("gpu-sharing-mig"), {}, {})
    assert mig == Sharing(mig_strategy="single", mig_config="all-1g.10gb")
    # a node's own labels pick its config: another key, another MIG layout, MIG off
    configs = {"any": TIME_SLICING, "mps": TIME_SLICING.replace("timeSlicing", "mps")}
    assert sharing.resolve(_policy("gpu-sharing-time-slicing"), configs,
                           {sharing.CONFIG_LABEL: "mps"}).strategy == "mps"  # fmt: skip
    on_node = {sharing.MIG_CONFIG_LABEL: "all-balanced"}
    assert sharing.resolve(_policy("gpu-sharing-mig"), {}, on_node).mig_config == "all-balanced"
    off = {sharing.MIG_CONFIG_LABEL: "all-disabled"}
    assert sharing.resolve(_policy("gpu-sharing-mig"), {}, off) == Sharing()
    assert sharing.resolve(_policy("gpu-platform"), {}, {}) == Sharing()


@pytest.mark.parametrize(
    ("text", "problem"),
    [("version: v2\n", "not a device-plugin config"),
     ("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]},"
      " mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n", "mutually exclusive"),
     ("version: v1\nsharing: {mps: {resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]}}\n",
      "only nvidia.com/gpu is replicated")],
)  # fmt: skip
def test_configs_the_plugin_would_refuse(text: str, problem: str) -> None:
    with pytest.raises(SharingError, match=problem):
        sharing.plugin_config(text, "cm/key")


def test_time_slicing_and_rename_advertise_as_the_device_plugin_does() -> None:
    labels, capacity = sharing.advertised(Sharing("time-slicing", 4), H100, 8, 81920)
    assert capacity == {"nvidia.com/gpu": "32"}
    assert (labels["nvidia.com/gpu.replicas"], labels["nvidia.com/gpu.sharing-strategy"],
            labels["nvidia.com/gpu.product"]) == ("4", "time-slicing",
                                                  "NVIDIA-H100-80GB-HBM3-SHARED")  # fmt: skip
    labels, capacity = sharing.advertised(Sharing("mps", 2, rename=True), H100, 8, 81920)
    assert capacity == {"nvidia.com/gpu.shared": "16"}
    assert "nvidia.com/gpu.product" not in labels  # renamed: no -SHARED suffix
    assert (labels["nvidia.com/gpu.sharing-strategy"], labels["nvidia.com/mps.capable"]) == (
        "mps",
        "true",
    )
    labels, capacity = sharing.advertised(Sharing(), H100, 8, 81920)
    assert capacity == {"nvidia.com/gpu": "8"}
    assert (labels["nvidia.com/gpu.replicas"], labels["nvidia.com/gpu.sharing-strategy"]) == (
        "1",
        "none",
    )


def test_mig_single_and_mixed_advertise_as_gfd_labels_a_real_h100() -> None:
    labels, capacity = sharing.advertised(Sharing(mig_strategy="single", mig_config="all-1g.10gb"),
                                          H100, 8, 81920)  # fmt: skip
    assert capacity == {"nvidia.com/gpu": "56"}
    assert {k: labels[k] for k in ("nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                   "nvidia.com/gpu.memory", "nvidia.com/mig.strategy")} == {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",
        "nvidia.com/gpu.count": "56", "nvidia.com/gpu.memory": "9984",
        "nvidia.com/mig.strategy": "single"}  # fmt: skip
    labels, capacity = sharing.advertised(Sharing(mig_strategy="mixed", mig_config="all-balanced"),
                                          H100, 1, 81920)  # fmt: skip
    assert capacity == {"nvidia.com/mig-1g.10gb": "2", "nvidia.com/mig-2g.20gb": "1",
                        "nvidia.com/mig-3g.40gb": "1"}  # fmt: skip
    # the labels a real one-GPU H100 node carries under mixed / all-balanced
    real = yaml.safe_load(capture("gpu-feature-discovery", "h100-mig-mixed-node-labels.json"))
    ours = {k: v for k, v in labels.items() if v is not None}
    shared_keys = sorted(k for k in ours if k in real)
    assert len(shared_keys) >= 20 and {k: ours[k] for k in shared_keys} == {
        k: real[k] for k in shared_keys}  # fmt: skip


def test_mig_layouts_follow_the_gpu_model() -> None:
    assert sharing.layout("NVIDIA-B200", "all-1g.23gb") == [("1g.23gb", 7)]
    assert sharing.layout("NVIDIA-H200", "all-balanced") == [("1g.18gb", 2), ("2g.35gb", 1),
                                                              ("3g.71gb", 1)]  # fmt: skip
    assert sharing.layout("NVIDIA-A100-SXM4-40GB", "all-1g.10gb") == [("1g.10gb", 4)]
    with pytest.raises(SharingError, match="not one for H100-80GB"):
        sharing.layout("NVIDIA-H100-80GB-HBM3", "all-1g.5gb")
    with pytest.raises(SharingError, match="no MIG profiles"):
        sharing.layout("NVIDIA-A10G", "all-1g.5gb")


def _pod(uid: str, resource: str, n: int = 1) -> dict[str, Any]:
    return {"metadata": {"uid": uid}, "status": {"phase": "Pending"},
            "spec": {"nodeName": "n0", "containers": [
                {"name": "c", "resources": {"limits": {resource: str(n)}}}]}}  # fmt: skip


def _admit(units: dict[str, list[Device]], faults: tuple[str, ...], *pods: dict[str, Any]
           ) -> DevicePlugin:  # fmt: skip
    plugin = DevicePlugin()
    for p in pods:
        plugin.observe(p, False, lambda node: False, lambda node: (units, faults))
    return plugin


def test_replicas_spread_over_the_gpus_then_share_one() -> None:
    units = sharing.units(Sharing("time-slicing", 4), "NVIDIA-H100-80GB-HBM3", 2)
    plugin = _admit(units, (), *(_pod(u, "nvidia.com/gpu") for u in "abc"))
    assert [plugin.of("n0", u, "c") for u in "abc"] == [[0], [1], [0]]
    # the fault: a GPU for one pod only; the third gets none
    plugin = _admit(units, ("replicas-not-shared",), *(_pod(u, "nvidia.com/gpu") for u in "abc"))
    assert [plugin.of("n0", u, "c") for u in "abc"] == [[0], [1], []]


def test_mig_units_are_mig_devices_unless_never_applied() -> None:
    units = sharing.units(Sharing(mig_strategy="mixed", mig_config="all-balanced"),
                          "NVIDIA-H100-80GB-HBM3", 2)  # fmt: skip
    small, large = "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"
    plugin = _admit(units, (), _pod("a", small), _pod("b", small), _pod("c", large))
    assert plugin.devices_of("n0", "a", "c") == [Device(0, 0, "1g.10gb")]
    assert plugin.devices_of("n0", "b", "c") == [Device(1, 0, "1g.10gb")]  # the GPU least in use
    assert plugin.devices_of("n0", "c", "c") == [Device(0, 3, "3g.40gb")]
    broken = sharing.units(Sharing(mig_strategy="mixed", mig_config="all-balanced"),
                           "NVIDIA-H100-80GB-HBM3", 2, ("mig-not-applied",))  # fmt: skip
    plugin = _admit(broken, ("mig-not-applied",), _pod("a", "nvidia.com/mig-1g.10gb"))
    assert plugin.devices_of("n0", "a", "c") == [Device(0)] and plugin.of("n0", "a", "c") == [0]


def _shape(text: str) -> list[str]:
    return re.sub(r"(GPU|MIG)-[0-9a-f-]{36}", r"\1-<uuid>", text).replace("\r", "").splitlines()


def test_nvidia_smi_lists_mig_devices_as_the_real_tool() -> None:
    profile = {"node": "n0", "product": "NVIDIA H100 80GB HBM3", "gpus": [0],
               "migs": [{"gpu": 0, "mig": j, "profile": p} for j, p in
                        enumerate(["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"])]}  # fmt: skip
    assert _shape(smi.listing(profile)) == _shape(capture("nvidia-smi", "h100-mig-mixed-list.txt"))
    one = {**profile, "gpus": [3], "migs": [{"gpu": 3, "mig": 5, "profile": "1g.10gb"}]}
    assert _shape(smi.listing(one)) == [
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-<uuid>)",
        "  MIG 1g.10gb     Device  0: (UUID: MIG-<uuid>)"]  # fmt: skip


def _paths(el: ET.Element, at: str = "") -> list[str]:
    """Every element path below ``el``, in document order."""
    out = []
    for child in el:
        path = f"{at}/{child.tag}"
        out += [path, *_paths(child, path)]
    return out


def test_nvidia_smi_xml_lists_the_pods_mig_devices_in_the_real_layout() -> None:
    profile = {"node": "n0", "product": "NVIDIA H100 80GB HBM3", "gpus": [2], "migEnabled": True,
               "memoryMiB": 81920, "driver": "580.95.05", "cuda": "13.0",
               "migs": [{"gpu": 2, "mig": 3, "profile": "1g.10gb", "memoryMiB": 9984}]}  # fmt: skip
    text = smi.xml_log(profile)
    # the sim's mig_device elements are the real A100's, in its order (a subset of them)
    real = ET.fromstring(capture("nvidia-smi", "a100-sxm4-v12.xml").split("\n", 2)[2])
    real_paths = _paths(real.find("gpu/mig_devices/mig_device"))  # type: ignore[arg-type]
    sim = ET.fromstring(text.split("\n", 2)[2])
    sim_gpu = sim.find("gpu")
    assert sim_gpu is not None
    sim_paths = _paths(sim_gpu.find("mig_devices/mig_device"))  # type: ignore[arg-type]
    assert sim_paths == [p for p in real_paths if p in sim_paths]
    assert [c.tag for c in sim_gpu].index("mig_devices") == [c.tag for c in sim_gpu].index(
        "mig_mode"
    ) + 1  # right after mig_mode, as the real tool prints it
    (gpu,) = parse_xml(text)
    assert gpu.mig_mode == "Enabled"
    assert gpu.migs == (XmlMigDevice(0, 4, 0, 16, 9984),)
    # what check-nvidia-smi and driver-runtime-management then say of the node
    target = Target("n0", gpus=1, total=8, driver="580.95.05")
    assert smi_probes.judge(target, 0, text) == (
        [],
        "1 GPUs (NVIDIA H100 80GB HBM3), driver 580.95.05, CUDA 13.0; MIG on, "
        "1 MIG devices (16 SMs 9984 MiB)",
    )


def test_nvidia_smi_xml_prints_no_mig_devices_for_a_whole_gpu() -> None:
    profile = {"node": "n0", "product": "NVIDIA H100 80GB HBM3", "gpus": [0],
               "memoryMiB": 81920, "driver": "580.95.05", "cuda": "13.0"}  # fmt: skip
    assert "mig_devices" not in smi.xml_log(profile)
    assert parse_xml(smi.xml_log(profile))[0].migs == ()
