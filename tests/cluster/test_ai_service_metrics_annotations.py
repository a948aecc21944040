"""ai-service-metrics with Prometheus alone (no prometheus-operator): annotation discovery.

Healthy: without an operator stack in the recipe the workload is discovered through its
`prometheus.io/*` annotations and its requests counted exactly. Broken: a recipe that
deploys kube-prometheus-stack on a cluster without prometheus-operator's CRDs fails before
anything is created.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from deployhelp import run_check
from harness import SimCluster

from aicr.k8s import KubeTarget
from aicr.kubeapi import KubeApi, credentials
from aicr.runner import cleanup, names

pytestmark = pytest.mark.components("prometheus")

CHECK = "ai-service-metrics"


def _validate(cluster: SimCluster, tmp_path: Path, components: str) -> dict[str, Any]:
    config = cluster.validate_config()
    config["spec"]["validate"]["checks"][CHECK]["params"] = {
        "discoverSeconds": 60, "countSeconds": 20}  # fmt: skip
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    test = run_check(cluster, tmp_path, CHECK, components, phase="conformance", config=str(path))
    with KubeApi(credentials(KubeTarget(str(cluster.kubeconfig)))) as api:
        assert cleanup.remaining(api, names.run_selector(None)) == []
    return test


def test_annotated_workload_is_counted_exactly(cluster: SimCluster, tmp_path: Path) -> None:
    test = _validate(cluster, tmp_path, "- name: gpu-operator\n  namespace: gpu-operator\n")
    assert test["status"] == "passed", test["message"]
    assert re.fullmatch(r"Prometheus discovered the workload through annotations, scraped it "
                        r"and counted exactly 10 of 10 requests in \d+\.\d+s",
                        test["message"])  # fmt: skip


def test_the_stack_without_its_crds_fails(cluster: SimCluster, tmp_path: Path) -> None:
    test = _validate(cluster, tmp_path, "- name: kube-prometheus-stack\n  namespace: monitoring\n")
    assert (test["status"], test["message"]) == ("failed", (
        "1/1 service metrics steps failed: discovery: kube-prometheus-stack discovers workloads "
        "through PodMonitors, but the API server serves no podmonitors.monitoring.coreos.com "
        "(prometheus-operator's CRDs are not installed)"))  # fmt: skip
