"""Platform components run as pods of the cluster with their real binaries (`sim up --with`)."""

from __future__ import annotations

import json

import pytest
from harness import SimCluster
from simcluster.__main__ import main

pytestmark = pytest.mark.components("prometheus")


def _prometheus_url(cluster: SimCluster) -> str:
    checks = cluster.validate_config()["spec"]["validate"]["checks"]
    url: str = checks["accelerator-metrics"]["prometheusUrl"]
    return url


def test_prometheus_is_the_real_server_discovering_pods(cluster: SimCluster) -> None:
    url = _prometheus_url(cluster)
    pod = cluster.pod("monitoring", "prometheus-kube-prometheus-stack-prometheus-0")
    assert url == f"http://{pod['status']['podIP']}:9090"
    status, body = cluster.http_get(f"{url}/api/v1/status/buildinfo")
    assert (status, json.loads(body)["data"]["version"]) == (200, "3.5.0")

    def discovered() -> list[str]:
        _, text = cluster.http_get(f"{url}/api/v1/targets?state=any")
        data = json.loads(text)["data"]
        return [t["discoveredLabels"].get("__meta_kubernetes_pod_name", "")
                for t in data["activeTargets"] + data["droppedTargets"]]  # fmt: skip

    # kubernetes_sd through the API server with its ServiceAccount: it sees its own pod.
    names = cluster.wait_for(discovered, timeout=30, message="Prometheus to discover pods")
    assert "prometheus-kube-prometheus-stack-prometheus-0" in names


def test_status_and_config_name_the_running_component(
    cluster: SimCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status"], cluster.sim) == 0
    out = capsys.readouterr().out
    assert "component prometheus v0.305.0: ready\n" in out
    assert main(["config"], cluster.sim) == 0
    out = capsys.readouterr().out
    assert f"prometheusUrl: {_prometheus_url(cluster)}" in out
    assert "kind: ValidateConfig" in out
