"""pod-autoscaling's metric window: each piece read from the cluster, or its documented default.

The objects are shaped as the charts render them: the GPU Operator's DCGM exporter pods,
Service and ServiceMonitor (gpu-operator v25.10.1 assets/state-dcgm-exporter), the
kube-prometheus-stack Prometheus object (prometheusSpec.scrapeInterval "" by default, so
unset), the prometheus-adapter chart's Deployment (templates/deployment.yaml: `/adapter`
then its flags, `extraArguments` last) and kubeadm's kube-controller-manager static pod.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from aicr.checks.argv import last_flag
from aicr.checks.conformance.pod_autoscaling import window
from aicr.checks.conformance.pod_autoscaling.window import Piece, Window

Obj = dict[str, Any]
EXPORTER = "nvidia-dcgm-exporter"


def exporter_pod(name: str = "nvidia-dcgm-exporter-4kq2x", env: list[Obj] | None = None) -> Obj:
    container = {
        "name": EXPORTER,
        "image": "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04",
        "env": env or [],
        "ports": [{"name": "metrics", "containerPort": 9400}],
    }
    meta = {"name": name, "namespace": "gpu-operator", "labels": {"app": EXPORTER}}
    return {"kind": "Pod", "metadata": meta, "spec": {"containers": [container]}}


def interval_env(value: str) -> list[Obj]:
    return [{"name": "DCGM_EXPORTER_INTERVAL", "value": value}]


# annotated for Prometheus: NVIDIA/gpu-operator assets/state-dcgm-exporter/0600_service.yaml
SERVICE = {"kind": "Service", "metadata": {"name": EXPORTER, "namespace": "gpu-operator",
                                           "labels": {"app": EXPORTER},
                                           "annotations": {"prometheus.io/scrape": "true",
                                                           "prometheus.io/port": "9400"}},
           "spec": {"selector": {"app": EXPORTER},
                    "ports": [{"name": "gpu-metrics", "port": 9400}]}}  # fmt: skip


def service_monitor(interval: str | None = "30s", namespaces: Obj | None = None,
                    selector: Obj | None = None) -> Obj:  # fmt: skip
    endpoint: Obj = {"port": "gpu-metrics", "path": "/metrics"}
    if interval is not None:
        endpoint["interval"] = interval
    return {"kind": "ServiceMonitor", "metadata": {"name": EXPORTER, "namespace": "gpu-operator"},
            "spec": {"endpoints": [endpoint], "jobLabel": "app",
                     "namespaceSelector": namespaces or {"matchNames": ["gpu-operator"]},
                     "selector": selector or {"matchLabels": {"app": EXPORTER}}}}  # fmt: skip


def prometheus(interval: str | None = None) -> Obj:
    spec: Obj = {"serviceMonitorSelector": {}, "podMonitorSelector": {}}
    if interval is not None:
        spec["scrapeInterval"] = interval
    meta = {"name": "kube-prometheus-stack-prometheus", "namespace": "monitoring"}
    return {"kind": "Prometheus", "metadata": meta, "spec": spec}


ADAPTER_SELECTOR = {"app.kubernetes.io/name": "prometheus-adapter",
                    "app.kubernetes.io/instance": "prometheus-adapter"}  # fmt: skip
ADAPTER_SERVICE = {"kind": "Service", "metadata": {"name": "prometheus-adapter",
                                                   "namespace": "monitoring"},
                   "spec": {"selector": ADAPTER_SELECTOR,
                            "ports": [{"port": 443, "targetPort": "https"}]}}  # fmt: skip


def adapter(*flags: str, extra: list[str] | None = None) -> Obj:
    args = ["/adapter", "--secure-port=6443", "--cert-dir=/tmp/cert", "--logtostderr=true",
            "--prometheus-url=http://prometheus-operated.monitoring.svc:9090", *flags, "--v=4",
            "--config=/etc/adapter/config.yaml", *(extra or [])]  # fmt: skip
    labels = {**ADAPTER_SELECTOR, "app.kubernetes.io/component": "metrics"}
    return {"kind": "Deployment", "metadata": {"name": "prometheus-adapter",
                                               "namespace": "monitoring"},
            "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": [
                {"name": "prometheus-adapter",
                 "image": "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0",
                 "args": args}]}}}}  # fmt: skip


def controller_manager(*flags: str) -> Obj:
    command = ["kube-controller-manager", "--allocate-node-cidrs=true",
               "--kubeconfig=/etc/kubernetes/controller-manager.conf", "--leader-elect=true",
               "--use-service-account-credentials=true", *flags]  # fmt: skip
    return {"kind": "Pod", "metadata": {"name": "kube-controller-manager-cp-0",
                                        "namespace": "kube-system",
                                        "labels": {"component": "kube-controller-manager",
                                                   "tier": "control-plane"}},
            "spec": {"containers": [{"name": "kube-controller-manager",
                                     "image": "registry.k8s.io/kube-controller-manager:v1.35.0",
                                     "command": command}]}}  # fmt: skip


# ---- durations ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30), ("1m", 60), ("1m30s", 90), ("1h", 3600), ("1d", 86400), ("1w", 604800),
    ("1y", 31536000), ("500ms", 0.5), ("2m500ms", 120.5),
    ("0", None), ("", None), ("30", None), ("1.5m", None), ("30s1m", None), ("fast", None),
    (None, None), (30, None),
])  # fmt: skip
def test_prometheus_durations(text: Any, seconds: float | None) -> None:
    assert window.prometheus_seconds(text) == seconds


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30), ("1m0s", 60), ("1.5h", 5400), ("500ms", 0.5), ("1h1m1s", 3661), (".5s", 0.5),
    ("0", None), ("0s", None), ("", None), ("30", None), ("1d", None), ("-1m", None),
    ("soon", None), ("30s ", 30),
])  # fmt: skip
def test_go_durations(text: str, seconds: float | None) -> None:
    assert window.go_seconds(text) == seconds


@pytest.mark.parametrize(("argv", "value"), [
    (["x", "--metrics-relist-interval=30s"], "30s"),
    (["x", "--metrics-relist-interval", "1m"], "1m"),
    (["x", "--metrics-relist-interval=30s", "--metrics-relist-interval=2m"], "2m"),
    (["x", "--metrics-relist-interval"], ""),
    (["x", "--metrics-max-age=5m"], None),
])  # fmt: skip
def test_the_last_flag_wins_as_pflag_parses_it(argv: list[str], value: str | None) -> None:
    assert last_flag(argv, ("--metrics-relist-interval",)) == value


# ---- exporter collection ------------------------------------------------------------------


@pytest.mark.parametrize(("pods", "piece"), [
    ([exporter_pod(env=interval_env("10000"))],
     Piece("exporter collection", 10, "DCGM_EXPORTER_INTERVAL=10000 of pod "
           "gpu-operator/nvidia-dcgm-exporter-4kq2x")),
    ([exporter_pod()],
     Piece("exporter collection", 30, "dcgm-exporter's default: neither -c nor "
           "DCGM_EXPORTER_INTERVAL of pod gpu-operator/nvidia-dcgm-exporter-4kq2x", True)),
    ([exporter_pod(env=[{"name": "DCGM_EXPORTER_INTERVAL", "valueFrom": {"configMapKeyRef": {
        "name": "dcgm", "key": "interval"}}}])],
     Piece("exporter collection", 30, "pod gpu-operator/nvidia-dcgm-exporter-4kq2x: "
           "DCGM_EXPORTER_INTERVAL is set from a reference (valueFrom): dcgm-exporter's "
           "default 30000 ms", True)),
    ([exporter_pod(env=interval_env("often"))],
     Piece("exporter collection", 30, "DCGM_EXPORTER_INTERVAL=often is 'often', not a number "
           "of milliseconds: dcgm-exporter's default 30000 ms", True)),
    ([exporter_pod("a", interval_env("5000")), exporter_pod("b", interval_env("60000"))],
     Piece("exporter collection", 60, "DCGM_EXPORTER_INTERVAL=60000 of pod gpu-operator/b")),
    ([], Piece("exporter collection", 30, "no pod labelled app=nvidia-dcgm-exporter: "
               "dcgm-exporter's default 30000 ms", True)),
    ("Pod list: HTTP 403 Forbidden: pods is forbidden",
     Piece("exporter collection", 30, "exporter pods could not be read (Pod list: HTTP 403 "
           "Forbidden: pods is forbidden): dcgm-exporter's default 30000 ms", True)),
], ids=["env", "unset", "reference", "malformed", "longest", "no-pods", "unreadable"])  # fmt: skip
def test_the_exporters_collection_interval(pods: window.Listed, piece: Piece) -> None:
    assert window.exporter_piece(pods) == piece


# ---- scrape -------------------------------------------------------------------------------


KPS = "monitoring/kube-prometheus-stack-prometheus"
# The adapter's --prometheus-url followed to kube-prometheus-stack's Prometheus object.
QUERIED = window.Queried("Service monitoring/prometheus-operated", (KPS,))


def scrape(monitors: list[Obj] | str = (), pod_monitors: list[Obj] | str = (),
           prometheuses: list[Obj] | str = (), services: list[Obj] | str | None = None,
           pods: list[Obj] | str | None = None, queried: window.Queried = QUERIED,
           config: window.ConfigRead | None = None) -> Piece:  # fmt: skip
    return window.scrape_piece(
        [exporter_pod()] if pods is None else pods, [SERVICE] if services is None else services,
        list(monitors) if not isinstance(monitors, str) else monitors,
        list(pod_monitors) if not isinstance(pod_monitors, str) else pod_monitors,
        list(prometheuses) if not isinstance(prometheuses, str) else prometheuses,
        queried, config)  # fmt: skip


POD_MONITOR = {
    "kind": "PodMonitor",
    "metadata": {"name": "dcgm", "namespace": "monitoring"},
    "spec": {
        "selector": {"matchLabels": {"app": EXPORTER}},
        "namespaceSelector": {"any": True},
        "podMetricsEndpoints": [{"port": "metrics", "interval": "5s"}],
    },
}


WHOSE = "the adapter queries it: Service monitoring/prometheus-operated"
NO_MONITOR = "no ServiceMonitor or PodMonitor selects the exporter pods"
NO_CONFIG = window.ConfigRead(None, "Deployment monitoring/prometheus-adapter passes no "
                              "--prometheus-url")  # fmt: skip


@pytest.mark.parametrize(("kwargs", "piece"), [
    ({"monitors": [service_monitor("30s")], "prometheuses": [prometheus()]},
     Piece("scrape", 30, "endpoint interval 30s of ServiceMonitor gpu-operator/"
           "nvidia-dcgm-exporter")),
    ({"monitors": [service_monitor(None)], "prometheuses": [prometheus("15s")]},
     Piece("scrape", 15, "ServiceMonitor gpu-operator/nvidia-dcgm-exporter sets no endpoint "
           f"interval: spec.scrapeInterval 15s of Prometheus {KPS} ({WHOSE})")),
    ({"monitors": [service_monitor(None)], "prometheuses": [prometheus()]},
     Piece("scrape", 30, "ServiceMonitor gpu-operator/nvidia-dcgm-exporter sets no endpoint "
           f"interval: Prometheus {KPS} sets no spec.scrapeInterval: prometheus-operator's "
           f"default 30s ({WHOSE})", True)),
    ({"pod_monitors": [POD_MONITOR], "prometheuses": [prometheus()]},
     Piece("scrape", 5, "endpoint interval 5s of PodMonitor monitoring/dcgm")),
    ({"monitors": [service_monitor("30s")], "pod_monitors": [POD_MONITOR],
      "prometheuses": [prometheus()]},
     Piece("scrape", 30, "endpoint interval 30s of ServiceMonitor gpu-operator/"
           "nvidia-dcgm-exporter")),
    ({"monitors": [service_monitor("fast")], "prometheuses": [prometheus()]},
     Piece("scrape", 60, "ServiceMonitor gpu-operator/nvidia-dcgm-exporter: endpoint interval "
           "'fast' is not a duration: Prometheus' default 60s", True)),
    ({"prometheuses": [prometheus("10s")]},
     Piece("scrape", 10, f"spec.scrapeInterval 10s of Prometheus {KPS} ({NO_MONITOR}; "
           f"{WHOSE})")),
    ({"prometheuses": [prometheus("10x")]},
     Piece("scrape", 60, f"Prometheus {KPS}: spec.scrapeInterval '10x' is not a duration: "
           f"Prometheus' default 60s ({NO_MONITOR}; {WHOSE})", True)),
    ({"queried": window.Queried("Deployment monitoring/prometheus-adapter passes no "
                                "--prometheus-url"), "config": NO_CONFIG},
     Piece("scrape", 60, "there is no Prometheus object; no address to read its configuration "
           "(Deployment monitoring/prometheus-adapter passes no --prometheus-url): Prometheus' "
           "default 60s", True)),
    ({"monitors": [service_monitor("30s", selector={"matchLabels": {"app": "other"}})],
      "prometheuses": [prometheus()]},
     Piece("scrape", 30, f"Prometheus {KPS} sets no spec.scrapeInterval: prometheus-operator's "
           f"default 30s ({NO_MONITOR}; {WHOSE})", True)),
    ({"monitors": [service_monitor("30s")], "services": [],
      "prometheuses": [prometheus("15s")]},
     Piece("scrape", 15, f"spec.scrapeInterval 15s of Prometheus {KPS} ({NO_MONITOR}; "
           f"{WHOSE})")),
    ({"monitors": "ServiceMonitor list: HTTP 403 Forbidden: servicemonitors.monitoring.coreos"
                  ".com is forbidden", "prometheuses": [prometheus("15s")]},
     Piece("scrape", 60, "could not read ServiceMonitors (ServiceMonitor list: HTTP 403 "
           "Forbidden: servicemonitors.monitoring.coreos.com is forbidden): Prometheus' default "
           "60s", True)),
], ids=["service-monitor", "global", "operator-default", "pod-monitor", "longest", "malformed",
        "no-monitor", "malformed-global", "plain-prometheus", "other-service",
        "no-exporter-service", "unreadable"])  # fmt: skip
def test_the_scrape_interval(kwargs: Obj, piece: Piece) -> None:
    assert scrape(**kwargs) == piece


def test_a_monitor_without_a_namespace_selector_covers_its_own_namespace_only() -> None:
    mine = service_monitor("20s")
    del mine["spec"]["namespaceSelector"]
    assert scrape(monitors=[mine], prometheuses=[prometheus()]).seconds == 20
    elsewhere = copy.deepcopy(mine)
    elsewhere["metadata"]["namespace"] = "monitoring"
    assert scrape(monitors=[elsewhere], prometheuses=[prometheus()]).source.startswith(
        f"Prometheus {KPS} sets no spec.scrapeInterval")


# ---- which Prometheus the adapter queries -------------------------------------------------

WHERE = ("--prometheus-url=http://prometheus-operated.monitoring.svc:9090 of Deployment "
         "monitoring/prometheus-adapter")  # fmt: skip


def prometheus_pod(name: str, owner: str | None, namespace: str = "monitoring",
                   legacy: bool = False) -> Obj:  # fmt: skip
    """A Prometheus pod as prometheus-operator labels it (v0.85.0 prometheus_types.go
    PodMetadata: ``prometheus`` and ``operator.prometheus.io/name`` set to the object's
    name; before the latter existed only ``prometheus``), or a plain one (``owner`` None)."""
    labels = {"app.kubernetes.io/name": "prometheus"}
    if owner is not None:
        labels |= {"prometheus": owner} if legacy else {
            "prometheus": owner, "operator.prometheus.io/name": owner,
            "app.kubernetes.io/managed-by": "prometheus-operator"}  # fmt: skip
    return {"kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "status": {"podIP": "10.0.0.9"}}  # fmt: skip


def named(name: str, interval: str | None = None) -> Obj:
    obj = prometheus(interval)
    obj["metadata"]["name"] = name
    return obj


@pytest.mark.parametrize(("pods", "objects", "queried"), [
    ([prometheus_pod("prometheus-kube-prometheus-stack-prometheus-0",
                     "kube-prometheus-stack-prometheus")],
     [prometheus(), named("k8s")],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated: pods monitoring/"
                    f"prometheus-kube-prometheus-stack-prometheus-0 of Prometheus {KPS}",
                    (KPS,))),
    ([prometheus_pod("prometheus-k8s-0", "k8s", legacy=True)], [prometheus(), named("k8s")],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated: pods monitoring/"
                    "prometheus-k8s-0 of Prometheus monitoring/k8s", ("monitoring/k8s",))),
    ([prometheus_pod("prometheus-k8s-0", "k8s"), prometheus_pod("prometheus-ops-0", "ops")],
     [named("k8s"), named("ops")],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated: pods monitoring/"
                    "prometheus-k8s-0, monitoring/prometheus-ops-0 of Prometheus monitoring/k8s, "
                    "monitoring/ops", ("monitoring/k8s", "monitoring/ops"))),
    ([prometheus_pod("prometheus-server-0", None)], [prometheus()],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated: pods monitoring/"
                    "prometheus-server-0, of no Prometheus object (a Prometheus not managed by "
                    "prometheus-operator)", plain=True)),
    ([prometheus_pod("prometheus-k8s-0", "k8s", namespace="other")], [named("k8s")],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated: pods other/"
                    "prometheus-k8s-0, of no Prometheus object (a Prometheus not managed by "
                    "prometheus-operator)", plain=True)),
    ([], [prometheus()],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated, which no pod "
                    "serves")),
    ("Pod list: HTTP 403 Forbidden", [prometheus()],
     window.Queried(f"{WHERE} reaches Service monitoring/prometheus-operated, whose pods could "
                    "not be read (Pod list: HTTP 403 Forbidden)")),
], ids=["operator", "legacy-label", "two-behind-one-service", "plain", "other-namespace",
        "no-pod", "unreadable"])  # fmt: skip
def test_the_prometheus_behind_the_adapters_url(
    pods: window.Listed, objects: list[Obj], queried: window.Queried
) -> None:
    assert window.behind(WHERE, "Service monitoring/prometheus-operated", pods, objects) == queried


@pytest.mark.parametrize(("url", "host"), [
    ("http://prometheus-operated.monitoring.svc:9090", ("monitoring", "prometheus-operated")),
    ("http://kube-prometheus-stack-prometheus.monitoring.svc.cluster.local:9090/",
     ("monitoring", "kube-prometheus-stack-prometheus")),
    ("http://prometheus-server.observability", ("observability", "prometheus-server")),
    ("http://prometheus-server:80", ("monitoring", "prometheus-server")),
    ("http://10.0.0.9:9090", "10.0.0.9"),
    ("http://[fd00::9]:9090", "fd00::9"),
    ("https://prometheus.example.com", None),
    ("http://:9090", None),
], ids=["service", "cluster-domain", "name-namespace", "own-namespace", "ip", "ipv6",
        "outside", "no-host"])  # fmt: skip
def test_what_the_adapters_url_names(url: str, host: tuple[str, str] | str | None) -> None:
    assert window.address(url, "monitoring") == host


@pytest.mark.parametrize(("deployments", "url", "where"), [
    ([adapter()], "http://prometheus-operated.monitoring.svc:9090", WHERE),
    ([adapter(extra=["--prometheus-url=http://thanos-query.monitoring:9090"])],
     "http://thanos-query.monitoring:9090", "--prometheus-url=http://thanos-query.monitoring:9090"
     " of Deployment monitoring/prometheus-adapter"),
    ([{**adapter(), "spec": {"template": {**adapter()["spec"]["template"], "spec": {
        "containers": [{**adapter()["spec"]["template"]["spec"]["containers"][0],
                        "args": ["/adapter", "--metrics-relist-interval=30s"]}]}}}}],
     None, "Deployment monitoring/prometheus-adapter passes no --prometheus-url"),
    ([adapter(extra=["--prometheus-url=$(PROMETHEUS_URL)"])], None,
     "Deployment monitoring/prometheus-adapter passes --prometheus-url='$(PROMETHEUS_URL)'"),
    ("Deployment list: HTTP 403 Forbidden", None, "service monitoring/prometheus-adapter could "
     "not be followed (Deployment list: HTTP 403 Forbidden)"),
], ids=["chart", "last-wins", "unset", "reference", "unreadable"])  # fmt: skip
def test_the_adapters_prometheus_url(
    deployments: window.Listed, url: str | None, where: str
) -> None:
    containers = window.adapter_containers("monitoring/prometheus-adapter", ADAPTER_SERVICE,
                                           deployments)  # fmt: skip
    assert window.adapter_url(containers) == (url, where)


def test_of_several_prometheus_objects_the_one_the_adapter_queries_counts() -> None:
    objects = [named("long-term", "2m"), prometheus("15s")]
    assert scrape(prometheuses=objects) == Piece(
        "scrape", 15, f"spec.scrapeInterval 15s of Prometheus {KPS} ({NO_MONITOR}; {WHOSE})")
    monitors = [service_monitor(None)]
    assert scrape(monitors=monitors, prometheuses=objects).seconds == 15


REAL = Path(__file__).parents[2] / "data" / "real" / "prometheus"
SIM_ANSWER = "sim-3.5.0-annotation-jobs-status-config.json"
PLAIN = window.Queried("the pods behind it are of no Prometheus object", plain=True)
AT = "http://10.0.0.9:9090/api/v1/status/config (--prometheus-url=http://10.0.0.9:9090 of " \
     "Deployment monitoring/prometheus-adapter)"  # fmt: skip


def read(body: str | None = None, error: str | None = None) -> window.ConfigRead:
    return window.ConfigRead("http://10.0.0.9:9090", "--prometheus-url=http://10.0.0.9:9090 of "
                             "Deployment monitoring/prometheus-adapter", body, error)  # fmt: skip


@pytest.mark.parametrize(("kwargs", "piece"), [
    ({"config": read((REAL / SIM_ANSWER).read_text())},
     Piece("scrape", 1, f"scrape_interval 1s of job kubernetes-service-endpoints in {AT}, the "
           "longest of the jobs that may scrape the exporter (Kubernetes pod, endpoints or "
           "service discovery: kubernetes-service-endpoints); not counted: kubernetes-pods "
           "(keep __meta_kubernetes_pod_annotation_prometheus_io_scrape =~ 'true'); the pods "
           "behind it are of no Prometheus object")),
    ({"config": read(error="HTTP 404 Not Found")},
     Piece("scrape", 60, f"the pods behind it are of no Prometheus object; {AT} could not be "
           "read: HTTP 404 Not Found: Prometheus' default 60s", True)),
    ({"config": read("{}")},
     Piece("scrape", 60, f"the pods behind it are of no Prometheus object; {AT} could not be "
           "read: the answer's status is None, not 'success': Prometheus' default 60s", True)),
    ({"config": read('{"status": "success", "data": {"yaml": "global: {scrape_interval: 2m}"}}')},
     Piece("scrape", 120, f"global scrape_interval 2m of {AT}: no Kubernetes pod, endpoints or "
           "service discovery job may scrape the exporter; the pods behind it are of no "
           "Prometheus object")),
], ids=["sim", "not-served", "not-a-config", "no-job"])  # fmt: skip
def test_a_plain_prometheus_is_read_from_its_configuration(kwargs: Obj, piece: Piece) -> None:
    assert scrape(queried=PLAIN, **kwargs) == piece


def test_a_plain_prometheus_beside_the_operators_is_read_from_its_configuration() -> None:
    # the monitors and the Prometheus object are the operator's, not the adapter's Prometheus'
    config = read((REAL / SIM_ANSWER).read_text())
    beside = scrape(queried=PLAIN, config=config, monitors=[service_monitor("30s")],
                    prometheuses=[prometheus("15s")])  # fmt: skip
    assert beside == scrape(queried=PLAIN, config=config)
    assert beside.seconds == 1


def test_where_the_adapters_prometheus_cannot_be_told_the_longest_counts_saying_so() -> None:
    unknown = window.Queried(f"{WHERE}: there is no Service monitoring/prometheus-operated")
    objects = [named("long-term", "2m"), prometheus("15s")]
    assert scrape(prometheuses=objects, queried=unknown) == Piece(
        "scrape", 120, f"spec.scrapeInterval 2m of Prometheus monitoring/long-term ({NO_MONITOR}; "
        f"which Prometheus the adapter queries is not known ({unknown.why}): the longest of the "
        "2 Prometheus objects)")  # fmt: skip


# ---- adapter relist -----------------------------------------------------------------------


@pytest.mark.parametrize(("backend", "service", "deployments", "piece"), [
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE,
     [adapter("--metrics-relist-interval=30s")],
     Piece("adapter relist", 30, "--metrics-relist-interval=30s of Deployment "
           "monitoring/prometheus-adapter")),
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE,
     [adapter("--metrics-relist-interval=1m", extra=["--metrics-relist-interval=90s"])],
     Piece("adapter relist", 90, "--metrics-relist-interval=90s of Deployment "
           "monitoring/prometheus-adapter")),
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE, [adapter()],
     Piece("adapter relist", 600, "Deployment monitoring/prometheus-adapter passes no "
           "--metrics-relist-interval: prometheus-adapter's default 600s", True)),
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE,
     [adapter("--metrics-relist-interval=soon")],
     Piece("adapter relist", 600, "Deployment monitoring/prometheus-adapter: "
           "--metrics-relist-interval='soon' is not read here: prometheus-adapter's default "
           "600s", True)),
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE,
     [adapter("--metrics-relist-interval=$(RELIST)")],
     Piece("adapter relist", 600, "Deployment monitoring/prometheus-adapter: "
           "--metrics-relist-interval='$(RELIST)' is not read here: prometheus-adapter's "
           "default 600s", True)),
    ("monitoring/prometheus-adapter", None, [adapter("--metrics-relist-interval=30s")],
     Piece("adapter relist", 600, "no Service monitoring/prometheus-adapter: "
           "prometheus-adapter's default 600s", True)),
    ("monitoring/prometheus-adapter",
     {**ADAPTER_SERVICE, "spec": {"selector": {"app": "keda-operator-metrics-apiserver"}}},
     [adapter("--metrics-relist-interval=30s")],
     Piece("adapter relist", 600, "no Deployment in service monitoring/prometheus-adapter's "
           "namespace runs the pods it selects: prometheus-adapter's default 600s", True)),
    ("", None, [],
     Piece("adapter relist", 600, "the APIService names no Service: prometheus-adapter's "
           "default 600s", True)),
    ("monitoring/prometheus-adapter", ADAPTER_SERVICE,
     "Deployment list: HTTP 403 Forbidden: deployments.apps is forbidden",
     Piece("adapter relist", 600, "service monitoring/prometheus-adapter could not be followed "
           "(Deployment list: HTTP 403 Forbidden: deployments.apps is forbidden): "
           "prometheus-adapter's default 600s", True)),
], ids=["args", "last-wins", "unset", "malformed", "reference", "no-service", "other-backend",
        "no-backend", "unreadable"])  # fmt: skip
def test_the_adapters_relist_interval(
    backend: str, service: Obj | str | None, deployments: window.Listed, piece: Piece
) -> None:
    assert window.relist_piece(backend, service, deployments) == piece


def test_the_adapters_default_is_its_own_not_its_charts() -> None:
    # prometheus-adapter cmd/adapter/adapter.go main(): MetricsRelistInterval: 10 * time.Minute
    assert window.ADAPTER_DEFAULT_SECONDS == 600


# ---- HPA sync -----------------------------------------------------------------------------


@pytest.mark.parametrize(("pods", "piece"), [
    ([controller_manager("--horizontal-pod-autoscaler-sync-period=30s")],
     Piece("HPA sync", 30, "--horizontal-pod-autoscaler-sync-period=30s of pod "
           "kube-system/kube-controller-manager-cp-0")),
    ([controller_manager()],
     Piece("HPA sync", 15, "pod kube-system/kube-controller-manager-cp-0 passes no "
           "--horizontal-pod-autoscaler-sync-period: kube-controller-manager's default 15s",
           True)),
    ([controller_manager("--horizontal-pod-autoscaler-sync-period=often")],
     Piece("HPA sync", 15, "pod kube-system/kube-controller-manager-cp-0: "
           "--horizontal-pod-autoscaler-sync-period='often' is not read here: "
           "kube-controller-manager's default 15s", True)),
    ([],
     Piece("HPA sync", 15, "the cluster shows no kube-controller-manager (kube-system pods "
           "labelled component=kube-controller-manager: none; a managed or off-cluster control "
           "plane): kube-controller-manager's default 15s", True)),
    ("Pod list: HTTP 403 Forbidden: pods is forbidden",
     Piece("HPA sync", 15, "kube-system pods labelled component=kube-controller-manager could "
           "not be read (Pod list: HTTP 403 Forbidden: pods is forbidden): "
           "kube-controller-manager's default 15s", True)),
], ids=["flag", "unset", "malformed", "not-shown", "unreadable"])  # fmt: skip
def test_the_hpa_sync_period(pods: window.Listed, piece: Piece) -> None:
    assert window.sync_piece(pods) == piece


def test_of_several_controller_managers_the_longest_period_counts() -> None:
    fast = controller_manager("--horizontal-pod-autoscaler-sync-period=10s")
    slow = controller_manager()
    slow["metadata"]["name"] = "kube-controller-manager-cp-1"
    assert window.sync_piece([fast, slow]) == Piece(
        "HPA sync",
        15,
        "pod kube-system/kube-controller-manager-cp-1 passes no "
        "--horizontal-pod-autoscaler-sync-period: kube-controller-manager's default 15s",
        True,
    )


# ---- the window ---------------------------------------------------------------------------

PIECES = (Piece("exporter collection", 30, "x", True), Piece("scrape", 30, "y"),
          Piece("adapter relist", 30, "z"), Piece("HPA sync", 15, "w", True))  # fmt: skip


def test_the_window_is_the_sum_of_the_pieces_and_the_margin() -> None:
    derived = Window(PIECES)
    assert (derived.derived, derived.seconds) == (135, 135)
    assert derived.summary == (
        "135s = exporter collection 30s (default) + scrape 30s + adapter relist 30s + HPA sync "
        "15s (default) + margin 30s"
    )


def test_the_param_overrides_the_derived_window() -> None:
    given = Window(PIECES, override=60)
    assert (given.derived, given.seconds) == (135, 60)
    assert given.summary == (
        "60s: params.metricSeconds; from the cluster 135s = exporter collection 30s (default) "
        "+ scrape 30s + adapter relist 30s + HPA sync 15s (default) + margin 30s"
    )
