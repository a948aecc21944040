"""pod-autoscaling on fakes: the HPA's readings, and run() with scripted replicas 1 -> 2 -> 1."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube
from test_pod_autoscaling_window import (
    ADAPTER_SERVICE,
    SERVICE,
    adapter,
    exporter_pod,
    named,
    prometheus,
    prometheus_pod,
    service_monitor,
)

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
METRIC = "workload_gpu_utilization"
VERSION = "custom.metrics.k8s.io/v1beta1"
DP = {"mode": "device-plugin", "settings": [], "notes": []}
API = {"kind": "APIService", "metadata": {"name": "v1beta1.custom.metrics.k8s.io"},
       "spec": {"group": "custom.metrics.k8s.io", "version": "v1beta1", "versionPriority": 100,
                "service": {"name": "prometheus-adapter", "namespace": "monitoring", "port": 443}},
       "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed"}]}}
# what prometheus-adapter's discovery lists with the values AICR's recipes reference
SERVED = ["namespaces/gpu_utilization", "pods/gpu_utilization", "pods/gpu_memory_used",
          "namespaces/workload_gpu_utilization", "pods/workload_gpu_utilization"]  # fmt: skip
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
              active: Obj = READ, name: str = METRIC) -> Obj:  # fmt: skip
    out = copy.deepcopy(made)
    current_metrics = [] if metric is None else [{"type": "Pods", "pods": {
        "metric": {"name": name}, "current": {"averageValue": f"{metric:g}"}}}]  # fmt: skip
    out["status"] = {"desiredReplicas": desired, "currentReplicas": current,
                     "currentMetrics": current_metrics, "conditions": [active]}  # fmt: skip
    return out


class Cluster(FakeKube):
    """The fake plus what the controllers would do: pods of the Deployment, the HPA's status
    (the loaded pod's 100 % asks for 2; once the load ends, 0 % brings it back to 1)."""

    def __init__(self, objects: list[Obj], *, active: Obj = READ, scales: bool = True,
                 new_node: str = "g1", metric: str = METRIC) -> None:  # fmt: skip
        super().__init__(objects)
        self.active, self.scales, self.new_node = active, scales, new_node
        self.bodies: dict[str, Obj] = {}
        self.discovery[VERSION] = list(SERVED)
        self.metrics[("gpu-autoscaled-a", metric)] = "100"
        self.script["Deployment"] = lambda d: [self.pod(d, "gpu-autoscaled-a", "g0", "10.0.0.5")]
        self.script["HorizontalPodAutoscaler"] = self.controller

    def controller(self, hpa: Obj) -> list[Obj]:
        name = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"]
        if self.active is not READ:
            return [hpa_state(hpa, None, 1, 1, self.active, name)]
        if not self.scales:
            return [hpa_state(hpa, 100, 1, 1, name=name)]
        dep = self.made("Deployment")
        scaled = {**dep, "spec": {**dep["spec"], "replicas": 1}, "status": {"replicas": 1}}
        self._queue += [
            {"type": "ADDED", "object": self.pod(dep, "gpu-autoscaled-b", self.new_node,
                                                 "10.0.0.6")},
            {"type": "MODIFIED", "object": scaled}]  # fmt: skip
        return [hpa_state(hpa, 100, 1, 1, name=name), hpa_state(hpa, 100, 2, 1, name=name),
                hpa_state(hpa, 50, 2, 2, name=name), hpa_state(hpa, 0, 2, 2, name=name),
                hpa_state(hpa, 0, 1, 2, name=name)]  # fmt: skip

    def pod(self, deployment: Obj, name: str, node: str, ip: str) -> Obj:
        template = deployment["spec"]["template"]
        return {"kind": "Pod", "metadata": {"name": name, "namespace": deployment["metadata"][
            "namespace"], "labels": dict(template["metadata"]["labels"])},
            "spec": {**template["spec"], "nodeName": node},
            "status": {"phase": "Running", "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True"}]}}  # fmt: skip

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        if not dry_run:
            self.bodies[obj["kind"]] = copy.deepcopy(obj)
        return super().create(obj, dry_run)

    def made(self, kind: str) -> Obj:
        return next(o for o in self.objects if o["kind"] == kind and mine(o))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        super().delete(kind, name, namespace)
        if kind == "Deployment":  # the garbage collector takes its pods
            self.objects = [o for o in self.objects if not (o["kind"] == "Pod" and mine(o))]


