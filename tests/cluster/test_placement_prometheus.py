"""The ai-service-metrics placement bug, reproduced and fixed on the simulated cluster.

Two CPU node groups ("customer", "system") that cannot reach each other on the
modelled clusters; Prometheus runs on the system node; the validator image is
already on the customer node, so image-locality scoring pulls the check pod there.
Without the podAffinity the pod lands on the customer node; with it, on the
Prometheus node, every time.
"""

from __future__ import annotations

import pytest
from harness import SimCluster
from runhelp import make_ctx, planned, remaining, run_one

from aicr.runner.job import JobExecutor

RUNS = 10
SYSTEM, CUSTOMER = "cpu-system-0", "cpu-customer-0"


@pytest.fixture
def prometheus_on_system_node(cluster: SimCluster) -> str:
    ns = cluster.fresh_namespace("monitoring")
    cluster.apply(
        f"""
apiVersion: v1
kind: Pod
metadata:
  name: prometheus-k8s-0
  labels: {{app.kubernetes.io/name: prometheus}}
spec:
  nodeSelector: {{kubernetes.io/hostname: {SYSTEM}}}
  containers: [{{name: prometheus, image: quay.io/prometheus/prometheus:v3.1.0}}]
""",
        namespace=ns,
    )
    cluster.wait_for_phase(ns, "prometheus-k8s-0", "Running")
    # the image is bigger than image-locality's ceiling, so its score is maximal
    cluster.set_node_images(CUSTOMER, [cluster.validator_image], size_bytes=2_000_000_000)
    return ns


def _recipe(ns: str) -> str:
    return f"componentRefs:\n  - name: kube-prometheus-stack\n    namespace: {ns}\n"


def _nodes(cluster: SimCluster, ns: str, affinity: bool) -> list[str | None]:
    nodes = []
    for _ in range(RUNS):
        ctx = make_ctx(cluster, recipe=_recipe(ns))
        check = planned("ai-service-metrics", queries_prometheus=affinity)
        result, left = run_one(JobExecutor(), ctx, check)
        assert left == [] and remaining(cluster, ctx.run_id) == []
        nodes.append(result.node)
    return nodes


def test_without_affinity_image_locality_wins(
    cluster: SimCluster, prometheus_on_system_node: str
) -> None:
    nodes = _nodes(cluster, prometheus_on_system_node, affinity=False)
    assert nodes == [CUSTOMER] * RUNS


def test_with_affinity_the_check_runs_next_to_prometheus(
    cluster: SimCluster, prometheus_on_system_node: str
) -> None:
    nodes = _nodes(cluster, prometheus_on_system_node, affinity=True)
    assert nodes == [SYSTEM] * RUNS
