"""A plain Prometheus' loaded configuration (``/api/v1/status/config``): which jobs may scrape
the DCGM exporter, and the interval that counts.

The jobs are shaped as the prometheus-community chart writes them (charts/prometheus
values.yaml, serverFiles prometheus.yml, commit 005bec2342b9: `kubernetes-pods` and
`kubernetes-service-endpoints` keep targets annotated `prometheus.io/scrape: "true"` and
drop the `scrape-slow` ones, which their `-slow` twins keep at 5m); the exporter is the
GPU Operator's (its Service annotated `prometheus.io/scrape: "true"` and `prometheus.io/port:
"9400"`: NVIDIA/gpu-operator assets/state-dcgm-exporter/0600_service.yaml, commit 14157f43be3e;
its pods not). Two real answers of Prometheus 3.5.0 (tests/data/real/prometheus, README):
the simulated cluster's and the community chart's jobs.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_pod_autoscaling_window import SERVICE, exporter_pod

from aicr.checks.conformance.pod_autoscaling import scrape_config, window

Obj = dict[str, Any]
ANNOTATED = SERVICE
REAL = Path(__file__).parents[2] / "data" / "real" / "prometheus"


def job(name: str, role: str, kind: str, keep: str, drop: str | None = None,
        interval: str = "1m", **sd: Any) -> Obj:  # fmt: skip
    meta = f"__meta_kubernetes_{kind}_annotation_prometheus_io"
    rules: list[Obj] = [{"source_labels": [f"{meta}_{keep}"], "action": "keep", "regex": "true"}]
    if drop:
        rules.append({"source_labels": [f"{meta}_{drop}"], "action": "drop", "regex": "true"})
    rules.append({"source_labels": [f"{meta}_path"], "action": "replace",
                  "target_label": "__metrics_path__", "regex": "(.+)"})  # fmt: skip
    return {"job_name": name, "scrape_interval": interval, "honor_labels": True,
            "kubernetes_sd_configs": [{"role": role, **sd}], "relabel_configs": rules}  # fmt: skip


CHART = {
    "global": {"scrape_interval": "1m"},
    "scrape_configs": [
        {"job_name": "prometheus", "scrape_interval": "1m",
         "static_configs": [{"targets": ["localhost:9090"]}]},
        job("kubernetes-service-endpoints", "endpoints", "service", "scrape", "scrape_slow"),
        job("kubernetes-service-endpoints-slow", "endpoints", "service", "scrape_slow",
            interval="5m"),
        job("kubernetes-pods", "pod", "pod", "scrape", "scrape_slow"),
        job("kubernetes-pods-slow", "pod", "pod", "scrape_slow", interval="5m"),
    ],
}  # fmt: skip


def choose(config: Obj, pods: list[Obj] | None = None,
           services: list[Obj] | None = None) -> scrape_config.Choice:  # fmt: skip
    return scrape_config.choose(
        config, [exporter_pod()] if pods is None else pods,
        [ANNOTATED] if services is None else services, window.prometheus_seconds)  # fmt: skip


def names(choice: scrape_config.Choice) -> list[str]:
    return [j.name for j in choice.jobs]


KEEP_SLOW_SVC = "keep __meta_kubernetes_service_annotation_prometheus_io_scrape_slow =~ 'true'"
KEEP_POD = "keep __meta_kubernetes_pod_annotation_prometheus_io_scrape =~ 'true'"
KEEP_SLOW_POD = "keep __meta_kubernetes_pod_annotation_prometheus_io_scrape_slow =~ 'true'"


def test_the_charts_jobs_that_may_scrape_an_annotated_service() -> None:
    choice = choose(CHART)
    assert names(choice) == ["kubernetes-service-endpoints"]
    assert choice.ruled_out == (("kubernetes-service-endpoints-slow", KEEP_SLOW_SVC),
                                ("kubernetes-pods", KEEP_POD),
                                ("kubernetes-pods-slow", KEEP_SLOW_POD))  # fmt: skip
    assert (choice.global_interval, choice.files) == ("1m", 0)


def test_an_exporter_annotated_slow_is_kept_by_the_slow_jobs_only() -> None:
    slow = copy.deepcopy(ANNOTATED)
    slow["metadata"]["annotations"]["prometheus.io/scrape-slow"] = "true"
    choice = choose(CHART, services=[slow])
    assert names(choice) == ["kubernetes-service-endpoints-slow"]
    assert choice.ruled_out[0] == (
        "kubernetes-service-endpoints",
        "drop __meta_kubernetes_service_annotation_prometheus_io_scrape_slow =~ 'true'")
    assert [j.seconds for j in choice.jobs] == [300]


def test_a_yaml_boolean_regex_reads_as_prometheus_reads_it() -> None:
    config = copy.deepcopy(CHART)
    for spec in config["scrape_configs"][1:]:
        for rule in spec["relabel_configs"]:
            if rule["regex"] == "true":
                rule["regex"] = True
    assert names(choose(config)) == ["kubernetes-service-endpoints"]


@pytest.mark.parametrize(("rules", "kept"), [
    ([{"source_labels": ["__meta_kubernetes_service_name"], "action": "keep",
       "regex": "nvidia-dcgm-exporter"}], True),
    ([{"source_labels": ["__meta_kubernetes_service_name"], "action": "keep",
       "regex": "kube-state-metrics"}], False),
    ([{"source_labels": ["__meta_kubernetes_namespace", "__meta_kubernetes_service_label_app"],
       "action": "keep", "regex": "gpu-operator;nvidia-dcgm-.*"}], True),
    ([{"source_labels": ["__meta_kubernetes_service_labelpresent_app"], "action": "keep",
       "regex": "true"}], True),
    # a rule on what discovery alone does not decide (the port) is assumed to keep
    ([{"source_labels": ["__meta_kubernetes_endpoint_port_name"], "action": "keep",
       "regex": "web"}], True),
    # a label an earlier rule may have rewritten is not judged
    ([{"source_labels": ["__address__"], "target_label": "__meta_kubernetes_service_name",
       "replacement": "x"},
      {"source_labels": ["__meta_kubernetes_service_name"], "action": "keep",
       "regex": "kube-state-metrics"}], True),
    # nor anything after a rule that rewrites label sets wholesale
    ([{"action": "labelmap", "regex": "__meta_kubernetes_service_label_(.+)"},
      {"source_labels": ["__meta_kubernetes_service_name"], "action": "keep",
       "regex": "kube-state-metrics"}], True),
    # a pattern Python does not read keeps the target
    ([{"source_labels": ["__meta_kubernetes_service_name"], "action": "keep",
       "regex": "(?P<x"}], True),
], ids=["service-name", "other-service", "namespace-and-label", "label-present", "port",
        "rewritten", "labelmap", "unread-pattern"])  # fmt: skip
def test_which_relabel_rules_are_judged(rules: list[Obj], kept: bool) -> None:
    config = {"global": {"scrape_interval": "30s"}, "scrape_configs": [
        {"job_name": "gpu", "scrape_interval": "10s", "relabel_configs": rules,
         "kubernetes_sd_configs": [{"role": "endpoints"}]}]}  # fmt: skip
    assert names(choose(config)) == (["gpu"] if kept else [])


def test_jobs_watching_other_namespaces_or_nothing_of_pods_are_not_counted() -> None:
    config = {"global": {"scrape_interval": "15s"}, "scrape_files": [], "scrape_configs": [
        {"job_name": "elsewhere", "scrape_interval": "2m",
         "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": ["default"]}}]},
        {"job_name": "gpu", "scrape_interval": "20s",
         "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": ["gpu-operator"]}}]},
        {"job_name": "nodes", "scrape_interval": "3m", "kubernetes_sd_configs": [
            {"role": "node"}]},
        {"job_name": "static", "scrape_interval": "4m",
         "static_configs": [{"targets": ["10.0.0.1:9400"]}]}]}  # fmt: skip
    choice = choose(config)
    assert names(choice) == ["gpu"]
    assert choice.ruled_out == (("elsewhere", "watches none of the exporter's namespaces"),)


def test_without_exporter_pods_every_pod_discovering_job_may_scrape() -> None:
    assert names(choose(CHART, pods=[], services=[])) == [
        "kubernetes-service-endpoints", "kubernetes-service-endpoints-slow", "kubernetes-pods",
        "kubernetes-pods-slow"]  # fmt: skip


def test_a_job_without_an_interval_has_the_global_one() -> None:
    config = {"global": {"scrape_interval": "45s"}, "scrape_config_files": ["jobs/*.yml"],
              "scrape_configs": [{"job_name": "gpu", "kubernetes_sd_configs": [
                  {"role": "endpoints"}]}]}  # fmt: skip
    choice = choose(config)
    assert [(j.name, j.interval, j.seconds) for j in choice.jobs] == [("gpu", "45s", 45)]
    assert choice.files == 1


def answer(config: Obj) -> str:
    import yaml

    return json.dumps({"status": "success", "data": {"yaml": yaml.safe_dump(config)}})


@pytest.mark.parametrize(("body", "error"), [
    ("<html>Thanos</html>", "the answer is not JSON (Expecting value: line 1 column 1 (char 0))"),
    ('{"status": "error", "errorType": "unavailable"}',
     "the answer's status is 'error', not 'success'"),
    ('{"status": "success", "data": {}}', "the answer has no data.yaml"),
    ('{"status": "success", "data": {"yaml": "- a\\n- b\\n"}}', "data.yaml is not a mapping"),
    ('["success"]', "the answer's status is 'list', not 'success'"),
], ids=["not-json", "error", "no-yaml", "not-mapping", "not-object"])  # fmt: skip
def test_answers_that_are_not_a_configuration(body: str, error: str) -> None:
    with pytest.raises(scrape_config.ConfigError) as raised:
        scrape_config.parse(body)
    assert str(raised.value) == error


def test_the_configuration_is_the_answers_yaml() -> None:
    assert scrape_config.parse(answer(CHART)) == CHART


# ---- real answers -------------------------------------------------------------------------


def real(name: str) -> Obj:
    return scrape_config.parse((REAL / name).read_text())


def test_the_simulated_clusters_answer() -> None:
    # the sim's prometheus.yml as the community chart's annotation jobs, 1 s global
    choice = choose(real("sim-3.5.0-annotation-jobs-status-config.json"))
    assert [(j.name, j.interval, j.seconds) for j in choice.jobs] == [
        ("kubernetes-service-endpoints", "1s", 1)]
    assert choice.ruled_out == (("kubernetes-pods", KEEP_POD),)
    assert (choice.global_interval, choice.files) == ("1s", 0)


def test_the_community_charts_answer() -> None:
    config = real("community-chart-29.23.1-3.5.0-status-config.json")
    assert [j.name for j in scrape_config.jobs(config, window.prometheus_seconds)] == [
        "kubernetes-api-servers", "kubernetes-nodes", "kubernetes-nodes-cadvisor",
        "kubernetes-pods", "kubernetes-pods-slow", "kubernetes-service-endpoints",
        "kubernetes-service-endpoints-slow", "kubernetes-services", "prometheus",
        "prometheus-pushgateway"]  # fmt: skip
    choice = choose(config)
    # the API servers' job keeps by the endpoint slice's port name, which is not judged
    assert [(j.name, j.seconds) for j in choice.jobs] == [
        ("kubernetes-api-servers", 60), ("kubernetes-service-endpoints", 60)]
    assert choice.ruled_out == (
        ("kubernetes-pods", KEEP_POD), ("kubernetes-pods-slow", KEEP_SLOW_POD),
        ("kubernetes-service-endpoints-slow", KEEP_SLOW_SVC),
        ("kubernetes-services",
         "keep __meta_kubernetes_service_annotation_prometheus_io_probe =~ 'true'"),
        ("prometheus-pushgateway", "keep __meta_kubernetes_service_annotation_prometheus_io_probe"
         " =~ 'pushgateway'"))  # fmt: skip
    assert choice.global_interval == "1m"


def test_the_community_charts_slow_jobs_count_for_an_exporter_annotated_slow() -> None:
    slow = copy.deepcopy(ANNOTATED)
    slow["metadata"]["annotations"]["prometheus.io/scrape-slow"] = "true"
    choice = choose(real("community-chart-29.23.1-3.5.0-status-config.json"), services=[slow])
    assert [(j.name, j.seconds) for j in choice.jobs] == [
        ("kubernetes-api-servers", 60), ("kubernetes-service-endpoints-slow", 300)]
