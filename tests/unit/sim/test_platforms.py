"""Platform profiles: the nodes each provider gives, the RuntimeClass it creates, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.nodes import platforms
from simcluster.nodes.layout import LAYOUT, SANDBOX_HANDLER_ANNOTATION, node_manifest
from simcluster.runtime import handlers

from aicr.kube.gpu_inventory import plan_nodes
from aicr.kube.gpus import allocatable_gpus
from aicr.kube.placement import Placement, Toleration


def nodes(platform: str) -> dict[str, dict[str, Any]]:
    plat = platforms.load(platform)
    return {n.name: node_manifest(n, "v1.35.4", 10250, plat) for n in LAYOUT}


def labels(node: dict[str, Any]) -> dict[str, str]:
    return dict(node["metadata"]["labels"])


def test_every_profile_loads_and_the_default_is_kubeadm() -> None:
    assert platforms.names() == ["aks", "eks", "gke", "kubeadm", "nvke"]
    assert {platforms.load(n).name for n in platforms.names()} == set(platforms.names())
    assert platforms.DEFAULT == "kubeadm"
    assert node_manifest(LAYOUT[0], "v1.35.4", 10250) == nodes("kubeadm")[LAYOUT[0].name]


def test_kubeadm_keeps_the_layout_the_suite_was_written_against() -> None:
    gpu = nodes("kubeadm")["gpu-h100-0"]
    assert {
        k: labels(gpu)[k]
        for k in (
            "node.kubernetes.io/instance-type",
            "topology.kubernetes.io/zone",
            "eks.amazonaws.com/nodegroup",
            "aicr.dev/node-group",
        )
    } == {
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
        "eks.amazonaws.com/nodegroup": "gpu",
        "aicr.dev/node-group": "gpu",
    }
    assert gpu["spec"] == {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}
    assert all(n["metadata"]["annotations"][SANDBOX_HANDLER_ANNOTATION] == "runsc"
               for n in nodes("kubeadm").values())  # fmt: skip


def test_gke_gives_node_pools_its_gpu_taint_and_a_sandbox_pool() -> None:
    found = nodes("gke")
    gpu, sandboxed, system = found["gpu-h100-1"], found["cpu-customer-0"], found["cpu-system-0"]
    assert labels(gpu)["cloud.google.com/gke-nodepool"] == "gpu-pool"
    assert labels(gpu)["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
    assert labels(gpu)["node.kubernetes.io/instance-type"] == "a3-highgpu-8g"
    assert labels(gpu)["topology.kubernetes.io/zone"] == "us-central1-b"
    assert "eks.amazonaws.com/nodegroup" not in labels(gpu)
    assert gpu["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    assert gpu["spec"]["providerID"] == "gce://aicr-sim/us-central1-b/gpu-h100-1"
    assert labels(sandboxed)["sandbox.gke.io/runtime"] == "gvisor"
    assert sandboxed["spec"]["taints"] == [
        {"key": "sandbox.gke.io/runtime", "value": "gvisor", "effect": "NoSchedule"}
    ]
    assert sandboxed["metadata"]["annotations"][SANDBOX_HANDLER_ANNOTATION] == "gvisor"
    assert system["metadata"]["annotations"][SANDBOX_HANDLER_ANNOTATION] == ""
    assert "sandbox.gke.io/runtime" not in labels(system)
    rc = platforms.load("gke").sandbox.runtime_class_manifest()  # type: ignore[union-attr]
    assert rc == {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"},
        "handler": "gvisor",
        "scheduling": {
            "nodeSelector": {"sandbox.gke.io/runtime": "gvisor"},
            "tolerations": [
                {"key": "sandbox.gke.io/runtime", "operator": "Equal", "value": "gvisor",
                 "effect": "NoSchedule"}
            ],
        },
    }  # fmt: skip


def test_eks_aks_and_nvke_nodes() -> None:
    eks = nodes("eks")["gpu-h100-0"]
    assert eks["spec"]["providerID"] == "aws:///us-east-1a/i-00000000000000000"
    assert labels(eks)["eks.amazonaws.com/nodegroup"] == "gpu-h100"
    assert eks["metadata"]["annotations"][SANDBOX_HANDLER_ANNOTATION] == ""
    aks = nodes("aks")["gpu-h100-1"]
    assert aks["spec"]["taints"] == [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]
    assert labels(aks)["kubernetes.azure.com/agentpool"] == labels(aks)["agentpool"] == "gpupool"
    assert labels(aks)["topology.kubernetes.io/zone"] == "eastus-2"
    assert labels(aks)["node.kubernetes.io/instance-type"] == "Standard_ND96isr_H100_v5"
    assert aks["spec"]["providerID"].endswith(
        "/virtualMachineScaleSets/aks-gpupool-12345678-vmss/virtualMachines/1"
    )
    nvke = nodes("nvke")["gpu-h100-0"]
    assert platforms.load("nvke").driver == "operator"
    assert nvke["spec"] == {"taints": []}
    assert not {k for k in labels(nvke) if k.startswith(("topology.", "node.kubernetes.io/"))}


@pytest.mark.parametrize(
    ("platform", "node", "handler", "has"),
    [
        ("gke", "cpu-customer-0", "gvisor", True),
        ("gke", "cpu-customer-0", "runsc", False),
        ("gke", "cpu-system-0", "gvisor", False),
        ("kubeadm", "gpu-h100-0", "runsc", True),
        ("kubeadm", "gpu-h100-0", "gvisor", False),
        ("eks", "gpu-h100-0", "runsc", False),
    ],
    ids=["gke-sandbox-pool", "gke-no-runsc", "gke-other-pool", "kubeadm", "kubeadm-no-gvisor",
         "eks-none"],
)  # fmt: skip
def test_the_runtime_has_the_gvisor_handler_the_platform_names(
    tmp_path: Path, platform: str, node: str, handler: str, has: bool
) -> None:
    runsc = tmp_path / "runsc"
    runsc.write_text("")
    assert handlers.configured(handler, nodes(platform)[node], runsc, "nvidia") is has


def test_a_node_without_the_annotation_has_runsc(tmp_path: Path) -> None:
    runsc = tmp_path / "runsc"
    runsc.write_text("")
    assert handlers.configured("runsc", {"metadata": {"name": "karpenter-x"}}, runsc, "nvidia")


def test_profiles_refuse_unknown_keys_and_drivers() -> None:
    with pytest.raises(platforms.PlatformError, match="unknown keys taint"):
        platforms.parse({"driver": "operator", "taint": []}, source="x.yaml")
    with pytest.raises(platforms.PlatformError, match="driver: expected"):
        platforms.parse({"driver": "maybe"}, source="x.yaml")


def test_up_with_an_unknown_platform_exits_2_and_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = Sim(tmp_path / "run")
    assert main(["up", "--platform", "gkee"], sim=sim) == 2
    err = capsys.readouterr().err
    assert "unknown platform 'gkee'" in err and "did you mean gke?" in err
    assert not (tmp_path / "run").exists()


def test_platform_list_names_every_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == platforms.names()
    assert any(line.startswith("kubeadm") and line.endswith("(default)") for line in out)


@pytest.mark.parametrize("platform", ["kubeadm", "eks", "gke", "aks", "nvke"])
def test_gpu_nodes_carry_exactly_the_gpu_operators_deploy_labels(platform: str) -> None:
    # gpu-operator v25.10.1 controllers/state_manager.go: gpuStateLabels["container"],
    # all "true" whatever the driver mode, plus mig-manager on a MIG-capable GPU (H100).
    want = {f"nvidia.com/gpu.deploy.{o}": "true" for o in (
        "driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm",
        "dcgm-exporter", "node-status-exporter", "operator-validator", "mig-manager")}  # fmt: skip
    for name, n in nodes(platform).items():
        deploy = {k: v for k, v in labels(n).items() if k.startswith("nvidia.com/gpu.deploy.")}
        assert deploy == (want if name.startswith("gpu-") else {}), name


@pytest.mark.parametrize(("platform", "extra", "unschedulable"), [
    ("kubeadm", (), []),
    ("gke", (), []),
    ("aks", (), ["gpu-h100-0 (taint sku:NoSchedule)", "gpu-h100-1 (taint sku:NoSchedule)"]),
    ("aks", (Toleration("sku", "NoSchedule", "gpu"),), []),
], ids=["kubeadm", "gke-present", "aks-sku-gpu", "aks-with-toleration"])  # fmt: skip
def test_which_profiles_gpu_taint_the_gpu_probes_tolerate(
    platform: str, extra: tuple[Toleration, ...], unschedulable: list[str]
) -> None:
    # docs/checks.md, "GPU node taints on EKS / GKE / AKS": the probes tolerate
    # nvidia.com/gpu; AKS's sku=gpu needs --toleration.
    found = list(nodes(platform).values())
    for n in found:
        n["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    capacity = {n["metadata"]["name"]: allocatable_gpus(n) for n in found}
    plan = plan_nodes(found, capacity, {}, Placement(tolerations=extra))
    assert plan.unschedulable == unschedulable
    assert [t.node for t in plan.targets] == ([] if unschedulable else ["gpu-h100-0", "gpu-h100-1"])


def test_aks_pools_are_listed_as_az_lists_them_and_read_as_aks_installing_the_driver() -> None:
    from simcluster.nodes.platforms import load, pools

    from aicr.snapshot.aks import gpu_driver, parse_pools

    got = pools(load("aks"))
    assert [(p["name"], p["vmSize"], p["count"], p["mode"], p["nodeTaints"]) for p in got] == [
        ("gpupool", "Standard_ND96isr_H100_v5", 2, "User", ["sku=gpu:NoSchedule"]),
        ("userpool", "Standard_D16s_v5", 1, "User", None),
        ("systempool", "Standard_D16s_v5", 1, "System", None),
    ]
    parsed = parse_pools(json.dumps(got), "pools.json")
    assert [p.name for p in parsed if p.is_gpu] == ["gpupool"]
    assert gpu_driver(parsed) == "Install"
    assert all(pools(load(name)) == [] for name in ("eks", "gke", "kubeadm", "nvke"))
