"""dra-support on the simulated cluster, in DRA and device-plugin mode, healthy and broken.

The DRA driver is a stand-in kubelet-plugin DaemonSet whose pods really run
(`gpu_operator.gpu_node_daemon_set`); the slices and allocation are the
simulator's (real scheduler, `sim mode dra`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from deployhelp import run_check
from gpu_operator import daemon_sets_ready, gpu_node_daemon_set, restart_on
from harness import SimCluster

CHECK = "dra-support"
PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin"
NODE1 = "gpu-h100-1"
OFF_GPU = {"orchestrator_node_selector": {"aicr.dev/node-group": "system"}}
DRA_PASS = ("DRA works: resource.k8s.io/v1 served, claim lifecycle, driver healthy, a pod's "
            "claim got one GPU and its container saw exactly that GPU")  # fmt: skip


def recipe(ns: str, dra: bool) -> str:
    gpus = "true" if dra else "false"
    return (
        "- name: gpu-operator\n  namespace: gpu-operator\n"
        f"  overrides: {{devicePlugin: {{enabled: {'false' if dra else 'true'}}}}}\n"
        f"- name: nvidia-dra-driver-gpu\n  namespace: {ns}\n"
        f"  overrides: {{resources: {{gpus: {{enabled: {gpus}}}}}, "
        f"gpuResourcesEnabledOverride: {gpus}}}\n"
    )


@pytest.fixture
def driver(cluster: SimCluster, tmp_path: Path) -> Iterator[str]:
    """The stand-in DRA driver, ready on both GPU nodes."""
    ns = cluster.fresh_namespace("dra-drv")
    cluster.apply(gpu_node_daemon_set(PLUGIN), ns)
    cluster.wait_for(lambda: daemon_sets_ready(cluster, ns), 60, message="kubelet plugin ready")
    yield ns
    cluster.delete_namespace(ns, wait=False)


def config(tmp_path: Path) -> str:
    path = tmp_path / "config.yaml"
    path.write_text("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n"
                    f"  validate:\n    checks:\n      {CHECK}:\n        params: "
                    "{probeSeconds: 20}\n")  # fmt: skip
    return str(path)


def test_dra_mode_a_claim_gets_exactly_one_gpu(
    cluster: SimCluster, driver: str, tmp_path: Path
) -> None:
    cluster.set_mode("dra")
    test = run_check(cluster, tmp_path, CHECK, recipe(driver, True), phase="conformance")
    assert (test["status"], test["message"]) == ("passed", DRA_PASS)
    steps = [(s["title"], s["status"]) for s in test["extra"]["evidence"]]
    assert steps == [("API resource.k8s.io/v1", "passed"), ("claim lifecycle", "passed"),
                     ("DRA driver", "passed"), ("GPU through a claim", "passed"),
                     ("workloads", "passed")]  # fmt: skip
    assert re.search(r"allocated gpu-\d on gpu-h100-\d; ran on gpu-h100-\d; saw GPU-",
                     test["extra"]["evidence"][3]["answer"])  # fmt: skip


def test_device_plugin_mode_says_what_it_did_not_test(
    cluster: SimCluster, driver: str, tmp_path: Path
) -> None:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    test = run_check(cluster, tmp_path, CHECK, recipe(driver, False), phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", "DRA API served, claim lifecycle works and the DRA driver is healthy; GPU "
        "allocation through DRA not tested: the recipe advertises whole GPUs through the "
        "device plugin")  # fmt: skip


def test_dra_driver_down_fails_with_where_the_pod_got_to(
    cluster: SimCluster, driver: str, tmp_path: Path
) -> None:
    cluster.set_mode("dra")
    cluster.fault("dra-driver-down")
    test = run_check(cluster, tmp_path, CHECK, recipe(driver, True), phase="conformance",
                     config=config(tmp_path))  # fmt: skip
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "1/4 DRA steps failed: GPU through a claim: the pod did not finish within 20s: Pending"
    ), test["message"]


def test_an_unready_driver_pod_fails_the_driver_step(
    cluster: SimCluster, driver: str, tmp_path: Path
) -> None:
    cluster.set_mode("dra")
    cluster.fault("never-ready", NODE1)
    restart_on(cluster, driver, PLUGIN, NODE1)
    cluster.wait_for(lambda: not daemon_sets_ready(cluster, driver), 60, message="plugin unready")
    test = run_check(cluster, tmp_path, CHECK, recipe(driver, True), phase="conformance",
                     config=config(tmp_path), **OFF_GPU)  # fmt: skip
    assert test["status"] == "failed", test["message"]
    # the probe pod, when the scheduler puts it on the faulty node, never finishes either
    assert re.fullmatch(
        f"[12]/4 DRA steps failed: DRA driver: DaemonSet {driver}/{PLUGIN}: 1/2 pods ready; "
        f"Pod {driver}/{PLUGIN}-\\w+: is running but not ready"
        f"( \\| GPU through a claim: the pod did not finish within 20s: Running on {NODE1})?",
        test["message"]), test["message"]  # fmt: skip


def test_without_the_dra_driver_it_is_skipped(cluster: SimCluster, tmp_path: Path) -> None:
    test = run_check(cluster, tmp_path, CHECK, "- name: gpu-operator\n  namespace: gpu-operator\n",
                     phase="conformance")  # fmt: skip
    assert (test["status"], test["message"]) == (
        "skipped", "not applicable: the recipe deploys no nvidia-dra-driver-gpu (DRA is not part "
        "of the recipe)")  # fmt: skip
