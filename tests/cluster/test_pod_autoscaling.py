"""pod-autoscaling on the simulated cluster: DCGM exporter, real Prometheus, prometheus-adapter
with the rules of the recipes' values file, and the HPA controller.

The check's pods load their GPUs with dcgmproftester12 (the GPU model reads them busy
only while it runs), Prometheus scrapes the DCGM exporter through its annotated Service
with `honor_labels: true` (the community chart's job), so the series keep the workload's
`namespace`/`pod`; prometheus-adapter serves them as `gpu_utilization` through
`v1beta1.custom.metrics.k8s.io` by the rules of
`recipes/components/prometheus-adapter/values.yaml` (nothing added), and
kube-controller-manager's HPA controller (5 s sync period, a sim knob) scales the
Deployment. Healthy, then `sim fault adapter-down` and no APIService at all.
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

pytestmark = pytest.mark.components("prometheus", "prometheus-adapter", "dcgm-exporter")

CHECK = "pod-autoscaling"
COMPONENTS = "- name: gpu-operator\n  namespace: gpu-operator\n"
DRA = ("- name: gpu-operator\n  namespace: gpu-operator\n"
       "  overrides: {devicePlugin: {enabled: false}}\n"
       "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
       "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n")
API_SERVICE = "v1beta1.custom.metrics.k8s.io"
# the exporter's own namespace/pod labels are honoured: the adapter's namespace/pod rule
METRIC = "gpu_utilization"
VALUES = Path(__file__).parents[2] / "recipes" / "components" / "prometheus-adapter" / "values.yaml"
# The sim's pipeline is fast but for the adapter's 30 s relist (the values'): the load
# outlasts the first pod's start, a relist, the HPA's read and the scale-up. The metric
# window is the derived one, so the wait for the metric ends with the load.
FAST = {"loadSeconds": 75, "scaleUpSeconds": 60, "scaleDownSeconds": 45}
# What the sim shows of the pipeline: the exporter's interval (the sim's 1 s knob in its
# pod's env), no Prometheus object (Prometheus runs from its prometheus.yml, whose loaded
# form its API answers: the sim's 1 s scrape knob), the adapter's args (the values' 30 s)
# and no kube-controller-manager pod.
WINDOW = ("77s = exporter collection 1s + scrape 1s + adapter relist 30s + HPA "
          "sync 15s (default) + margin 30s")  # fmt: skip


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
    test = _validate(cluster, tmp_path, recipe=DRA if dra else COMPONENTS, **FAST)
    print(test["duration"], *(f"{s['title']}: {s['answer']}" for s in test["extra"]["evidence"]),
          sep="\n")  # the figures in the test's output (-s)
    assert (test["status"], test["message"]) == (
        "passed", f"HPA on {METRIC} (custom metrics API) scaled GPU pods 1 -> 2 -> 1 "
        f"({'DRA' if dra else 'device plugin'})")  # fmt: skip
    api = _section(test, "custom metrics API")["answer"]
    assert api.startswith(f"APIService {API_SERVICE} (service monitoring/prometheus-adapter:443): "
                          "Available; per-pod metrics: "), api  # fmt: skip
    window = _section(test, "metric window")
    assert window["verdict"] == f"the metric window: {WINDOW}", window
    assert re.fullmatch(
        r"exporter collection: 1s, DCGM_EXPORTER_INTERVAL=1000 of pod "
        r"gpu-operator/nvidia-dcgm-exporter-\S+\n"
        r"scrape: 1s, scrape_interval 1s of job kubernetes-service-endpoints in "
        r"(http://[0-9.]+:9090)/api/v1/status/config \(--prometheus-url=\1 of Deployment "
        r"monitoring/prometheus-adapter\), the longest of the jobs that may scrape the exporter "
        r"\(Kubernetes pod, endpoints or service discovery: kubernetes-service-endpoints\); not "
        r"counted: kubernetes-pods \(keep __meta_kubernetes_pod_annotation_prometheus_io_scrape "
        r"=~ 'true'\); --prometheus-url=\1 of Deployment monitoring/prometheus-adapter reaches "
        r"pod address [0-9.]+: pods monitoring/prometheus-kube-prometheus-stack-prometheus-0, of "
        r"no Prometheus object \(a Prometheus not managed by prometheus-operator\)\n"
        r"adapter relist: 30s, --metrics-relist-interval=30s of Deployment "
        r"monitoring/prometheus-adapter\n"
        r"HPA sync: 15s, the cluster shows no kube-controller-manager \(kube-system pods "
        r"labelled component=kube-controller-manager: none; a managed or off-cluster control "
        r"plane\): kube-controller-manager's default 15s\n"
        r"margin: 30s", window["answer"]), window["answer"]
    found = _section(test, "metric for the pod")["answer"]
    assert re.fullmatch(rf"{METRIC} = 100 for pod gpu-autoscaled-\S+", found), found
    up = _section(test, "scale up")["answer"]
    assert re.match(r"new pod gpu-autoscaled-\S+ on gpu-h100-[01]; desired 2", up), up
    timeline = _section(test, "HPA timeline")["answer"]
    assert re.search(r"metric 100 desired 2", timeline), timeline
    assert re.search(r"metric 0 desired 1", timeline), timeline
    assert _section(test, "workloads")["status"] == "passed"
    assert test["requirements"]["pod_autoscaling"] == "Implemented"
    _nothing_left(cluster)


def test_adapter_down_fails_naming_what_the_custom_metrics_api_said(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("adapter-down")
    # Healed once the verdict is in: while an aggregated API is unavailable the namespace
    # controller cannot finish deleting namespaces, so the run's cleanup would wait for it.
    test = _validate(cluster, tmp_path, lambda: cluster.heal(), metricSeconds=15)
    assert test["status"] == "failed", test["message"]
    assert re.match(
        r"1/2 autoscaling steps failed: metric for the pod: the custom metrics API served none "
        r"of workload_gpu_utilization, gpu_utilization for pod gpu-autoscaled-\S+ within the "
        rf"metric window \(15s: params.metricSeconds; from the cluster {re.escape(WINDOW)}\) "
        r"\(workload_gpu_utilization: HTTP 503 ", test["message"]), test["message"]
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


def test_the_adapters_rules_are_the_recipes_values_and_nothing_more(cluster: SimCluster) -> None:
    values = yaml.safe_load(VALUES.read_text())
    made = cluster.core().read_namespaced_config_map("prometheus-adapter", "monitoring")
    config = yaml.safe_load(made.data["config.yaml"])
    assert values["rules"]["default"] is False
    assert config == {"rules": values["rules"]["custom"],
                      "externalRules": values["rules"]["external"]}  # fmt: skip
    served = client.ApiregistrationV1Api(cluster.api()).read_api_service(
        "v1beta1.external.metrics.k8s.io")
    assert served.spec.service.name == "prometheus-adapter"
