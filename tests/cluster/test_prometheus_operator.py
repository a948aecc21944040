"""prometheus-operator runs for real: a `Prometheus` becomes the server, monitors configure it."""

from __future__ import annotations

import json

import pytest
from harness import SimCluster
from kubernetes.dynamic import DynamicClient

pytestmark = pytest.mark.components("prometheus-operator", "prometheus")

POD = "prometheus-kube-prometheus-stack-prometheus-0"


def test_operator_makes_the_server_and_a_pod_monitor_becomes_a_target(
    cluster: SimCluster,
) -> None:
    pod = cluster.pod("monitoring", POD)
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("StatefulSet", POD.rsplit("-", 1)[0])
    names = {c["name"] for c in pod["spec"]["containers"]}
    assert names == {"prometheus", "config-reloader"}
    url = cluster.validate_config()["spec"]["validate"]["checks"]["accelerator-metrics"][
        "prometheusUrl"
    ]
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "self", "namespace": "monitoring"},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
            "podMetricsEndpoints": [{"port": "web", "interval": "1s"}],
        },
    }
    cluster.apply(monitor)
    try:

        def scraped() -> list[dict[str, str]]:
            _, text = cluster.http_get(f"{url}/api/v1/targets")
            active = json.loads(text)["data"]["activeTargets"]
            return [t for t in active if t["scrapePool"] == "podMonitor/monitoring/self/0"
                    and t["health"] == "up"]  # fmt: skip

        # operator -> config Secret -> reloader -> Prometheus reload -> a healthy target
        targets = cluster.wait_for(scraped, timeout=60, message="the PodMonitor's target up")
        assert targets[0]["labels"]["pod"] == POD
    finally:
        DynamicClient(cluster.api()).resources.get(
            api_version="monitoring.coreos.com/v1", kind="PodMonitor"
        ).delete(name="self", namespace="monitoring")