def mine(obj: Obj) -> bool:
    """One of the check's objects (not the platform's)."""
    return str(obj["metadata"]["name"]).startswith("gpu-autoscaled")


def left(kube: FakeKube, kinds: tuple[str, ...] = ("Pod", "Deployment")) -> list[Obj]:
    return [o for o in kube.objects if o["kind"] in kinds and mine(o)]


# AICR's recipes on a managed control plane: the GPU Operator's exporter (its default
# interval) and ServiceMonitor (the values' 30s), kube-prometheus-stack's Prometheus object,
# prometheus-adapter with the values' 30s relist; no kube-controller-manager pod shown.
PLATFORM = [exporter_pod(), SERVICE, service_monitor("30s"), prometheus(), ADAPTER_SERVICE,
            adapter("--metrics-relist-interval=30s")]  # fmt: skip
WINDOW = ("135s = exporter collection 30s (default) + scrape 30s + adapter relist 30s + HPA "
          "sync 15s (default) + margin 30s")  # fmt: skip
GIVEN = f"0.3s: params.metricSeconds; from the cluster {WINDOW}"


PARAMS = {"metricSeconds": 0.3, "scaleUpSeconds": 0.3, "scaleDownSeconds": 0.3,
          "stabilizationSeconds": 0, "startSeconds": 0.3, "loadSeconds": 2}  # fmt: skip


def run(kube: Cluster, params: Obj | None = None,
        placement: Placement | None = None, settings: str = "") -> CheckResult:  # fmt: skip
    config = parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {{{CHECK}: {{{settings}params: {params or PARAMS}}}}}}}}}\n"
    )
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe("componentRefs: []\n"), config,
                       workloads=placement or Placement(), prepared={CHECK: DP})  # fmt: skip
    return entrypoint.run_check(CHECK, inputs, kube=kube)


class Prometheus:
    """The HTTP side of the Prometheus the check asks for its configuration: its answers by
    URL (a status and body, or an exception), and the URLs asked."""

    def __init__(self, answers: dict[str, tuple[int, str] | Exception] | None = None) -> None:
        self.answers = answers or {}
        self.asked: list[str] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.asked.append(url)
        got = self.answers.get(url, (404, "404 page not found"))
        if isinstance(got, Exception):
            raise got
        return httpx.Response(got[0], text=got[1])


@pytest.fixture(autouse=True)
def prometheus_http(monkeypatch: pytest.MonkeyPatch) -> Prometheus:
    """No test reaches a network: the check's HTTP client answers from this fake."""
    fake = Prometheus()
    monkeypatch.setattr(pod_autoscaling, "_client", lambda ctx: httpx.Client(
        transport=httpx.MockTransport(fake.handle)))  # fmt: skip
    return fake


def steps(result: CheckResult) -> list[tuple[str, StepStatus]]:
    return [(s.title, s.status) for s in result.evidence]


def healthy(metric: str = METRIC) -> Cluster:
    return Cluster([API, node("g0"), node("g1"), node("cpu", gpu=False), *PLATFORM],
                   metric=metric)  # fmt: skip


