"""pod-autoscaling on the simulated cluster: real Prometheus, prometheus-adapter, HPA controller.

Prometheus scrapes the check's GPU pods by their pod IPs, prometheus-adapter serves
their gauge through `v1beta1.custom.metrics.k8s.io`, and kube-controller-manager's
HPA controller (5 s sync period, a sim knob) scales the Deployment. Healthy, then
`sim fault adapter-down` (the HPA's FailedGetPodsMetric) and no APIService at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from deployhelp import SNAPSHOT, recipe_text
from harness import SimCluster
from kubernetes import client

from aicr import validate
from aicr.kube.target import KubeTarget
from aicr.runner.events import Event, EventKind

pytestmark = pytest.mark.components("prometheus", "prometheus-adapter")

CHECK = "pod-autoscaling"
COMPONENTS = "- name: gpu-operator\n  namespace: gpu-operator\n"
DRA = ("- name: gpu-operator\n  namespace: gpu-operator\n"
       "  overrides: {devicePlugin: {enabled: false}}\n"
       "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
       "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n")
API_SERVICE = "v1beta1.custom.metrics.k8s.io"
METRIC = "aicr_autoscaling_load"


def _validate(cluster: SimCluster, tmp_path: Path, finished: Callable[[], Any] | None = None,
              recipe: str = COMPONENTS, **params: Any) -> dict[str, Any]:  # fmt: skip
    """Validate the conformance phase with only this check; its CTRF test, and in its
    ``requirements`` the status of each CNCF requirement the run's summary shows.

    ``finished`` runs as soon as the check's result is in, before the run's cleanup.
    """

    def events(event: Event) -> None:
        if event.kind == EventKind.CHECK_FINISHED and finished is not None:
            finished()

    config = cluster.validate_config()
    config["spec"]["validate"]["checks"][CHECK] = {"params": params}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "recipe.yaml").write_text(recipe_text(recipe, [CHECK], phase="conformance"))
    outcome = validate.run(validate.ValidateRequest(
        recipe=str(tmp_path / "recipe.yaml"), snapshot=SNAPSHOT, phases=("conformance",),
        kube=KubeTarget(str(cluster.kubeconfig)), image=cluster.validator_image,
        executor="job", config=str(tmp_path / "config.yaml")), events=events)  # fmt: skip
    tests = [t.model_dump(mode="json", exclude_none=True) for t in outcome.report.results.tests]
    assert [t["name"] for t in tests] == [CHECK], tests
    rows = ((outcome.report.extra or {}).get("aicr") or {}).get("cncf", {}).get("requirements")
    return {**tests[0], "requirements": {r["id"]: r["status"] for r in rows or []}}


def _section(test: dict[str, Any], title: str) -> dict[str, Any]:
    sections = test["extra"]["evidence"]
    return next(s for s in sections if s["title"] == title)


def _nothing_left(cluster: SimCluster) -> None:
    """No HPA, Deployment or pod of the check anywhere once the run is over."""
    autoscaling = client.AutoscalingV2Api(cluster.api())
    apps = client.AppsV1Api(cluster.api())
    selector = "aicr.dev/app=gpu-autoscaled"
    assert autoscaling.list_horizontal_pod_autoscaler_for_all_namespaces().items == []
    assert apps.list_deployment_for_all_namespaces(label_selector=selector).items == []
    assert cluster.core().list_pod_for_all_namespaces(label_selector=selector).items == []


def _available(cluster: SimCluster) -> bool:
    api = client.ApiregistrationV1Api(cluster.api())
    try:
        obj = api.read_api_service(API_SERVICE)
    except client.ApiException:
        return False
    return any(c.type == "Available" and c.status == "True" for c in obj.status.conditions or [])


@pytest.fixture
def cluster(cluster: SimCluster) -> SimCluster:
    cluster.wait_for(lambda: _available(cluster), timeout=60,
                     message=f"APIService {API_SERVICE} to be Available")  # fmt: skip
    return cluster


@pytest.mark.parametrize("dra", [False, True], ids=["device-plugin", "dra"])
def test_healthy_cluster_scales_gpu_pods_up_and_down(
    cluster: SimCluster, tmp_path: Path, dra: bool
) -> None:
    if dra:
        cluster.set_mode("dra")
    test = _validate(cluster, tmp_path, recipe=DRA if dra else COMPONENTS)
    print(test["duration"], *(f"{s['title']}: {s['answer']}" for s in test["extra"]["evidence"]),
          sep="\n")  # the figures in the test's output (-s)
    assert (test["status"], test["message"]) == (
        "passed", f"HPA on {METRIC} (custom metrics API) scaled GPU pods 1 -> 2 -> 1 "
        f"({'DRA' if dra else 'device plugin'})")  # fmt: skip
    assert _section(test, "custom metrics API")["answer"] == (
        f"APIService {API_SERVICE} (service monitoring/prometheus-adapter:443): Available")
    up = _section(test, "scale up")["answer"]
    assert re.match(r"new pod gpu-autoscaled-\S+ on gpu-h100-[01]; desired 2", up), up
    timeline = _section(test, "HPA timeline")["answer"]
    assert re.search(r"metric 40 desired 2", timeline), timeline
    assert re.search(r"metric 0 desired 1", timeline), timeline
    assert _section(test, "workloads")["status"] == "passed"
    assert test["requirements"]["pod_autoscaling"] == "Implemented"
    _nothing_left(cluster)


def test_adapter_down_fails_with_the_hpas_failed_get_pods_metric(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("adapter-down")
    # Healed once the verdict is in: while an aggregated API is unavailable the namespace
    # controller cannot finish deleting namespaces, so the run's cleanup would wait for it.
    test = _validate(cluster, tmp_path, lambda: cluster.heal(), metricSeconds=15)
    assert test["status"] == "failed", test["message"]
    assert re.match(
        rf"1/2 autoscaling steps failed: metric read by the HPA: the HPA could not read {METRIC} "
        r"within 15s: AbleToScale=True SucceededGetScale: the HPA controller was able to get the "
        r"target's current scale; ScalingActive=False FailedGetPodsMetric: the HPA was unable "
        rf"to compute the replica count: unable to get metric {METRIC}: unable to fetch metrics "
        r"from custom metrics API: ", test["message"]), test["message"]
    assert _section(test, "custom metrics API")["answer"].startswith(
        f"APIService {API_SERVICE} (service monitoring/prometheus-adapter:443): not Available")
    _nothing_left(cluster)


def test_no_custom_metrics_api_fails_and_creates_nothing(
    cluster: SimCluster, tmp_path: Path
) -> None:
    api = client.ApiregistrationV1Api(cluster.api())
    saved = api.read_api_service(API_SERVICE)
    api.delete_api_service(API_SERVICE)
    try:
        test = _validate(cluster, tmp_path)
    finally:
        api.create_api_service(client.V1APIService(
            metadata=client.V1ObjectMeta(name=API_SERVICE, labels=saved.metadata.labels),
            spec=saved.spec))  # fmt: skip
    assert (test["status"], test["message"]) == (
        "failed", "1/1 autoscaling steps failed: custom metrics API: no APIService serves "
        "custom.metrics.k8s.io: the cluster has no custom metrics API (nothing was created)")
    assert [s["title"] for s in test["extra"]["evidence"]] == ["custom metrics API"]
    cluster.wait_for(lambda: _available(cluster), timeout=60, message="the APIService restored")
