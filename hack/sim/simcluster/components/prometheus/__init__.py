"""Prometheus 3.5 (built from its Go module), as kube-prometheus-stack deploys it.

What is modelled (and nothing more): the StatefulSet
`prometheus-kube-prometheus-stack-prometheus` in `monitoring` with its
ServiceAccount, cluster-wide read RBAC and the Services `prometheus-operated`
and `kube-prometheus-stack-prometheus`, labelled `app.kubernetes.io/name:
prometheus` as the chart labels it. It discovers targets through the API
server with in-cluster credentials (kubernetes_sd) and scrapes the pod IPs it
finds, which only exist inside the sim's network namespace. Scrape
configuration without prometheus-operator: pods annotated
`prometheus.io/scrape: "true"` (`prometheus.io/port`, `prometheus.io/path`)
and the endpoints of Services annotated the same way, as the community chart
does (prometheus-community `charts/prometheus/values.yaml`, the
`kubernetes-pods` and `kubernetes-service-endpoints` jobs of
`serverFiles.prometheus.yml`, both `honor_labels: true`: a target's own
`namespace`/`pod` labels, such as the GPU's workload on DCGM exporter's series,
win over the discovered ones). With `prometheus-operator` selected, the same server is made from a
`Prometheus` object instead (see that component). Test-time knob: 1 s scrape
and evaluation interval. It publishes its URL (its pod IP, port 9090) for
every check that queries Prometheus.
"""

from __future__ import annotations

from typing import Any

import yaml

from simcluster.components import catalog
from simcluster.components.base import (
    POD_IP_ENV,
    Component,
    Context,
    Image,
    Manifest,
    Published,
    service_account,
    workload,
)
from simcluster.components.prometheus import chart

NAMESPACE = "monitoring"
CHART = "kube-prometheus-stack"


def chart_fullname(values: dict[str, Any], release: str) -> str:
    """The chart's ``kube-prometheus-stack.fullname`` (see `chart.fullname`)."""
    return chart.fullname(values, release)


def prometheus_name(values: dict[str, Any], release: str) -> str:
    """The chart's Prometheus object (``prometheus.crname``, see `chart.prometheus_name`)."""
    return chart.prometheus_name(values, release)


# The sim installs the chart as release kube-prometheus-stack with the chart's defaults.
NAME = prometheus_name({}, CHART)
STATEFULSET = f"prometheus-{NAME}"
LABELS = {"app.kubernetes.io/name": "prometheus", "prometheus": NAME}
IMAGE = "quay.io/prometheus/prometheus:v3.5.0"
PORT = 9090
OPERATOR = "prometheus-operator"
SELECTOR = "app.kubernetes.io/name=prometheus"  # its pods, with or without the operator


def scrape_config(ctx: Context) -> dict[str, Any]:
    """prometheus.yml: annotation-driven pod and Service-endpoint discovery."""

    def annotated(role: str, kind: str) -> dict[str, Any]:
        meta = f"__meta_kubernetes_{kind}_annotation_prometheus_io"
        return {
            "job_name": f"kubernetes-{role}s" if role == "pod" else "kubernetes-service-endpoints",
            "honor_labels": True,  # the community chart's, on both jobs
            "kubernetes_sd_configs": [{"role": role}],
            "relabel_configs": [
                {"source_labels": [f"{meta}_scrape"], "action": "keep", "regex": "true"},
                {
                    "source_labels": [f"{meta}_path"],
                    "action": "replace",
                    "target_label": "__metrics_path__",
                    "regex": "(.+)",
                },
                {
                    "source_labels": ["__address__", f"{meta}_port"],
                    "action": "replace",
                    "regex": r"([^:]+)(?::\d+)?;(\d+)",
                    "replacement": "$1:$2",
                    "target_label": "__address__",
                },
                {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node"},
            ],
        }

    return {
        "global": {
            "scrape_interval": ctx.knobs.scrape_interval,
            "evaluation_interval": ctx.knobs.evaluation_interval,
        },
        "scrape_configs": [annotated("pod", "pod"), annotated("endpoints", "service")],
    }


def rbac(name: str, namespace: str) -> list[Manifest]:
    """ServiceAccount and the cluster-wide read access Prometheus discovery needs."""
    return service_account(
        name,
        namespace,
        [
            {
                "apiGroups": [""],
                "resources": ["nodes", "nodes/metrics", "services", "endpoints", "pods"],
                "verbs": ["get", "list", "watch"],
            },
            {
                "apiGroups": ["discovery.k8s.io"],
                "resources": ["endpointslices"],
                "verbs": ["get", "list", "watch"],
            },
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
        ],
    )


def services(name: str = NAME, selector: dict[str, str] | None = None) -> list[Manifest]:
    """`prometheus-operated` (headless, as the operator makes it) and the chart's Service
    `name` (``<fullname>-prometheus``) selecting `selector` (default: the sim's labels)."""
    port = [{"name": "http-web", "port": PORT, "targetPort": PORT}]
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "prometheus-operated",
                "namespace": NAMESPACE,
                "labels": {"operated-prometheus": "true"},
            },
            "spec": {
                "clusterIP": "None",
                "selector": {"app.kubernetes.io/name": "prometheus"},
                "ports": port,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
            "spec": {"selector": selector or LABELS, "ports": port},
        },
    ]