def test_healthy_scales_up_and_back_down_on_the_served_gpu_metric() -> None:
    kube = healthy()
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, f"HPA on {METRIC} (custom metrics API) scaled GPU pods 1 -> 2 -> 1 "
        "(device plugin)")  # fmt: skip
    assert steps(result) == [
        ("custom metrics API", StepStatus.INFO), ("metric window", StepStatus.INFO),
        ("workload", StepStatus.PASSED),
        ("metric for the pod", StepStatus.PASSED), ("metric read by the HPA", StepStatus.PASSED),
        ("scale up", StepStatus.PASSED), ("scale down", StepStatus.PASSED),
        ("HPA timeline", StepStatus.INFO), ("workloads", StepStatus.PASSED)]  # fmt: skip
    assert result.evidence[0].answer == (
        "APIService v1beta1.custom.metrics.k8s.io (service monitoring/prometheus-adapter:443): "
        "Available; per-pod metrics: gpu_memory_used, gpu_utilization, "
        "workload_gpu_utilization")  # fmt: skip
    found = next(s for s in result.evidence if s.title == "metric for the pod")
    assert found.answer == f"{METRIC} = 100 for pod gpu-autoscaled-a"
    up = next(s for s in result.evidence if s.title == "scale up")
    assert up.answer.startswith("new pod gpu-autoscaled-b on g1; desired 2, current 1")
    timeline = next(s for s in result.evidence if s.title == "HPA timeline").answer.splitlines()
    said = [line.split(" ", 1)[1] for line in timeline]
    assert said == [
        "pod gpu-autoscaled-a running, loading its GPU", "HPA created",
        "metric 100 desired 1 current 1", "metric 100 desired 2 current 1",
        "new pod running: gpu-autoscaled-b on g1", f"the check ended the load: {METRIC} falls",
        "metric 50 desired 2 current 2", "metric 0 desired 2 current 2",
        "metric 0 desired 1 current 2"]  # fmt: skip
    created = [c[1:] for c in kube.calls if c[0] == "create"]
    ns = created[0][1]
    assert created == [("Deployment", ns, "gpu-autoscaled"),
                       ("HorizontalPodAutoscaler", ns, "gpu-autoscaled"),
                       ("ConfigMap", ns, "gpu-autoscaled-stop")]  # fmt: skip
    hpa = kube.bodies["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["pods"]
    assert hpa == {"metric": {"name": METRIC},
                   "target": {"type": "AverageValue", "averageValue": "50"}}  # fmt: skip
    assert ("pod_metric", VERSION, ns, f"gpu-autoscaled-a/{METRIC}") in kube.calls
    assert ("delete", "HorizontalPodAutoscaler", ns, "gpu-autoscaled") in kube.calls
    assert not left(kube)


def test_the_first_metric_served_for_the_pod_is_used() -> None:
    # Prometheus kept the exporter's namespace/pod labels (honorLabels): only
    # gpu_utilization names the check's pod
    kube = healthy(metric="gpu_utilization")
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert result.message.startswith("HPA on gpu_utilization (custom metrics API) scaled")
    hpa = kube.bodies["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["pods"]["metric"]
    assert hpa == {"name": "gpu_utilization"}


def test_no_served_metric_for_the_pod_fails_naming_what_is_served() -> None:
    kube = healthy(metric="aicr_autoscaling_load")
    kube.metrics[("gpu-autoscaled-a", "gpu_utilization")] = client_error(
        503, "ServiceUnavailable", "the server is currently unable to handle the request")
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 autoscaling steps failed: metric for the pod: the custom metrics "
        "API served none of workload_gpu_utilization, gpu_utilization for pod gpu-autoscaled-a "
        f"within the metric window ({GIVEN}) (workload_gpu_utilization: not served for this "
        "pod; gpu_utilization: HTTP 503 "
        "ServiceUnavailable: the server is currently unable to handle the request); its "
        "discovery lists workload_gpu_utilization, gpu_utilization, with no value for the pod "
        "(per-pod metrics: gpu_memory_used, gpu_utilization, workload_gpu_utilization)")
    assert "HorizontalPodAutoscaler" not in kube.bodies
    assert not left(kube)


def client_error(status: int, reason: str, message: str) -> Exception:
    from aicr.kube.rest import KubeApiError

    return KubeApiError(status, reason, message)


def test_no_custom_metrics_api_fails_before_creating_anything() -> None:
    kube = Cluster([node("g0")])
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 autoscaling steps failed: custom metrics API: no APIService serves "
        "custom.metrics.k8s.io: the cluster has no custom metrics API (nothing was created)")
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_metric_the_hpa_cannot_read_fails_with_its_condition() -> None:
    kube = Cluster([API, node("g0"), node("g1"), *PLATFORM], active=UNREAD)
    result = run(kube)
    assert result.status == Status.FAILED
    assert re.fullmatch(
        rf"1/3 autoscaling steps failed: metric read by the HPA: the HPA could not read {METRIC} "
        rf"within the 0\.[23]s left of the metric window \({re.escape(GIVEN)}\): "
        rf"ScalingActive=False FailedGetPodsMetric: {re.escape(UNREAD['message'])}",
        result.message), result.message
    assert ("delete", "Deployment", result.evidence[2].asked.split()[1].split("/")[0],
            "gpu-autoscaled") in kube.calls  # fmt: skip
    assert steps(result)[-1] == ("workloads", StepStatus.PASSED)


