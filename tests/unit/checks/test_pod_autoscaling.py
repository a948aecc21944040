"""pod-autoscaling on fakes: the HPA's readings, and run() with scripted replicas 1 -> 2 -> 1."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import pod_autoscaling
from aicr.checks.conformance.pod_autoscaling import build
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube.placement import Placement, Toleration
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult, StepStatus

Obj = dict[str, Any]
CHECK = "pod-autoscaling"
RUN = "r0123abcd"
METRIC = "aicr_autoscaling_load"
DP = {"mode": "device-plugin", "settings": [], "notes": []}
API = {"kind": "APIService", "metadata": {"name": "v1beta1.custom.metrics.k8s.io"},
       "spec": {"group": "custom.metrics.k8s.io", "version": "v1beta1", "versionPriority": 100,
                "service": {"name": "prometheus-adapter", "namespace": "monitoring", "port": 443}},
       "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed"}]}}
READ = {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
        "message": "the HPA was able to successfully calculate a replica count from pods "
                   f"metric {METRIC}"}  # fmt: skip
UNREAD = {"type": "ScalingActive", "status": "False", "reason": "FailedGetPodsMetric",
          "message": f"the HPA was unable to compute the replica count: unable to get metric "
                     f"{METRIC}: unable to fetch metrics from custom metrics API: the server is "
                     "currently unable to handle the request"}  # fmt: skip


def node(name: str, gpu: bool = True) -> Obj:
    labels = {"nvidia.com/gpu.present": "true"} if gpu else {}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def hpa_state(made: Obj, metric: float | None, desired: int, current: int,
              active: Obj = READ) -> Obj:  # fmt: skip
    out = copy.deepcopy(made)
    current_metrics = [] if metric is None else [{"type": "Pods", "pods": {
        "metric": {"name": METRIC}, "current": {"averageValue": f"{metric:g}"}}}]  # fmt: skip
    out["status"] = {"desiredReplicas": desired, "currentReplicas": current,
                     "currentMetrics": current_metrics, "conditions": [active]}  # fmt: skip
    return out


class Cluster(FakeKube):
    """The fake plus what the controllers would do: pods of the Deployment, the HPA's status."""

    def __init__(self, objects: list[Obj], *, active: Obj = READ, scales: bool = True,
                 new_node: str = "g1") -> None:  # fmt: skip
        super().__init__(objects)
        self.active, self.scales, self.new_node = active, scales, new_node
        self.loads: list[tuple[str, float]] = []
        self.bodies: dict[str, Obj] = {}
        self.script["Deployment"] = lambda d: [self.pod(d, "gpu-autoscaled-a", "g0", "10.0.0.5")]
        self.script["HorizontalPodAutoscaler"] = lambda h: [
            hpa_state(h, 0 if active is READ else None, 1, 1, active)]  # fmt: skip

    def pod(self, deployment: Obj, name: str, node: str, ip: str) -> Obj:
        template = deployment["spec"]["template"]
        return {"kind": "Pod", "metadata": {"name": name, "namespace": deployment["metadata"][
            "namespace"], "labels": dict(template["metadata"]["labels"])},
            "spec": {**template["spec"], "nodeName": node},
            "status": {"phase": "Running", "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True"}]}}  # fmt: skip

    def create(self, obj: Obj) -> Obj:
        self.bodies[obj["kind"]] = copy.deepcopy(obj)
        return super().create(obj)

    def made(self, kind: str) -> Obj:
        return next(o for o in self.objects if o["kind"] == kind)

    def set_load(self, pod: Obj, value: float) -> None:
        self.loads.append((pod["metadata"]["name"], value))
        if not self.scales:
            return
        hpa, dep = self.made("HorizontalPodAutoscaler"), self.made("Deployment")
        if value == build.HIGH and pod["metadata"]["name"] == "gpu-autoscaled-a":
            self._queue += [
                {"type": "MODIFIED", "object": hpa_state(hpa, 40, 2, 1)},
                {"type": "ADDED", "object": self.pod(dep, "gpu-autoscaled-b", self.new_node,
                                                     "10.0.0.6")},
                {"type": "MODIFIED", "object": hpa_state(hpa, 20, 2, 2)},
            ]  # fmt: skip
        if value == build.LOW and pod["metadata"]["name"] == "gpu-autoscaled-b":
            scaled = {**dep, "spec": {**dep["spec"], "replicas": 1}, "status": {"replicas": 1}}
            self._queue += [{"type": "MODIFIED", "object": hpa_state(hpa, 0, 2, 2)},
                            {"type": "MODIFIED", "object": hpa_state(hpa, 0, 1, 2)},
                            {"type": "MODIFIED", "object": scaled}]  # fmt: skip

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        super().delete(kind, name, namespace)
        if kind == "Deployment":  # the garbage collector takes its pods
            self.objects = [o for o in self.objects if o["kind"] != "Pod"]


