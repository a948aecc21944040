"""ai-service-metrics on the simulated cluster: the real prometheus-operator and Prometheus.

Healthy (a PodMonitor the operator turns into a scrape job, ten requests counted
exactly), then three `hack/sim/sim fault` cases: every scrape failing on
Prometheus's body size limit, a second job collecting the workload twice, and the
operator not running (last: its heal restarts the operator). Each runs `aicr validate`
with the config `hack/sim/sim config` prints (the Prometheus URL: the sim has no cluster
DNS) and leaves nothing behind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_conformance_with_sim_config
from harness import SimCluster
from simcluster.components import prometheus

pytestmark = pytest.mark.components("prometheus-operator", "prometheus")

CHECK = "ai-service-metrics"
COMPONENTS = "- name: kube-prometheus-stack\n  namespace: monitoring\n"
TARGET = r"10\.244\.\d+\.\d+:8080"


def _prometheus(cluster: SimCluster) -> str:
    return str(cluster.validate_config()["spec"]["validate"]["checks"][CHECK]["prometheusUrl"])


def _loaded(cluster: SimCluster, present: str | None, absent: tuple[str, ...] = ()) -> None:
    """Wait until the configuration Prometheus runs has `present` and none of `absent`.

    A fault on the `Prometheus` object returns once Prometheus was restarted on the
    configuration the operator wrote; this reads what the server itself runs.
    """
    url = f"{_prometheus(cluster)}/api/v1/status/config"

    def settled() -> bool:
        status, body = cluster.http_get(url)
        text = json.loads(body)["data"]["yaml"] if status == 200 else ""
        return (present is None or present in text) and not any(a in text for a in absent)

    cluster.wait_for(settled, timeout=90, interval=2, message=f"Prometheus to load {present}")


def _validate(cluster: SimCluster, tmp_path: Path, discover: int) -> dict[str, Any]:
    params = {"discoverSeconds": discover, "countSeconds": 20}
    return run_conformance_with_sim_config(cluster, tmp_path, CHECK, COMPONENTS, params)


@pytest.fixture(scope="module", autouse=True)
def _settled_at_the_end(sim_cluster: SimCluster, _module_components: None) -> Iterator[None]:
    """The last fault's heal has been rolled out before the components are removed."""
    yield
    sim_cluster.reset()
    _loaded(sim_cluster, None, ("body_size_limit", "sim-duplicate-pods"))


@pytest.fixture
def healed(cluster: SimCluster) -> SimCluster:
    """No fault's change is left in the configuration Prometheus runs, and its reloader
    watches it (a pod the operator re-creates misses changes until it does)."""
    cluster.wait_for(lambda: prometheus.ready(cluster.api()) is None, timeout=90,
                     message="Prometheus and its config reloader to be ready")  # fmt: skip
    _loaded(cluster, None, ("body_size_limit", "sim-duplicate-pods"))
    return cluster


def test_healthy_cluster_counts_every_request(healed: SimCluster, tmp_path: Path) -> None:
    test = _validate(healed, tmp_path, discover=60)
    assert test["status"] == "passed", test["message"]
    assert re.fullmatch(r"Prometheus discovered the workload through PodMonitor, scraped it and "
                        r"counted exactly 10 of 10 requests in \d+\.\d+s",
                        test["message"])  # fmt: skip
    assert test["requirements"]["ai_service_metrics"] == "Implemented", test["requirements"]


def test_a_failing_scrape_fails_with_prometheus_error(healed: SimCluster, tmp_path: Path) -> None:
    healed.fault("scrape-body-limit")
    _loaded(healed, "body_size_limit")
    test = _validate(healed, tmp_path, discover=30)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(rf"1/3 service metrics steps failed: target up: the scrape of "
                        rf"http://{TARGET}/metrics fails after 30s: .*body size limit exceeded.*",
                        test["message"])  # fmt: skip


def test_a_workload_collected_twice_double_counts(healed: SimCluster, tmp_path: Path) -> None:
    healed.fault("duplicate-scrape")
    _loaded(healed, "sim-duplicate-pods")
    test = _validate(healed, tmp_path, discover=60)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(r"1/6 service metrics steps failed: requests counted: the collected value "
                        r"rose by 20, more than the 10 requests sent \(2 series for one counter: "
                        r"(\S+/service-metrics; sim-duplicate-pods|sim-duplicate-pods; "
                        r"\S+/service-metrics): the workload is collected more than once\)",
                        test["message"])  # fmt: skip


def test_without_the_operator_no_target_appears(healed: SimCluster, tmp_path: Path) -> None:
    healed.fault("monitoring-operator-down")
    test = _validate(healed, tmp_path, discover=20)
    assert test["status"] == "failed", test["message"]
    assert re.fullmatch(rf"1/3 service metrics steps failed: target up: Prometheus has no target "
                        rf"for the workload \({TARGET}\) after 20s: its PodMonitor was not turned "
                        r"into a scrape target", test["message"])  # fmt: skip
