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
from deployhelp import run_conformance_with_sim_config
from harness import SimCluster

pytestmark = pytest.mark.components("prometheus")

CHECK = "ai-service-metrics"


def _validate(cluster: SimCluster, tmp_path: Path, components: str) -> dict[str, Any]:
    params = {"discoverSeconds": 60, "countSeconds": 20}
    return run_conformance_with_sim_config(cluster, tmp_path, CHECK, components, params)


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
