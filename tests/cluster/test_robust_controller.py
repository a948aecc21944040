"""robust-controller on the simulated cluster against the real KubeRay v1.5.0 and its webhook.

Healthy, then three faults: the operator down with its webhook failing closed
(`webhook-down`), the same with the webhook failing open (`webhook-fail-open`
too), and an operator that serves its webhook but reconciles nothing
(`operator-not-reconciling`). Each asserts status, message and that nothing
the check made is left: no workload namespace, no RayCluster, no Ray pod.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from component_logs import logs_on_failure
from deployhelp import run_check
from harness import SimCluster
from kubernetes import client
from simcluster.cluster import kube
from simcluster.components import kuberay

pytestmark = pytest.mark.components("kuberay")
logged = logs_on_failure(kuberay.NAMESPACE, "app.kubernetes.io/name=kuberay")

CHECK = "robust-controller"
COMPONENTS = "- name: kuberay-operator\n  namespace: ray-system\n"
UNREACHABLE = (
    "webhook unreachable: HTTP 500 Internal Server Error: Internal error occurred: failed calling "
    'webhook "vraycluster.kb.io": failed to call webhook: Post '
    '"https://kuberay-webhook-service.ray-system.svc:443/validate-ray-io-v1-raycluster?timeout=10s"'
)


def _settled(cluster: SimCluster) -> None:
    """One operator pod of the current template, ready, and its webhook answering."""
    apps, core = client.AppsV1Api(cluster.api()), cluster.core()

    def rolled_out() -> bool:
        dep = apps.read_namespaced_deployment(kuberay.NAME, kuberay.NAMESPACE)
        pods = core.list_namespaced_pod(
            kuberay.NAMESPACE, label_selector="app.kubernetes.io/name=kuberay"
        ).items
        s = dep.status
        return (s.observed_generation == dep.metadata.generation and dep.spec.replicas == 1
                and s.updated_replicas == 1 and s.available_replicas == 1 and len(pods) == 1
                and not any(p.metadata.deletion_timestamp for p in pods))  # fmt: skip

    cluster.wait_for(rolled_out, timeout=90, message="the KubeRay operator rolled out")
    cluster.wait_for(lambda: kuberay.ready(cluster.api()) is None, timeout=60,
                     message="KubeRay's webhook answering")  # fmt: skip


@pytest.fixture
def ray(cluster: SimCluster) -> Iterator[SimCluster]:
    _settled(cluster)
    yield cluster
    cluster.heal()
    _settled(cluster)


def _validate(cluster: SimCluster, tmp_path: Path, params: str = "{}") -> dict[str, Any]:
    path = tmp_path / "config.yaml"
    path.write_text("{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: "
                    f"{{validate: {{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}\n")  # fmt: skip
    return run_check(cluster, tmp_path, CHECK, COMPONENTS, phase="conformance", config=str(path))


def steps(test: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["title"], s["status"]) for s in test["extra"]["evidence"]]


def leftovers(cluster: SimCluster) -> list[str]:
    """Workload namespaces, RayClusters and Ray pods anywhere."""
    core = cluster.core()
    spaces = [f"Namespace {n.metadata.name}" for n in core.list_namespace().items
              if CHECK in n.metadata.name]  # fmt: skip
    res = kube.dynamic(cluster.api()).resources.get(api_version="ray.io/v1", kind="RayCluster")
    clusters = [f"RayCluster {r.metadata.namespace}/{r.metadata.name}" for r in res.get().items]
    pods = [f"Pod {p.metadata.namespace}/{p.metadata.name}" for p in
            core.list_pod_for_all_namespaces(label_selector="ray.io/cluster").items]  # fmt: skip
    return spaces + clusters + pods


@logged
def test_healthy_kuberay_passes(ray: SimCluster, tmp_path: Path) -> None:
    test = _validate(ray, tmp_path)
    assert (test["status"], test["message"]) == ("passed", (
        "KubeRay: controller available, CRDs established, vraycluster.kb.io refused the invalid "
        "resource, a valid one reconciled and its children were garbage-collected"))  # fmt: skip
    assert steps(test) == [
        ("operator", "informational"),
        ("controller Deployment ray-system/kuberay-operator", "passed"),
        ("CRDs established", "passed"),
        ("webhook vraycluster.kb.io registered", "passed"),
        ("invalid RayCluster refused by the webhook", "passed"),
        ("valid RayCluster reconciled", "passed"),
        ("RayCluster deleted, children garbage-collected", "passed"),
        ("workloads", "passed"),
    ]
    by_title = {s["title"]: s for s in test["extra"]["evidence"]}
    denial = by_title["invalid RayCluster refused by the webhook"]["answer"]
    assert 'admission webhook "vraycluster.kb.io" denied the request' in denial
    assert "worker group names must be unique" in denial
    made = by_title["valid RayCluster reconciled"]["answer"]
    assert "state ready" in made and "Service aicr-valid-head-svc" in made, made
    assert leftovers(ray) == []


@logged
def test_webhook_down_failing_closed_is_unreachable(ray: SimCluster, tmp_path: Path) -> None:
    ray.fault("webhook-down")
    ray.wait_for(lambda: kuberay.ready(ray.api()) is not None, timeout=60,
                 message="the webhook call to fail")  # fmt: skip
    test = _validate(ray, tmp_path)
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "2/4 robust controller steps failed: controller Deployment ray-system/kuberay-operator: "
        "ray-system/kuberay-operator: 0/0 replicas available | invalid RayCluster refused by the "
        f"webhook: {UNREACHABLE}"), test["message"]  # fmt: skip
    assert leftovers(ray) == []


@logged
def test_webhook_down_failing_open_admits_the_invalid_cr(ray: SimCluster, tmp_path: Path) -> None:
    ray.fault("webhook-fail-open")
    ray.fault("webhook-down")
    test = _validate(ray, tmp_path)
    assert test["status"] == "failed", test["message"]
    assert test["message"].endswith(
        "invalid RayCluster refused by the webhook: invalid RayCluster accepted without webhook "
        "review (vraycluster.kb.io has failurePolicy Ignore)"), test["message"]  # fmt: skip
    assert leftovers(ray) == []


@logged
def test_an_operator_that_reconciles_nothing_fails_at_the_bound(
    ray: SimCluster, tmp_path: Path
) -> None:
    ray.fault("operator-not-reconciling")
    _settled(ray)
    test = _validate(ray, tmp_path, "{reconcileSeconds: 10}")
    assert (test["status"], test["message"]) == ("failed", (
        "1/5 robust controller steps failed: valid RayCluster reconciled: RayCluster "
        f"{workload_ns(test)}/aicr-valid not reconciled within 10s beyond its image pulls "
        "(image pulls took 0s, bound 1200s); last status: no status "
        "(never reconciled)"))  # fmt: skip
    assert steps(test)[-1] == ("workloads", "passed")
    assert leftovers(ray) == []


def workload_ns(test: dict[str, Any]) -> str:
    by_title = {s["title"]: s for s in test["extra"]["evidence"]}
    asked = by_title["valid RayCluster reconciled"]["asked"]
    return str(asked.split("RayCluster ", 1)[1].split("/", 1)[0])