def test_an_unavailable_api_lists_no_metrics() -> None:
    down = {**API, "status": {"conditions": [{"type": "Available", "status": "False",
            "reason": "MissingEndpoints", "message": "endpoints for service/prometheus-adapter "
            "in \"monitoring\" have no addresses with port name \"\""}]}}  # fmt: skip
    kube = Cluster([down, node("g0"), node("g1")], active=UNREAD)
    result = run(kube)
    assert result.evidence[0].answer.endswith(
        "not Available: MissingEndpoints endpoints for service/prometheus-adapter in "
        '"monitoring" have no addresses with port name ""; per-pod metrics: none yet')


def test_no_scale_up_fails_with_the_hpas_state() -> None:
    kube = Cluster([API, node("g0"), node("g1")], scales=False)
    result = run(kube)
    assert result.message == (
        "1/4 autoscaling steps failed: scale up: no scale-up within 0.3s: desired 1, current 1; "
        f"ScalingActive=True ValidMetricFound: {READ['message']}")


def test_a_new_pod_off_the_gpu_nodes_fails() -> None:
    kube = Cluster([API, node("g0"), node("cpu", gpu=False)], new_node="cpu")
    result = run(kube)
    assert result.message == ("1/4 autoscaling steps failed: scale up: the new pod is not on a "
                              "GPU node: gpu-autoscaled-b on cpu")  # fmt: skip


def test_a_raising_metrics_api_is_other_and_cleanup_still_runs() -> None:
    kube = healthy()
    kube.fail["pod_metric"] = RuntimeError("boom")
    result = run(kube)
    assert (result.status, result.message) == (
        Status.OTHER, "1/2 autoscaling steps could not be judged: metric for the pod: raised "
        "RuntimeError: boom")
    assert not left(kube, ("Pod", "Deployment", "HorizontalPodAutoscaler"))
    assert steps(result)[-1] == ("workloads", StepStatus.PASSED)


