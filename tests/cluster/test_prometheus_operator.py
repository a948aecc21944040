"""prometheus-operator runs for real: a `Prometheus` object becomes the server with its reloader."""

from __future__ import annotations

import json

import pytest
from harness import SimCluster
from kubernetes import client

pytestmark = pytest.mark.components("prometheus-operator", "prometheus")

POD = "prometheus-kube-prometheus-stack-prometheus-0"


def test_operator_makes_the_server_from_a_prometheus_object(cluster: SimCluster) -> None:
    pod = cluster.pod("monitoring", POD)
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("StatefulSet", POD.rsplit("-", 1)[0])
    assert {c["name"] for c in pod["spec"]["containers"]} == {"prometheus", "config-reloader"}
    checks = cluster.validate_config()["spec"]["validate"]["checks"]
    url = checks["accelerator-metrics"]["prometheusUrl"]
    status, body = cluster.http_get(f"{url}/api/v1/status/config")
    assert status == 200
    # The operator's generated configuration, written by the reloader, is what it runs.
    assert "scrape_interval: 1s" in json.loads(body)["data"]["yaml"]
    ext = client.ApiextensionsV1Api(cluster.api())
    crds = {c.metadata.name for c in ext.list_custom_resource_definition().items}
    assert {"servicemonitors.monitoring.coreos.com", "podmonitors.monitoring.coreos.com"} <= crds
