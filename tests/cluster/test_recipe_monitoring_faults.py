"""The faults on prometheus-operator and its `Prometheus` on a cluster `sim recipe` built.

The example recipes' kube-prometheus-stack values set `fullnameOverride: kube-prometheus`
(recipes/components/kube-prometheus-stack/values.yaml), so the install names the
`Prometheus` object `kube-prometheus-prometheus` and the operator's Deployment
`kube-prometheus-operator`, not the default release's `kube-prometheus-stack-*`. The
faults act on those objects and heal them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from deployhelp import ROOT
from harness import SimCluster
from kubernetes import client
from simcluster.components import install
from simcluster.scenarios import recipe

NS = "monitoring"
PROMETHEUS = "kube-prometheus-prometheus"
OPERATOR = "kube-prometheus-operator"


@pytest.fixture(scope="module")
def cluster(
    sim_cluster: SimCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SimCluster]:
    """kube-prometheus-stack installed from the kind-inference recipe's ref and values."""
    running = set(install.journal(sim_cluster.sim))
    if running & {"prometheus", "prometheus-operator"}:
        pytest.fail(f"prometheus already installed with other values: {sorted(running)}")
    source = yaml.safe_load((ROOT / "recipes/kind-inference.yaml").read_text())
    source["componentRefs"] = [
        r for r in source["componentRefs"] if r["chart"] == "kube-prometheus-stack"
    ]
    file = tmp_path_factory.mktemp("recipe") / "monitoring.yaml"
    file.write_text(yaml.safe_dump(source))
    plan = recipe.load(file, ROOT / "recipes")
    try:
        recipe.run(sim_cluster.sim, plan)
        yield sim_cluster
    finally:
        sim_cluster.reset()
        install.remove(sim_cluster.sim, ["prometheus", "prometheus-operator"])


def _replicas(cluster: SimCluster) -> int:
    dep = client.AppsV1Api(cluster.api()).read_namespaced_deployment(OPERATOR, NS)
    return int(dep.spec.replicas)


def _spec(cluster: SimCluster) -> dict[str, object]:
    made = client.CustomObjectsApi(cluster.api()).get_namespaced_custom_object(
        "monitoring.coreos.com", "v1", NS, "prometheuses", PROMETHEUS
    )
    return dict(made["spec"])


def test_monitoring_operator_down_stops_the_operator_the_recipe_named(cluster: SimCluster) -> None:
    assert _replicas(cluster) == 1
    cluster.fault("monitoring-operator-down")
    assert _replicas(cluster) == 0
    cluster.heal()
    assert _replicas(cluster) == 1


def test_scrape_body_limit_sets_the_limit_on_the_prometheus_the_recipe_named(
    cluster: SimCluster,
) -> None:
    assert "enforcedBodySizeLimit" not in _spec(cluster)
    cluster.fault("scrape-body-limit")
    assert _spec(cluster)["enforcedBodySizeLimit"] == "64B"
    cluster.heal()
    assert "enforcedBodySizeLimit" not in _spec(cluster)