def test_the_workload_honours_the_placement() -> None:
    kube = healthy()

    placement = Placement(node_selector={"pool": "gpu"},
                          tolerations=(Toleration(key="dedicated", effect="NoSchedule"),))
    run(kube, placement=placement)
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
        "metric": {"name": "m"}, "target": {"type": "AverageValue", "averageValue": "50"}}}]
    assert made["spec"]["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 15}}
    assert (made["spec"]["minReplicas"], made["spec"]["maxReplicas"]) == (1, 2)


@pytest.mark.parametrize("dra", [False, True])
def test_each_replica_takes_one_gpu_and_loads_it_until_a_set_moment(dra: bool) -> None:
    made = build.deployment("img", 1_700_000_420, {"aicr.dev/run-id": RUN}, dra)
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
    assert made["spec"]["template"]["metadata"] == {"labels": {
        "aicr.dev/run-id": RUN, "aicr.dev/app": "gpu-autoscaled"}}  # no scrape annotations
    assert container["env"] == [{"name": "LOAD_UNTIL", "value": "1700000420"}]
    assert container["command"][:2] == ["sh", "-c"]
    assert "dcgmproftester12 --no-dcgm-validation -t 1004" in container["command"][2]
    # DCGM profiles as root only; the container stays unprivileged
    assert spec["securityContext"]["runAsUser"] == 0 and spec["restartPolicy"] == "Always"
    assert container["securityContext"] == {"privileged": False,
                                            "allowPrivilegeEscalation": False}  # fmt: skip


def test_the_load_script_loads_until_the_moment_then_idles(tmp_path: Path) -> None:
    import subprocess
    import time

    tool = tmp_path / "dcgmproftester12"
    tool.write_text('#!/bin/sh\necho "load $*" >> "$(dirname "$0")/calls"\n')
    tool.chmod(0o755)
    script = build.LOAD.replace("exec sleep infinity", "echo idle").replace(
        build.STOP_DIR, str(tmp_path / "stop-volume"))
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    later = int(time.time()) + 100
    out = subprocess.run(["sh", "-c", script], env={**env, "LOAD_UNTIL": str(later)},
                         capture_output=True, text=True, check=True)  # fmt: skip
    load = (tmp_path / "calls").read_text().split()
    assert load[:5] == ["load", "--no-dcgm-validation", "-t", "1004", "-d"]
    assert 98 <= int(load[5]) <= 100 and out.stdout == "idle\n"
    (tmp_path / "calls").unlink()
    past = subprocess.run(["sh", "-c", script], env={**env, "LOAD_UNTIL": "1"},
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert past.stdout == "idle\n" and not (tmp_path / "calls").exists()
    tool.write_text("#!/bin/sh\nexit 3\n")  # a load that fails ends the container
    failed = subprocess.run(["sh", "-c", script], env={**env, "LOAD_UNTIL": str(later)},
                            capture_output=True, text=True)  # fmt: skip
    assert (failed.returncode, failed.stdout) == (3, "")


def test_the_checks_stop_ends_a_running_load_and_is_no_failure(tmp_path: Path) -> None:
    import subprocess
    import time

    tool = tmp_path / "dcgmproftester12"  # loads until killed; its end recorded
    tool.write_text(f"#!/bin/sh\ntrap 'kill $!; echo stopped > {tmp_path}/ended; exit 143' TERM\n"
                    "sleep 60 &\nwait $!\n")  # fmt: skip
    tool.chmod(0o755)
    volume = tmp_path / "stop-volume"
    volume.mkdir()
    script = build.LOAD.replace("exec sleep infinity", "echo idle").replace(
        build.STOP_DIR, str(volume))
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "LOAD_UNTIL": str(int(time.time()) + 100)}
    began = time.monotonic()
    pod = subprocess.Popen(["sh", "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert pod.poll() is None  # loading
    (volume / build.STOP_KEY).write_text(build.stop()["data"][build.STOP_KEY])
    out, _ = pod.communicate(timeout=20)
    assert (pod.returncode, out) == (0, "idle\n") and time.monotonic() - began < 10
    assert (tmp_path / "ended").read_text() == "stopped\n"
    again = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True,
                           timeout=20)  # a restart after the stop does not load again
    assert again.stdout == "idle\n" and (tmp_path / "ended").read_text() == "stopped\n"


def test_each_pod_mounts_the_stop_as_an_optional_configmap() -> None:
    made = build.deployment("img", 1_700_000_420, {}, dra=False)
    spec = made["spec"]["template"]["spec"]
    assert spec["volumes"] == [{"name": "load-stop", "configMap": {
        "name": "gpu-autoscaled-stop", "optional": True}}]  # fmt: skip
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "load-stop", "mountPath": build.STOP_DIR, "readOnly": True}]  # fmt: skip
    assert f"[ ! -e {build.STOP_DIR}/stop ]" in spec["containers"][0]["command"][2]
    assert build.stop()["metadata"] == {"name": "gpu-autoscaled-stop"}


def test_pod_metrics_and_values_read_from_the_custom_metrics_api() -> None:
    assert build.pod_metrics(SERVED) == ["gpu_memory_used", "gpu_utilization",
                                         "workload_gpu_utilization"]  # fmt: skip
    assert build.pod_metrics(None) == []
    values = {"items": [{"describedObject": {"kind": "Pod", "name": "a"}, "value": "15500m"},
                        {"describedObject": {"kind": "Pod", "name": "b"}, "value": "100"}]}
    assert (build.metric_value(values, "b"), build.metric_value(values, "a")) == (100, 15.5)
    assert build.metric_value(values, "c") is None and build.metric_value(None, "a") is None


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


def test_an_unreachable_metrics_api_fails_naming_what_it_said() -> None:
    kube = healthy(metric="aicr_autoscaling_load")
    down = client_error(503, "ServiceUnavailable", "the server is currently unable to handle "
                        "the request")  # fmt: skip
    for metric in build.METRICS:
        kube.metrics[("gpu-autoscaled-a", metric)] = down
    kube.discovery.clear()
    kube.fail["served"] = down
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 autoscaling steps failed: metric for the pod: the custom metrics "
        "API served none of workload_gpu_utilization, gpu_utilization for pod gpu-autoscaled-a "
        f"within the metric window ({GIVEN}) (workload_gpu_utilization: HTTP 503 "
        "ServiceUnavailable: the server is "
        "currently unable to handle the request; gpu_utilization: HTTP 503 ServiceUnavailable: "
        "the server is currently unable to handle the request); its per-pod metrics: not "
        "listed (HTTP 503 ServiceUnavailable: the server is currently unable to handle the "
        "request)")


