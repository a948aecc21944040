"""accelerator-metrics on the simulated cluster: the real Prometheus, the GPU model's exporters.

Healthy, then three `hack/sim/sim fault` cases: one node's exporter down,
series without per-GPU labels, and frozen (stale) samples. Each runs `aicr validate` with the config
`hack/sim/sim config` prints (the Prometheus URL: the sim has no cluster DNS).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conformance_cluster import EXPORTER, exporters_ready
from deployhelp import run_check
from harness import SimCluster

pytestmark = pytest.mark.components("prometheus", "dcgm-exporter")

CHECK = "accelerator-metrics"
COMPONENTS = "- name: gpu-operator\n  namespace: gpu-operator\n"
NODE1 = SimCluster.gpu_nodes[1]


@pytest.fixture
def cluster(cluster: SimCluster) -> SimCluster:
    exporters_ready(cluster)
    return cluster


def _validate(cluster: SimCluster, tmp_path: Path) -> dict[str, Any]:
    config = cluster.validate_config()
    config["spec"]["validate"]["checks"][CHECK]["params"] = {"loadSeconds": 20,
                                                              "collectSeconds": 30}  # fmt: skip
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
    test = _validate(cluster, tmp_path)
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "2/2 accelerator metrics steps failed: exporter on gpu-h100-0: 8 DCGM_FI_DEV_GPU_UTIL "
        "series, none with per-GPU labels (gpu, UUID)")  # fmt: skip


def test_stale_samples_fail_as_stale(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.fault("exporter-stale")
    test = _validate(cluster, tmp_path)
    assert test["status"] == "failed", test["message"]
    prefix = ("1/4 accelerator metrics steps failed: utilization under load on gpu-h100-0: "
              "utilization did not rise under load within 30s: the exporter's samples are stale "
              "(stamped ")  # fmt: skip
    assert test["message"].startswith(prefix), test["message"]