def statefulset(ctx: Context) -> Manifest:
    """The Prometheus server with the config above."""
    container = {
        "name": "prometheus",
        "image": IMAGE,
        "args": [
            "--config.file=/etc/prometheus/prometheus.yml",
            "--storage.tsdb.path=/prometheus",
            "--storage.tsdb.retention.time=1h",
            f"--web.listen-address=$(POD_IP):{PORT}",
            "--web.enable-lifecycle",
        ],
        "env": [POD_IP_ENV],
        "ports": [{"name": "http-web", "containerPort": PORT}],
        "readinessProbe": {
            "httpGet": {"path": "/-/ready", "port": PORT},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/prometheus"},
            {"name": "data", "mountPath": "/prometheus"},
        ],
    }
    sts = workload(
        "StatefulSet",
        STATEFULSET,
        NAMESPACE,
        LABELS,
        {
            "serviceAccountName": NAME,
            "nodeSelector": {"aicr.dev/node-group": "system"},
            "containers": [container],
            "volumes": [
                {"name": "config", "configMap": {"name": f"{NAME}-config"}},
                {"name": "data", "emptyDir": {}},
            ],
        },
    )
    sts["spec"]["serviceName"] = "prometheus-operated"
    return sts


def manifests(ctx: Context) -> list[Manifest]:
    """Everything the install creates: the server itself, or a `Prometheus` for the operator.

    With a recipe's kube-prometheus-stack values (``ctx.values``) and the operator, the
    objects are named and the `Prometheus` selects as the chart renders those values
    (`chart`), with the values' additional scrape configuration Secret if they give one.
    """
    if OPERATOR in ctx.selected and CHART in ctx.values:
        return from_chart(ctx)
    if OPERATOR in ctx.selected:
        from simcluster.components.prometheus_operator import prometheus_object

        made = prometheus_object(ctx, NAME, NAME, {"app.kubernetes.io/name": "prometheus"}, IMAGE)
        return [namespace(), *rbac(NAME, NAMESPACE), services()[1], made]
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{NAME}-config", "namespace": NAMESPACE},
        "data": {"prometheus.yml": yaml.safe_dump(scrape_config(ctx), sort_keys=False)},
    }
    return [namespace(), *rbac(NAME, NAMESPACE), config, *services(), statefulset(ctx)]


def from_chart(ctx: Context) -> list[Manifest]:
    """The chart's objects for the recipe's values: ServiceAccount, RBAC, Service, Prometheus."""
    from simcluster.components.prometheus_operator import prometheus_object

    release = ctx.release(CHART)
    v = chart.values(ctx.values[CHART])
    name = chart.prometheus_name(v, release)
    account = chart.service_account(v, release)
    full = f"{chart.fullname(v, release)}-prometheus"
    made = prometheus_object(ctx, name, account, {"app.kubernetes.io/name": "prometheus"}, IMAGE)
    made["spec"].update(chart.selectors(v, release))
    secret = chart.scrape_secret(v, release, NAMESPACE)
    if secret is not None:
        made["spec"]["additionalScrapeConfigs"] = {
            "name": secret["metadata"]["name"],
            "key": chart.SCRAPE_KEY,
        }
    rbac_docs = rbac(full, NAMESPACE)
    rbac_docs[0]["metadata"]["name"] = account
    rbac_docs[2]["subjects"][0]["name"] = account
    selector = {"app.kubernetes.io/name": "prometheus", "operator.prometheus.io/name": name}
    return [
        namespace(),
        *rbac_docs,
        services(full, selector)[1],
        *([secret] if secret else []),
        made,
    ]


def namespace() -> Manifest:
    """The monitoring namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def url(api: Any) -> str | None:
    """http://<pod IP>:9090 of the ready Prometheus pod, or None."""
    from simcluster.components.workloads import ready_pod_ip

    ip = ready_pod_ip(api, NAMESPACE, SELECTOR)
    return f"http://{ip}:{PORT}" if ip else None


def publishes(api: Any) -> Published:
    """The Prometheus URL for every check that queries Prometheus."""
    address = url(api)
    return (
        {check: {"prometheusUrl": address} for check in catalog.prometheus_checks()}
        if (address)
        else {}
    )


RELOADER = "config-reloader"  # the operator's sidecar (with prometheus-operator only)
WATCHING = "started watching config file"


def reloader_watching(api: Any) -> bool:
    """The operator's config reloader (when there is one) has loaded and watches the config.

    Until its first reload succeeds it does not follow changes, so a monitor created in
    that window waits for its periodic re-read (3 minutes).
    """
    from kubernetes import client

    from simcluster.components.workloads import ready_pods

    for pod in ready_pods(api, NAMESPACE, SELECTOR):
        if RELOADER not in {c.name for c in pod.spec.containers}:
            return True
        log = client.CoreV1Api(api).read_namespaced_pod_log(
            pod.metadata.name, NAMESPACE, container=RELOADER
        )
        return WATCHING in log
    return False


def ready(api: Any) -> str | None:
    """Ready once its pod is ready (the readiness probe is /-/ready) and its reloader watches."""
    if not url(api):
        return "the Prometheus pod to be ready"
    return None if reloader_watching(api) else "the config reloader to watch the configuration"


COMPONENT = Component(
    name="prometheus",
    summary="Prometheus server 3.5 (Go module), kube-prometheus-stack layout",
    pin="PROMETHEUS_VERSION",
    images={
        "prometheus": Image(
            "prometheus",
            ("--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"),
        )
    },
    manifests=manifests,
    after=(OPERATOR,),
    ready=ready,
    publishes=publishes,
    address=url,
)
