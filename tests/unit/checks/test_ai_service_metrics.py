"""ai-service-metrics: verdicts as tables, and run() on fakes (API, workload, Prometheus)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import ai_service_metrics
from aicr.checks.conformance.ai_service_metrics import build
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
PROM = "http://10.244.0.9:9090"
IP = "10.244.3.7"
RUN = "r0123abcd"
NS = f"aicr-{RUN}-ai-service-metrics-w"
STACK = "componentRefs:\n- name: kube-prometheus-stack\n  namespace: monitoring\n"


def s(value: float, **labels: str) -> build.Series:
    return build.Series(labels, value)


@pytest.mark.parametrize(
    ("param", "components", "served", "mode"),
    [
        ("auto", {"kube-prometheus-stack"}, None, "PodMonitor"),
        ("auto", set(), ["podmonitors", "servicemonitors"], "PodMonitor"),
        ("auto", set(), None, "annotations"),
        ("annotations", {"kube-prometheus-stack"}, ["podmonitors"], "annotations"),
        ("PodMonitor", set(), None, "PodMonitor"),
    ],
    ids=["recipe-stack", "crd-served", "plain", "param-annotations", "param-podmonitor"],
)  # fmt: skip
def test_discovery_follows_param_then_recipe_then_cluster(
    param: str, components: set[str], served: list[str] | None, mode: str
) -> None:
    assert build.discovery(param, components, served) == mode


def test_monitor_labels_satisfy_every_prometheus_selector() -> None:
    proms = [{"spec": {"podMonitorSelector": {"matchLabels": {"release": "kps"}}}},
             {"spec": {"podMonitorSelector": {}}}, {"spec": {}}]  # fmt: skip
    assert build.monitor_labels(proms) == {"release": "kps"}


@pytest.mark.parametrize(
    ("before", "found", "sent", "verdict"),
    [
        (0, [s(10, job="a")], 10, None),
        (5, [s(15, job="a")], 10, None),
        (0, [s(7, job="a")], 10, "the collected value rose by 7 of the 10 requests sent"),
        (0, [s(11, job="a")], 10, "the collected value rose by 11, more than the 10 requests sent"),
        (0, [s(10, job="a"), s(10, job="b")], 10,
         "the collected value rose by 20, more than the 10 requests sent (2 series for one "
         "counter: a; b: the workload is collected more than once)"),
        (0, [], 10, "the collected value rose by 0 of the 10 requests sent"),
    ],
    ids=["exact", "exact-from-baseline", "short", "over", "twice", "gone"],
)  # fmt: skip
def test_the_rise_must_be_exactly_what_was_sent(
    before: float, found: list[build.Series], sent: int, verdict: str | None
) -> None:
    assert build.judge_rise(before, found, sent) == verdict


def test_identity_needs_namespace_and_pod() -> None:
    assert build.identity_problems([s(0, namespace="w", pod="p")], "w", "p") == []
    assert build.identity_problems([s(0, namespace="x"), s(0, namespace="w", pod="p")], "w",
                                   "p") == ["label namespace is 'x', not 'w'", "no pod label"]


def test_series_and_targets_from_prometheus_answers() -> None:
    result = [{"metric": {"__name__": build.METRIC, "namespace": "w", "pod": "p", "job": "j",
                          "workload_id": "abc", build.RUN_LABEL: RUN}, "value": [1, "3"]},
              {"metric": {}, "value": [1, "NaN"]}, {"metric": {}}]  # fmt: skip
    found = build.series(result)
    assert build.describe_series(found) == "3 with namespace=w, pod=p, job=j, workload_id=abc"
    targets = [{"labels": {"instance": f"{IP}:8080"}}, {"scrapeUrl": f"http://{IP}:8080/metrics"},
               {"labels": {"instance": f"{IP}:9090"}}]  # fmt: skip
    assert len(build.targets_of(targets, f"{IP}:8080")) == 2


# ---- run() on fakes -------------------------------------------------------------------
class Cluster:
    """The workload's counter and what Prometheus makes of it (lag, copies, target health)."""

    def __init__(self, kube: FakeKube) -> None:
        self.kube = kube
        self.count = 0
        self.copies = 1  # series per counter: 2 is a duplicate scrape job
        self.collects = True  # False: the collected value never moves (lag past the bound)
        self.health = "up"
        self.target = True
        self.pool = f"podMonitor/{NS}/{build.POD}/0"  # the job the check's PodMonitor makes
        self.requests: list[str] = []
        self.collected = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(str(request.url))
        if request.url.host == IP:
            self.count += request.url.path == "/"
            return httpx.Response(200, text="ok\n")
        now = datetime.now(UTC).isoformat()
        if request.url.path == "/api/v1/targets":
            active = [{"scrapePool": self.pool, "health": self.health,
                       "scrapeUrl": f"http://{IP}:8080/metrics", "lastScrape": now,
                       "lastError": "" if self.health == "up" else "body size limit exceeded",
                       "labels": {"instance": f"{IP}:8080"}}] if self.target else []  # fmt: skip
            data = {"activeTargets": active}
            return httpx.Response(200, json={"status": "success", "data": data})
        if self.collects:
            self.collected = self.count
        result = [{"metric": {"namespace": NS, "pod": build.POD, "job": f"job{i}",
                              build.RUN_LABEL: RUN}, "value": [1, str(self.collected)]}
                  for i in range(self.copies)]  # fmt: skip
        return httpx.Response(200, json={"status": "success", "data": {"result": result}})


