"""accelerator-metrics on the simulated cluster: the real Prometheus, the GPU model's exporters.

Healthy, then three `hack/sim/sim fault` cases: one node's exporter down,
series without per-GPU labels, and frozen (stale) samples; a node whose GPUs are
all held (the load goes to the other one); DCGM's load generator refusing a
non-root user (exit 227), as the GPU model plays it. Each runs `aicr validate` with the config
`hack/sim/sim config` prints (the Prometheus URL: the sim has no cluster DNS).

In DRA mode (`sim mode dra`, the real scheduler allocating claims): healthy (the
load's GPU comes from a claim and its series is the claimed device's), a node
whose ResourceSlice is gone (the load goes to the other node), and an exporter
that does not map DRA devices to pods (`exporter-no-dra`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conformance_cluster import EXPORTER, exporters_ready, exporters_serve
from deployhelp import run_check, run_conformance_with_sim_config
from harness import SimCluster
from kubernetes.dynamic import DynamicClient

from aicr.parsers import dcgm

pytestmark = pytest.mark.components("prometheus", "dcgm-exporter")

CHECK = "accelerator-metrics"
COMPONENTS = "- name: gpu-operator\n  namespace: gpu-operator\n"
DRA = ("- name: gpu-operator\n  namespace: gpu-operator\n"
       "  overrides: {devicePlugin: {enabled: false}}\n"
       "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
       "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n")
PARAMS = {"loadSeconds": 20, "collectSeconds": 30}
NODE0 = SimCluster.gpu_nodes[0]
NODE1 = SimCluster.gpu_nodes[1]


@pytest.fixture
def cluster(cluster: SimCluster) -> SimCluster:
    exporters_ready(cluster)
    return cluster


def _validate(cluster: SimCluster, tmp_path: Path) -> dict[str, Any]:
    config = cluster.validate_config()
    config["spec"]["validate"]["checks"][CHECK]["params"] = PARAMS
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return run_check(cluster, tmp_path, CHECK, COMPONENTS, phase="conformance", config=str(path))


def test_healthy_cluster_passes(cluster: SimCluster, tmp_path: Path) -> None:
    test = _validate(cluster, tmp_path)
    assert (test["status"], test["message"]) == (
        "passed", "per-GPU metrics exported on 2 GPU nodes (16 GPUs), collected by Prometheus, "
        "utilization rose under load")  # fmt: skip


def test_an_exporter_down_fails_naming_its_node(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.fault("exporter-down", NODE1)
    # It stops serving at once; its readiness probe says so a few seconds later.
    core = cluster.core()

    def unready() -> bool:
        pods = core.list_namespaced_pod("gpu-operator", label_selector=EXPORTER,
                                        field_selector=f"spec.nodeName={NODE1}").items
        return bool(pods) and not any(c.type == "Ready" and c.status == "True"
                                      for c in pods[0].status.conditions or [])  # fmt: skip

    cluster.wait_for(unready, timeout=30, message=f"the exporter on {NODE1} to be unready")
    test = _validate(cluster, tmp_path)
    assert (test["status"], test["message"]) == (
        "failed", f"1/2 accelerator metrics steps failed: exporter on {NODE1}: no ready exporter "
        f"pod on {NODE1}")  # fmt: skip


def test_series_without_gpu_labels_fail(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.fault("exporter-unlabelled")
    exporters_serve(cluster, lambda page: "DCGM_FI_DEV_GPU_UTIL{" in page and "UUID=" not in page,
                    "series without per-GPU labels")  # fmt: skip
    test = _validate(cluster, tmp_path)
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "2/2 accelerator metrics steps failed: exporter on gpu-h100-0: 8 DCGM_FI_DEV_GPU_UTIL "
        "series, none with per-GPU labels (gpu, UUID)")  # fmt: skip


def _frozen(page: str) -> bool:
    """Every sample carries the explicit timestamp of the freeze."""
    samples = dcgm.parse(page).samples
    return bool(samples) and all(s.timestamp is not None for s in samples)


def test_stale_samples_fail_as_stale(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.fault("exporter-stale")
    exporters_serve(cluster, _frozen, "frozen samples")
    test = _validate(cluster, tmp_path)
    assert test["status"] == "failed", test["message"]
    prefix = ("1/4 accelerator metrics steps failed: utilization under load on gpu-h100-0: "
              "utilization did not rise under load within 32s: the exporter's samples are stale "
              "(stamped ")  # fmt: skip
    assert test["message"].startswith(prefix), test["message"]


def test_the_load_goes_to_a_node_with_a_free_gpu(cluster: SimCluster, tmp_path: Path) -> None:
    with cluster.namespace("busy") as ns:
        holder = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "holder"}, "spec": {
            "nodeSelector": {"kubernetes.io/hostname": NODE0}, "restartPolicy": "Never",
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "600"],
                            "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}  # fmt: skip
        cluster.apply([holder], ns)
        cluster.wait_for_phase(ns, "holder", "Running", timeout=60)
        test = _validate(cluster, tmp_path)
    assert (test["status"], test["message"]) == (
        "passed", "per-GPU metrics exported on 2 GPU nodes (16 GPUs), collected by Prometheus, "
        "utilization rose under load")  # fmt: skip
    step = next(s for s in test["extra"]["evidence"] if s["title"].startswith("utilization"))
    assert step["title"] == f"utilization under load on {NODE1}", step
    # the sim's exporters collect every second (its knob, as DCGM_EXPORTER_INTERVAL)
    assert "2 collection intervals of 1000 ms (DCGM_EXPORTER_INTERVAL=1000)" in step["asked"]


def test_dcgm_refuses_a_non_root_load_with_its_exit_code(cluster: SimCluster) -> None:
    """The GPU model plays dcgmproftester12 as DCGM does without root: exit 227, no load."""
    with cluster.namespace("nonroot") as ns:
        # the run label makes the sim's process runtime play it (KWOK only shows pods running)
        meta = {"name": "load", "labels": {"aicr.dev/run-id": "nonroot"}}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {
            "nodeSelector": {"kubernetes.io/hostname": NODE1}, "restartPolicy": "Never",
            "securityContext": {"runAsUser": 1000},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": "gpu-load",
                            "image": "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04",
                            "command": ["dcgmproftester12", "--no-dcgm-validation", "-t", "1004",
                                        "-d", "30"],
                            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}  # fmt: skip
        cluster.apply([pod], ns)
        done = cluster.wait_for_phase(ns, "load", "Failed", "Succeeded", timeout=60)
        state = done["status"]["containerStatuses"][0]["state"]["terminated"]
        log = cluster.core().read_namespaced_pod_log("load", ns)
    assert (done["status"]["phase"], state["exitCode"]) == ("Failed", 227)
    assert log == "CacheManager Init Failed. Error: -29\n"


# ---- DRA mode -------------------------------------------------------------------------
def _validate_dra(cluster: SimCluster, tmp_path: Path) -> dict[str, Any]:
    """The check in DRA mode; the run must leave nothing (claims and templates included)."""
    return run_conformance_with_sim_config(cluster, tmp_path, CHECK, DRA, PARAMS)


def _load_step(test: dict[str, Any]) -> dict[str, Any]:
    steps = test["extra"]["evidence"]
    return next(s for s in steps if s["title"] == f"utilization under load on {NODE0}")


def test_dra_the_claimed_gpus_utilization_rises(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.set_mode("dra")
    test = _validate_dra(cluster, tmp_path)
    assert (test["status"], test["message"]) == (
        "passed", "per-GPU metrics exported on 2 GPU nodes (16 GPUs), collected by Prometheus, "
        "utilization rose under load on the GPU allocated to its DRA claim")  # fmt: skip
    answer = _load_step(test)["answer"]
    # the claim's device, and the exporter's DRA labels for it naming the same device
    m = re.fullmatch(r"GPU (\d) \((GPU-[^;]+); " + NODE0 + r"/gpu-(\d) of claim ([^/]+)/"
                     r"(gpu-load-gpu-\w+)\): 0% before, 100% on the exporter \(pod \4/gpu-load "
                     r"\(dra_claim_name=\5, dra_claim_namespace=\4, "
                     r"dra_driver_name=gpu.nvidia.com, dra_pool_name=" + NODE0
                     + r", dra_device_name=gpu-\3\)\) and 100% in Prometheus under load",
                     answer)  # fmt: skip
    assert m, answer
    assert m.group(1) == m.group(3)


def test_dra_a_node_whose_driver_publishes_no_gpus_gets_no_load(
    cluster: SimCluster, tmp_path: Path
) -> None:
    """The DRA driver no longer publishes NODE0's GPUs: no claim could be allocated there, so
    the load goes to NODE1, whose published GPUs are free (a claim that is never allocated
    fails with its status: the unit tests)."""
    cluster.set_mode("dra")
    slices = DynamicClient(cluster.api()).resources.get(api_version="resource.k8s.io/v1",
                                                        kind="ResourceSlice")  # fmt: skip
    slices.delete(name=f"{NODE0}-gpu.nvidia.com")
    test = _validate_dra(cluster, tmp_path)
    assert test["status"] == "passed", test["message"]
    step = next(s for s in test["extra"]["evidence"] if s["title"].startswith("utilization"))
    assert step["title"] == f"utilization under load on {NODE1}", step
    assert f"{NODE1}/gpu-" in step["answer"], step["answer"]


def test_dra_an_exporter_that_maps_no_claims_fails(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.set_mode("dra")
    cluster.fault("exporter-no-dra", NODE0)
    test = _validate_dra(cluster, tmp_path)
    assert test["status"] == "failed", test["message"]
    m = re.fullmatch(r"1/4 accelerator metrics steps failed: utilization under load on "
                     + NODE0 + r": GPU GPU-\S+ \(" + NODE0 + r"/gpu-\d of claim [^/]+/"
                     r"gpu-load-gpu-\w+\) is busy but the exporter attributes it to no pod, not "
                     r"to the load pod [^/]+/gpu-load \(dcgm-exporter maps DRA-allocated GPUs to "
                     r"pods only with KUBERNETES_ENABLE_DRA\)", test["message"])  # fmt: skip
    assert m, test["message"]