def test_dcgm_refusing_to_load_without_root_fails_the_workload_naming_it() -> None:
    kube = healthy()

    def refusing(d: Obj) -> list[Obj]:
        pod = kube.pod(d, "gpu-autoscaled-a", "g0", "10.0.0.5")
        pod["status"] = {"phase": "Running", "containerStatuses": [{
            "name": "gpu-load", "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 227, "reason": "Error"}}}]}  # fmt: skip
        kube.objects.append(pod)  # listed as the kubelet reports it
        return [pod]

    kube.script["Deployment"] = refusing
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 autoscaling steps failed: workload: pod gpu-autoscaled-a: "
        "dcgmproftester12 refused to load the GPU: exit 227, DCGM_ST_REQUIRES_ROOT (profiling "
        "requires root; the pod ran as another user)")  # fmt: skip


# ---- the metric window ----------------------------------------------------------------------


def test_the_metric_window_records_each_piece_and_where_it_was_read() -> None:
    result = run(healthy())
    section = next(s for s in result.evidence if s.title == "metric window")
    assert section.status == StepStatus.INFO
    assert section.answer.splitlines() == [
        "exporter collection: 30s, dcgm-exporter's default: neither -c nor "
        "DCGM_EXPORTER_INTERVAL of pod gpu-operator/nvidia-dcgm-exporter-4kq2x",
        "scrape: 30s, endpoint interval 30s of ServiceMonitor gpu-operator/nvidia-dcgm-exporter",
        "adapter relist: 30s, --metrics-relist-interval=30s of Deployment "
        "monitoring/prometheus-adapter",
        "HPA sync: 15s, the cluster shows no kube-controller-manager (kube-system pods labelled "
        "component=kube-controller-manager: none; a managed or off-cluster control plane): "
        "kube-controller-manager's default 15s",
        "margin: 30s", "params.metricSeconds: 0.3s"]  # fmt: skip
    assert section.verdict == f"the metric window: {GIVEN}"


def test_without_the_param_the_derived_window_bounds_the_wait() -> None:
    # the load (1 s) ends long before the derived 135 s: the wait ends with it, and the
    # message names the window's pieces and what the custom metrics API lists
    kube = healthy(metric="aicr_autoscaling_load")
    kube.discovery[VERSION] = ["pods/gpu_memory_used"]
    params = {k: v for k, v in PARAMS.items() if k != "metricSeconds"}
    result = run(kube, {**params, "loadSeconds": 1})
    assert result.status == Status.FAILED
    assert re.fullmatch(
        r"1/2 autoscaling steps failed: metric for the pod: the custom metrics API served none "
        r"of workload_gpu_utilization, gpu_utilization for pod gpu-autoscaled-a within "
        rf"[0-9.]+s, before the load's end \(the metric window: {re.escape(WINDOW)}\) "
        r"\(workload_gpu_utilization: not served for this pod; gpu_utilization: not served for "
        r"this pod\); its discovery lists none of them \(per-pod metrics: gpu_memory_used\)",
        result.message,
    ), result.message
    window = next(s for s in result.evidence if s.title == "metric window")
    assert window.verdict == f"the metric window: {WINDOW}"


class Denying(Cluster):
    """The cluster, but the check's role may not list some kinds (403)."""

    def __init__(self, denied: set[tuple[str, str | None]], objects: list[Obj]) -> None:
        super().__init__(objects)
        self.denied = denied

    def listing(self, kind: str, namespace: str | None = None,
                label_selector: str | None = None) -> tuple[list[Obj], str]:  # fmt: skip
        if (kind, namespace) in self.denied:
            raise client_error(403, "Forbidden", f"{kind.lower()}s is forbidden")
        return super().listing(kind, namespace, label_selector)


def test_pieces_the_check_may_not_read_take_their_defaults_and_say_so() -> None:
    kube = Denying({("ServiceMonitor", None), ("Pod", "kube-system")},
                   [API, node("g0"), node("g1"), *PLATFORM])  # fmt: skip
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    section = next(s for s in result.evidence if s.title == "metric window")
    lines = section.answer.splitlines()
    assert lines[1] == (
        "scrape: 60s, could not read ServiceMonitors (ServiceMonitor list: HTTP 403 Forbidden: "
        "servicemonitors is forbidden): Prometheus' default 60s"
    )
    assert lines[3] == (
        "HPA sync: 15s, kube-system pods labelled component=kube-controller-manager could not "
        "be read (Pod list: HTTP 403 Forbidden: pods is forbidden): kube-controller-manager's "
        "default 15s"
    )
    assert section.verdict == (
        "the metric window: 0.3s: params.metricSeconds; from the cluster 165s = exporter "
        "collection 30s (default) + scrape 60s (default) + adapter relist 30s + HPA sync 15s "
        "(default) + margin 30s"
    )


def test_a_window_that_cannot_be_derived_is_other_and_creates_nothing() -> None:
    class Raising(Cluster):
        def listing(self, kind: str, namespace: str | None = None,
                    label_selector: str | None = None) -> tuple[list[Obj], str]:  # fmt: skip
            if kind == "Prometheus":
                raise RuntimeError("boom")
            return super().listing(kind, namespace, label_selector)

    kube = Raising([API, node("g0"), node("g1"), *PLATFORM])
    result = run(kube)
    assert (result.status, result.message) == (
        Status.OTHER, "1/1 autoscaling steps could not be judged: metric window: raised "
        "RuntimeError: boom")  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


# ---- the Prometheus the adapter queries --------------------------------------------------

# kube-prometheus-stack's Prometheus behind the operator's governing Service (it selects
# app.kubernetes.io/name=prometheus: v0.85.0 pkg/prometheus/server/operator.go, the default
# governing Service "prometheus-operated")
OPERATED = {"kind": "Service",
            "metadata": {"name": "prometheus-operated", "namespace": "monitoring"},
            "spec": {"clusterIP": "None",
                     "selector": {"app.kubernetes.io/name": "prometheus"}}}  # fmt: skip
KPS_POD = prometheus_pod("prometheus-kube-prometheus-stack-prometheus-0",
                         "kube-prometheus-stack-prometheus")  # fmt: skip


def window_lines(result: CheckResult) -> list[str]:
    return next(s for s in result.evidence if s.title == "metric window").answer.splitlines()


def test_of_several_prometheus_objects_the_one_behind_the_adapters_url_counts() -> None:
    platform = [exporter_pod(), SERVICE, service_monitor(None), prometheus("15s"),
                named("long-term", "5m"), OPERATED, KPS_POD, ADAPTER_SERVICE,
                adapter("--metrics-relist-interval=30s")]  # fmt: skip
    result = run(Cluster([API, node("g0"), node("g1"), *platform]))
    assert result.status == Status.PASSED, result.message
    assert window_lines(result)[1] == (
        "scrape: 15s, ServiceMonitor gpu-operator/nvidia-dcgm-exporter sets no endpoint "
        "interval: spec.scrapeInterval 15s of Prometheus monitoring/kube-prometheus-stack-"
        "prometheus (the adapter queries it: --prometheus-url=http://prometheus-operated."
        "monitoring.svc:9090 of Deployment monitoring/prometheus-adapter reaches Service "
        "monitoring/prometheus-operated: pods monitoring/prometheus-kube-prometheus-stack-"
        "prometheus-0 of Prometheus monitoring/kube-prometheus-stack-prometheus)"
    )


def test_where_the_adapters_url_leads_nowhere_the_longest_prometheus_counts() -> None:
    platform = [exporter_pod(), SERVICE, service_monitor(None), prometheus("15s"),
                named("long-term", "5m"), ADAPTER_SERVICE,
                adapter("--metrics-relist-interval=30s")]  # fmt: skip
    result = run(Cluster([API, node("g0"), node("g1"), *platform]))
    assert window_lines(result)[1] == (
        "scrape: 300s, ServiceMonitor gpu-operator/nvidia-dcgm-exporter sets no endpoint "
        "interval: spec.scrapeInterval 5m of Prometheus monitoring/long-term (which Prometheus "
        "the adapter queries is not known (--prometheus-url=http://prometheus-operated."
        "monitoring.svc:9090 of Deployment monitoring/prometheus-adapter: there is no Service "
        "monitoring/prometheus-operated): the longest of the 2 Prometheus objects)"
    )


# A plain Prometheus (the prometheus-community chart's server: no operator labels) that the
# adapter reaches by its pod address, as the simulated cluster gives it.
PLAIN_POD = {**prometheus_pod("prometheus-server-0", None),
             "status": {"podIP": "10.0.0.9", "phase": "Running"}}  # fmt: skip
PLAIN = [exporter_pod(), SERVICE, PLAIN_POD, ADAPTER_SERVICE,
         adapter("--metrics-relist-interval=30s",
                 extra=["--prometheus-url=http://10.0.0.9:9090"])]  # fmt: skip
CONFIG_URL = "http://10.0.0.9:9090/api/v1/status/config"
REACHED = ("--prometheus-url=http://10.0.0.9:9090 of Deployment monitoring/prometheus-adapter "
           "reaches pod address 10.0.0.9: pods monitoring/prometheus-server-0, of no Prometheus "
           "object (a Prometheus not managed by prometheus-operator)")  # fmt: skip


# Prometheus 3.5.0's answer on the simulated cluster (tests/data/real/prometheus/README.md)
ANSWER = (Path(__file__).parents[2] / "data" / "real" / "prometheus"
          / "sim-3.5.0-annotation-jobs-status-config.json").read_text()  # fmt: skip


def test_a_plain_prometheus_is_read_from_its_loaded_configuration(
    prometheus_http: Prometheus,
) -> None:
    prometheus_http.answers[CONFIG_URL] = (200, ANSWER)
    result = run(Cluster([API, node("g0"), node("g1"), *PLAIN]))
    assert result.status == Status.PASSED, result.message
    assert prometheus_http.asked == [CONFIG_URL]
    assert window_lines(result)[1] == (
        "scrape: 1s, scrape_interval 1s of job kubernetes-service-endpoints in "
        f"{CONFIG_URL} (--prometheus-url=http://10.0.0.9:9090 of Deployment monitoring/"
        "prometheus-adapter), the longest of the jobs that may scrape the exporter (Kubernetes "
        "pod, endpoints or service discovery: kubernetes-service-endpoints); not counted: "
        "kubernetes-pods (keep __meta_kubernetes_pod_annotation_prometheus_io_scrape =~ "
        f"'true'); {REACHED}")


def test_the_settings_prometheus_url_is_where_the_configuration_is_read(
    prometheus_http: Prometheus,
) -> None:
    url = "http://127.0.0.1:9090/api/v1/status/config"
    prometheus_http.answers[url] = (200, ANSWER)
    result = run(Cluster([API, node("g0"), node("g1"), *PLAIN]),
                 settings="prometheusUrl: 'http://127.0.0.1:9090/', ")  # fmt: skip
    assert prometheus_http.asked == [url]
    assert window_lines(result)[1].startswith(
        "scrape: 1s, scrape_interval 1s of job kubernetes-service-endpoints in "
        f"{url} (prometheusUrl of the check's settings), ")


@pytest.mark.parametrize(("got", "why"), [
    ((404, "404 page not found"), "HTTP 404 Not Found"),
    (httpx.ConnectError("[Errno 111] Connection refused"),
     "ConnectError: [Errno 111] Connection refused"),
    ((200, '{"status": "error", "error": "unavailable"}'),
     "the answer's status is 'error', not 'success'"),
    ((200, "x" * (9 << 20)), "the answer is larger than 8 MiB"),
], ids=["not-served", "refused", "not-a-config", "too-large"])  # fmt: skip
def test_an_unread_configuration_takes_prometheus_default_and_says_why(
    prometheus_http: Prometheus, got: tuple[int, str] | Exception, why: str
) -> None:
    prometheus_http.answers[CONFIG_URL] = got
    result = run(Cluster([API, node("g0"), node("g1"), *PLAIN]))
    assert result.status == Status.PASSED, result.message
    assert window_lines(result)[1] == (
        f"scrape: 60s, {REACHED}; {CONFIG_URL} (--prometheus-url=http://10.0.0.9:9090 of "
        f"Deployment monitoring/prometheus-adapter) could not be read: {why}: Prometheus' "
        "default 60s"
    )


def test_an_operator_managed_prometheus_is_not_asked_for_its_configuration(
    prometheus_http: Prometheus,
) -> None:
    run(healthy())
    assert prometheus_http.asked == []