def ready(pod: Obj) -> list[Obj]:
    return [{**pod, "status": {"phase": "Running", "podIP": IP,
                               "conditions": [{"type": "Ready", "status": "True"}]}}]  # fmt: skip


def fake() -> Cluster:
    kube = FakeKube()
    kube.script["Pod"] = ready
    kube.discovery[build.MONITORING_GROUP] = ["podmonitors", "servicemonitors", "prometheuses"]
    return Cluster(kube)


CONFIG = (f"kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
          f"    checks:\n      ai-service-metrics:\n        prometheusUrl: {PROM}\n"
          "        params: {discoverSeconds: 1, countSeconds: 1, requests: 4}\n")  # fmt: skip


def run(cluster: Cluster, monkeypatch: pytest.MonkeyPatch, recipe: str = STACK) -> CheckResult:
    monkeypatch.setattr(ai_service_metrics, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(ai_service_metrics, "_client", lambda ctx: httpx.Client(
        transport=httpx.MockTransport(cluster.handle)))  # fmt: skip
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe(recipe),
                       parse_config(CONFIG, "cfg.yaml"))  # fmt: skip
    return entrypoint.run_check("ai-service-metrics", inputs, kube=cluster.kube)


def steps(result: CheckResult) -> list[tuple[str, str]]:
    return [(x.title, x.status.value) for x in result.evidence]


def left(cluster: Cluster) -> list[str]:
    return [o["kind"] for o in cluster.kube.objects if o["kind"] in ("Pod", "PodMonitor")]


def test_healthy_counts_exactly_and_cleans_up(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    result = run(cluster, monkeypatch)
    assert result.status == Status.PASSED, result.message
    assert result.message.startswith("Prometheus discovered the workload through PodMonitor, "
                                     "scraped it and counted exactly 4 of 4 requests in ")
    assert steps(result) == [("discovery", "passed"), ("workload", "passed"),
                             ("target up", "passed"), ("collected before", "informational"),
                             ("workload identity", "passed"), ("requests sent", "passed"),
                             ("requests counted", "passed"), ("workloads", "passed")]  # fmt: skip
    assert cluster.count == 4
    assert f"{PROM}/api/v1/query?query={build.METRIC}%7B{build.RUN_LABEL}%3D%22{RUN}%22%7D" in (
        cluster.requests)  # fmt: skip
    made = [c for c in cluster.kube.calls if c[0] == "create"]
    assert made == [("create", "Pod", NS, build.POD), ("create", "PodMonitor", NS, build.POD)]
    assert left(cluster) == []


def test_without_the_crd_the_stack_fails_before_creating_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = fake()
    cluster.kube.discovery.clear()
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 service metrics steps failed: discovery: kube-prometheus-stack "
        "discovers workloads through PodMonitors, but the API server serves no "
        "podmonitors.monitoring.coreos.com (prometheus-operator's CRDs are not installed)",
    )  # fmt: skip
    assert [c for c in cluster.kube.calls if c[0] == "create"] == []


def test_without_an_operator_stack_the_pod_is_annotated(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = fake()
    cluster.kube.discovery.clear()
    result = run(cluster, monkeypatch, recipe="componentRefs: []\n")
    assert result.status == Status.PASSED, result.message
    pod = next(c for c in cluster.kube.calls if c[0] == "create")
    assert pod == ("create", "Pod", NS, build.POD)
    assert "through annotations" in result.message


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda c: setattr(c, "target", False),
         f"1/3 service metrics steps failed: target up: Prometheus has no target for the workload "
         f"({IP}:8080) after 1s: its PodMonitor was not turned into a scrape target"),
        (lambda c: setattr(c, "pool", "sim-duplicate-pods"),
         f"1/3 service metrics steps failed: target up: Prometheus has no target for the workload "
         f"({IP}:8080) after 1s: its PodMonitor was not turned into a scrape target"),
        (lambda c: setattr(c, "health", "down"),
         f"1/3 service metrics steps failed: target up: the scrape of http://{IP}:8080/metrics "
         "fails after 1s: body size limit exceeded"),
        (lambda c: setattr(c, "collects", False),
         "1/6 service metrics steps failed: requests counted: the collected value rose by 0 of "
         "the 4 requests sent within 1s"),
        (lambda c: setattr(c, "copies", 2),
         "1/6 service metrics steps failed: requests counted: the collected value rose by 8, "
         "more than the 4 requests sent (2 series for one counter: job0; job1: the workload is "
         "collected more than once)"),
    ],
    ids=["no-target", "only-another-job", "scrape-fails", "lags", "double-counts"],
)  # fmt: skip
def test_broken_monitoring_fails_and_cleans_up(
    monkeypatch: pytest.MonkeyPatch, setup: Any, message: str
) -> None:
    cluster = fake()
    setup(cluster)
    result = run(cluster, monkeypatch)
    assert (result.status, result.message) == (Status.FAILED, message)
    assert result.evidence[-1].title == "workloads" and left(cluster) == []