PARAMS = {"metricSeconds": 0.3, "scaleUpSeconds": 0.3, "scaleDownSeconds": 0.3,
          "stabilizationSeconds": 0, "startSeconds": 0.3}  # fmt: skip


def run(kube: Cluster, monkeypatch: pytest.MonkeyPatch, params: Obj | None = None,
        placement: Placement | None = None) -> CheckResult:  # fmt: skip
    monkeypatch.setattr(pod_autoscaling, "set_load", kube.set_load)
    config = parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {{{CHECK}: {{params: {params or PARAMS}}}}}}}}}\n"
    )
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe("componentRefs: []\n"), config,
                       workloads=placement or Placement(), prepared={CHECK: DP})  # fmt: skip
    return entrypoint.run_check(CHECK, inputs, kube=kube)


def steps(result: CheckResult) -> list[tuple[str, StepStatus]]:
    return [(s.title, s.status) for s in result.evidence]


def healthy() -> Cluster:
    return Cluster([API, node("g0"), node("g1"), node("cpu", gpu=False)])


def test_healthy_scales_up_and_back_down(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = healthy()
    result = run(kube, monkeypatch)
    assert (result.status, result.message) == (
        Status.PASSED, f"HPA on {METRIC} (custom metrics API) scaled GPU pods 1 -> 2 -> 1 "
        "(device plugin)")  # fmt: skip
    assert steps(result) == [
        ("custom metrics API", StepStatus.INFO), ("workload", StepStatus.PASSED),
        ("metric read by the HPA", StepStatus.PASSED), ("scale up", StepStatus.PASSED),
        ("scale down", StepStatus.PASSED), ("HPA timeline", StepStatus.INFO),
        ("workloads", StepStatus.PASSED)]  # fmt: skip
    api = result.evidence[0].answer
    assert api == ("APIService v1beta1.custom.metrics.k8s.io (service "
                   "monitoring/prometheus-adapter:443): Available")  # fmt: skip
    up = next(s for s in result.evidence if s.title == "scale up")
    assert up.answer.startswith("new pod gpu-autoscaled-b on g1; desired 2, current 1")
    timeline = next(s for s in result.evidence if s.title == "HPA timeline").answer.splitlines()
    said = [line.split(" ", 1)[1] for line in timeline]
    assert said == [
        "HPA created", "metric 0 desired 1 current 1",
        f"set {METRIC} to 40 on gpu-autoscaled-a", "metric 40 desired 2 current 1",
        "new pod serving: gpu-autoscaled-b on g1",
        f"set {METRIC} to 0 on gpu-autoscaled-a, gpu-autoscaled-b",
        "metric 20 desired 2 current 2", "metric 0 desired 2 current 2",
        "metric 0 desired 1 current 2"]  # fmt: skip
    assert timeline[0].endswith("Z HPA created") and timeline[0][2] == ":"
    created = [c[1:] for c in kube.calls if c[0] == "create"]
    ns = created[0][1]
    assert created == [("Deployment", ns, "gpu-autoscaled"),
                       ("HorizontalPodAutoscaler", ns, "gpu-autoscaled")]  # fmt: skip
    assert ("delete", "HorizontalPodAutoscaler", ns, "gpu-autoscaled") in kube.calls
    assert not [o for o in kube.objects if o["kind"] in ("Pod", "Deployment")]


def test_no_custom_metrics_api_fails_before_creating_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kube = Cluster([node("g0")])
    result = run(kube, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 autoscaling steps failed: custom metrics API: no APIService serves "
        "custom.metrics.k8s.io: the cluster has no custom metrics API (nothing was created)")
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_metric_the_hpa_cannot_read_fails_with_its_condition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    down = {**API, "status": {"conditions": [{"type": "Available", "status": "False",
            "reason": "MissingEndpoints", "message": "endpoints for service/prometheus-adapter "
            "in \"monitoring\" have no addresses with port name \"\""}]}}  # fmt: skip
    kube = Cluster([down, node("g0"), node("g1")], active=UNREAD)
    result = run(kube, monkeypatch)
    assert result.status == Status.FAILED
    assert result.message == (
        f"1/2 autoscaling steps failed: metric read by the HPA: the HPA could not read {METRIC} "
        f"within 0.3s: ScalingActive=False FailedGetPodsMetric: {UNREAD['message']}")
    assert result.evidence[0].answer.endswith(
        "not Available: MissingEndpoints endpoints for service/prometheus-adapter in "
        '"monitoring" have no addresses with port name ""')  # fmt: skip
    assert kube.loads == []
    assert ("delete", "Deployment", result.evidence[1].asked.split()[1].split("/")[0],
            "gpu-autoscaled") in kube.calls  # fmt: skip
    assert steps(result)[-1] == ("workloads", StepStatus.PASSED)


def test_no_scale_up_fails_with_the_hpas_state(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = Cluster([API, node("g0"), node("g1")], scales=False)
    result = run(kube, monkeypatch)
    assert result.message == (
        "1/3 autoscaling steps failed: scale up: no scale-up within 0.3s: desired 1, current 1; "
        f"ScalingActive=True ValidMetricFound: {READ['message']}")
    assert kube.loads == [("gpu-autoscaled-a", 40)]


def test_a_new_pod_off_the_gpu_nodes_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = Cluster([API, node("g0"), node("cpu", gpu=False)], new_node="cpu")
    result = run(kube, monkeypatch)
    assert result.message == ("1/3 autoscaling steps failed: scale up: the new pod is not on a "
                              "GPU node: gpu-autoscaled-b on cpu")  # fmt: skip


@pytest.mark.parametrize(("error", "status", "message"), [
    (httpx.ConnectError("connection refused"), Status.FAILED,
     "1/3 autoscaling steps failed: scale up: could not set the load on pod gpu-autoscaled-a "
     "(10.0.0.5): connection refused"),
    (RuntimeError("boom"), Status.OTHER,
     "1/3 autoscaling steps could not be judged: scale up: raised RuntimeError: boom"),
], ids=["refused", "raised"])  # fmt: skip
def test_a_failed_load_is_named_and_cleanup_still_runs(
    monkeypatch: pytest.MonkeyPatch, error: Exception, status: Status, message: str
) -> None:
    kube = healthy()

    def fail(pod: Obj, value: float) -> None:
        raise error

    monkeypatch.setattr(kube, "set_load", fail)
    result = run(kube, monkeypatch)
    assert (result.status, result.message) == (status, message)
    assert not [o for o in kube.objects if o["kind"] in ("Pod", "Deployment",
                                                         "HorizontalPodAutoscaler")]
    assert steps(result)[-1] == ("workloads", StepStatus.PASSED)


def test_no_serving_pod_to_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = healthy()

    def unready(hpa: Obj) -> list[Obj]:  # the pod stops being ready once the HPA exists
        for o in kube.objects:
            if o["kind"] == "Pod":
                o["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
        return [hpa_state(hpa, 0, 1, 1)]

    kube.script["HorizontalPodAutoscaler"] = unready
    result = run(kube, monkeypatch)
    assert result.message == (f"1/3 autoscaling steps failed: scale up: no pod serves {METRIC} "
                              "to set it on")  # fmt: skip
    assert kube.loads == []


def test_the_workload_honours_the_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = healthy()

    placement = Placement(node_selector={"pool": "gpu"},
                          tolerations=(Toleration(key="dedicated", effect="NoSchedule"),))
    run(kube, monkeypatch, placement=placement)
    spec = kube.bodies["Deployment"]["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"pool": "gpu"}
    assert spec["tolerations"][-1] == {"key": "dedicated", "operator": "Equal",
                                       "effect": "NoSchedule"}  # fmt: skip


# ---- the pure part ---------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "value"), [
    ("40", 40.0), ("15500m", 15.5), ("2k", 2000.0), ("1Ki", 1024.0), ("0", 0.0), ("x", None),
    ("", None), (None, None),
])  # fmt: skip
def test_quantities(raw: Any, value: float | None) -> None:
    assert build.quantity(raw) == value


def test_the_hpa_is_autoscaling_v2_on_a_pods_metric_with_its_own_window() -> None:
    made = build.hpa("m", 15)
    assert made["apiVersion"] == "autoscaling/v2"
    assert made["spec"]["metrics"] == [{"type": "Pods", "pods": {
        "metric": {"name": "m"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]
    assert made["spec"]["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 15}}
    assert (made["spec"]["minReplicas"], made["spec"]["maxReplicas"]) == (1, 2)


@pytest.mark.parametrize("dra", [False, True])
def test_each_replica_takes_one_gpu(dra: bool) -> None:
    made = build.deployment("img", "m", {"aicr.dev/run-id": RUN}, dra)
    spec = made["spec"]["template"]["spec"]
    container = spec["containers"][0]
    if dra:
        assert container["resources"] == {"claims": [{"name": "gpu"}]}
        assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        assert build.claim_template()["spec"]["spec"]["devices"]["requests"][0]["exactly"][
            "count"] == 1  # fmt: skip
    else:
        assert container["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
        assert "resourceClaims" not in spec
    assert made["spec"]["template"]["metadata"]["labels"] == {"aicr.dev/run-id": RUN,
                                                              "aicr.dev/app": "gpu-autoscaled"}
    assert spec["securityContext"]["runAsNonRoot"] and spec["restartPolicy"] == "Always"
    assert made["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == "8080"


def test_the_custom_metrics_api_with_the_highest_priority_is_named() -> None:
    low = {**API, "metadata": {"name": "v1beta2.custom.metrics.k8s.io"},
           "spec": {**API["spec"], "versionPriority": 200}}  # fmt: skip
    other = {**API, "metadata": {"name": "v1beta1.metrics.k8s.io"},
             "spec": {"group": "metrics.k8s.io", "versionPriority": 999}}  # fmt: skip
    assert build.custom_metrics_api([API, low, other]) is low
    assert build.custom_metrics_api([other]) is None
    local = {"metadata": {"name": "v1beta1.custom.metrics.k8s.io"}, "spec": {}, "status": {}}
    assert build.describe_apiservice(local) == (
        "APIService v1beta1.custom.metrics.k8s.io (served by the API server itself): not "
        "Available: no Available condition")  # fmt: skip


def test_conditions_read_as_the_hpa_states_them() -> None:
    hpa = {"status": {"conditions": [
        {"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale"}, UNREAD]}}
    assert build.conditions_text(hpa) == (
        f"AbleToScale=True SucceededGetScale; ScalingActive=False FailedGetPodsMetric: "
        f"{UNREAD['message']}")  # fmt: skip
    assert build.conditions_text({}) == "the HPA has reported no condition yet"
    assert not build.readable(hpa, METRIC)
    read = hpa_state({"metadata": {}}, 3, 1, 1)
    assert build.readable(read, METRIC) and build.observed(read, METRIC) == 3
    assert build.observed(read, "other") is None


def test_only_serving_pods_count() -> None:
    pod = {"metadata": {}, "status": {"phase": "Running", "podIP": "10.0.0.1",
                                      "conditions": [{"type": "Ready", "status": "True"}]}}
    assert build.is_serving(pod)
    assert not build.is_serving({**pod, "metadata": {"deletionTimestamp": "now"}})
    assert not build.is_serving({**pod, "status": {**pod["status"], "conditions": []}})
    assert not build.is_serving({**pod, "status": {**pod["status"], "podIP": ""}})
